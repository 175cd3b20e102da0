/**
 * Content negotiation: which representation a client's `Accept` header allows, and how request
 * bodies are decoded by `Content-Type`. Responses are JSON; a Table is given to clients that ask
 * for one first (kubectl's printing), the objects' metadata alone to clients that ask for
 * `PartialObjectMetadata` first (client-go's metadata client), everything else accepting JSON gets
 * the plain object.
 */
import { Effect } from "effect"
import * as JsYaml from "js-yaml"
import type * as PartialMetadata from "./PartialMetadata.ts"
import * as Protobuf from "./Protobuf.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

export type Representation = "json" | "table" | PartialMetadata.Target

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

// The versions of meta.k8s.io that hold Table and PartialObjectMetadata.
const metaVersions = ["v1", "v1beta1"]

/**
 * The representation to answer with, or undefined when nothing acceptable can be produced (406).
 * A Table is offered where `offers.table` says (reads of a resource), an object's metadata alone
 * where `offers.metadata` does (a resource's endpoints); aggregated discovery is `aggregatedDiscovery`'s. An
 * entry asking for what is not offered is skipped, so the JSON fallback clients list after it is
 * used instead.
 *
 * @example
 * import * as Negotiation from "./Negotiation.ts"
 * Negotiation.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", { table: true }) // "table"
 * Negotiation.negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", {}) // "json"
 * Negotiation.negotiate("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", { metadata: true })
 * // { as: "PartialObjectMetadata", groupVersion: "meta.k8s.io/v1" }
 * Negotiation.negotiate("application/vnd.kubernetes.protobuf", {}) // undefined
 */
export const negotiate = (
  accept: string | undefined,
  offers: { readonly table?: boolean; readonly metadata?: boolean }
): Representation | undefined => {
  if (accept === undefined || accept.trim() === "") return "json"
  for (const range of parseAccept(accept)) {
    if (range.type !== "application/json" && range.type !== "application/*" && range.type !== "*/*") continue
    const as = range.params.as
    if (as === undefined) return "json"
    if ((range.params.g ?? "meta.k8s.io") !== "meta.k8s.io") continue
    if (as === "Table" && offers.table === true) return "table"
    const version = range.params.v
    if (
      (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") && offers.metadata === true &&
      version !== undefined && metaVersions.includes(version)
    ) {
      return { as, groupVersion: `meta.k8s.io/${version}` }
    }
  }
  return undefined
}

/**
 * The aggregated discovery version a client asks for at `/api` and `/apis`, or undefined when the
 * first entry it accepts is the legacy document (or it accepts no aggregated one). Only JSON is
 * served: a protobuf entry is skipped for the ones after it.
 *
 * @example
 * import * as Negotiation from "./Negotiation.ts"
 * Negotiation.aggregatedDiscovery("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json") // "apidiscovery.k8s.io/v2"
 * Negotiation.aggregatedDiscovery("application/json") // undefined
 */
export const aggregatedDiscovery = (accept: string | undefined): "apidiscovery.k8s.io/v2" | "apidiscovery.k8s.io/v2beta1" | undefined => {
  if (accept === undefined) return undefined
  for (const range of parseAccept(accept)) {
    if (range.type !== "application/json" && range.type !== "application/*" && range.type !== "*/*") continue
    const { as, g, v } = range.params
    if (as === undefined) return undefined
    if (as === "APIGroupDiscoveryList" && g === "apidiscovery.k8s.io" && (v === "v2" || v === "v2beta1")) return `apidiscovery.k8s.io/${v}`
  }
  return undefined
}

/**
 * A name for the representation, the same for equal ones.
 *
 * @example
 * import * as Negotiation from "./Negotiation.ts"
 * Negotiation.nameOf({ as: "PartialObjectMetadata", groupVersion: "meta.k8s.io/v1" }) // "PartialObjectMetadata;meta.k8s.io/v1"
 */
export const nameOf = (representation: Representation): string =>
  typeof representation === "string" ? representation : `${representation.as};${representation.groupVersion}`

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
