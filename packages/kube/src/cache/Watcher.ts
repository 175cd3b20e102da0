/**
 * A resilient list-then-watch of one resource as a `Stream` that never fails: it lists, watches from
 * the list's resourceVersion with bookmarks, resumes from the last version seen when a watch ends or
 * drops, relists when the version is too old (410), restarts a watch that has been silent for too
 * long, and backs off (capped, jittered) on errors. With the `"streaming"` initial list, one watch
 * brings the objects there are now and then their changes, in place of the list.
 *
 * @since 0.1.0
 */
import { Context, Duration, Effect, Queue, Random, Stream } from "effect"
import * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"

/** An object of the resource that does not decode with its Schema: its key, raw JSON and why. */
export interface Undecodable {
  readonly key: string
  readonly object: unknown
  readonly error: Resource.DecodeError
}

export type Event<A> =
  /**
   * A full list: the complete current state (the first one, and after every relist), with the
   * objects that did not decode listed apart.
   */
  | {
    readonly _tag: "Listed"
    readonly objects: ReadonlyArray<A>
    readonly undecodable: ReadonlyArray<Undecodable>
    readonly resourceVersion: string
  }
  | { readonly _tag: "Added" | "Modified" | "Deleted"; readonly object: A }
  /** An object changed (or was deleted) into a state that does not decode. */
  | ({ readonly _tag: "Undecodable"; readonly deleted: boolean } & Undecodable)
  /**
   * The server does not serve the kind (its CRD is not installed, or was deleted): no objects. The
   * watcher keeps listing with backoff and sends `Listed` once the kind appears.
   */
  | { readonly _tag: "NotServed" }
  /**
   * A list or watch failed (403, 5xx, 429, a connection refused, an answer that does not decode):
   * the watcher backs off and tries again. Not sent for the expected ends of a watch (410, a watch
   * closed or silent) nor for a kind not served (`NotServed`).
   */
  | { readonly _tag: "Failing"; readonly error: KubeError.KubeError | Resource.DecodeError }
  /** After `Failing`: a watch got through again (an event or a bookmark arrived), with no relist. */
  | { readonly _tag: "Recovered" }

export interface Options<A = never> {
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** Restart a watch that delivered nothing (not even a bookmark) for this long; default 5 minutes. */
  readonly inactivityTimeout?: Duration.Input | undefined
  /** How long the server keeps one watch open; default 5 to 10 minutes, chosen at random per watch. */
  readonly watchTimeout?: Duration.Input | undefined
  /** Backoff after errors: from `initial` doubling to `max`, jittered; default 200 ms to 30 s. */
  readonly backoff?: { readonly initial: Duration.Input; readonly max: Duration.Input } | undefined
  /** Page size of the list; default 500. */
  readonly pageSize?: number | undefined
  /** Applied to every object as it arrives, so nothing holds the untransformed copy. */
  readonly transform?: ((object: A) => A) | undefined
  /** How the objects there are now are read; default {@link InitialList}'s. */
  readonly initialList?: InitialListStrategy | undefined
}

/**
 * How a watcher reads the objects there are now, before their changes: `"list"` pages through a
 * list (500 objects a page by default), then watches from its version; `"streaming"` asks one watch
 * for them first (`sendInitialEvents`, Kubernetes' streaming lists: the API server sends them from
 * its watch cache, one at a time, instead of reading whole pages from etcd), as client-go's
 * `WatchListClient` and kube-rs's `StreamingList` do. A server that refuses streaming lists (422,
 * as 1.33 does by default) or ends the watch before their end is listed instead, from then on.
 */
export type InitialListStrategy = "list" | "streaming"

/**
 * The strategy of watchers that do not choose one: `"list"` unless provided (an operator's
 * `initialList` option provides it to its controllers).
 *
 * @example
 * import { Effect } from "effect"
 * import { Watcher } from "@kubefx/kube"
 * declare const program: Effect.Effect<void>
 * program.pipe(Effect.provideService(Watcher.InitialList, "streaming"))
 */
export const InitialList = Context.Reference<InitialListStrategy>("@kubefx/kube/Watcher/InitialList", {
  defaultValue: () => "list"
})

// The key of an object known only as JSON.
const rawKey = (object: unknown): string => {
  const metadata = (object as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata
  return ObjectMeta.keyOf(
    typeof metadata?.namespace === "string" ? metadata.namespace : undefined,
    typeof metadata?.name === "string" ? metadata.name : ""
  )
}

class Inactive {
  readonly _tag = "Inactive"
}

/**
 * Watches a resource for as long as the stream is consumed.
 *
 * @example
 * import { Effect, Stream } from "effect"
 * import { Builtins, Kube, Watcher } from "@kubefx/kube"
 * const names = Watcher.watch(Builtins.ConfigMap, { namespace: "default" }).pipe(
 *   Stream.take(5),
 *   Stream.runCollect,
 *   Effect.provide(Kube.layer({ _tag: "Default" }))
 * )
 */
export const watch = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  options: Options<A> = {}
): Stream.Stream<Event<A>, never, Kube.Kube> =>
  Stream.callback<Event<A>, never, Kube.Kube>((queue) =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const inactivity = Duration.fromInputUnsafe(options.inactivityTimeout ?? "5 minutes")
      const initialBackoff = Duration.toMillis(Duration.fromInputUnsafe(options.backoff?.initial ?? "200 millis"))
      const maxBackoff = Duration.toMillis(Duration.fromInputUnsafe(options.backoff?.max ?? "30 seconds"))
      const select = { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector }
      const transform = options.transform
      let version: string | undefined
      let failures = 0
      // Until a server refuses them: then every list of this watcher pages.
      let streaming = (options.initialList ?? (yield* InitialList)) === "streaming"

      const watchTimeoutSeconds = options.watchTimeout === undefined
        ? Random.nextIntBetween(300, 600)
        : Effect.succeed(Math.max(1, Math.round(Duration.toSeconds(Duration.fromInputUnsafe(options.watchTimeout)))))

      // The objects there are now, from a list or a streaming list's initial events: the watch goes
      // on from their version, and a kind that was not served or a failing list is so no longer.
      const listedAt = (resourceVersion: string, objects: ReadonlyArray<A>, undecodable: ReadonlyArray<Undecodable>): Event<A> => {
        version = resourceVersion
        notServed = false
        failing = false
        return { _tag: "Listed", objects, undecodable, resourceVersion }
      }

      const list = Effect.gen(function*() {
        const undecodable: Array<Undecodable> = []
        const listed = yield* kube.listAll(resource, {
          ...select,
          limit: options.pageSize ?? 500,
          skipUndecodable: true,
          onUndecodable: (object, error) => Effect.sync(() => undecodable.push({ key: rawKey(object), object, error }))
        })
        const objects = transform === undefined ? listed.items : listed.items.map(transform)
        yield* Queue.offer(queue, listedAt(listed.resourceVersion, objects, undecodable))
      })

      let delivered = 0
      const watchOnce = Effect.gen(function*() {
        const timeoutSeconds = yield* watchTimeoutSeconds
        // A streaming list under way: the objects so far, by key, until the bookmark that ends them.
        let initial: { readonly objects: Map<string, A>; readonly undecodable: Array<Undecodable> } | undefined =
          version === undefined ? { objects: new Map(), undecodable: [] } : undefined
        const onUndecodable: Kube.Undecodable = (object, error, type) => {
          if (initial !== undefined) {
            initial.undecodable.push({ key: rawKey(object), object, error })
            return Effect.void
          }
          version = (object as { metadata?: { resourceVersion?: string } } | null)?.metadata?.resourceVersion ?? version
          return Queue.offer(queue, { _tag: "Undecodable", key: rawKey(object), object, error, deleted: type === "DELETED" })
        }
        yield* kube.watch(resource, {
          ...select,
          resourceVersion: version ?? "",
          sendInitialEvents: initial !== undefined,
          allowBookmarks: true,
          timeoutSeconds,
          onUndecodable
        }).pipe(
          Stream.timeoutOrElse({ duration: inactivity, orElse: () => Stream.fail(new Inactive()) }),
          // A batch of events (what one read of the answer held) goes on as one offer.
          Stream.runForEachArray((events) =>
            Effect.suspend(() => {
              failures = 0
              delivered += events.length
              const out: Array<Event<A>> = []
              if (failing && initial === undefined) {
                failing = false
                out.push({ _tag: "Recovered" })
              }
              for (const event of events) {
                if (initial !== undefined) {
                  if (event.type === "BOOKMARK") {
                    if (event.initialEventsEnd === true) {
                      out.push(listedAt(event.resourceVersion, [...initial.objects.values()], initial.undecodable))
                      initial = undefined
                    }
                  } else if (event.type === "DELETED") initial.objects.delete(ObjectMeta.key(event.object))
                  else initial.objects.set(ObjectMeta.key(event.object), transform === undefined ? event.object : transform(event.object))
                  continue
                }
                if (event.type === "BOOKMARK") {
                  version = event.resourceVersion
                  continue
                }
                version = event.object.metadata.resourceVersion ?? version
                const tag = event.type === "ADDED" ? "Added" : event.type === "MODIFIED" ? "Modified" : "Deleted"
                out.push({ _tag: tag, object: transform === undefined ? event.object : transform(event.object) })
              }
              return out.length === 0 ? Effect.void : Queue.offerAll(queue, out)
            })
          )
        )
        if (initial !== undefined) {
          // Ended before its end: a server that ignores streaming lists (older than 1.27) sends the
          // objects but never the bookmark. Listed from now on.
          streaming = false
          yield* Effect.logInfo(`${resource.kind} streaming list ended before its end; listing instead`)
        }
      })

      const backoff = Effect.gen(function*() {
        const delay = Math.min(maxBackoff, initialBackoff * 2 ** Math.min(failures, 30))
        failures++
        const jittered = delay * (0.8 + 0.4 * (yield* Random.next))
        yield* Effect.sleep(Duration.millis(jittered))
      })

      let notServed = false
      // A Failing was sent and nothing has got through since.
      let failing = false
      const onError = (error: KubeError.KubeError | Resource.DecodeError | Inactive) => {
        if (error._tag === "NotFound") {
          // The kind is not served (yet). Say so once, then look again now and then.
          version = undefined
          const announce = notServed ? Effect.void : Queue.offer(queue, { _tag: "NotServed" } as const)
          notServed = true
          return Effect.andThen(announce, backoff)
        }
        if (error._tag === "Invalid" && streaming && version === undefined) {
          streaming = false
          return Effect.logInfo(`the API server refuses streaming lists of ${resource.kind} (${error.message}); listing instead`)
        }
        if (error._tag === "Gone") {
          version = undefined
          return Effect.logInfo(`${resource.kind} watch expired (410); relisting`)
        }
        if (error._tag === "Inactive") {
          return Effect.logWarning(`${resource.kind} watch silent for ${Duration.format(inactivity)}; restarting it`)
        }
        failing = true
        if (error._tag === "TooManyRequests") {
          return Effect.andThen(Queue.offer(queue, { _tag: "Failing", error }), Effect.sleep(Duration.seconds(error.retryAfterSeconds)))
        }
        return Effect.logWarning(`${resource.kind} watch failed: ${error.message}; retrying`).pipe(
          Effect.andThen(Queue.offer(queue, { _tag: "Failing", error })),
          Effect.andThen(backoff)
        )
      }

      // A watch the server ends normally resumes at once; a loop of empty watches would spin,
      // so a watch that ended without delivering anything waits like a failure.
      const cycle = Effect.gen(function*() {
        if (version === undefined && !streaming) yield* list
        const before = delivered
        yield* watchOnce
        if (delivered === before) yield* backoff
      }).pipe(Effect.catch(onError))

      return yield* Effect.forever(cycle)
    }))
