/**
 * ControllerRevisions as the StatefulSet and DaemonSet controllers keep them: a revision per pod
 * template the workload ran (`<name>-<hash>`, numbered, holding the patch that puts the template
 * back), the current template's taken back as the newest when a rollback returns to it, and the
 * history beyond `revisionHistoryLimit` deleted, oldest first, but for the revisions still in use.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import * as SimulatedController from "./SimulatedController.ts"
import { KubeObject } from "@kubefx/schema/internal"

const storage = "controllerrevisions.apps"
const record = KubeObject.record
const nameOf = (object: KubeObject.KubeObject) => KubeObject.meta(object).name ?? ""

/**
 * A revision's number.
 *
 * @example
 * import * as ControllerRevisions from "./ControllerRevisions.ts"
 * ControllerRevisions.number({ revision: 3 }) // 3
 */
export const number = (revision: KubeObject.KubeObject): number => KubeObject.number(revision.revision)

/**
 * What a revision holds: the patch that puts the workload's pod template back, as kube records it
 * (`{"spec":{"template":{...,"$patch":"replace"}}}`, the template's metadata with its null
 * creation time).
 *
 * @example
 * import * as ControllerRevisions from "./ControllerRevisions.ts"
 * ControllerRevisions.data({ spec: { template: { metadata: { labels: { app: "db" } } } } }).spec.template.$patch // "replace"
 */
export const data = (owner: KubeObject.KubeObject): { readonly spec: { readonly template: Record<string, unknown> } } => {
  const template = record(record(owner.spec).template)
  return { spec: { template: { ...template, metadata: { creationTimestamp: null, ...record(template.metadata) }, $patch: "replace" } } }
}

/**
 * The pod template a revision holds.
 *
 * @example
 * import * as ControllerRevisions from "./ControllerRevisions.ts"
 * ControllerRevisions.template({ data: { spec: { template: { $patch: "replace", spec: {} } } } }) // { spec: {} }
 */
export const template = (revision: KubeObject.KubeObject): Record<string, unknown> => {
  const { $patch: _, ...kept } = record(record(record(revision.data).spec).template)
  const { creationTimestamp: __, ...metadata } = record(kept.metadata)
  return { ...kept, metadata }
}

/**
 * The ControllerRevision `name` of the owner's current template at a revision number: labelled as
 * its pods (and with `labels`), annotated as the owner, owned by it.
 *
 * @example
 * import * as ControllerRevisions from "./ControllerRevisions.ts"
 * const db = { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "db", namespace: "default", uid: "u" }, spec: { template: {} } }
 * ControllerRevisions.make(db, "db-7c5f", 1).revision // 1
 */
export const make = (
  owner: KubeObject.KubeObject,
  name: string,
  revision: number,
  labels: Readonly<Record<string, string>> = {}
): KubeObject.KubeObject => {
  const m = KubeObject.meta(owner)
  return {
    apiVersion: "apps/v1",
    kind: "ControllerRevision",
    metadata: {
      name,
      namespace: m.namespace,
      labels: { ...record(record(record(record(owner.spec).template).metadata).labels), ...labels },
      ...(m.annotations === undefined ? {} : { annotations: m.annotations }),
      ownerReferences: [{ apiVersion: "apps/v1", kind: String(owner.kind), name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
    },
    data: data(owner),
    revision
  }
}

/**
 * The owner's revisions, with the current template's (`name`) made, or taken back as the newest;
 * undefined when it could not be made.
 *
 * @example
 * import * as ControllerRevisions from "./ControllerRevisions.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const db: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const revisions = ControllerRevisions.ensure(ctx, "default", db, "db-7c5f")
 */
export const ensure = (
  ctx: SimulatedController.Context,
  namespace: string,
  owner: KubeObject.KubeObject,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): Effect.Effect<ReadonlyArray<KubeObject.KubeObject> | undefined> =>
  Effect.gen(function*() {
    const resource = ctx.env.registry.byStorage(storage)[0]
    if (resource === undefined) return undefined
    const history = SimulatedController.controlled(ctx.env, storage, namespace, owner)
    const newest = history.reduce((n, r) => Math.max(n, number(r)), 0)
    const existing = history.find((r) => nameOf(r) === name)
    if (existing === undefined) {
      const made = yield* Effect.result(Rest.create(ctx.env, resource, namespace, make(owner, name, newest + 1, labels), ctx.writeOptions))
      if (made._tag === "Failure") return undefined
    } else if (number(existing) < newest) {
      yield* Effect.ignore(SimulatedController.writeObject(ctx, storage, existing, (current) => ({ ...current, revision: newest + 1 })))
    }
    return SimulatedController.controlled(ctx.env, storage, namespace, owner)
  })

/**
 * Deletes the owner's revisions beyond its `revisionHistoryLimit` (default 10), oldest first, but
 * for those `live` names (the ones its pods run or its status names).
 *
 * @example
 * import * as ControllerRevisions from "./ControllerRevisions.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const db: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const trimmed = ControllerRevisions.truncate(ctx, "default", db, new Set(["db-7c5f"]))
 */
export const truncate = (
  ctx: SimulatedController.Context,
  namespace: string,
  owner: KubeObject.KubeObject,
  live: ReadonlySet<string>
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const resource = ctx.env.registry.byStorage(storage)[0]
    if (resource === undefined) return Effect.void
    const retired = SimulatedController.controlled(ctx.env, storage, namespace, owner)
      .filter((r) => !live.has(nameOf(r)))
      .sort((a, b) => number(a) - number(b))
    const limit = KubeObject.number(record(owner.spec).revisionHistoryLimit, 10)
    return Effect.forEach(retired.slice(0, Math.max(0, retired.length - limit)), (revision) =>
      Effect.ignore(Rest.remove(ctx.env, { resource, namespace, name: nameOf(revision) }, {
        propagationPolicy: undefined,
        preconditions: undefined,
        dryRun: false
      })), { discard: true })
  })
