/**
 * A resilient list-then-watch of one resource as a `Stream` that never fails: it lists, watches from
 * the list's resourceVersion with bookmarks, resumes from the last version seen when a watch ends or
 * drops, relists when the version is too old (410), restarts a watch that has been silent for too
 * long, and backs off (capped, jittered) on errors.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Queue, Random, Stream } from "effect"
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
}

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

      const watchTimeoutSeconds = options.watchTimeout === undefined
        ? Effect.map(Random.nextIntBetween(300, 600), (seconds) => seconds)
        : Effect.succeed(Math.max(1, Math.round(Duration.toSeconds(Duration.fromInputUnsafe(options.watchTimeout)))))

      const list = Effect.gen(function*() {
        const undecodable: Array<Undecodable> = []
        const listed = yield* kube.listAll(resource, {
          ...select,
          limit: options.pageSize ?? 500,
          skipUndecodable: true,
          onUndecodable: (object, error) => Effect.sync(() => undecodable.push({ key: rawKey(object), object, error }))
        })
        version = listed.resourceVersion
        notServed = false
        failing = false
        const objects = transform === undefined ? listed.items : listed.items.map(transform)
        yield* Queue.offer(queue, { _tag: "Listed", objects, undecodable, resourceVersion: listed.resourceVersion })
      })

      let delivered = 0
      const watchOnce = Effect.gen(function*() {
        const timeoutSeconds = yield* watchTimeoutSeconds
        const onUndecodable: Kube.Undecodable = (object, error, type) => {
          version = (object as { metadata?: { resourceVersion?: string } } | null)?.metadata?.resourceVersion ?? version
          return Queue.offer(queue, { _tag: "Undecodable", key: rawKey(object), object, error, deleted: type === "DELETED" })
        }
        yield* kube.watch(resource, { ...select, resourceVersion: version!, allowBookmarks: true, timeoutSeconds, onUndecodable }).pipe(
          Stream.timeoutOrElse({ duration: inactivity, orElse: () => Stream.fail(new Inactive()) }),
          // A batch of events (what one read of the answer held) goes on as one offer.
          Stream.runForEachArray((events) =>
            Effect.suspend(() => {
              failures = 0
              delivered += events.length
              const out: Array<Event<A>> = []
              if (failing) {
                failing = false
                out.push({ _tag: "Recovered" })
              }
              for (const event of events) {
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
        if (version === undefined) yield* list
        const before = delivered
        yield* watchOnce
        if (delivered === before) yield* backoff
      }).pipe(Effect.catch(onError))

      return yield* Effect.forever(cycle)
    }))
