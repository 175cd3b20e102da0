/**
 * The OpenAPI documents as this server serves them, and the HTTP replies kube-apiserver gives for
 * them. v3: OpenApi.build over the served kinds, built-in kinds with the schemas of their 1.32 Go
 * types (fields and types, no descriptions), so `kubectl explain` reads them. Documents are rebuilt only
 * when the served kinds change. A group/version document asked for with the hash of an older one
 * redirects (301) to the current URL, so a client holding a stale index still gets the current
 * document; with the current hash it may be cached for good. v2: OpenApiV2's empty document.
 */
import * as BuiltinSchemas from "./BuiltinSchemas.ts"
import * as OpenApi from "./OpenApi.ts"
import * as OpenApiV2 from "./OpenApiV2.ts"
import type * as Registry from "./Registry.ts"
import type { JsonSchemaProps } from "@kubefx/schema"

// A schema as JSON can hold it: where a type holds itself (a CRD's JSONSchemaProps), the inner one
// is any object.
const acyclic = (schema: JsonSchemaProps, within: Set<JsonSchemaProps>): JsonSchemaProps => {
  if (within.has(schema)) return { type: "object", "x-kubernetes-preserve-unknown-fields": true }
  within.add(schema)
  const copy: Record<string, unknown> = { ...schema }
  if (schema.properties !== undefined) copy.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, acyclic(v, within)]))
  if (schema.items !== undefined && !Array.isArray(schema.items)) copy.items = acyclic(schema.items as JsonSchemaProps, within)
  if (typeof schema.additionalProperties === "object") copy.additionalProperties = acyclic(schema.additionalProperties, within)
  within.delete(schema)
  return copy as JsonSchemaProps
}

/**
 * Serves `/openapi/v3` (path undefined) and `/openapi/v3/<path>` as JSON text, or undefined.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as Registry from "./Registry.ts"
 * import * as ServedOpenApi from "./ServedOpenApi.ts"
 * const openapi = ServedOpenApi.make(Registry.make(Builtins.make()))
 * JSON.parse(openapi(undefined)!).paths["api/v1"].serverRelativeURL // "/openapi/v3/api/v1?hash=..."
 */
export const make = (registry: Registry.Registry): ((path: string | undefined) => string | undefined) => {
  let cached: { readonly generation: number; readonly index: string; readonly documents: ReadonlyMap<string, string> } | undefined
  const build = () => {
    // Built-in kinds are published with the schema their writes are decoded by.
    const types = registry.all().map((r) => {
      const schema = r.type.custom || r.type.schema !== undefined ? undefined : BuiltinSchemas.lookup(r.type.group, r.type.version, r.type.kind)?.schema
      return schema === undefined ? r.type : { ...r.type, schema: acyclic(schema, new Set()) }
    })
    const documents = new Map<string, string>()
    const paths: Record<string, { readonly serverRelativeURL: string }> = {}
    for (const [path, doc] of OpenApi.build(types).groupVersions) {
      const json = JSON.stringify(doc.document)
      documents.set(path, json)
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${OpenApi.hash(json)}` }
    }
    return { generation: registry.generation(), index: JSON.stringify({ paths }), documents }
  }
  return (path) => {
    if (cached === undefined || cached.generation !== registry.generation()) cached = build()
    return path === undefined ? cached.index : cached.documents.get(path)
  }
}

/** An HTTP reply for an OpenAPI request. */
export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

/** What of the request decides the reply. */
export interface Request {
  readonly accept: string | undefined
  readonly ifNoneMatch: string | undefined
  /** The `hash` query parameter, if any. */
  readonly hash: string | null
}

const quoted = (etag: string) => `"${etag}"`

// http.ServeContent's If-None-Match: any listed entity tag (weak or not) or "*" matches.
const unchanged = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined &&
  ifNoneMatch.split(",").map((t) => t.trim().replace(/^W\//, "")).some((t) => t === "*" || t === quoted(etag))

const reply = (status: number, headers: Record<string, string>, body: string | Uint8Array): Reply => ({
  status,
  headers,
  body: typeof body === "string" ? Buffer.from(body, "utf8") : body
})

const content = (request: Request, etag: string, headers: Record<string, string>, body: string | Uint8Array): Reply =>
  unchanged(request.ifNoneMatch, etag) ? reply(304, headers, "") : reply(200, headers, body)

/**
 * Picks the first offer the Accept header allows, clauses taken by falling quality (goautoneg's
 * order); a missing header accepts anything.
 *
 * @example
 * import * as ServedOpenApi from "./ServedOpenApi.ts"
 * ServedOpenApi.negotiate("application/json, *\/*", ["application/json"]) // "application/json"
 * ServedOpenApi.negotiate("application/xml", ["application/json"]) // undefined
 */
export const negotiate = (accept: string | undefined, offers: ReadonlyArray<string>): string | undefined => {
  const clauses = (accept === undefined || accept.trim() === "" ? "*/*" : accept).split(",").map((clause) => {
    const [range = "", ...params] = clause.split(";").map((p) => p.trim())
    const q = params.map((p) => /^q=([\d.]+)$/.exec(p)?.[1]).find((v) => v !== undefined)
    return { range: range.toLowerCase(), q: q === undefined ? 1 : Number(q) }
  }).filter((c) => c.q > 0).sort((a, b) => b.q - a.q)
  for (const { range } of clauses) {
    const [type, subtype] = range.split("/")
    const found = offers.find((offer) => {
      const [t, s] = offer.split("/")
      return (type === "*" || type === t) && (subtype === "*" || subtype === s)
    })
    if (found !== undefined) return found
  }
  return undefined
}

// Go's time.RFC1123 of a UTC time, as kube-openapi writes Expires.
const rfc1123 = (date: Date) => date.toUTCString().replace(/GMT$/, "UTC")

/**
 * The reply to `GET /openapi/v3` (path undefined) or `/openapi/v3/<path>` given what `openapi`
 * serves: the index with its ETag; a document with ETag and `Vary: Accept`, and for a `hash`
 * parameter either a 301 to the current URL (an outdated hash) or `Cache-Control: public,
 * immutable` and an Expires a year on (the current one). NotFound and NotAcceptable are the
 * caller's to answer.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as Registry from "./Registry.ts"
 * import * as ServedOpenApi from "./ServedOpenApi.ts"
 * const openapi = ServedOpenApi.make(Registry.make(Builtins.make()))
 * const r = ServedOpenApi.v3(openapi, "api/v1", { accept: undefined, ifNoneMatch: undefined, hash: "0" }, new Date())
 * typeof r === "object" && r.status // 301
 */
export const v3 = (
  openapi: (path: string | undefined) => string | undefined,
  path: string | undefined,
  request: Request,
  now: Date
): Reply | "NotFound" | "NotAcceptable" => {
  const text = openapi(path)
  if (text === undefined) return "NotFound"
  const etag = OpenApi.hash(text)
  if (path === undefined) return content(request, etag, { "content-type": "application/json", etag: quoted(etag) }, text)
  if (negotiate(request.accept, ["application/json"]) === undefined) return "NotAcceptable"
  const headers = { "content-type": "application/json", etag: quoted(etag), vary: "Accept" }
  if (request.hash === null || request.hash === "") return content(request, etag, headers, text)
  if (request.hash !== etag) return reply(301, { ...headers, location: `/openapi/v3/${path}?hash=${etag}` }, "")
  const expires = new Date(now)
  expires.setUTCFullYear(expires.getUTCFullYear() + 1)
  return content(request, etag, { ...headers, "cache-control": "public, immutable", expires: rfc1123(expires) }, text)
}

const v2Protobuf = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
const v2Offers = ["application/json", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", v2Protobuf]

/**
 * The reply to `GET /openapi/v2`: JSON or gnostic protobuf as the Accept header asks (the
 * deprecated `@v1.0` protobuf type is answered with the current name, as kube-openapi does).
 *
 * @example
 * import * as ServedOpenApi from "./ServedOpenApi.ts"
 * const r = ServedOpenApi.v2({ accept: "application/json", ifNoneMatch: undefined, hash: null })
 * typeof r === "object" && r.headers["content-type"] // "application/json"
 */
export const v2 = (request: Request): Reply | "NotAcceptable" => {
  const chosen = negotiate(request.accept, v2Offers)
  if (chosen === undefined) return "NotAcceptable"
  const json = chosen === "application/json"
  const headers = { "content-type": json ? chosen : v2Protobuf, etag: quoted(OpenApiV2.etag), vary: "Accept" }
  return content(request, OpenApiV2.etag, headers, json ? OpenApiV2.json : OpenApiV2.protobuf)
}
