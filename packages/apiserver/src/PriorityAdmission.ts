/**
 * kube-apiserver's Priority admission plugin and the system PriorityClasses it bootstraps: a Pod
 * created with a `priorityClassName` gets that class's value and preemption policy (a class that
 * is not there refuses the Pod), one created without gets the global default class's (the lowest
 * valued, when several claim it), or priority 0; a Pod may not state a priority or policy other
 * than its class's; an update keeps what creation set. Only one PriorityClass may be the global
 * default.
 */
import { Effect } from "effect"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

const storage = "priorityclasses.scheduling.k8s.io"
const classTarget = { group: "scheduling.k8s.io", plural: "priorityclasses" }
const podTarget = { group: "", plural: "pods" }
const record = KubeObject.record

const systemClass = (name: string, value: number, description: string): KubeObject.KubeObject => ({
  apiVersion: "scheduling.k8s.io/v1",
  kind: "PriorityClass",
  metadata: { name, uid: KubeObject.uid(), creationTimestamp: KubeObject.timestamp(), generation: 1 },
  value,
  description,
  preemptionPolicy: "PreemptLowerPriority"
})

/**
 * The PriorityClasses every cluster starts with, as kube-apiserver creates them, with their storage.
 *
 * @example
 * import * as PriorityAdmission from "./PriorityAdmission.ts"
 * PriorityAdmission.systemClasses().map((c) => c.object.metadata.name) // ["system-node-critical", "system-cluster-critical"]
 */
export const systemClasses = (): ReadonlyArray<{ readonly storage: string; readonly object: KubeObject.KubeObject }> => [
  systemClass("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node."),
  systemClass("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.")
].map((object) => ({ storage, object }))

/**
 * Whether a write goes through the plugin: a Pod's (not a subresource's), or a PriorityClass's.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as PriorityAdmission from "./PriorityAdmission.ts"
 * const pods = Builtins.make().find((r) => r.type.plural === "pods")!
 * PriorityAdmission.applies(pods, undefined) // true
 */
export const applies = (resource: Registry.Resource, subresource: string | undefined): boolean =>
  subresource === undefined &&
  ((resource.type.group === "" && resource.type.plural === "pods") || (resource.type.group === classTarget.group && resource.type.plural === classTarget.plural))

// The global default class, the lowest valued when several claim it (kube's tie break).
const globalDefault = (store: Store.Store): KubeObject.KubeObject | undefined =>
  store.list(storage, undefined)
    .filter((c) => c.globalDefault === true)
    .sort((a, b) => Number(a.value ?? 0) - Number(b.value ?? 0))[0]

/**
 * The object as the plugin admits it: a Pod with its priority and preemption policy, or a
 * PriorityClass checked against the global default; a 403 otherwise.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Builtins from "./Builtins.ts"
 * import * as PriorityAdmission from "./PriorityAdmission.ts"
 * import * as Store from "./Store.ts"
 * const pods = Builtins.make().find((r) => r.type.plural === "pods")!
 * Effect.runSync(PriorityAdmission.admit(Store.make(), pods, "web", { spec: {} }, undefined)).spec // { priority: 0, preemptionPolicy: "PreemptLowerPriority" }
 */
export const admit = (
  store: Store.Store,
  resource: Registry.Resource,
  name: string,
  object: KubeObject.KubeObject,
  old: KubeObject.KubeObject | undefined
): Effect.Effect<KubeObject.KubeObject, Status.ApiError> =>
  resource.type.plural === "pods" ? admitPod(store, name, object, old) : admitClass(store, name, object, old)

const admitPod = (store: Store.Store, name: string, pod: KubeObject.KubeObject, old: KubeObject.KubeObject | undefined) => {
  const spec = record(pod.spec)
  // Validation refuses a change of either; what an update leaves out stays as creation set it.
  if (old !== undefined) {
    const before = record(old.spec)
    return Effect.succeed({
      ...pod,
      spec: {
        ...spec,
        ...(spec.priority === undefined && before.priority !== undefined ? { priority: before.priority } : {}),
        ...(spec.preemptionPolicy === undefined && before.preemptionPolicy !== undefined ? { preemptionPolicy: before.preemptionPolicy } : {})
      }
    })
  }
  const given = typeof spec.priorityClassName === "string" ? spec.priorityClassName : ""
  const chosen = given === "" ? globalDefault(store) : store.get(storage, "", given)
  if (given !== "" && chosen === undefined) {
    return Effect.fail(Status.forbidden(podTarget, name, `no PriorityClass with name ${given} was found`))
  }
  const priority = chosen === undefined ? 0 : Number(chosen.value ?? 0)
  const policy = chosen === undefined ? "PreemptLowerPriority" : String(chosen.preemptionPolicy ?? "PreemptLowerPriority")
  if (spec.priority !== undefined && spec.priority !== priority) {
    return Effect.fail(Status.forbidden(
      podTarget,
      name,
      `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`
    ))
  }
  if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== policy) {
    return Effect.fail(Status.forbidden(
      podTarget,
      name,
      `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`
    ))
  }
  const className = chosen === undefined ? {} : { priorityClassName: KubeObject.meta(chosen).name }
  return Effect.succeed({ ...pod, spec: { ...spec, ...className, priority, preemptionPolicy: policy } })
}

const admitClass = (store: Store.Store, name: string, priorityClass: KubeObject.KubeObject, old: KubeObject.KubeObject | undefined) => {
  if (priorityClass.globalDefault !== true) return Effect.succeed(priorityClass)
  const current = globalDefault(store)
  return current === undefined || (old !== undefined && KubeObject.meta(current).name === name)
    ? Effect.succeed(priorityClass)
    : Effect.fail(Status.forbidden(classTarget, name, `PriorityClass ${KubeObject.meta(current).name ?? ""} is already marked as default. Only one default can exist`))
}
