/**
 * The garbage collector, running in the server: dependents (objects whose ownerReferences name an
 * owner by uid) are deleted once all their owners are gone, and lose references to owners that
 * are gone while others remain. An owner deleted with Foreground propagation keeps its
 * `foregroundDeletion` finalizer until its dependents are deleted (those with
 * `blockOwnerDeletion` must be gone); one deleted with Orphan propagation keeps its `orphan`
 * finalizer until its dependents no longer reference it.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import type * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

interface Ref {
  readonly storage: string
  readonly namespace: string
  readonly name: string
}

type Key = { readonly role: "dependent" | "owner" } & Ref

const refId = (r: Ref) => `${r.storage}|${r.namespace}|${r.name}`

const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "kubefx-garbage-collector",
  fieldValidation: "Ignore"
}

export interface GarbageCollector {
  /** Completes when the collector has nothing queued. */
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
}

/**
 * Starts the garbage collector over `env.store` in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as GarbageCollector from "./GarbageCollector.ts"
 * import type * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * const started = Effect.scoped(GarbageCollector.make(env))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env) {
  const { store } = env
  const byUid = new Map<string, Ref>()
  const dependents = new Map<string, Set<string>>()
  const refs = new Map<string, Ref>()

  const ownerUids = (object: KubeObject.KubeObject | undefined): ReadonlyArray<string> =>
    object === undefined ? [] : (KubeObject.meta(object).ownerReferences ?? []).map((r) => r.uid)

  const resourceOf = (storage: string) => env.registry.byStorage(storage)[0]

  const lookup = (uid: string): KubeObject.KubeObject | undefined => {
    const ref = byUid.get(uid)
    if (ref === undefined) return undefined
    const object = store.get(ref.storage, ref.namespace, ref.name)
    return object !== undefined && KubeObject.meta(object).uid === uid ? object : undefined
  }

  const sameOwners = (prev: KubeObject.KubeObject | undefined, next: KubeObject.KubeObject): boolean => {
    const before = prev === undefined ? [] : KubeObject.meta(prev).ownerReferences ?? []
    const after = KubeObject.meta(next).ownerReferences ?? []
    return before.length === after.length && before.every((owner, i) => owner.uid === after[i]!.uid)
  }

  // An update that keeps the object's uid and owners (most writes: status, spec, labels) leaves
  // the index as it was.
  const index = (event: Store.Event) => {
    if (
      event.type === "MODIFIED" && event.prev !== undefined && sameOwners(event.prev, event.object) &&
      KubeObject.meta(event.prev).uid === KubeObject.meta(event.object).uid
    ) return
    const ref: Ref = { storage: event.storage, namespace: event.namespace, name: String(KubeObject.meta(event.object).name) }
    const id = refId(ref)
    const uid = KubeObject.meta(event.object).uid
    for (const owner of ownerUids(event.prev)) {
      const set = dependents.get(owner)
      set?.delete(id)
      if (set?.size === 0) dependents.delete(owner)
    }
    if (event.type === "DELETED") {
      if (uid !== undefined) byUid.delete(uid)
      refs.delete(id)
      return
    }
    if (uid !== undefined) byUid.set(uid, ref)
    refs.set(id, ref)
    for (const owner of ownerUids(event.object)) {
      let set = dependents.get(owner)
      if (set === undefined) {
        set = new Set()
        dependents.set(owner, set)
      }
      set.add(id)
    }
  }

  const dependentsOf = (uid: string): ReadonlyArray<{ readonly ref: Ref; readonly object: KubeObject.KubeObject }> =>
    [...(dependents.get(uid) ?? [])].flatMap((id) => {
      const ref = refs.get(id)
      const object = ref === undefined ? undefined : store.get(ref.storage, ref.namespace, ref.name)
      return ref === undefined || object === undefined ? [] : [{ ref, object }]
    })

  const target = (ref: Ref): Rest.Target | undefined => {
    const resource = resourceOf(ref.storage)
    return resource === undefined
      ? undefined
      : { resource, namespace: resource.type.namespaced ? ref.namespace : undefined, name: ref.name }
  }

  const ignoreGone = <A>(effect: Effect.Effect<A, Status.ApiError>) =>
    effect.pipe(Effect.catchIf((e) => e.code === 404, () => Effect.void))

  // As 1.32's collector: an object left with no owners has no ownerReferences key at all, not [].
  const remaining = (object: KubeObject.KubeObject, gone: ReadonlySet<string>) => {
    const left = (KubeObject.meta(object).ownerReferences ?? []).filter((r) => !gone.has(r.uid))
    return left.length === 0 ? undefined : left
  }

  const withoutOwners = (t: Rest.Target, gone: ReadonlySet<string>) =>
    ignoreGone(Rest.update(env, t, undefined, writeOptions, (current) =>
      Effect.succeed(KubeObject.withMeta(current, { ownerReferences: remaining(current, gone) }))))

  const withoutFinalizer = (t: Rest.Target, finalizer: string) =>
    ignoreGone(Rest.update(env, t, undefined, writeOptions, (current) =>
      Effect.succeed(KubeObject.withMeta(current, {
        finalizers: (KubeObject.meta(current).finalizers ?? []).filter((f) => f !== finalizer)
      }))))

  const handleDependent = Effect.fnUntraced(function*(ref: Ref) {
    const object = store.get(ref.storage, ref.namespace, ref.name)
    const t = target(ref)
    if (object === undefined || t === undefined) return
    const owners = KubeObject.meta(object).ownerReferences ?? []
    if (owners.length === 0) return
    const gone = new Set(owners.filter((r) => lookup(r.uid) === undefined).map((r) => r.uid))
    if (gone.size === 0) return
    if (gone.size === owners.length) {
      if (KubeObject.meta(object).deletionTimestamp !== undefined) return
      yield* ignoreGone(Rest.remove(env, t, { propagationPolicy: "Background", preconditions: undefined, dryRun: false }))
    } else {
      yield* withoutOwners(t, gone)
    }
  })

  const handleOwner = Effect.fnUntraced(function*(ref: Ref) {
    const object = store.get(ref.storage, ref.namespace, ref.name)
    const t = target(ref)
    if (object === undefined || t === undefined) return
    const m = KubeObject.meta(object)
    if (m.deletionTimestamp === undefined || m.uid === undefined) return
    const uid = m.uid
    const finalizers = m.finalizers ?? []
    if (finalizers.includes(Rest.finalizerOrphan)) {
      for (const d of dependentsOf(uid)) {
        const dt = target(d.ref)
        if (dt !== undefined) yield* withoutOwners(dt, new Set([uid]))
      }
      yield* withoutFinalizer(t, Rest.finalizerOrphan)
    } else if (finalizers.includes(Rest.finalizerForeground)) {
      const remaining = dependentsOf(uid)
      for (const d of remaining) {
        const dt = target(d.ref)
        if (dt !== undefined && KubeObject.meta(d.object).deletionTimestamp === undefined) {
          yield* ignoreGone(Rest.remove(env, dt, { propagationPolicy: "Foreground", preconditions: undefined, dryRun: false }))
        }
      }
      const blocking = dependentsOf(uid).filter((d) =>
        (KubeObject.meta(d.object).ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion === true)
      )
      if (blocking.length === 0) yield* withoutFinalizer(t, Rest.finalizerForeground)
    }
  })

  const worker = yield* Worker.make(
    "garbage-collector",
    (key: Key) => (key.role === "dependent" ? handleDependent(key) : handleOwner(key)),
    (key) => `${key.role}|${refId(key)}`
  )

  const enqueueOwnersOf = (object: KubeObject.KubeObject | undefined) => {
    for (const uid of ownerUids(object)) {
      const owner = byUid.get(uid)
      if (owner !== undefined) worker.enqueue({ role: "owner", ...owner })
    }
  }

  const onEvent = (event: Store.Event) => {
    index(event)
    const m = KubeObject.meta(event.object)
    const ref: Ref = { storage: event.storage, namespace: event.namespace, name: String(m.name) }
    if (event.type === "DELETED") {
      if (m.uid !== undefined) {
        for (const id of dependents.get(m.uid) ?? []) {
          const d = refs.get(id)
          if (d !== undefined) worker.enqueue({ role: "dependent", ...d })
        }
      }
      enqueueOwnersOf(event.object)
      return
    }
    const finalizers = m.finalizers ?? []
    if (m.deletionTimestamp !== undefined &&
      (finalizers.includes(Rest.finalizerForeground) || finalizers.includes(Rest.finalizerOrphan))) {
      worker.enqueue({ role: "owner", ...ref })
    }
    if (ownerUids(event.object).length > 0 && (event.type === "ADDED" || !sameOwners(event.prev, event.object))) {
      worker.enqueue({ role: "dependent", ...ref })
    }
    if (m.deletionTimestamp !== undefined) enqueueOwnersOf(event.object)
  }

  for (const storage of store.storages()) {
    for (const object of store.list(storage, undefined)) {
      const m = KubeObject.meta(object)
      onEvent({
        type: "ADDED",
        storage,
        key: KubeObject.key(m.namespace, m.name ?? ""),
        namespace: m.namespace ?? "",
        revision: 0,
        object,
        prev: undefined
      })
    }
  }
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending } satisfies GarbageCollector
})
