/**
 * Read-after-write for a controller's own status writes (JOSDK's
 * PrimaryUpdateAndCacheUtils). The informer cache is eventually consistent: a reconcile can start
 * before the controller's own status write has come back through the watch, read no allocated id, and
 * allocate again. `patchStatusAndCache` applies status with an optimistic lock on the version the
 * reconcile read; when it succeeds while the informer still holds that version, the returned object is
 * kept in an overlay that reads consult first, until the informer catches up. On a conflict it waits
 * for the informer to move past the locked version and applies again on top of the newer object; a
 * conflict the server's copy does not explain (still at the locked version) is applied again at once.
 *
 * @since 0.1.0
 */
import { Duration, Effect, HashMap, Option, Ref, Schedule, Scope, Stream } from "effect"
import * as Informer from "./Informer.ts"
import * as Kube from "../client/Kube.ts"
import * as KubeError from "../client/KubeError.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"

const newer = (a: ObjectMeta.KubeObject, b: ObjectMeta.KubeObject) =>
  ObjectMeta.compareVersions(a.metadata.resourceVersion, b.metadata.resourceVersion)

export interface OverlayCache<A extends ObjectMeta.KubeObject> {
  /** The freshest object the controller knows: its own write if newer than the informer's copy. */
  readonly get: (key: string) => Effect.Effect<A | undefined>
  /**
   * Server-side applies `fresh` (only the status fields this controller owns) to `/status`, locked on
   * `original`'s resourceVersion, and caches the result. `fresh` may be computed from the latest object
   * when the first attempt conflicts.
   */
  readonly patchStatusAndCache: (
    original: A,
    fresh: Kube.ApplyBody | ((latest: A) => Kube.ApplyBody)
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
  /**
   * Keeps the server's answer to another write of the controller's (a condition, a finalizer) until
   * the informer holds a version at least as new, so the next run reads what it wrote.
   */
  readonly remember: (written: A) => Effect.Effect<void>
  /** How many objects the overlay holds (for tests and the dashboard). */
  readonly size: Effect.Effect<number>
}

export interface Options<A extends ObjectMeta.KubeObject = ObjectMeta.KubeObject> {
  /** The field manager of the status writes. */
  readonly fieldManager: string
  /** How long to wait for the informer after a conflict before giving up; default 30 s. */
  readonly conflictWait?: Duration.Input | undefined
  /** How many conflicts in a row before giving up; default 10. */
  readonly maxConflicts?: number | undefined
  /**
   * What the informer does to every object it caches, done to every write the overlay keeps, so a
   * reader sees one shape from both; default `Informer.stripManagedFields`, as the informer's.
   */
  readonly transform?: ((object: A) => A) | undefined
}

/**
 * An overlay over an informer, evicting entries as soon as the informer holds a version at least as new.
 *
 * @example
 * import { Effect } from "effect"
 * import { Informer, OverlayCache } from "@kubefx/kube"
 * declare const Widget: import("@kubefx/kube").Resource.Resource<any>
 * const program = Effect.gen(function*() {
 *   const widgets = yield* Informer.make(Widget)
 *   const overlay = yield* OverlayCache.make(widgets, { fieldManager: "widgets" })
 *   const widget = yield* overlay.get("default/a")
 *   if (widget !== undefined && widget.status?.bucketId === undefined) {
 *     yield* overlay.patchStatusAndCache(widget, {
 *       metadata: { name: "a", namespace: "default" },
 *       status: { bucketId: "b-123" }
 *     })
 *   }
 * })
 */
export const make = <A extends ObjectMeta.KubeObject>(
  informer: Informer.Informer<A>,
  options: NoInfer<Options<A>>
): Effect.Effect<OverlayCache<A>, never, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const overlay = yield* Ref.make(HashMap.empty<string, A>())
    const conflictWait = Duration.fromInputUnsafe(options.conflictWait ?? "30 seconds")
    const maxConflicts = options.maxConflicts ?? 10
    const transform = options.transform ?? Informer.stripManagedFields

    // The informer's copy supersedes ours once it is at least as new; a deletion drops ours.
    const evictIfStale = (key: string, current: A | undefined) =>
      Ref.update(overlay, (map) => {
        const entry = HashMap.get(map, key)
        if (Option.isNone(entry)) return map
        // Versions that cannot be ordered count as the informer's being newer: ours is dropped.
        return current === undefined || (newer(current, entry.value) ?? 1) >= 0 ? HashMap.remove(map, key) : map
      })
    yield* informer.changes.pipe(
      Stream.runForEach((change) =>
        evictIfStale(ObjectMeta.key(change.object), change._tag === "Deleted" ? undefined : change.object)
      ),
      Effect.forkScoped
    )

    const get = (key: string) =>
      Effect.sync(() => {
        const cached = informer.get(key)
        const entry = HashMap.get(Ref.getUnsafe(overlay), key)
        if (Option.isNone(entry)) return cached
        if (cached === undefined) return undefined
        return (newer(cached, entry.value) ?? 1) >= 0 ? cached : entry.value
      })

    const unchangedAtServer = (base: A) =>
      kube.get(informer.resource, base.metadata.name ?? "", base.metadata.namespace).pipe(
        Effect.retry({
          times: 3,
          schedule: Schedule.spaced("50 millis"),
          while: (error) => error._tag !== "DecodeError" && KubeError.isRetriable(error)
        }),
        Effect.map((current) => current.metadata.resourceVersion === base.metadata.resourceVersion),
        Effect.orElseSucceed(() => false)
      )

    const patchStatusAndCache = (
      original: A,
      fresh: Kube.ApplyBody | ((latest: A) => Kube.ApplyBody)
    ): Effect.Effect<A, KubeError.KubeError | Resource.DecodeError> => {
      const key = ObjectMeta.key(original)
      const attempt = (base: A, conflicts: number): Effect.Effect<A, KubeError.KubeError | Resource.DecodeError> => {
        const lock = base.metadata.resourceVersion
        const body = typeof fresh === "function" ? fresh(base) : fresh
        const locked: Kube.ApplyBody = {
          ...body,
          metadata: {
            ...body.metadata,
            name: base.metadata.name ?? body.metadata.name,
            namespace: base.metadata.namespace,
            resourceVersion: lock
          }
        }
        return kube.apply(informer.resource, locked, { fieldManager: options.fieldManager, subresource: "status", force: true }).pipe(
          Effect.tap((updated) =>
            // Cache only while the informer still holds the version we locked on; if it has moved
            // past it, it already has (or will next deliver) something at least as new.
            informer.get(key)?.metadata.resourceVersion === lock
              ? Ref.update(overlay, HashMap.set(key, transform(updated)))
              : Effect.void
          ),
          Effect.catchTag("Conflict", (conflict) => {
            if (conflicts + 1 >= maxConflicts) return Effect.fail(conflict)
            const awaitInformer = informer.awaitNewerThan(key, base.metadata.resourceVersion).pipe(
              Effect.timeoutOrElse({
                duration: conflictWait,
                orElse: () => Effect.fail(conflict)
              }),
              Effect.flatMap(() => {
                const latest = informer.get(key)
                return latest === undefined
                  ? Effect.fail(new KubeError.NotFound({ message: `${informer.resource.kind} ${key} was deleted`, code: 404 }))
                  : attempt(latest, conflicts + 1)
              })
            )
            const cached = informer.get(key)
            if (cached === undefined || (newer(cached, base) ?? 1) > 0) return awaitInformer
            // The informer has nothing newer yet. A 409 that the server's copy does not explain (it is
            // still at the version we locked on) is applied again at once; otherwise the next attempt
            // waits for the informer, which will deliver the newer version.
            return Effect.flatMap(unchangedAtServer(base), (unchanged) => unchanged ? attempt(base, conflicts + 1) : awaitInformer)
          })
        )
      }
      return attempt(original, 0)
    }

    const remember = (written: A) =>
      Ref.update(overlay, (map) => {
        const key = ObjectMeta.key(written)
        const cached = informer.get(key)
        const entry = HashMap.get(map, key)
        // Kept only when certainly newer than what is cached: unknown order keeps nothing.
        if (cached === undefined || (newer(written, cached) ?? 0) <= 0) return map
        if (Option.isSome(entry) && (newer(written, entry.value) ?? 0) <= 0) return map
        return HashMap.set(map, key, transform(written))
      })

    return {
      get,
      patchStatusAndCache,
      remember,
      size: Effect.map(Ref.get(overlay), HashMap.size)
    }
  })
