/**
 * The HTTP face of the server, routed with `HttpRouter`: each route checks the bearer token, parses
 * the path, negotiates the representation, applies injected faults, and answers from discovery,
 * OpenAPI, the fault admin endpoint, or the REST storage and watches. Every failure is answered as
 * a `metav1.Status`; nothing a client sends escapes as a defect.
 */
import { ByteSize, Cause, Effect, type Layer, Result, Schema, Stream } from "effect"
import { HttpIncomingMessage, HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Admission from "./Admission.ts"
import * as AggregatorProxy from "./AggregatorProxy.ts"
import * as ApiServices from "./ApiServices.ts"
import * as Authentication from "./Authentication.ts"
import * as Authorization from "./Authorization.ts"
import * as Bindings from "./Bindings.ts"
import * as Discovery from "./Discovery.ts"
import * as Evictions from "./Evictions.ts"
import * as Faults from "./Faults.ts"
import * as Health from "./Health.ts"
import * as Negotiation from "./Negotiation.ts"
import * as PartialMetadata from "./PartialMetadata.ts"
import * as PodConnections from "./PodConnections.ts"
import * as PodLogs from "./PodLogs.ts"
import * as Paths from "./Paths.ts"
import * as Protobuf from "./Protobuf.ts"
import * as RequestMetrics from "./RequestMetrics.ts"
import * as ResponseCompression from "./ResponseCompression.ts"
import type * as Registry from "./Registry.ts"
import * as ResourceType from "./ResourceType.ts"
import * as Rest from "./Rest.ts"
import * as Scale from "./Scale.ts"
import * as Selectors from "./Selectors.ts"
import * as ServedOpenApi from "./ServedOpenApi.ts"
import * as Status from "./Status.ts"
import * as Table from "./Table.ts"
import * as TokenRequests from "./TokenRequests.ts"
import type * as Watch from "./Watch.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** Largest request body accepted (kube-apiserver's limit): larger bodies get 413. */
export const maxBodyBytes = 3 * 1024 * 1024

export interface PatchOptions extends Rest.WriteOptions {
  readonly force: boolean | undefined
  /** Whether the client named a field manager (apply requires one). */
  readonly fieldManagerGiven: boolean
}

export interface Context {
  readonly env: Rest.Env
  readonly watches: Watch.Watches
  readonly faults: Faults.Faults
  /** Who a request's bearer token is: the server's own token or a service account token it issued. */
  readonly authentication: Authentication.Authentication
  /** host:port clients reach the server at. */
  readonly address: () => string
  readonly patch: (
    target: Rest.Target,
    subresource: Rest.Subresource | undefined,
    contentType: string,
    body: string,
    options: PatchOptions
  ) => Effect.Effect<Rest.Written, Status.ApiError>
  /** Applies a json, merge or strategic merge patch to a document with no known structure (a Scale). */
  readonly patchDocument: (
    contentType: string,
    document: KubeObject.KubeObject,
    body: string,
    fieldValidation: Admission.FieldValidation
  ) => Effect.Effect<KubeObject.KubeObject, Status.ApiError>
  /** The OpenAPI v3 index (path undefined) or one group/version document, as JSON text; undefined when not served. */
  readonly openapi: (path: string | undefined) => string | undefined
  /** Finalizes a namespace (PUT namespaces/<name>/finalize). */
  readonly finalizeNamespace: (name: string, body: KubeObject.KubeObject) => Effect.Effect<KubeObject.KubeObject, Status.ApiError>
  /** Deletes a namespace (it is marked Terminating and emptied by the namespace controller). */
  readonly deleteNamespace: (name: string, options: Rest.DeleteOptions) => Effect.Effect<Rest.Deleted, Status.ApiError>
  /** What a remote APIService's server last listed in its discovery, by APIService name. */
  readonly discovered: (apiService: string) => ApiServices.Discovered | undefined
  /** The counts `/metrics` serves. */
  readonly metrics: RequestMetrics.RequestMetrics
}

const jsonResponse = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType: "application/json", headers })

/**
 * The response for an error: its Status body, and Retry-After for 429s.
 *
 * @example
 * import * as Http from "./Http.ts"
 * import * as Status from "./Status.ts"
 * Http.errorResponse(Status.tooManyRequests(3)).status // 429
 */
export const errorResponse = (error: Status.ApiError): HttpServerResponse.HttpServerResponse =>
  jsonResponse(error.code, Status.toBody(error), {
    ...((error.details?.retryAfterSeconds ?? 0) > 0 ? { "retry-after": String(error.details!.retryAfterSeconds) } : {}),
    ...warningHeader(error.warnings ?? [])
  })

const warningHeader = (warnings: ReadonlyArray<string>): Record<string, string> =>
  warnings.length === 0
    ? {}
    : { warning: warnings.map((w) => `299 - "${w.replace(/\\/g, "\\\\").replace(/"/g, "\\\"")}"`).join(", ") }

const readBytes = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Uint8Array, Status.ApiError> => {
  const length = Number(request.headers["content-length"] ?? 0)
  if (length > maxBodyBytes) return Effect.fail(Status.tooLarge(`the request body is ${length} bytes, the limit is ${maxBodyBytes}`))
  return request.arrayBuffer.pipe(
    Effect.map((buffer) => new Uint8Array(buffer)),
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
    Effect.mapError((e) =>
      e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge"
        ? Status.tooLarge(`the request body is larger than the limit of ${maxBodyBytes} bytes`)
        : Status.badRequest(`the request body could not be read: ${e.message}`)
    )
  )
}

const readBody = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string, Status.ApiError> =>
  Effect.map(readBytes(request), (bytes) => Buffer.from(bytes).toString("utf8"))

// A boolean query parameter as apimachinery converts one: absent is unset; `0` and `false` in any
// case are false; anything else, `True`, `yes` and the empty value among them, is true.
const flag = (query: URLSearchParams, name: string): boolean | undefined => {
  const value = query.get(name)
  if (value === null) return undefined
  return !(value === "0" || value.toLowerCase() === "false")
}

const parseSelectors = (resource: Registry.Resource, query: URLSearchParams) =>
  Effect.gen(function*() {
    const labelSelector = yield* Effect.fromResult(Selectors.parseLabelSelector(query.get("labelSelector") ?? ""))
    const fieldSelector = yield* Effect.fromResult(
      Selectors.parseFieldSelector(query.get("fieldSelector") ?? "", [
        ...Selectors.commonFields,
        ...resource.type.selectableFields
      ])
    )
    return { labelSelector, fieldSelector }
  })

// What a Table's rows carry; asked of a Table alone, and checked as kube-apiserver converts to one.
const includeObject = (query: URLSearchParams): Effect.Effect<Table.IncludeObject, Status.ApiError> => {
  const include = Table.parseIncludeObject(query.get("includeObject"))
  return typeof include === "string" ? Effect.succeed(include) : Effect.fail(Status.badRequest(include.invalid))
}

const parseInteger = (query: URLSearchParams, name: string): Effect.Effect<number | undefined, Status.ApiError> => {
  const raw = query.get(name)
  if (raw === null || raw === "") return Effect.succeed(undefined)
  const n = Number(raw)
  return Number.isSafeInteger(n) && n >= 0
    ? Effect.succeed(n)
    : Effect.fail(Status.badRequest(`${name}: Invalid value: "${raw}": must be a non-negative integer`))
}

const writeOptions = (query: URLSearchParams, userAgent: string | undefined, user: Authentication.User) =>
  Effect.gen(function*() {
    const dryRun = query.getAll("dryRun")
    if (dryRun.some((v) => v !== "All" && v !== "")) {
      return yield* Status.badRequest(`dryRun: Unsupported value: "${dryRun.join(",")}": supported values: "All"`)
    }
    const given = query.get("fieldManager")
    if (given !== null && given.length > 128) {
      return yield* Status.invalidOptions("PatchOptions", [
        { reason: "FieldValueTooLong", message: "Too long: may not be more than 128 bytes", field: "fieldManager" }
      ])
    }
    const fieldValidation = yield* Admission.parseFieldValidation(query.get("fieldValidation") ?? undefined)
    const fromAgent = (userAgent ?? "").split("/")[0]!.slice(0, 128)
    return {
      dryRun: dryRun.includes("All"),
      fieldManager: given !== null && given !== "" ? given : fromAgent === "" ? "unknown" : fromAgent,
      fieldManagerGiven: given !== null && given !== "",
      fieldValidation,
      user
    }
  })

const PropagationPolicy = Schema.Literals(["Background", "Foreground", "Orphan"])

const deleteOptions = (query: URLSearchParams, request: HttpServerRequest.HttpServerRequest, user: Authentication.User) =>
  Effect.gen(function*() {
    const bytes = yield* readBytes(request)
    const protobuf = Negotiation.mediaType(request.headers["content-type"]) === Protobuf.mediaType
    const text = protobuf ? "" : Buffer.from(bytes).toString("utf8")
    let fromBody: KubeObject.KubeObject = {}
    // client-go sends its DeleteOptions as protobuf when it speaks protobuf (kubectl drain does).
    if (protobuf && bytes.length > 0) {
      fromBody = yield* Negotiation.decodeObject(request.headers["content-type"], bytes)
    } else if (text.trim() !== "") {
      const parsed = yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: (e) => Status.badRequest(`the DeleteOptions could not be decoded: ${String(e)}`)
      })
      if (!KubeObject.isObject(parsed)) return yield* Status.badRequest("the DeleteOptions must be an object")
      fromBody = parsed
    }
    const policyRaw = fromBody.propagationPolicy ?? query.get("propagationPolicy") ?? undefined
    const orphan = fromBody.orphanDependents ?? flag(query, "orphanDependents")
    let propagationPolicy: Rest.PropagationPolicy | undefined
    if (policyRaw !== undefined && policyRaw !== "") {
      const decoded = Schema.decodeUnknownResult(PropagationPolicy)(policyRaw)
      if (Result.isFailure(decoded)) {
        return yield* Status.invalidOptions("DeleteOptions", [
          Status.fieldInvalid("propagationPolicy", policyRaw, "must be one of Background, Foreground, Orphan")
        ])
      }
      propagationPolicy = decoded.success
    } else if (orphan === true) {
      propagationPolicy = "Orphan"
    }
    const pre = KubeObject.isObject(fromBody.preconditions) ? fromBody.preconditions : undefined
    const dryRun = [...query.getAll("dryRun"), ...(Array.isArray(fromBody.dryRun) ? fromBody.dryRun : [])]
    const graceRaw = fromBody.gracePeriodSeconds ?? query.get("gracePeriodSeconds") ?? undefined
    const gracePeriodSeconds = graceRaw === undefined || graceRaw === null || graceRaw === "" ? undefined : Number(graceRaw)
    if (gracePeriodSeconds !== undefined && !Number.isInteger(gracePeriodSeconds)) {
      return yield* Status.badRequest(`gracePeriodSeconds: invalid value ${JSON.stringify(graceRaw)}: must be an integer`)
    }
    return {
      propagationPolicy,
      gracePeriodSeconds,
      preconditions: pre === undefined ? undefined : {
        ...(typeof pre.uid === "string" ? { uid: pre.uid } : {}),
        ...(typeof pre.resourceVersion === "string" ? { resourceVersion: pre.resourceVersion } : {})
      },
      dryRun: dryRun.includes("All"),
      user
    } satisfies Rest.DeleteOptions
  })

type Verb = Faults.Verb

const verbOf = (method: string, path: Paths.ResourcePath, query: URLSearchParams): Verb | undefined => {
  const item = path.name !== undefined
  switch (method) {
    case "GET":
      // A named object's GET is a get whatever `watch` says (kube reads it only of collections); the
      // legacy /watch/ path watches one object.
      return item ? (path.legacyWatch ? "watch" : "get") : (path.legacyWatch || flag(query, "watch") === true ? "watch" : "list")
    case "POST":
      return item ? undefined : "create"
    case "PUT":
      return item ? "update" : undefined
    case "PATCH":
      return item ? "patch" : undefined
    case "DELETE":
      return item ? "delete" : "deletecollection"
    default:
      return undefined
  }
}

// The 403 for a request its user may not make, or undefined: checked at once, no step of its own.
const refusal = (context: Context, user: Authentication.User, asked: Authorization.Request): Status.ApiError | undefined =>
  context.env.authorization.allows(user, asked) ? undefined : Authorization.forbidden(user, asked)

/** What every route gets: the request, who sent it, its parsed path and its query. */
interface Call {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly user: Authentication.User
  readonly path: Paths.Parsed
  readonly query: URLSearchParams
}

// Authenticates, parses, runs the route, and answers every failure as a Status (a defect as 500).
// Counted with the code it is answered with, an error's included, timed from here, and counted in
// flight from its parse until its answer unless it is long-running.
const answer = (context: Context, respond: (call: Call) => Effect.Effect<HttpServerResponse.HttpServerResponse, Status.ApiError>) =>
(request: HttpServerRequest.HttpServerRequest) => {
  let counted: ReturnType<typeof requestLabels>
  let inFlight: (() => void) | undefined
  const receivedAt = performance.now()
  // The request's admission webhooks add their time here, which its SLI latency leaves out.
  const admission: RequestMetrics.Admission = { metrics: context.metrics, webhookSeconds: 0 }
  return Effect.suspend(() => {
    const authenticated = Authentication.userOf(context.authentication, request.headers["authorization"])
    if (authenticated === undefined) return Status.unauthorized()
    const user = Authorization.impersonated(context.env.authorization, authenticated, request.headers)
    if (user instanceof Status.ApiError) return Effect.fail(user)
    const q = request.url.indexOf("?")
    const rawPath = q === -1 ? request.url : request.url.slice(0, q)
    const path = Paths.parse(rawPath)
    // A resource request is authorized once its verb is known; any other path here.
    if (path._tag !== "Resource") {
      const asked: Authorization.NonResourceRequest = {
        _tag: "NonResource",
        verb: request.method === "HEAD" ? "get" : request.method.toLowerCase(),
        path: rawPath
      }
      const refused = refusal(context, user, asked)
      if (refused !== undefined) return Effect.fail(refused)
    }
    const query = new URLSearchParams(q === -1 ? "" : request.url.slice(q + 1))
    counted = requestLabels(request, path, rawPath, query)
    const call: Call = { request, user, path, query }
    if (counted === undefined || !RequestMetrics.isLongRunning(counted)) inFlight = context.metrics.started(isRead(call) ? "readOnly" : "mutating")
    return Effect.provideService(respond(call), RequestMetrics.CurrentAdmission, admission)
  }).pipe(
    Effect.catch((error) => Effect.succeed(errorResponse(error))),
    Effect.catchDefect((defect) =>
      Effect.logError("kubefx apiserver: unexpected failure", defect).pipe(
        Effect.as(errorResponse(Status.internal(defect instanceof Error ? defect.message : String(defect))))
      )
    ),
    // Compressed before it is counted: kube's response sizes are the bytes sent.
    Effect.flatMap((response) =>
      request.method === "HEAD" ? Effect.succeed(response) : ResponseCompression.compress(response, request.headers["accept-encoding"])
    ),
    Effect.map((response) => {
      if (counted !== undefined) {
        context.metrics.record({ ...counted, code: response.status }, (performance.now() - receivedAt) / 1000, {
          bytes: response.body._tag === "Empty" ? 0 : response.body.contentLength,
          webhookSeconds: admission.webhookSeconds
        })
      }
      return response
    }),
    Effect.ensuring(Effect.sync(() => inFlight?.()))
  )
}

// The paths that are no resource's that kube-apiserver counts, by their path.
const countedPaths = new Set(["/api", "/apis", "/version", "/healthz", "/livez", "/readyz", "/openapi/v2", "/metrics"])

// A request's labels in apiserver_request_total, as kube reports them; undefined for a path it does not count.
const requestLabels = (request: HttpServerRequest.HttpServerRequest, path: Paths.Parsed, rawPath: string, query: URLSearchParams) => {
  const method = request.method === "HEAD" ? "GET" : request.method
  const dryRun = query.getAll("dryRun").includes("All")
  if (path._tag === "Resource") {
    const scope = path.name !== undefined ? "resource" as const : path.namespace !== undefined ? "namespace" as const : "cluster" as const
    const sub = path.subresource ?? ""
    const verb = PodConnections.subresources.has(sub) && path.plural === "pods"
      ? "CONNECT"
      : method === "GET" && (path.legacyWatch || (scope !== "resource" && flag(query, "watch") === true))
      ? "WATCH"
      : method === "GET" && scope !== "resource"
      ? "LIST"
      : method === "PATCH" && Negotiation.mediaType(request.headers["content-type"]) === "application/apply-patch+yaml"
      ? "APPLY"
      : method
    return { verb, dryRun, group: path.group, version: path.version, resource: path.plural, subresource: sub, scope }
  }
  const counted = path._tag === "Resources" || path._tag === "Group" || path._tag === "OpenApi" ? rawPath : countedPaths.has(rawPath) ? rawPath : undefined
  return counted === undefined ? undefined : { verb: method, dryRun, group: "", version: "", resource: "", subresource: counted, scope: "" as const }
}

const isRead = (call: Call) => call.request.method === "GET" || call.request.method === "HEAD"

// Discovery documents: GET only, JSON only, 404 when the group or version is not served.
const discovery = (body: (call: Call) => unknown) => (call: Call) => {
  if (!isRead(call)) return Effect.fail(Status.methodNotAllowed(call.request.method))
  if (Negotiation.negotiate(call.request.headers["accept"], {}) === undefined) {
    return Effect.fail(Status.notAcceptable(call.request.headers["accept"] ?? ""))
  }
  const document = body(call)
  return document === undefined ? Effect.fail(Status.pathNotFound()) : Effect.succeed(jsonResponse(200, document))
}

// `/api` and `/apis`: aggregated discovery for clients asking for it first (with kube's ETag, a
// matching If-None-Match answered 304), the legacy document otherwise.
const groupDiscovery = (legacy: (call: Call) => unknown, document: (apiVersion: Discovery.AggregatedVersion) => unknown) => (call: Call) => {
  const asked = Negotiation.aggregatedDiscovery(call.request.headers["accept"])
  if (asked === undefined || !isRead(call)) return discovery(legacy)(call)
  const json = JSON.stringify(document(asked))
  const tag = JSON.stringify(Discovery.etag(json))
  const headers = { etag: tag, vary: "Accept", "cache-control": "public" }
  if (call.request.headers["if-none-match"] === tag) return Effect.succeed(HttpServerResponse.empty({ status: 304, headers }))
  return Effect.succeed(HttpServerResponse.text(json, {
    status: 200,
    contentType: `application/json;g=apidiscovery.k8s.io;v=${asked.slice(asked.indexOf("/") + 1)};as=APIGroupDiscoveryList`,
    headers
  }))
}

const openApi = (context: Context) => (call: Call) => {
  const { path, request } = call
  if (path._tag !== "OpenApi" && path._tag !== "OpenApiV2") return Effect.fail(Status.pathNotFound())
  if (!isRead(call)) return Effect.fail(Status.methodNotAllowed(request.method))
  const asked = { accept: request.headers["accept"], ifNoneMatch: request.headers["if-none-match"], hash: call.query.get("hash") }
  const reply = path._tag === "OpenApi" ? ServedOpenApi.v3(context.openapi, path.path, asked, new Date()) : ServedOpenApi.v2(asked)
  if (reply === "NotFound") return Effect.fail(Status.pathNotFound())
  if (reply === "NotAcceptable") return Effect.fail(Status.notAcceptable(request.headers["accept"] ?? ""))
  return Effect.succeed(HttpServerResponse.uint8Array(reply.body, { status: reply.status, headers: reply.headers }))
}

/**
 * The server's routes as an `HttpRouter` layer: discovery, health, OpenAPI, the fault admin
 * endpoint and the REST paths of every resource; any other path is a 404 Status. Paths are
 * matched with trailing and duplicate slashes ignored, as kube-apiserver does.
 *
 * @example
 * import { Effect } from "effect"
 * import { HttpRouter } from "effect/http"
 * import * as Http from "./Http.ts"
 * declare const context: Http.Context
 * const handler = HttpRouter.toHttpEffect(Http.routes(context)) // a scoped Effect of the request handler
 */
export const routes = (context: Context): Layer.Layer<never, never, HttpRouter.HttpRouter> =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const registry = context.env.registry
    const on = (path: HttpRouter.PathInput, respond: (call: Call) => Effect.Effect<HttpServerResponse.HttpServerResponse, Status.ApiError>) =>
      router.add("*", path, answer(context, respond))
    yield* on("/", discovery(() => ({ paths: ["/api", "/api/v1", "/apis", "/openapi/v3", "/version", "/healthz"] })))
    const health = ({ path, query }: Call) => {
      if (path._tag !== "Health") return Effect.fail(Status.pathNotFound())
      const reply = Health.answer(path.probe, path.check, query)
      return Effect.succeed(HttpServerResponse.text(reply.body, { status: reply.status }))
    }
    // (A wildcard route also matches its prefix alone.)
    for (const probe of ["/healthz", "/livez", "/readyz"] as const) yield* on(`${probe}/*`, health)
    yield* on("/version", discovery(() => Discovery.version))
    yield* on("/metrics", (call) => {
      if (!isRead(call)) return Effect.fail(Status.methodNotAllowed(call.request.method))
      const stored = registry.all().filter((r) => r.createOnly === undefined && r.type.version === (registry.groups().find((g) => g.name === r.type.group)?.preferred ?? "v1"))
        .map((r) => [ResourceType.qualifiedResource(r.type), () => context.env.store.size(r.storage)] as const)
      return Effect.succeed(HttpServerResponse.text(context.metrics.text(stored), { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
    })
    yield* on("/api", groupDiscovery(() => Discovery.apiVersions(context.address()), (apiVersion) => Discovery.aggregated(registry, apiVersion, { core: true })))
    const remote = () => ApiServices.remoteVersions(context.env.store, context.discovered)
    yield* on("/apis", groupDiscovery(() => Discovery.groupList(registry, remote()), (apiVersion) => Discovery.aggregated(registry, apiVersion, { core: false, remote: remote() })))
    yield* on("/apis/:group", discovery(({ path }) => path._tag === "Group" ? Discovery.group(registry, path.group, remote()) : undefined))
    // A wildcard route also matches its prefix alone: a group version's resource list, or a resource path.
    const resources = discovery(({ path }) => path._tag === "Resources" ? Discovery.resourceList(registry, path.group, path.version) : undefined)
    // A group version an APIService serves from a Service is that server's, the request sent on as
    // kube-aggregator sends it; unavailable, it is kube-aggregator's plain 503.
    const aggregated = (call: Call) => {
      const { path, request } = call
      // Served here (a resource found by its map lookup, the common case): not aggregated.
      if (path._tag !== "Resource" && path._tag !== "Resources") return undefined
      const local = path._tag === "Resource"
        ? registry.lookup(path.group, path.version, path.plural) !== undefined
        : registry.groupVersion(path.group, path.version).length > 0
      if (local) return undefined
      const apiService = ApiServices.remote(context.env.store, path.group, path.version)
      if (apiService === undefined) return undefined
      if (!ApiServices.available(apiService)) return Effect.succeed(AggregatorProxy.unavailable())
      const body = request.method === "GET" || request.method === "HEAD" ? Effect.succeed(undefined) : readBytes(request)
      return Effect.flatMap(body, (bytes) =>
        AggregatorProxy.forward(context.env.store, apiService, { method: request.method, url: request.url, headers: request.headers, body: bytes, user: call.user }))
    }
    const resource = (call: Call) =>
      aggregated(call) ?? (call.path._tag === "Resource"
        ? Effect.map(resourceRequest(context, call.request, call.path, call.query, call.user), (response) => deprecated(call.path, response))
        : call.path._tag === "Resources"
        ? resources(call)
        : Effect.fail(Status.pathNotFound()))
    // Every answer from a deprecated version carries its warning (kubectl prints it), as 1.32 does.
    const deprecated = (path: Call["path"], response: HttpServerResponse.HttpServerResponse) => {
      const warning = path._tag === "Resource" ? registry.lookup(path.group, path.version, path.plural)?.deprecationWarning : undefined
      if (warning === undefined) return response
      const own = warningHeader([warning]).warning!
      const existing = response.headers["warning"]
      return HttpServerResponse.setHeader(response, "warning", existing === undefined ? own : `${own}, ${existing}`)
    }
    yield* on("/api/:version/*", resource)
    yield* on("/apis/:group/:version/*", resource)
    yield* on("/openapi/v2", openApi(context))
    yield* on("/openapi/v3/*", openApi(context))
    yield* on("/kubefx/faults/*", (call) =>
      call.path._tag === "Faults" ? faultsAdmin(context.faults, call.request, call.path.action) : Effect.fail(Status.pathNotFound()))
    yield* on("*", () => Effect.fail(Status.pathNotFound()))
  }))

/**
 * The request handler: {@link routes} as one Effect, built in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Http from "./Http.ts"
 * declare const context: Http.Context
 * const handler = Effect.scoped(Http.handler(context))
 */
export const handler = (context: Context) =>
  HttpRouter.toHttpEffect(routes(context)).pipe(
    Effect.provideService(HttpRouter.RouterConfig, { ignoreTrailingSlash: true }),
    // What the router itself refuses (a method it does not know, a path it cannot decode) is not found.
    Effect.map(Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.succeed(errorResponse(Status.pathNotFound()))
    ))
  )

const faultsAdmin = Effect.fnUntraced(function*(
  faults: Faults.Faults,
  request: HttpServerRequest.HttpServerRequest,
  action: string | undefined
) {
  const body = request.method === "GET" || request.method === "DELETE" ? "" : yield* readBody(request)
  const decode = <S extends Schema.Top>(schema: S, fallback: unknown) =>
    Effect.try({
      try: () => (body.trim() === "" ? fallback : JSON.parse(body)) as unknown,
      catch: (e) => Status.badRequest(`malformed JSON: ${String(e)}`)
    }).pipe(
      Effect.flatMap((u) => Schema.decodeUnknownEffect(schema)(u)),
      Effect.mapError((e) => (e instanceof Status.ApiError ? e : Status.badRequest(e.message)))
    )
  if (action === undefined) {
    switch (request.method) {
      case "GET":
        return jsonResponse(200, faults.config())
      case "PUT":
      case "POST": {
        const config = yield* decode(Faults.Config, undefined) as Effect.Effect<Faults.Config, Status.ApiError>
        faults.set(config)
        return jsonResponse(200, faults.config())
      }
      case "DELETE":
        faults.clear()
        faults.resumeWatches()
        return jsonResponse(200, faults.config())
      default:
        return yield* Status.methodNotAllowed(request.method)
    }
  }
  if (request.method !== "POST") return yield* Status.methodNotAllowed(request.method)
  const target = (yield* decode(Faults.WatchTarget, {})) as Faults.WatchTarget
  switch (action) {
    case "watches/close":
      return jsonResponse(200, { affected: faults.closeWatches(target) })
    case "watches/expire":
      return jsonResponse(200, { affected: faults.expireWatches(target) })
    case "watches/pause":
      faults.pauseWatches(target)
      return jsonResponse(200, { paused: true })
    case "watches/resume":
      faults.resumeWatches()
      return jsonResponse(200, { paused: false })
    default:
      return yield* Status.pathNotFound()
  }
})

const resourceRequest = Effect.fnUntraced(function*(
  context: Context,
  request: HttpServerRequest.HttpServerRequest,
  path: Paths.ResourcePath,
  query: URLSearchParams,
  user: Authentication.User
) {
  const { env } = context
  // Authorized before the resource is looked up, as kube-apiserver does: a user learns nothing of
  // what it may not reach, not even that it does not exist.
  const verb = verbOf(request.method, path, query)
  // POSTs to an object's subresource are creates: a TokenRequest, or a connection to a pod.
  const asked = request.method === "POST" &&
      (path.subresource === "token" || path.subresource === "binding" || path.subresource === "eviction" ||
        PodConnections.subresources.has(path.subresource ?? ""))
    ? "create"
    : verb
  const refused = asked === undefined ? undefined : refusal(context, user, {
    _tag: "Resource",
    verb: asked,
    group: path.group,
    resource: path.plural,
    subresource: path.subresource,
    namespace: path.namespace,
    name: path.name
  })
  if (refused !== undefined) return yield* refused
  const resource = env.registry.lookup(path.group, path.version, path.plural)
  if (resource === undefined) return yield* Status.pathNotFound()
  const type = resource.type
  if (type.namespaced ? path.name !== undefined && path.namespace === undefined : path.namespace !== undefined) {
    return yield* Status.pathNotFound()
  }
  const sub = path.subresource
  if (sub === "token" && resource.storage === "serviceaccounts" && path.namespace !== undefined) {
    return yield* tokenRequest(context, request, path.namespace, path.name ?? "")
  }
  if ((sub === "binding" || sub === "eviction") && resource.storage === "pods" && path.namespace !== undefined) {
    if (request.method !== "POST") return yield* Status.methodNotAllowed(request.method)
    const body = yield* Negotiation.decodeObject(request.headers["content-type"], yield* readBytes(request))
    const dryRun = query.getAll("dryRun").includes("All")
    const pod = { resource, namespace: path.namespace, name: path.name ?? "" }
    return jsonResponse(201, sub === "binding" ? yield* Bindings.bind(env, pod, body, dryRun) : yield* Evictions.evict(env, pod, body, dryRun))
  }
  if (sub === "log" && resource.storage === "pods" && path.namespace !== undefined) {
    if (request.method !== "GET") return yield* Status.methodNotAllowed(request.method)
    yield* PodLogs.validateOptions(path.name ?? "", query)
    return yield* podLog(env, { resource, namespace: path.namespace, name: path.name ?? "" }, query.get("container") ?? "", flag(query, "follow") === true, flag(query, "previous") === true)
  }
  if (sub !== undefined && PodConnections.subresources.has(sub) && resource.storage === "pods" && path.namespace !== undefined) {
    if (request.method !== "GET" && request.method !== "POST") return yield* Status.methodNotAllowed(request.method)
    // httpstream.IsUpgradeRequest: a Connection header naming upgrade.
    const upgrade = /(^|,)\s*upgrade\s*(,|$)/i.test(String(request.headers["connection"] ?? ""))
    return yield* PodConnections.connect(env, { resource, namespace: path.namespace, name: path.name ?? "" }, sub, query.get("container") ?? "", upgrade)
  }
  if (sub !== undefined) {
    const served = (sub === "status" && type.subresources.status) ||
      (sub === "scale" && type.subresources.scale !== undefined) ||
      (sub === "finalize" && resource.storage === "namespaces") ||
      (sub === "ephemeralcontainers" && resource.storage === "pods")
    if (!served) return yield* Status.pathNotFound()
    if (!["GET", "PUT", "PATCH"].includes(request.method) || (sub === "finalize" && request.method !== "PUT")) {
      return yield* Status.methodNotAllowed(request.method)
    }
  }
  if (verb === undefined || !type.verbs.includes(verb)) {
    return yield* Status.methodNotAllowed(request.method)
  }
  const representation = Negotiation.negotiate(request.headers["accept"], {
    table: (verb === "list" || verb === "get" || verb === "watch") && sub === undefined,
    metadata: true
  })
  if (representation === undefined) return yield* Status.notAcceptable(request.headers["accept"] ?? "")
  // Every answer of a resource's endpoints, as its metadata alone when that is what was asked for.
  const respond = (status: number, body: KubeObject.KubeObject, headers?: Record<string, string>) =>
    typeof representation === "string"
      ? Effect.succeed(jsonResponse(status, body, headers))
      : Effect.map(PartialMetadata.answer(representation, body), (partial) => jsonResponse(status, partial, headers))

  const decision = context.faults.decide({
    verb,
    group: type.group,
    plural: type.plural,
    namespace: path.namespace,
    name: path.name
  })
  if (decision.delayMs > 0) yield* Effect.sleep(decision.delayMs)
  if (decision.error !== undefined) return yield* decision.error

  const name = path.name ?? ""
  const target: Rest.Target = { resource, namespace: path.namespace, name }
  const asTable = representation === "table"

  switch (verb) {
    case "get": {
      const object = resource.computed === undefined ? yield* Rest.get(env, target) : yield* computedOne(resource, resource.computed, name)
      // Reads show only durable writes, so no client ever holds a revision a crash could lose.
      yield* env.durable(Number(KubeObject.meta(object).resourceVersion ?? 0))
      if (sub === "scale") return yield* respond(200, Scale.toScale(resource, object))
      return yield* respond(200, asTable ? Table.fromObjects(resource, [object], undefined, yield* includeObject(query)) : object)
    }
    case "list": {
      if (resource.computed !== undefined) {
        const computed = resource.computed()
        const metadata = {}
        if (asTable) return yield* respond(200, Table.fromObjects(resource, computed, metadata, yield* includeObject(query)))
        return yield* respond(200, listBody(type, metadata, computed))
      }
      const selectors = yield* parseSelectors(resource, query)
      const listed = yield* Rest.list(env, resource, path.namespace, {
        ...selectors,
        limit: yield* parseInteger(query, "limit"),
        continue: query.get("continue") ?? undefined,
        resourceVersion: query.get("resourceVersion") ?? undefined,
        resourceVersionMatch: query.get("resourceVersionMatch") ?? undefined
      })
      yield* env.durable(listed.revision)
      const metadata = {
        resourceVersion: String(listed.revision),
        ...(listed.continue === undefined ? {} : { continue: listed.continue }),
        ...(listed.remaining === undefined ? {} : { remainingItemCount: listed.remaining })
      }
      if (asTable) return yield* respond(200, Table.fromObjects(resource, listed.items, metadata, yield* includeObject(query)))
      return yield* respond(200, listBody(type, metadata, listed.items))
    }
    case "watch": {
      const selectors = yield* parseSelectors(resource, query)
      const pinned = path.name === undefined ? [] : [{ field: "metadata.name", op: "=" as const, value: path.name }]
      const conversion = resource.convert
      const include = asTable ? yield* includeObject(query) : "Metadata"
      const body = yield* context.watches.stream({
        resource,
        namespace: path.namespace,
        labelSelector: selectors.labelSelector,
        fieldSelector: [...selectors.fieldSelector, ...pinned],
        resourceVersion: query.get("resourceVersion") ?? undefined,
        resourceVersionMatch: query.get("resourceVersionMatch") ?? undefined,
        allowWatchBookmarks: flag(query, "allowWatchBookmarks") === true,
        sendInitialEvents: flag(query, "sendInitialEvents"),
        timeoutSeconds: yield* parseInteger(query, "timeoutSeconds"),
        present: presenter(env, resource, representation, include),
        // Encodings are shared by watches of one representation: a Table's rows differ by what they include.
        representation: asTable ? `${Negotiation.nameOf(representation)};${include}` : Negotiation.nameOf(representation),
        ...(metadataWatch(representation) ? { bookmarkType: { kind: "PartialObjectMetadata", apiVersion: representation.groupVersion } } : {}),
        ...(conversion === undefined ? {} : { convert: (objects) => conversion.converter(objects, `${resource.type.group}/${resource.type.version}`) })
      })
      return HttpServerResponse.stream(body as Stream.Stream<Uint8Array>, { contentType: "application/json" })
    }
    case "create": {
      const options = yield* writeOptions(query, request.headers["user-agent"], user)
      const body = yield* Negotiation.decodeObject(request.headers["content-type"], yield* readBytes(request))
      if (resource.createOnly !== undefined) {
        const answer = yield* resource.createOnly({
          env,
          body,
          dryRun: options.dryRun,
          namespace: path.namespace,
          user,
          authentication: context.authentication,
          authorization: context.env.authorization
        })
        return yield* respond(201, answer)
      }
      const written = yield* Rest.create(env, resource, path.namespace, body, options)
      return yield* respond(201, written.object, warningHeader(written.warnings))
    }
    case "update": {
      const options = yield* writeOptions(query, request.headers["user-agent"], user)
      const body = yield* Negotiation.decodeObject(request.headers["content-type"], yield* readBytes(request))
      if (sub === "finalize") return yield* respond(200, yield* context.finalizeNamespace(name, body))
      const written = sub === "scale"
        ? yield* Rest.update(env, target, "scale", options, (current) => scaled(resource, target.name, current, body))
        : yield* Rest.replace(env, target, sub === "status" || sub === "ephemeralcontainers" ? sub : undefined, body, options)
      const object = sub === "scale" ? Scale.toScale(resource, written.object) : written.object
      return yield* respond(written.created ? 201 : 200, object, warningHeader(written.warnings))
    }
    case "patch": {
      const options = yield* writeOptions(query, request.headers["user-agent"], user)
      const force = flag(query, "force")
      const body = yield* readBody(request)
      const contentType = Negotiation.mediaType(request.headers["content-type"])
      if (sub === "scale") {
        const written = yield* scalePatch(context, target, contentType, body, { ...options, force })
        return yield* respond(200, Scale.toScale(resource, written.object), warningHeader(written.warnings))
      }
      const written = yield* context.patch(target, sub === "status" || sub === "ephemeralcontainers" ? sub : undefined, contentType, body, {
        ...options,
        force
      })
      return yield* respond(written.created ? 201 : 200, written.object, warningHeader(written.warnings))
    }
    case "delete": {
      const options = yield* deleteOptions(query, request, user)
      const deleted = resource.storage === "namespaces"
        ? yield* context.deleteNamespace(name, options)
        : yield* Rest.remove(env, target, options)
      return yield* respond(200, deleted.body)
    }
    case "deletecollection": {
      const options = yield* deleteOptions(query, request, user)
      const selectors = yield* parseSelectors(resource, query)
      const deleted = yield* Rest.removeCollection(
        env,
        resource,
        path.namespace,
        selectors.labelSelector,
        selectors.fieldSelector,
        options
      )
      return yield* respond(200, listBody(type, { resourceVersion: String(env.store.revision()) }, deleted))
    }
  }
})

// An object of a kind computed at each read, by name.
const computedOne = (resource: Registry.Resource, computed: () => ReadonlyArray<KubeObject.KubeObject>, name: string) => {
  const found = computed().find((o) => KubeObject.meta(o).name === name)
  return found === undefined ? Effect.fail(Status.notFound(resource.type, name)) : Effect.succeed(found)
}

// A list of a kind's objects. kube-apiserver converts a built-in list whole, and the conversion
// leaves its items without apiVersion and kind; custom resources' items keep theirs.
const listBody = (
  type: ResourceType.ResourceType,
  metadata: Record<string, unknown>,
  items: ReadonlyArray<KubeObject.KubeObject>
): KubeObject.KubeObject => ({
  kind: type.listKind,
  apiVersion: ResourceType.groupVersion(type),
  metadata,
  items: type.custom ? items : items.map(({ apiVersion: _apiVersion, kind: _kind, ...item }) => item)
})

// What a watch sends of each stored object: the object as served, a Table row, or its metadata. A
// watch asked for as a list of metadata gets whole objects, as kube-apiserver's does (an event
// holds one object, which is not a list).
const presenter = (
  env: Rest.Env,
  resource: Registry.Resource,
  representation: Negotiation.Representation,
  include: Table.IncludeObject
) =>
  representation === "table"
    ? (o: KubeObject.KubeObject) => Table.fromObjects(resource, [Rest.present(env, resource, o)], undefined, include)
    : metadataWatch(representation)
    ? (o: KubeObject.KubeObject) => PartialMetadata.ofObject(Rest.present(env, resource, o), representation.groupVersion)
    : (o: KubeObject.KubeObject) => Rest.present(env, resource, o)

const metadataWatch = (representation: Negotiation.Representation): representation is PartialMetadata.Target =>
  typeof representation !== "string" && representation.as === "PartialObjectMetadata"

/** GET on a pod's `log`: plain text, streamed until the container stops with `follow`. */
const podLog = Effect.fnUntraced(function*(env: Rest.Env, target: Rest.Target, container: string, follow: boolean, previous: boolean) {
  const log = yield* PodLogs.read(env, target, container, follow, previous)
  return log._tag === "Empty"
    ? HttpServerResponse.text("", { status: 200, contentType: "text/plain" })
    : HttpServerResponse.stream(PodLogs.body(log), { status: 200, contentType: "text/plain" })
})

/** POST on a ServiceAccount's `token` subresource (TokenRequest); every other method is 405. */
const tokenRequest = Effect.fnUntraced(function*(
  context: Context,
  request: HttpServerRequest.HttpServerRequest,
  namespace: string,
  name: string
) {
  if (request.method !== "POST") return yield* Status.methodNotAllowed(request.method)
  if (Negotiation.negotiate(request.headers["accept"], {}) === undefined) {
    return yield* Status.notAcceptable(request.headers["accept"] ?? "")
  }
  const decision = context.faults.decide({ verb: "create", group: "", plural: "serviceaccounts", namespace, name })
  if (decision.delayMs > 0) yield* Effect.sleep(decision.delayMs)
  if (decision.error !== undefined) return yield* decision.error
  const body = yield* Negotiation.decodeObject(request.headers["content-type"], yield* readBytes(request))
  const answer = yield* TokenRequests.create(context.env.store, context.authentication.signingKey, namespace, name, body)
  return jsonResponse(201, answer)
})

/** PATCH on /scale: the patch applies to the Scale view, whose replicas then go to the object. */
const scalePatch = (
  context: Context,
  target: Rest.Target,
  contentType: string,
  body: string,
  options: PatchOptions
) =>
  Rest.update(context.env, target, "scale", options, (current) =>
    context.patchDocument(contentType, Scale.toScale(target.resource, current), body, options.fieldValidation).pipe(
      Effect.flatMap((scale) => scaled(target.resource, target.name, current, scale))
    ))

// The object a written Scale makes of it, once the Scale itself is valid.
const scaled = (resource: Registry.Resource, name: string, current: KubeObject.KubeObject, scale: KubeObject.KubeObject) => {
  const invalid = Scale.validate(resource, name, scale)
  return invalid === undefined ? Effect.succeed(Scale.fromScale(resource, current, scale)) : Effect.fail(invalid)
}
