/**
 * kube-scheduler's PodTopologySpread filter: for each of a pod's `topologySpreadConstraints` with
 * `whenUnsatisfiable: DoNotSchedule`, the pods its selector matches in the pod's namespace (not
 * being deleted) are counted per domain (the values of `topologyKey` on the nodes that count: those
 * with every constraint's key, matching the pod's node affinity unless `nodeAffinityPolicy` is
 * `Ignore`, and tolerated when `nodeTaintsPolicy` is `Honor`); a node whose domain would then hold
 * more than `maxSkew` over the emptiest domain (none, while there are fewer domains than
 * `minDomains`) will not do, nor one without the key.
 */
import * as Scheduling from "./Scheduling.ts"
import * as Selectors from "./Selectors.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
type Constraint = Readonly<Record<string, unknown>>

/**
 * A spread constraint's selector, with `matchLabelKeys` as requirements on the pod's own values
 * (`labels`); undefined when it has none.
 *
 * @example
 * import * as TopologySpread from "./TopologySpread.ts"
 * TopologySpread.selectorOf({ labelSelector: { matchLabels: { app: "web" } }, matchLabelKeys: ["rev"] }, { rev: "2" })?.matchExpressions
 * // [{ key: "rev", operator: "In", values: ["2"] }]
 */
export const selectorOf = (constraint: Constraint, labels: Readonly<Record<string, string>>): Readonly<Record<string, unknown>> | undefined => {
  if (!KubeObject.isObject(constraint.labelSelector)) return undefined
  const selector = constraint.labelSelector
  const keys = Array.isArray(constraint.matchLabelKeys) ? constraint.matchLabelKeys.map(String).filter((key) => labels[key] !== undefined) : []
  if (keys.length === 0) return selector
  return {
    ...selector,
    matchExpressions: [...KubeObject.records(selector.matchExpressions), ...keys.map((key) => ({ key, operator: "In", values: [labels[key]] }))]
  }
}

/**
 * Whether `other` counts in `pod`'s spread under `selector`: a pod of its namespace, not being
 * deleted, that the selector matches.
 *
 * @example
 * import * as TopologySpread from "./TopologySpread.ts"
 * const web = (name: string) => ({ metadata: { name, namespace: "default", labels: { app: "web" } } })
 * TopologySpread.counts(web("a"), { matchLabels: { app: "web" } }, web("b")) // true
 */
export const counts = (pod: KubeObject.KubeObject, selector: Readonly<Record<string, unknown>>, other: KubeObject.KubeObject): boolean =>
  KubeObject.meta(other).namespace === KubeObject.meta(pod).namespace && KubeObject.meta(other).deletionTimestamp === undefined &&
  Selectors.matchesSelector(selector, KubeObject.meta(other).labels ?? {})

/**
 * Why `node` breaks the pod's spread among `nodes` beside the `placed` pods, or undefined when it
 * does not.
 *
 * @example
 * import * as TopologySpread from "./TopologySpread.ts"
 * const node = (name: string, zone: string) => ({ metadata: { name, labels: { zone } } })
 * const [a, b] = [node("a", "a"), node("b", "b")]
 * const web = (name: string) => ({
 *   metadata: { name, namespace: "default", labels: { app: "web" } },
 *   spec: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "DoNotSchedule", labelSelector: { matchLabels: { app: "web" } } }] }
 * })
 * TopologySpread.misfit(web("web-2"), a, [a, b], [{ pod: web("web-1"), node: a }]) // { _tag: "TopologySpread", missingLabel: false }
 */
export const misfit = (
  pod: KubeObject.KubeObject,
  node: KubeObject.KubeObject,
  nodes: ReadonlyArray<KubeObject.KubeObject>,
  placed: ReadonlyArray<Scheduling.Placed>
): Scheduling.Misfit | undefined => {
  const spec = record(pod.spec)
  const constraints = KubeObject.records(spec.topologySpreadConstraints).filter((c) => (c.whenUnsatisfiable ?? "DoNotSchedule") === "DoNotSchedule")
  if (constraints.length === 0) return undefined
  const labelsOf = (n: KubeObject.KubeObject) => KubeObject.meta(n).labels ?? {}
  const keys = constraints.map((c) => String(c.topologyKey ?? ""))
  if (keys.some((key) => labelsOf(node)[key] === undefined)) return { _tag: "TopologySpread", missingLabel: true }
  const own = labelsOf(pod)
  for (const constraint of constraints) {
    const key = String(constraint.topologyKey ?? "")
    const counted = nodes.filter((n) =>
      keys.every((k) => labelsOf(n)[k] !== undefined) &&
      (constraint.nodeAffinityPolicy === "Ignore" || Scheduling.affinityHolds(spec, n)) &&
      (constraint.nodeTaintsPolicy !== "Honor" || Scheduling.misfit({ tolerations: spec.tolerations }, n)?._tag !== "Taint")
    )
    const selector = selectorOf(constraint, own)
    const matches = (other: KubeObject.KubeObject) => selector !== undefined && counts(pod, selector, other)
    const perDomain = new Map<string, number>()
    for (const n of counted) perDomain.set(labelsOf(n)[key]!, perDomain.get(labelsOf(n)[key]!) ?? 0)
    for (const { node: on, pod: other } of placed) {
      const domain = labelsOf(on)[key]
      if (domain !== undefined && counted.includes(on) && matches(other)) perDomain.set(domain, (perDomain.get(domain) ?? 0) + 1)
    }
    const minDomains = typeof constraint.minDomains === "number" ? constraint.minDomains : 1
    const least = perDomain.size < minDomains ? 0 : Math.min(...perDomain.values())
    const self = selector !== undefined && Selectors.matchesSelector(selector, own) ? 1 : 0
    const skew = (perDomain.get(labelsOf(node)[key]!) ?? 0) + self - least
    if (skew > Number(constraint.maxSkew ?? 1)) return { _tag: "TopologySpread", missingLabel: false }
  }
  return undefined
}
