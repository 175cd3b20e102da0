/**
 * The `/openapi/v2` document: a valid Swagger 2.0 document with no paths and no definitions, as
 * JSON and as the gnostic protobuf message kubectl asks for. kubectl reads it for client-side
 * schema validation of kinds the OpenAPI v3 documents do not know (a kind the server does not serve,
 * a `v1/List`); finding no schema there it skips validation and goes on to its REST mapping, which
 * reports `no matches for kind "X" in version "g/v"` as against 1.32. Kinds the server serves are
 * described by the v3 documents, which kubectl prefers.
 */
import * as OpenApi from "./OpenApi.ts"
import * as Protobuf from "./Protobuf.ts"

/** The document, as JSON. */
export const document = {
  swagger: "2.0",
  info: { title: "Kubernetes", version: "v1.32.0" },
  paths: {},
  definitions: {}
} as const

/** The JSON text served. */
export const json: string = JSON.stringify(document)

/**
 * The same document as gnostic's `openapi.v2.Document` message: swagger (1), info (2: title 1,
 * version 2), paths (8) and definitions (9), the last two empty.
 *
 * @example
 * import * as OpenApiV2 from "./OpenApiV2.ts"
 * OpenApiV2.protobuf[0] // 10: field 1, length-delimited
 */
export const protobuf: Uint8Array = Protobuf.encode([
  [1, document.swagger],
  [2, Protobuf.encode([[1, document.info.title], [2, document.info.version]])],
  [8, new Uint8Array()],
  [9, new Uint8Array()]
])

/** The ETag of both representations: the SHA-512 of the JSON, as kube-openapi computes it. */
export const etag: string = OpenApi.hash(json)
