/**
 * Namespace lifecycle: a new namespace is Active with the `kubernetes` finalizer in its spec;
 * deleting one marks it Terminating (new content is refused with 403), the namespace controller
 * deletes everything in it, and once it is empty the namespace itself goes. `default`,
 * `kube-system` and `kube-public` cannot be deleted.
 */
import { Clock, Effect } from "effect"
import * as NamespaceConditions from "./NamespaceConditions.ts"
import * as Rest from "./Rest.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

const storage = "namespaces"
const finalizer = "kubernetes"
const protectedNames = new Set(["default", "kube-system", "kube-public"])
const target: Status.Target = { group: "", plural: "namespaces", kind: "Namespace" }

/** Namespaces that exist from the start. */
export const initial: ReadonlyArray<string> = ["default", "kube-system", "kube-public", "kube-node-lease"]

/**
 * A new Namespace as the server stores it: phase Active, spec finalizer `kubernetes`.
 *
 * @example
 * import * as Namespaces from "./Namespaces.ts"
 * Namespaces.prepareCreate({ metadata: { name: "a" } }).status // { phase: "Active" }
 */
export const prepareCreate = (object: KubeObject.KubeObject): KubeObject.KubeObject => ({
  ...object,
  spec: { ...(KubeObject.isObject(object.spec) ? object.spec : {}), finalizers: [finalizer] },
  status: { phase: "Active" }
})

/**
 * A Namespace object for the namespaces that exist at start.
 *
 * @example
 * import * as Namespaces from "./Namespaces.ts"
 * Namespaces.object("default").metadata // { name: "default", uid: "...", creationTimestamp: "..." }
 */
export const object = (name: string): KubeObject.KubeObject =>
  prepareCreate({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      uid: KubeObject.uid(),
      creationTimestamp: KubeObject.timestamp(),
      labels: { "kubernetes.io/metadata.name": name }
    }
  })

const specFinalizers = (ns: KubeObject.KubeObject): ReadonlyArray<string> => {
  const spec = KubeObject.isObject(ns.spec) ? ns.spec : {}
  return Array.isArray(spec.finalizers) ? spec.finalizers.map(String) : []
}

const gone = (ns: KubeObject.KubeObject) =>
  specFinalizers(ns).length === 0 && (KubeObject.meta(ns).finalizers ?? []).length === 0

const revisionOf = (object: KubeObject.KubeObject) => Number(KubeObject.meta(object).resourceVersion ?? 0)

/**
 * Deletes a namespace: marks it Terminating (200 with the namespace) for the controller to empty,
 * or removes it at once when nothing holds it. 403 for the namespaces the system needs.
 *
 * @example
 * import * as Namespaces from "./Namespaces.ts"
 * import type * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * const deleting = Namespaces.remove(env, "team-a", { propagationPolicy: undefined, preconditions: undefined, dryRun: false })
 */
export const remove = Effect.fnUntraced(function*(env: Rest.Env, name: string, options: Rest.DeleteOptions) {
  const { store } = env
  if (protectedNames.has(name)) return yield* Status.forbidden(target, name, "this namespace may not be deleted")
  for (;;) {
    const ns = store.get(storage, "", name)
    if (ns === undefined) return yield* Status.notFound(target, name)
    const m = KubeObject.meta(ns)
    if (options.preconditions?.uid !== undefined && options.preconditions.uid !== m.uid) {
      return yield* Status.conflict(target, name, `Precondition failed: UID in precondition: ${options.preconditions.uid}, UID in object meta: ${m.uid}`)
    }
    if (m.deletionTimestamp !== undefined) return { body: ns, removed: false } satisfies Rest.Deleted
    const marked = KubeObject.withMeta(
      { ...ns, status: { ...(KubeObject.isObject(ns.status) ? ns.status : {}), phase: "Terminating" } },
      { deletionTimestamp: KubeObject.timestamp(), deletionGracePeriodSeconds: 0 }
    )
    if (options.dryRun) return { body: marked, removed: false } satisfies Rest.Deleted
    const result = gone(ns)
      ? store.remove(storage, "", name, revisionOf(ns))
      : store.put(storage, marked, revisionOf(ns))
    if (result._tag === "Written") {
      yield* env.durable(result.event.revision)
      return result.event.type === "DELETED"
        ? { body: Status.success(target, name, m.uid), removed: true } satisfies Rest.Deleted
        : { body: result.object, removed: false } satisfies Rest.Deleted
    }
  }
})

/**
 * `PUT namespaces/<name>/finalize`: replaces the spec finalizers; a terminating namespace left
 * with none is removed.
 *
 * @example
 * import * as Namespaces from "./Namespaces.ts"
 * import type * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * const finalized = Namespaces.finalize(env, "team-a", { spec: { finalizers: [] } })
 */
export const finalize = Effect.fnUntraced(function*(env: Rest.Env, name: string, body: KubeObject.KubeObject) {
  const { store } = env
  for (;;) {
    const ns = store.get(storage, "", name)
    if (ns === undefined) return yield* Status.notFound(target, name)
    const rv = KubeObject.meta(body).resourceVersion
    if (rv !== undefined && rv !== "" && rv !== KubeObject.meta(ns).resourceVersion) {
      return yield* Status.conflict(target, name, Status.modified)
    }
    const next = { ...ns, spec: { ...(KubeObject.isObject(ns.spec) ? ns.spec : {}), finalizers: specFinalizers(body) } }
    const result = KubeObject.meta(ns).deletionTimestamp !== undefined && gone(next)
      ? store.remove(storage, "", name, revisionOf(ns), next)
      : store.put(storage, next, revisionOf(ns))
    if (result._tag === "Written") {
      yield* env.durable(result.event.revision)
      return result.object
    }
  }
})

export interface ControllerOptions {
  /**
   * How long a namespace stays Terminating with its content before the controller empties it
   * (default 1 s). As on a cluster, whose namespace controller takes about that long, the objects
   * of a deleted namespace can still be deleted one by one meanwhile: `kubectl delete -f` of a
   * bundle that lists the Namespace first deletes every object it lists without a NotFound.
   */
  readonly delayMs?: number
}

/**
 * Starts the namespace controller in the current scope: it empties terminating namespaces and
 * removes them once empty.
 *
 * @example
 * import { Clock, Effect } from "effect"
 * import * as Namespaces from "./Namespaces.ts"
 * import type * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * const started = Effect.scoped(Namespaces.controller(env))
 */
export const controller = Effect.fnUntraced(function*(env: Rest.Env, options: ControllerOptions = {}) {
  const { store } = env
  const delayMs = options.delayMs ?? 1000
  // When each terminating namespace was first seen, for the delay; dropped once it is gone.
  const seen = new Map<string, number>()
  const terminating = (name: string) => {
    const ns = store.get(storage, "", name)
    return ns !== undefined && KubeObject.meta(ns).deletionTimestamp !== undefined
  }
  // What is left in a terminating namespace, in its conditions, as kube's namespace controller
  // reports it (kubectl describe namespace shows them).
  const report = Effect.fnUntraced(function*(name: string) {
    const resources: Array<string> = []
    const finalizers = new Map<string, number>()
    for (const s of store.storages()) {
      if (s === storage) continue
      const left = store.list(s, name)
      if (left.length === 0) continue
      const type = env.registry.byStorage(s)[0]?.type
      resources.push(`${type === undefined ? s : `${type.plural}.${type.group}`} has ${left.length} resource instances`)
      for (const object of left) for (const f of KubeObject.meta(object).finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1)
    }
    const current = store.get(storage, "", name)
    if (current === undefined) return
    const conditions = NamespaceConditions.terminating(
      KubeObject.records(KubeObject.record(current.status).conditions),
      resources.sort(),
      [...finalizers].map(([f, n]) => `${f} in ${n} resource instances`).sort(),
      KubeObject.timestamp()
    )
    if (conditions === undefined) return
    store.put(storage, { ...current, status: { ...KubeObject.record(current.status), conditions } }, revisionOf(current))
  })
  const empty = Effect.fnUntraced(function*(name: string) {
    const ns = store.get(storage, "", name)
    if (ns === undefined || KubeObject.meta(ns).deletionTimestamp === undefined) {
      seen.delete(name)
      return
    }
    const now = yield* Clock.currentTimeMillis
    const first = seen.get(name) ?? now
    seen.set(name, first)
    if (first + delayMs > now) yield* Effect.sleep(first + delayMs - now)
    let remaining = 0
    for (const s of store.storages()) {
      if (s === storage) continue
      const resource = env.registry.byStorage(s)[0]
      for (const object of store.list(s, name)) {
        remaining++
        const m = KubeObject.meta(object)
        if (m.deletionTimestamp !== undefined) continue
        if (resource === undefined) {
          store.remove(s, name, m.name ?? "", undefined)
          continue
        }
        yield* Rest.remove(env, { resource, namespace: name, name: m.name ?? "" }, {
          propagationPolicy: "Background",
          preconditions: undefined,
          dryRun: false
        }).pipe(Effect.catchIf((e) => e.code === 404, () => Effect.void))
      }
    }
    if (remaining > 0 && [...store.storages()].some((s) => s !== storage && store.list(s, name).length > 0)) return yield* report(name)
    const current = store.get(storage, "", name)
    if (current === undefined) return
    const finalized = { ...current, spec: { ...(KubeObject.isObject(current.spec) ? current.spec : {}), finalizers: [] } }
    const result = (KubeObject.meta(current).finalizers ?? []).length === 0
      ? store.remove(storage, "", name, revisionOf(current), finalized)
      : store.put(storage, finalized, revisionOf(current))
    if (result._tag === "Conflict") return yield* Effect.fail("namespace changed while finalizing")
    if (result.event.type === "DELETED") seen.delete(name)
  })
  const worker = yield* Worker.make("namespaces", empty, (name: string) => name)
  const onEvent = (event: Store.Event) => {
    if (event.storage === storage) {
      if (event.type !== "DELETED" && KubeObject.meta(event.object).deletionTimestamp !== undefined) {
        worker.enqueue(String(KubeObject.meta(event.object).name))
      }
    } else if (event.namespace !== "" && event.type !== "ADDED" && terminating(event.namespace)) {
      worker.enqueue(event.namespace)
    }
  }
  for (const ns of store.list(storage, undefined)) {
    if (KubeObject.meta(ns).deletionTimestamp !== undefined) worker.enqueue(String(KubeObject.meta(ns).name))
  }
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending }
})
