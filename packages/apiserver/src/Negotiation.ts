/**
 * Content negotiation: which representation a client's `Accept` header allows, and how request
 * bodies are decoded by `Content-Type`. Responses are JSON; a Table is given to clients that ask
 * for one first (kubectl's printing), everything else accepting JSON gets the plain object.
 */
import { Effect } from "effect"
import * as JsYaml from "js-yaml"
import * as Protobuf from "./Protobuf.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

export type Representation = "json" | "table"

interface MediaRange {
  readonly type: string
  readonly params: Readonly<Record<string, string>>
}

const parseAccept = (accept: string): ReadonlyArray<MediaRange> =>
  accept.split(",").map((part) => {
    const [type = "", ...params] = part.split(";").map((s) => s.trim())
    const record: Record<string, string> = {}
    for (const p of params) {
      const eq = p.indexOf("=")
      if (eq > 0) record[p.slice(0, eq).trim()] = p.slice(eq + 1).trim()
    }
    return { type: type.toLowerCase(), params: record }
  }).filter((r) => r.type !== "")

/**
 * The representation to answer with, or undefined when nothing acceptable can be produced (406).
 * Aggregated discovery and metadata-only views are not served, so those entries are skipped; the
 * JSON fallback clients list after them is used instead.
 *
 * @example
 * import * as Negotiation from "./Negotiation.ts"
 * Negotiation.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", true) // "table"
 * Negotiation.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", false) // "json"
 * Negotiation.negotiate("application/vnd.kubernetes.protobuf", false) // undefined
 */
export const negotiate = (accept: string | undefined, tableAllowed: boolean): Representation | undefined => {
  if (accept === undefined || accept.trim() === "") return "json"
  for (const range of parseAccept(accept)) {
    if (range.type !== "application/json" && range.type !== "application/*" && range.type !== "*/*") continue
    const as = range.params.as
    if (as === undefined) return "json"
    if (as === "Table" && tableAllowed && (range.params.g ?? "meta.k8s.io") === "meta.k8s.io") return "table"
  }
  return undefined
}

/**
 * The media type of a Content-Type header, lowercased, without parameters.
 *
 * @example
 * import * as Negotiation from "./Negotiation.ts"
 * Negotiation.mediaType("application/json; charset=utf-8") // "application/json"
 */
export const mediaType = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase()

/** Body media types accepted for create and update. */
export const objectMediaTypes: ReadonlyArray<string> = ["application/json", "application/yaml", Protobuf.mediaType]

/**
 * Decodes a create/update body (JSON, YAML, or protobuf for the few kinds kubectl's generators
 * send) into an object: 415 for other media types, 400 for bodies that do not parse or are not
 * objects.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Negotiation from "./Negotiation.ts"
 * Effect.runSync(Negotiation.decodeObject("application/json", Buffer.from('{"kind":"ConfigMap"}'))).kind // "ConfigMap"
 */
export const decodeObject = (
  contentType: string | undefined,
  bytes: Uint8Array
): Effect.Effect<KubeObject.KubeObject, Status.ApiError> => {
  const type = mediaType(contentType)
  if (type !== "" && !objectMediaTypes.includes(type) && type !== "*/*") {
    return Effect.fail(Status.unsupportedMediaType(objectMediaTypes))
  }
  if (type === Protobuf.mediaType) {
    const decoded = Protobuf.decodeObject(bytes)
    return decoded._tag === "Success"
      ? Effect.succeed(decoded.object)
      : Effect.fail(
        new Status.ApiError({
          code: 415,
          reason: "UnsupportedMediaType",
          message: `${decoded.message} - accepted media types include: application/json, application/yaml`
        })
      )
  }
  const body = Buffer.from(bytes).toString("utf8")
  let decoded: unknown
  try {
    decoded = type === "application/yaml" ? JsYaml.load(body) : JSON.parse(body)
  } catch (e) {
    return Effect.fail(Status.badRequest(`the body of the request could not be decoded: ${e instanceof Error ? e.message : String(e)}`))
  }
  return KubeObject.isObject(decoded)
    ? Effect.succeed(decoded)
    : Effect.fail(Status.badRequest("the body of the request must be a JSON object"))
}
