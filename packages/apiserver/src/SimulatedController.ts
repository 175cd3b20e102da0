/**
 * What the workload simulator's controllers share: the key of an object they look at, how they
 * write and ask to look again, and the objects an owner controls.
 */
import type { Duration, Effect } from "effect"
import type * as Rest from "./Rest.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** An object the simulator looks at. */
export interface Key {
  readonly storage: string
  readonly namespace: string
  readonly name: string
}

/** The field managers of the kube components the simulator writes for. */
export type Manager = "kube-controller-manager" | "kubelet" | "kube-scheduler"

/**
 * Whose field manager a write of `storage` (or its `subresource`) records when the writer does not
 * say: a Pod's or Node's status and a node's Lease are the kubelet's, the rest the controller manager's.
 *
 * @example
 * import * as SimulatedController from "./SimulatedController.ts"
 * SimulatedController.managerOf("pods", "status") // "kubelet"
 * SimulatedController.managerOf("replicasets.apps", undefined) // "kube-controller-manager"
 */
export const managerOf = (storage: string, subresource: string | undefined): Manager =>
  ((storage === "pods" || storage === "nodes") && subresource === "status") || storage === "leases.coordination.k8s.io"
    ? "kubelet"
    : "kube-controller-manager"

/** What the controllers write with, and how they ask to be run again. */
export interface Context {
  readonly env: Rest.Env
  readonly writeOptions: Rest.WriteOptions
  /**
   * Writes the object `key` names (or its status), as `next` makes it from the stored one; one
   * gone or changed meanwhile is left to its next event.
   */
  readonly update: (
    key: Key,
    subresource: "status" | undefined,
    next: (current: KubeObject.KubeObject) => KubeObject.KubeObject,
    manager?: Manager
  ) => Effect.Effect<void, Status.ApiError>
  /** Looks at `key` again after `after`. */
  readonly again: (key: Key, after: Duration.Duration) => Effect.Effect<void>
}

/**
 * The objects of `storage` in `namespace` whose controller reference names `owner`, those being
 * deleted left out unless `terminating`.
 *
 * @example
 * import * as SimulatedController from "./SimulatedController.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const web: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const replicaSets = SimulatedController.controlled(env, "replicasets.apps", "default", web)
 */
export const controlled = (
  env: Rest.Env,
  storage: string,
  namespace: string,
  owner: KubeObject.KubeObject,
  terminating = false
): Array<KubeObject.KubeObject> => {
  const uid = KubeObject.meta(owner).uid
  return env.store.list(storage, namespace).filter((o) =>
    (terminating || KubeObject.meta(o).deletionTimestamp === undefined) &&
    (KubeObject.meta(o).ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === uid))
}

/**
 * Writes the status of the object `key` names, as `next` makes it from the stored object.
 *
 * @example
 * import * as SimulatedController from "./SimulatedController.ts"
 * declare const ctx: SimulatedController.Context
 * const written = SimulatedController.writeStatus(ctx, { storage: "statefulsets.apps", namespace: "default", name: "db" }, (db) => ({ ...db.status }))
 */
export const writeStatus = (
  ctx: Context,
  key: Key,
  next: (current: KubeObject.KubeObject) => Record<string, unknown>,
  manager?: Manager
) => ctx.update(key, "status", (current) => ({ ...current, status: next(current) }), manager)

/**
 * Writes the object itself, as `next` makes it from the stored one.
 *
 * @example
 * import * as SimulatedController from "./SimulatedController.ts"
 * declare const ctx: SimulatedController.Context
 * declare const rs: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const written = SimulatedController.writeObject(ctx, "replicasets.apps", rs, (current) => current)
 */
export const writeObject = (ctx: Context, storage: string, object: KubeObject.KubeObject, next: (current: KubeObject.KubeObject) => KubeObject.KubeObject) => {
  const m = KubeObject.meta(object)
  return ctx.update({ storage, namespace: m.namespace ?? "", name: m.name ?? "" }, undefined, next)
}
