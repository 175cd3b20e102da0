/**
 * A Pod's `binding` subresource, as kube-apiserver serves it to the scheduler: a `Binding` names
 * the node, and the Pod gets it as `spec.nodeName` (which no update may set), the Binding's
 * annotations, and its `PodScheduled` condition; a Pod already on a node, gated or being deleted
 * is not bound. The legacy `bindings` collection of a namespace binds the Pod its Binding names.
 */
import { Effect } from "effect"
import * as CreateOnly from "./CreateOnly.ts"
import type * as Registry from "./Registry.ts"
import type * as Rest from "./Rest.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

// The subresource, as conflicts name it.
const target: Status.Target = { group: "", plural: "pods/binding", kind: "Binding" }

/**
 * Binds the Pod `pod` names to the Binding's target node; answers the created Status.
 *
 * @example
 * import * as Bindings from "./Bindings.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const pod: import("./Rest.ts").Target
 * const bound = Bindings.bind(env, pod, { metadata: { name: "web-1" }, target: { kind: "Node", name: "kubefx-node" } }, false)
 */
export const bind = Effect.fnUntraced(function*(env: Rest.Env, pod: Rest.Target, binding: KubeObject.KubeObject, dryRun: boolean) {
  const m = KubeObject.meta(binding)
  if (m.name !== pod.name) return yield* Status.badRequest("name in URL does not match name in Binding object")
  const node = record(binding.target)
  if (typeof node.kind === "string" && node.kind !== "" && node.kind !== "Node") {
    return yield* Status.internal(`target.kind: Invalid value: "${node.kind}": must be empty or 'Node'`)
  }
  if (typeof node.name !== "string" || node.name === "") return yield* Status.internal("target.name: Required value")
  for (let attempt = 0;; attempt++) {
    const stored = env.store.get(pod.resource.storage, pod.namespace ?? "", pod.name)
    if (stored === undefined) return yield* Status.notFound(pod.resource.type, pod.name)
    const current = KubeObject.meta(stored)
    if (current.deletionTimestamp !== undefined) return yield* Status.internal(`pod ${pod.name} is being deleted, cannot be assigned to a host`)
    if (m.uid !== undefined && m.uid !== "" && m.uid !== current.uid) {
      return yield* Status.conflict(pod.resource.type, pod.name, `Precondition failed: UID in precondition: ${m.uid}, UID in object meta: ${current.uid}`)
    }
    if (m.resourceVersion !== undefined && m.resourceVersion !== "" && m.resourceVersion !== current.resourceVersion) {
      return yield* Status.conflict(
        pod.resource.type,
        pod.name,
        `Precondition failed: ResourceVersion in precondition: ${m.resourceVersion}, ResourceVersion in object meta: ${current.resourceVersion}`
      )
    }
    const spec = record(stored.spec)
    if (typeof spec.nodeName === "string" && spec.nodeName !== "") {
      return yield* Status.conflict(target, pod.name, `pod ${pod.name} is already assigned to node "${spec.nodeName}"`)
    }
    if (KubeObject.records(spec.schedulingGates).length > 0) {
      return yield* Status.conflict(target, pod.name, `pod ${pod.name} has non-empty .spec.schedulingGates`)
    }
    const status = record(stored.status)
    const conditions = KubeObject.records(status.conditions)
    const scheduled = { type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: KubeObject.timestamp() }
    const was = conditions.find((c) => c.type === "PodScheduled")
    const bound: KubeObject.KubeObject = {
      ...KubeObject.withMeta(stored, { annotations: { ...current.annotations, ...m.annotations } }),
      spec: { ...spec, nodeName: node.name },
      status: {
        ...status,
        conditions: was === undefined
          ? [...conditions, scheduled]
          : conditions.map((c) => c.type !== "PodScheduled" || c.status === "True" ? c : scheduled)
      }
    }
    if (dryRun) break
    const written = env.store.put(pod.resource.storage, bound, Number(current.resourceVersion ?? 0))
    if (written._tag === "Written") {
      yield* env.durable(written.event.revision)
      break
    }
    if (attempt >= 10) return yield* Status.conflict(pod.resource.type, pod.name, Status.modified)
  }
  return Status.created
})

/**
 * core/v1 `bindings`: a create binds the Pod the Binding names in the namespace, as
 * `pods/<name>/binding` does.
 *
 * @example
 * import * as Bindings from "./Bindings.ts"
 * Bindings.resource.type.verbs // ["create"]
 */
export const resource: Registry.Resource = CreateOnly.resource(
  { group: "", kind: "Binding", plural: "bindings", namespaced: true },
  ({ body, dryRun, env, namespace }) =>
    Effect.gen(function*() {
      yield* CreateOnly.checkTypeMeta({ group: "", version: "v1", kind: "Binding" }, body)
      const pods = env.registry.byStorage("pods")[0]
      if (pods === undefined || namespace === undefined) return yield* Status.internal("pods are not served")
      return yield* bind(env, { resource: pods, namespace, name: KubeObject.meta(body).name ?? "" }, body, dryRun)
    })
)
