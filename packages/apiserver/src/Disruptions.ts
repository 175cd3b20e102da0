/**
 * A PodDisruptionBudget's status as 1.32's disruption controller counts it: the pods it expects
 * (its matching pods for an integer `minAvailable`, else the replicas of their controllers), how
 * many must stay healthy, how many are (ready, not being deleted, not just evicted), and so how many
 * disruptions it allows, with its `DisruptionAllowed` condition.
 */
import * as Rollouts from "./Rollouts.ts"
import * as Selectors from "./Selectors.ts"
import * as StatusConditions from "./StatusConditions.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

// An eviction not confirmed by the pod's deletion within this long is forgotten.
const disruptionTimeoutMs = 2 * 60 * 1000

/**
 * Whether the budget's selector matches the pod (an empty selector matches every pod of its
 * namespace, as in policy/v1; none matches none).
 *
 * @example
 * import * as Disruptions from "./Disruptions.ts"
 * Disruptions.selects({ spec: { selector: { matchLabels: { app: "web" } } } }, { metadata: { labels: { app: "web" } } }) // true
 */
export const selects = (pdb: KubeObject.KubeObject, pod: KubeObject.KubeObject): boolean => {
  const selector = record(pdb.spec).selector
  return KubeObject.isObject(selector) && Selectors.matchesSelector(selector, KubeObject.meta(pod).labels ?? {})
}

const ready = (pod: KubeObject.KubeObject) =>
  KubeObject.records(record(pod.status).conditions).some((c) => c.type === "Ready" && c.status === "True")

/**
 * The budget's status over `pods` (those its selector matches), `scale` giving the replicas of a
 * pod's controller (undefined for a pod no controller with a scale owns), at `now`.
 *
 * @example
 * import * as Disruptions from "./Disruptions.ts"
 * const pod = { metadata: { name: "web-1" }, status: { conditions: [{ type: "Ready", status: "True" }] } }
 * Disruptions.status({ metadata: { generation: 1 }, spec: { minAvailable: 1 } }, [pod, { ...pod, metadata: { name: "web-2" } }], () => undefined, Date.now()).disruptionsAllowed // 1
 */
export const status = (
  pdb: KubeObject.KubeObject,
  pods: ReadonlyArray<KubeObject.KubeObject>,
  scale: (pod: KubeObject.KubeObject) => { readonly controller: string; readonly replicas: number } | undefined,
  now: number
): Record<string, unknown> => {
  const spec = record(pdb.spec)
  const previous = record(pdb.status)
  const expectedScale = () => {
    const controllers = new Map<string, number>()
    for (const pod of pods) {
      const owner = scale(pod)
      if (owner !== undefined) controllers.set(owner.controller, owner.replicas)
    }
    return [...controllers.values()].reduce((a, b) => a + b, 0)
  }
  let expected = 0
  let desired = 0
  if (spec.maxUnavailable !== undefined) {
    expected = expectedScale()
    desired = Math.max(0, expected - Rollouts.resolve(spec.maxUnavailable, expected, true))
  } else if (typeof spec.minAvailable === "number") {
    expected = pods.length
    desired = spec.minAvailable
  } else if (spec.minAvailable !== undefined) {
    expected = expectedScale()
    desired = Rollouts.resolve(spec.minAvailable, expected, true)
  }
  const alive = new Map(pods.filter((p) => KubeObject.meta(p).deletionTimestamp === undefined).map((p) => [KubeObject.meta(p).name ?? "", p]))
  const disrupted = Object.fromEntries(Object.entries(record(previous.disruptedPods)).filter(([name, at]) =>
    alive.has(name) && Date.parse(String(at)) + disruptionTimeoutMs > now))
  const healthy = [...alive.values()].filter((p) => ready(p) && !((KubeObject.meta(p).name ?? "") in disrupted)).length
  const allowed = expected <= 0 ? 0 : Math.max(0, healthy - desired)
  const generation = KubeObject.meta(pdb).generation ?? 0
  const conditions = StatusConditions.set(previous.conditions, [
    allowed > 0
      ? { type: "DisruptionAllowed", status: "True", reason: "SufficientPods", message: "" }
      : { type: "DisruptionAllowed", status: "False", reason: "InsufficientPods", message: "" }
  ], { keep: () => true, now: KubeObject.timestamp(new Date(now)) }).map((c) =>
    record(c).type === "DisruptionAllowed" ? { ...record(c), observedGeneration: generation } : c)
  return {
    ...(Object.keys(disrupted).length > 0 ? { disruptedPods: disrupted } : {}),
    observedGeneration: generation,
    disruptionsAllowed: allowed,
    currentHealthy: healthy,
    desiredHealthy: desired,
    expectedPods: expected,
    conditions
  }
}
