/**
 * The Kubernetes API client: typed verbs over declared resources, straight over an undici dispatcher
 * (every call is interruptible and every failure a typed `KubeError`), authenticated from a
 * kubeconfig. With a tracing backend installed, each request is a client span.
 * Like client-go, it sends a throttled request (429) again after the server's Retry-After, up to 10
 * times, before failing with `TooManyRequests`.
 *
 * @since 0.1.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Duration, Effect, Layer, Option, type Scope, Stream, Tracer } from "effect"
import * as Exchange from "./Exchange.ts"
import * as KubeConfig from "./KubeConfig.ts"
import * as KubeError from "./KubeError.ts"
import type * as ObjectMeta from "./ObjectMeta.ts"
import * as ProxyEnvironment from "./ProxyEnvironment.ts"
import * as RequestMetrics from "./RequestMetrics.ts"
import * as Resource from "./Resource.ts"
import * as WatchLines from "./WatchLines.ts"
import * as Written from "./Written.ts"

export interface ListOptions {
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** Page size; `listAll` follows `continue` tokens. */
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly resourceVersion?: string | undefined
  /** Skip (and log) items that do not decode instead of failing the list; informers relist this way. */
  readonly skipUndecodable?: boolean | undefined
  /** With `skipUndecodable`: told of each skipped item, so it is reported rather than lost. */
  readonly onUndecodable?: Undecodable | undefined
}

/** Told of an object that does not decode (the raw JSON and why); the watch event's type, in a watch. */
export type Undecodable = (
  object: unknown,
  error: Resource.DecodeError,
  type?: "ADDED" | "MODIFIED" | "DELETED"
) => Effect.Effect<void>

export interface List<A> {
  readonly items: ReadonlyArray<A>
  readonly resourceVersion: string
  readonly continue: string | undefined
}

export interface WatchOptions {
  readonly namespace?: string | undefined
  /**
   * Changes after this version; the list's version when following a list. With
   * `sendInitialEvents`, the state at least this new ("" for the latest).
   */
  readonly resourceVersion: string
  /**
   * A streaming list: the collection's objects as ADDED events first, then a bookmark marked
   * `initialEventsEnd` at their version, then the changes after it (bookmarks are asked for).
   * A server without the feature refuses it with 422 (`Invalid`).
   */
  readonly sendInitialEvents?: boolean | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** The server ends the watch after this long (it is resumed from the last version seen). */
  readonly timeoutSeconds?: number | undefined
  readonly allowBookmarks?: boolean | undefined
  /** Told of each object event that does not decode (it is skipped, not delivered). */
  readonly onUndecodable?: Undecodable | undefined
}

export type WatchEvent<A> =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: A }
  | { readonly type: "BOOKMARK"; readonly resourceVersion: string; readonly initialEventsEnd?: true }

export interface DeleteOptions {
  readonly propagationPolicy?: "Background" | "Foreground" | "Orphan" | undefined
  readonly gracePeriodSeconds?: number | undefined
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string } | undefined
}

export interface ApplyOptions {
  /** Who owns the applied fields; one per controller. */
  readonly fieldManager: string
  /** Take ownership of fields other managers own instead of failing with a Conflict. */
  readonly force?: boolean | undefined
  /** "status" to apply to the status subresource. */
  readonly subresource?: "status" | undefined
}

export interface PatchOptions {
  readonly type: "merge" | "json" | "strategic"
  readonly subresource?: string | undefined
  readonly fieldManager?: string | undefined
}

/** An object to server-side apply: only the fields the manager owns. apiVersion and kind are filled in. */
export type ApplyBody = { readonly metadata: { readonly name: string; readonly namespace?: string | undefined } & Record<string, unknown> } & Record<string, unknown>

export interface RawRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly query?: Readonly<Record<string, string | undefined>> | undefined
  readonly body?: unknown
  readonly contentType?: string | undefined
  /** The Accept header; default `application/json`. */
  readonly accept?: string | undefined
}

export interface Client {
  /** The API server URL. */
  readonly server: string
  /** Any JSON request; errors are typed from the metav1.Status the server answers. */
  readonly request: (request: RawRequest) => Effect.Effect<unknown, KubeError.KubeError>
  readonly get: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    name: string,
    namespace?: string | undefined
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
  readonly list: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    options?: ListOptions
  ) => Effect.Effect<List<A>, KubeError.KubeError | Resource.DecodeError>
  /** Every page of a list, at the first page's resourceVersion. */
  readonly listAll: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    options?: ListOptions
  ) => Effect.Effect<List<A>, KubeError.KubeError | Resource.DecodeError>
  /** One watch request; ends when the server ends it. An ERROR event fails it (410 is `Gone`). */
  readonly watch: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    options: WatchOptions
  ) => Stream.Stream<WatchEvent<A>, KubeError.KubeError>
  readonly create: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    object: A,
    options?: { readonly fieldManager?: string | undefined }
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
  readonly replace: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    object: A,
    options?: { readonly fieldManager?: string | undefined; readonly subresource?: "status" | undefined }
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
  readonly delete: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    name: string,
    namespace?: string | undefined,
    options?: DeleteOptions
  ) => Effect.Effect<void, KubeError.KubeError>
  /** Server-side apply (`application/apply-patch+yaml`). */
  readonly apply: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    body: ApplyBody,
    options: ApplyOptions
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
  readonly patch: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    options: PatchOptions
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
}

/**
 * The client, from a kubeconfig.
 *
 * @example
 * import { Effect } from "effect"
 * import { Builtins, Kube } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const kube = yield* Kube.Kube
 *   const list = yield* kube.list(Builtins.ConfigMap, { namespace: "default" })
 *   return list.items.length
 * }).pipe(Effect.provide(Kube.layer({ _tag: "File", path: ".kubefx/kubeconfig" })))
 */
export class Kube extends Context.Service<Kube, Client>()("@kubefx/kube/Kube") {}

/**
 * A `Kube` layer from a kubeconfig source.
 *
 * @example
 * import { Kube } from "@kubefx/kube"
 * const live = Kube.layer({ _tag: "Default" })
 */
export const layer = (source: KubeConfig.Source): Layer.Layer<Kube, KubeConfig.KubeConfigError> =>
  Layer.effect(Kube, Effect.flatMap(KubeConfig.connection(source), make))

const throttledRetries = 10

/**
 * A client over a connection: requests go straight over the connection's undici dispatcher (or an
 * agent of its own, closed with the scope).
 *
 * @example
 * import { Effect } from "effect"
 * import { Kube, KubeConfig } from "@kubefx/kube"
 * const client = Effect.flatMap(KubeConfig.load({ _tag: "Default" }), (config) =>
 *   Effect.flatMap(KubeConfig.connect(config), Kube.make))
 */
export const make = (connection: KubeConfig.Connection): Effect.Effect<Client, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dispatcher = connection.dispatcher ??
      Context.get(yield* Layer.build(NodeHttpClient.layerDispatcher), NodeHttpClient.Dispatcher)
    // A server URL may carry a path (an API proxy's, say) that every request goes under.
    const base = new URL(connection.server)
    const origin = base.origin
    const prefix = base.pathname.replace(/\/+$/, "")
    // rest_client_requests_total, each answer counted as it arrives.
    const requests = yield* RequestMetrics.recorder(base.host)

    // As client-go: answers read whole are asked for gzipped (the server compresses only large ones,
    // a list's pages) unless the kubeconfig's cluster says `disable-compression`; unlike it, not from
    // a loopback server unless the cluster says `disable-compression: false`. Watches are never
    // compressed by kube-apiserver, so their lines are not asked to be.
    const compressed = !(connection.disableCompression ?? ProxyEnvironment.isLoopback(base.hostname))
    const encoding = compressed ? { "accept-encoding": "gzip" } : {}
    // Eager: with headers known at once (a static token), the request is built at once too.
    const exchangeFor = (request: RawRequest, whole: boolean) =>
      Effect.mapEager(
        Effect.mapErrorEager(connection.headers, (error) => new KubeError.Unauthorized({ message: error.message, code: 401 })),
        (headers): Exchange.Request => {
          const body = request.body === undefined ? undefined : JSON.stringify(request.body)
          const accept = request.accept ?? "application/json"
          return {
            method: request.method,
            path: prefix + request.path + queryString(request.query),
            headers: body !== undefined
              ? { ...headers, ...encoding, accept, "content-type": request.contentType ?? "application/json" }
              : whole
              ? { ...headers, ...encoding, accept }
              : { ...headers, accept },
            body
          }
        }
      )

    const refused = (reply: Exchange.Reply): KubeError.KubeError =>
      KubeError.fromStatus(reply.status, parseOr(reply.body, {}), headerOf(reply.headers["retry-after"]))

    // The text of an answer that is not a refusal.
    const answerOnce = (raw: RawRequest): Effect.Effect<string, KubeError.KubeError> =>
      tracedWithBackend(raw, exchangeFor(raw, true).pipe(
        Effect.flatMapEager((request) => Exchange.send(dispatcher, origin, request, requests.observer(request.method))),
        Effect.flatMap((reply) => reply.status >= 400 ? Effect.fail(refused(reply)) : Effect.succeed(reply.body))
      ))

    // As client-go's REST client: a throttled request (429, which the server did not act on) is sent
    // again after its Retry-After, up to 10 times, so throttling slows a caller down instead of failing it.
    const answer = (raw: RawRequest, retried = 0): Effect.Effect<string, KubeError.KubeError> =>
      Effect.catchIf(
        answerOnce(raw),
        (error): error is KubeError.TooManyRequests => error._tag === "TooManyRequests" && retried < throttledRetries,
        (error) => Effect.andThen(Effect.sleep(Duration.seconds(error.retryAfterSeconds)), answer(raw, retried + 1))
      )

    const request = (raw: RawRequest): Effect.Effect<unknown, KubeError.KubeError> => Effect.flatMap(answer(raw), parseAnswer)

    // An object this client wrote comes back on its watches at the same resourceVersion: the answer
    // to the write, decoded once, is reused for the watch event instead of decoding it again.
    const written = Written.make()
    const decodeWith = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>) => (value: unknown) =>
      Resource.decode(resource, value)
    // A write: its answer decoded and remembered with its text (without the line break Go's encoder
    // ends it with), which is what the watch line of the same version carries. Parsed and decoded
    // at once (as Exits, eagerly) unless the Schema has effects of its own.
    const write = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, raw: RawRequest) =>
      Effect.flatMap(answer(resource.metadataOnly === true ? { ...raw, accept: acceptOf(resource, "PartialObjectMetadata") } : raw), (text) =>
        Effect.flatMapEager(parseAnswer(text), (value) =>
          Effect.mapEager(Resource.decode(resource, value), (decoded) => {
            written.remember(resource, decoded, text.trimEnd())
            return decoded
          })))

    const listPage = Effect.fnUntraced(function*<A extends ObjectMeta.KubeObject>(
      resource: Resource.Resource<A>,
      options: ListOptions = {}
    ) {
      const body = (yield* request({
        method: "GET",
        path: Resource.collectionPath(resource, options.namespace),
        accept: acceptOf(resource, "PartialObjectMetadataList"),
        query: {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          limit: options.limit?.toString(),
          continue: options.continue,
          resourceVersion: options.resourceVersion
        }
      })) as { readonly items?: ReadonlyArray<unknown>; readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string } }
      const listed = body.items ?? []
      const items = decodedAtOnce(resource, listed) ??
        (options.skipUndecodable === true
          ? (yield* Effect.forEach(listed, (item) =>
            Resource.decode(resource, item).pipe(
              Effect.map(Option.some),
              Effect.catchTag("DecodeError", (error) =>
                Effect.logWarning(`skipping a ${resource.kind} that does not decode: ${error.message}`).pipe(
                  Effect.andThen(options.onUndecodable?.(item, error) ?? Effect.void),
                  Effect.as(Option.none())
                ))
            ))).flatMap((item) => Option.isSome(item) ? [item.value] : [])
          : yield* Effect.forEach(listed, decodeWith(resource)))
      const token = body.metadata?.continue
      return {
        items,
        resourceVersion: body.metadata?.resourceVersion ?? "",
        continue: token === undefined || token === "" ? undefined : token
      }
    })

    const listAll = Effect.fnUntraced(function*<A extends ObjectMeta.KubeObject>(
      resource: Resource.Resource<A>,
      options: ListOptions = {}
    ) {
      const first = yield* listPage(resource, { ...options, limit: options.limit ?? 500 })
      const items = [...first.items]
      let token = first.continue
      while (token !== undefined) {
        const page = yield* listPage(resource, { ...options, limit: options.limit ?? 500, continue: token })
        items.push(...page.items)
        token = page.continue
      }
      return { items, resourceVersion: first.resourceVersion, continue: undefined }
    })

    const watch = <A extends ObjectMeta.KubeObject>(
      resource: Resource.Resource<A>,
      options: WatchOptions
    ): Stream.Stream<WatchEvent<A>, KubeError.KubeError> =>
      Stream.unwrap(Effect.map(
        exchangeFor({
          method: "GET",
          path: Resource.collectionPath(resource, options.namespace),
          accept: acceptOf(resource, "PartialObjectMetadata"),
          query: {
            watch: "true",
            resourceVersion: options.resourceVersion === "" ? undefined : options.resourceVersion,
            ...(options.sendInitialEvents === true ? { sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan" } : {}),
            allowWatchBookmarks: options.allowBookmarks === false && options.sendInitialEvents !== true ? undefined : "true",
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            timeoutSeconds: options.timeoutSeconds?.toString()
          }
        }, false),
        (request) =>
          WatchLines.events(
            resource,
            Exchange.lines(dispatcher, origin, request, refused, requests.observer(request.method)),
            options.onUndecodable,
            written
          )
      ))

    const writeQuery = (fieldManager: string | undefined) => ({ fieldManager })

    const client: Client = {
      server: connection.server,
      request,
      get: (resource, name, namespace) =>
        Effect.flatMap(
          request({ method: "GET", path: Resource.objectPath(resource, namespace, name), accept: acceptOf(resource, "PartialObjectMetadata") }),
          decodeWith(resource)
        ),
      list: (resource, options) => listPage(resource, options),
      listAll,
      watch,
      create: (resource, object, options) =>
        Effect.flatMap(Resource.encode(resource, object), (body) =>
          write(resource, {
            method: "POST",
            path: Resource.collectionPath(resource, object.metadata.namespace),
            query: writeQuery(options?.fieldManager),
            body
          })),
      replace: (resource, object, options) =>
        Effect.flatMap(Resource.encode(resource, object), (body) =>
          write(resource, {
            method: "PUT",
            path: Resource.objectPath(resource, object.metadata.namespace, object.metadata.name ?? "", options?.subresource),
            query: writeQuery(options?.fieldManager),
            body
          })),
      delete: (resource, name, namespace, options) =>
        Effect.asVoid(request({
          method: "DELETE",
          path: Resource.objectPath(resource, namespace, name),
          body: { kind: "DeleteOptions", apiVersion: "v1", ...options }
        })),
      apply: (resource, body, options) =>
        write(resource, {
          method: "PATCH",
          path: Resource.objectPath(resource, body.metadata.namespace, body.metadata.name, options.subresource),
          query: { fieldManager: options.fieldManager, force: options.force === true ? "true" : undefined },
          contentType: "application/apply-patch+yaml",
          body: { ...body, apiVersion: resource.apiVersion, kind: resource.kind }
        }),
      patch: (resource, name, namespace, patch, options) =>
        write(resource, {
          method: "PATCH",
          path: Resource.objectPath(resource, namespace, name, options.subresource),
          query: writeQuery(options.fieldManager),
          contentType: patchContentTypes[options.type],
          body: patch
        })
    }
    return client
  })

// A metadata-only resource asks for its objects' metadata alone, with whole objects as the fallback
// (they decode as metadata too) for a server that does not serve that view, as client-go's does.
const acceptOf = (resource: Resource.Resource<any>, as: "PartialObjectMetadata" | "PartialObjectMetadataList") =>
  resource.metadataOnly === true ? `application/json;as=${as};g=meta.k8s.io;v=v1,application/json` : undefined

const patchContentTypes = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json"
} as const

const queryString = (query: Readonly<Record<string, string | undefined>> | undefined): string => {
  let search = ""
  if (query !== undefined) {
    for (const key in query) {
      const value = query[key]
      if (value !== undefined) search += `${search === "" ? "?" : "&"}${key}=${encodeURIComponent(value)}`
    }
  }
  return search
}

// A page's items decoded in one loop, when each decodes at once and none is refused: undefined
// otherwise, and the page takes the effects' way (a refused item skipped with a warning, or failing it).
const decodedAtOnce = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  items: ReadonlyArray<unknown>
): Array<A> | undefined => {
  const decoded: Array<A> = []
  for (const item of items) {
    const object = Resource.decodeNow(resource, item)
    if (object === undefined) return undefined
    decoded.push(object)
  }
  return decoded
}

const headerOf = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

const parseAnswer = (text: string): Effect.Effect<unknown, KubeError.Transport> => {
  try {
    return Effect.succeed(text === "" ? null : JSON.parse(text))
  } catch (error) {
    return Effect.fail(new KubeError.Transport({ message: `unreadable answer: ${(error as Error).message}` }))
  }
}

const parseOr = (text: string, fallback: unknown): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return fallback
  }
}

// A span per request costs an operator a tenth of its CPU at full load; under Effect's in-memory
// tracer nothing can observe it (log lines carry the reconcile's trace), so it is made only when a
// tracing backend is installed.
const tracedWithBackend = <A, E>(request: RawRequest, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer
      ? effect
      : Effect.withSpan(effect, `http.client ${request.method}`, {
        kind: "client",
        attributes: { "http.request.method": request.method, "url.path": request.path }
      })
  )
