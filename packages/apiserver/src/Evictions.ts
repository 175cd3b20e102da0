/**
 * A Pod's `eviction` subresource, as kube-apiserver 1.32 serves it (`kubectl drain`): a Pod that is
 * not running, or already being deleted, is deleted at once; a running one only when its
 * PodDisruptionBudget allows a disruption, which the eviction takes (`disruptionsAllowed` one less,
 * the Pod in `disruptedPods`); refused with 429 while the budget allows none or its controller has
 * not looked at it yet. An evicted Pod gets the `DisruptionTarget` condition before its deletion.
 */
import { Effect, Result } from "effect"
import * as Disruptions from "./Disruptions.ts"
import * as PodRuns from "./PodRuns.ts"
import * as Rest from "./Rest.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

// The budgets in the Pod's namespace whose selector matches it.
const budgetsOf = (env: Rest.Env, pod: KubeObject.KubeObject): ReadonlyArray<KubeObject.KubeObject> =>
  env.store.list("poddisruptionbudgets.policy", KubeObject.meta(pod).namespace ?? "").filter((pdb) => Disruptions.selects(pdb, pod))

const refused = (retryAfterSeconds: number, why: string): Status.ApiError =>
  new Status.ApiError({
    code: 429,
    reason: "TooManyRequests",
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    // kube's field is omitempty: a budget with no room asks for no retry (client-go would retry at once).
    details: { causes: [{ reason: "DisruptionBudget", message: why }], ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}) }
  })

const ready = (pod: KubeObject.KubeObject) =>
  KubeObject.records(record(pod.status).conditions).some((c) => c.type === "Ready" && c.status === "True")

// The budget's status with one disruption taken by `pod`, or why it has none to give.
const take = (pdb: KubeObject.KubeObject, pod: string, now: string): Result.Result<KubeObject.KubeObject, Status.ApiError> => {
  const status = record(pdb.status)
  const name = KubeObject.meta(pdb).name ?? ""
  const allowed = KubeObject.number(status.disruptionsAllowed)
  if (KubeObject.number(status.observedGeneration) < (KubeObject.meta(pdb).generation ?? 0)) {
    return Result.fail(refused(10, `The disruption budget ${name} is still being processed by the server.`))
  }
  if (allowed < 0) return Result.fail(Status.forbidden({ group: "policy", plural: "poddisruptionbudget" }, name, "pdb disruptions allowed is negative"))
  if (allowed === 0) {
    return Result.fail(refused(0, `The disruption budget ${name} needs ${KubeObject.number(status.desiredHealthy)} healthy pods and has ${KubeObject.number(status.currentHealthy)} currently`))
  }
  const conditions = allowed - 1 > 0 ? KubeObject.records(status.conditions) : KubeObject.records(status.conditions).map((c) =>
    c.type !== "DisruptionAllowed" || c.status === "False" ? c : { ...c, status: "False", reason: "InsufficientPods", message: "", lastTransitionTime: now })
  return Result.succeed({
    ...pdb,
    status: { ...status, disruptionsAllowed: allowed - 1, disruptedPods: { ...record(status.disruptedPods), [pod]: now }, conditions }
  })
}

/**
 * Evicts the Pod `target` names, as the Eviction asks (its DeleteOptions); answers the created Status.
 *
 * @example
 * import * as Evictions from "./Evictions.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const pod: import("./Rest.ts").Target
 * const evicted = Evictions.evict(env, pod, { metadata: { name: "web-1" } }, false)
 */
export const evict = Effect.fnUntraced(function*(env: Rest.Env, target: Rest.Target, eviction: KubeObject.KubeObject, dryRun: boolean) {
  if (KubeObject.meta(eviction).name !== target.name) return yield* Status.badRequest("name in URL does not match name in Eviction object")
  const asked = record(eviction.deleteOptions)
  const preconditions = record(asked.preconditions)
  const options: Rest.DeleteOptions = {
    propagationPolicy: undefined,
    gracePeriodSeconds: typeof asked.gracePeriodSeconds === "number" ? asked.gracePeriodSeconds : undefined,
    preconditions: {
      ...(typeof preconditions.uid === "string" ? { uid: preconditions.uid } : {}),
      ...(typeof preconditions.resourceVersion === "string" ? { resourceVersion: preconditions.resourceVersion } : {})
    },
    dryRun: dryRun || (Array.isArray(asked.dryRun) && asked.dryRun.includes("All"))
  }
  const pod = yield* Rest.get(env, target)
  const phase = record(pod.status).phase
  const ignoresBudgets = phase === "Succeeded" || phase === "Failed" || phase === "Pending" || KubeObject.meta(pod).deletionTimestamp !== undefined
  if (!ignoresBudgets) {
    const budgets = budgetsOf(env, pod)
    if (budgets.length > 1) return yield* Status.internal("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
    const pdb = budgets[0]
    const status = record(pdb?.status)
    const unhealthyGoes = pdb !== undefined && !ready(pod) &&
      (record(pdb.spec).unhealthyPodEvictionPolicy === "AlwaysAllow" ||
        (KubeObject.number(status.currentHealthy) >= KubeObject.number(status.desiredHealthy) && KubeObject.number(status.desiredHealthy) > 0))
    if (pdb !== undefined && !unhealthyGoes) {
      const taken = take(pdb, target.name, KubeObject.timestamp())
      if (Result.isFailure(taken)) return yield* taken.failure
      const resource = env.registry.byStorage("poddisruptionbudgets.policy")[0]
      if (!options.dryRun && resource !== undefined) {
        const m = KubeObject.meta(pdb)
        yield* Rest.update(env, { resource, namespace: m.namespace, name: m.name ?? "" }, "status", { dryRun: false, fieldManager: "kube-apiserver", fieldValidation: "Ignore" }, (current) =>
          KubeObject.meta(current).resourceVersion === m.resourceVersion
            ? Effect.succeed(taken.success)
            : Effect.fail(Status.conflict({ group: "policy", plural: "poddisruptionbudgets", kind: "PodDisruptionBudget" }, m.name ?? "", Status.modified)))
      }
    }
  }
  // Marked as disrupted first, as kube marks what it evicts.
  if (!options.dryRun && phase !== "Succeeded" && phase !== "Failed") {
    yield* Rest.update(env, target, "status", { dryRun: false, fieldManager: "kube-apiserver", fieldValidation: "Ignore" }, (current) =>
      Effect.succeed(
        KubeObject.records(record(current.status).conditions).some((c) => c.type === "DisruptionTarget" && c.status === "True")
          ? current
          : { ...current, status: PodRuns.disrupted(current, "EvictionByEvictionAPI", "Eviction API: evicting", KubeObject.timestamp()) }
      ))
  }
  yield* Rest.remove(env, target, options)
  return Status.created
})
