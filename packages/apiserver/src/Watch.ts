/**
 * Watch streams: `{"type":...,"object":...}` lines, one per event, for the objects of one
 * resource that match the request's namespace and selectors. Filtered watches turn a change that
 * makes an object start matching into ADDED and one that makes it stop matching into DELETED.
 *
 * Writers never wait for watchers: each watch has a bounded buffer that events are put into
 * synchronously; a watcher that falls `bufferSize` events behind is dropped with a 410 ERROR
 * event (its client relists) instead of holding memory without bound. With a data directory an
 * event is sent only once its write is durable, as etcd sends only committed revisions.
 */
import { Cause, Effect, Queue, Schedule, Stream } from "effect"
import type * as Faults from "./Faults.ts"
import type * as Registry from "./Registry.ts"
import * as ResourceType from "./ResourceType.ts"
import type * as RequestMetrics from "./RequestMetrics.ts"
import * as Selectors from "./Selectors.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

export interface Options {
  readonly store: Store.Store
  readonly faults: Faults.Faults
  /** Where open watches and the events sent are counted, for `/metrics`. */
  readonly metrics?: RequestMetrics.RequestMetrics | undefined
  /**
   * How often watches with `allowWatchBookmarks` get a BOOKMARK (default 5 s, where kube's cacher
   * sends one a minute); a watch with `timeoutSeconds` also gets one 2 s before it ends, as kube's.
   */
  readonly bookmarkIntervalMs?: number
  /** Events a watch may fall behind before it is dropped (default 10,000). */
  readonly bufferSize?: number
  /**
   * Completes once the write at `revision` is durable (with a data directory). Nothing is sent
   * before: a client that saw a revision a crash then lost would resume after a revision the
   * restarted server hands out again, and miss those writes.
   */
  readonly durable?: ((revision: number) => Effect.Effect<void, Status.ApiError>) | undefined
}

export interface Request {
  readonly resource: Registry.Resource
  readonly namespace: string | undefined
  readonly labelSelector: Selectors.LabelSelector
  readonly fieldSelector: Selectors.FieldSelector
  readonly resourceVersion: string | undefined
  readonly resourceVersionMatch: string | undefined
  readonly allowWatchBookmarks: boolean
  readonly sendInitialEvents: boolean | undefined
  readonly timeoutSeconds: number | undefined
  /** The stored object as the client sees it (conversion, defaults, or a Table row). */
  readonly present: (stored: KubeObject.KubeObject) => KubeObject.KubeObject
  /** Names what `present` produces ("json", "table"): watches with the same one share encodings. */
  readonly representation: string
  /** The kind and apiVersion of the objects BOOKMARK events carry, when not the resource's (metadata-only watches). */
  readonly bookmarkType?: { readonly kind: string; readonly apiVersion: string } | undefined
  /**
   * Converts stored objects to the served version before `present` (a CRD's conversion webhook),
   * one call per delivered batch; its failure ends the watch with an ERROR event.
   */
  readonly convert?: ((stored: ReadonlyArray<KubeObject.KubeObject>) => Effect.Effect<ReadonlyArray<KubeObject.KubeObject>, Status.ApiError>) | undefined
}

type Item =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: KubeObject.KubeObject }
  | { readonly type: "BOOKMARK"; readonly revision: number; readonly initialEnd: boolean }
  | { readonly type: "ERROR"; readonly error: Status.ApiError }

export interface Watches {
  /** Validates the request (failing with 400/422) and returns the NDJSON body. */
  readonly stream: (request: Request) => Effect.Effect<Stream.Stream<Uint8Array>, Status.ApiError>
}

/**
 * Parses a resourceVersion parameter: undefined for unset, else a revision, or a 400.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Watch from "./Watch.ts"
 * Effect.runSync(Watch.parseResourceVersion("12")) // 12
 */
export const parseResourceVersion = (
  value: string | undefined
): Effect.Effect<number | undefined, Status.ApiError> => {
  if (value === undefined || value === "") return Effect.succeed(undefined)
  const n = Number(value)
  return Number.isSafeInteger(n) && n >= 0
    ? Effect.succeed(n)
    : Effect.fail(Status.badRequest(`resourceVersion: Invalid value: "${value}": must be a non-negative integer`))
}

const highest = (items: ReadonlyArray<Item>): number => {
  let revision = 0
  for (const item of items) {
    if (item.type === "BOOKMARK") revision = Math.max(revision, item.revision)
    else if (item.type !== "ERROR") revision = Math.max(revision, Number(KubeObject.meta(item.object).resourceVersion ?? 0))
  }
  return revision
}

/**
 * The watch machinery of one server.
 *
 * @example
 * import { Effect, Stream } from "effect"
 * import * as Builtins from "./Builtins.ts"
 * import * as Faults from "./Faults.ts"
 * import * as Store from "./Store.ts"
 * import * as Watch from "./Watch.ts"
 * const store = Store.make()
 * const watches = Watch.make({ store, faults: Faults.make() })
 * const configmaps = Builtins.make().find((r) => r.type.plural === "configmaps")!
 * const body = watches.stream({
 *   resource: configmaps, namespace: "default", labelSelector: [], fieldSelector: [],
 *   resourceVersion: "0", resourceVersionMatch: undefined, allowWatchBookmarks: false,
 *   sendInitialEvents: undefined, timeoutSeconds: 1, present: (o) => o, representation: "json"
 * })
 */
const encodingsKept = 4096

export const make = (options: Options): Watches => {
  const { faults, store } = options
  const durable = options.durable ?? (() => Effect.void)
  const bookmarkInterval = options.bookmarkIntervalMs ?? 5_000
  const bufferSize = options.bufferSize ?? 10_000
  // One encoding per stored object, resource and representation, however many watchers get it; only
  // the latest encodings are kept, so a stored object does not hold its JSON for as long as it lives.
  const encoded = new WeakMap<Registry.Resource, Map<string, Map<KubeObject.KubeObject, string>>>()

  const encoder = (request: Request) => {
    let byRepresentation = encoded.get(request.resource)
    if (byRepresentation === undefined) {
      byRepresentation = new Map()
      encoded.set(request.resource, byRepresentation)
    }
    let objects = byRepresentation.get(request.representation)
    if (objects === undefined) {
      objects = new Map()
      byRepresentation.set(request.representation, objects)
    }
    const cache = objects
    const objectJson = (object: KubeObject.KubeObject) => {
      let json = cache.get(object)
      if (json === undefined) {
        json = JSON.stringify(request.present(object))
        if (cache.size >= encodingsKept) cache.delete(cache.keys().next().value!)
        cache.set(object, json)
      }
      return json
    }
    const type = request.resource.type
    const bookmarkType = request.bookmarkType ?? { kind: type.kind, apiVersion: ResourceType.groupVersion(type) }
    return (item: Item): string => {
      switch (item.type) {
        case "BOOKMARK":
          return JSON.stringify({
            type: "BOOKMARK",
            object: {
              kind: bookmarkType.kind,
              apiVersion: bookmarkType.apiVersion,
              metadata: {
                resourceVersion: String(item.revision),
                ...(item.initialEnd ? { annotations: { "k8s.io/initial-events-end": "true" } } : {})
              }
            }
          }) + "\n"
        case "ERROR":
          return JSON.stringify({ type: "ERROR", object: Status.toBody(item.error) }) + "\n"
        default:
          return `{"type":"${item.type}","object":${objectJson(item.object)}}\n`
      }
    }
  }

  const validate = Effect.fnUntraced(function*(request: Request) {
    const from = yield* parseResourceVersion(request.resourceVersion)
    if (request.sendInitialEvents === true) {
      const causes: Array<Status.StatusCause> = []
      if (request.resourceVersionMatch !== "NotOlderThan") {
        causes.push(Status.fieldForbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
      }
      if (!request.allowWatchBookmarks) {
        causes.push(Status.fieldForbidden("allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true"))
      }
      if (causes.length > 0) return yield* Status.invalidOptions("ListOptions", causes)
    } else if (request.resourceVersionMatch !== undefined && request.resourceVersionMatch !== "") {
      return yield* Status.invalidOptions("ListOptions", [
        Status.fieldForbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
      ])
    }
    if (request.timeoutSeconds !== undefined && !(request.timeoutSeconds >= 0)) {
      return yield* Status.badRequest(`timeoutSeconds: Invalid value: must be a non-negative number`)
    }
    return from
  })

  const stream = Effect.fnUntraced(function*(request: Request) {
    const from = yield* validate(request)
    const resource = request.resource
    const selectable = resource.fromStorage ?? ((o: KubeObject.KubeObject) => o)
    const pinned = Selectors.pinnedName(request.fieldSelector)
    const matches = (object: KubeObject.KubeObject | undefined): boolean => {
      if (object === undefined) return false
      const m = KubeObject.meta(object)
      if (pinned !== undefined && m.name !== pinned) return false
      return Selectors.matchesLabels(request.labelSelector, m.labels) &&
        (request.fieldSelector.length === 0 || Selectors.matchesFields(request.fieldSelector, selectable(object), resource.fieldValues))
    }
    const encode = encoder(request)
    const initial = from === undefined || from === 0 || request.sendInitialEvents === true

    return Stream.unwrap(Effect.gen(function*() {
      const queue = yield* Queue.bounded<Item, Cause.Done>(bufferSize)
      let terminal: Item | undefined
      let subscription: { readonly cancel: () => void } | undefined
      const stop = (last?: Item) => {
        terminal ??= last
        subscription?.cancel()
        Queue.endUnsafe(queue)
      }
      const offer = (item: Item) => {
        if (!Queue.offerUnsafe(queue, item)) {
          stop({ type: "ERROR", error: Status.expired(`watch dropped: the client fell ${bufferSize} events behind`) })
        }
      }

      const startRevision = initial ? store.revision() : from!
      const snapshot = initial ? store.list(resource.storage, request.namespace).filter(matches) : []
      const result = store.watch(resource.storage, request.namespace, startRevision, (event) => {
        if (event.revision <= startRevision) return
        const now = matches(event.object)
        if (event.type === "DELETED") {
          if (now) offer({ type: "DELETED", object: event.object })
        } else if (event.type === "ADDED") {
          if (now) offer({ type: "ADDED", object: event.object })
        } else {
          const before = matches(event.prev)
          if (now) offer({ type: before ? "MODIFIED" : "ADDED", object: event.object })
          else if (before) offer({ type: "DELETED", object: event.object })
        }
      })
      if (result === "Expired") {
        const error = Status.expired(`too old resource version: ${startRevision} (${store.compactedRevision() + 1})`)
        return Stream.succeed(Buffer.from(encode({ type: "ERROR", error }))) as Stream.Stream<Uint8Array>
      }
      subscription = result
      const handle: Faults.WatchHandle = {
        group: resource.type.group,
        plural: resource.type.plural,
        namespace: request.namespace,
        close: () => stop(),
        expire: () =>
          stop({ type: "ERROR", error: Status.expired(`too old resource version: ${startRevision} (${store.revision()})`) })
      }
      const unregister = faults.register(handle)
      const { type } = resource
      const closed = options.metrics?.watchOpened({
        group: type.group,
        version: type.version,
        resource: type.plural,
        scope: request.namespace === undefined ? "cluster" : "namespace"
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        unregister()
        closed?.()
        subscription?.cancel()
      }))

      if (request.allowWatchBookmarks) {
        yield* Effect.sync(() => offer({ type: "BOOKMARK", revision: store.revision(), initialEnd: false })).pipe(
          Effect.delay(bookmarkInterval),
          Effect.repeat(Schedule.forever),
          Effect.forkScoped
        )
      }
      if (request.timeoutSeconds !== undefined) {
        // As kube's cacher: a bookmark 2 s before the deadline, so a client can resume from it.
        if (request.allowWatchBookmarks && request.timeoutSeconds > 2) {
          yield* Effect.sync(() => offer({ type: "BOOKMARK", revision: store.revision(), initialEnd: false })).pipe(
            Effect.delay((request.timeoutSeconds - 2) * 1000),
            Effect.forkScoped
          )
        }
        yield* Effect.sync(() => stop()).pipe(Effect.delay(request.timeoutSeconds * 1000), Effect.forkScoped)
      }

      const head: Array<Item> = snapshot.map((object) => ({ type: "ADDED", object }))
      if (request.sendInitialEvents === true) head.push({ type: "BOOKMARK", revision: startRevision, initialEnd: true })
      const converted = (items: ReadonlyArray<Item>): Effect.Effect<ReadonlyArray<Item>, Status.ApiError> => {
        const convert = request.convert
        if (convert === undefined) return Effect.succeed(items)
        const objects = items.flatMap((item) => "object" in item ? [item.object] : [])
        return Effect.map(convert(objects), (served) => {
          let next = 0
          return items.map((item) => "object" in item ? { ...item, object: served[next++]! } : item)
        })
      }
      const deliver = (items: ReadonlyArray<Item>) =>
        durable(highest(items)).pipe(
          Effect.andThen(faults.awaitDelivery(handle)),
          Effect.andThen(converted(items)),
          Effect.map((ready) => {
            const lines = ready.map(encode)
            const metrics = options.metrics
            if (metrics !== undefined) {
              const sizes: Array<number> = []
              for (let i = 0; i < ready.length; i++) if (ready[i]!.type !== "BOOKMARK") sizes.push(Buffer.byteLength(lines[i]!))
              if (sizes.length > 0) metrics.eventsSent(type.group, type.version, type.kind, sizes)
            }
            return [Buffer.from(lines.join("")) as Uint8Array] as const
          }),
          Effect.catch((error) =>
            Effect.sync(() => {
              stop()
              return [Buffer.from(encode({ type: "ERROR", error })) as Uint8Array] as const
            })
          )
        )
      const tail = Stream.suspend(() =>
        terminal === undefined ? Stream.empty : Stream.succeed(Buffer.from(encode(terminal)) as Uint8Array)
      )
      // An empty first chunk makes Node send the response headers now: clients wait for them
      // before they treat the watch as open, even when no event comes for a long time.
      const open = Stream.succeed(new Uint8Array(0))
      return open.pipe(
        Stream.concat(Stream.fromArray(head).pipe(
          Stream.rechunk(1000),
          Stream.concat(Stream.fromQueue(queue)),
          Stream.mapArrayEffect(deliver)
        )),
        Stream.concat(tail)
      )
    }))
  })

  return { stream }
}
