/**
 * The non-apply patches of `PATCH` requests, by Content-Type: JSON patch (RFC 6902), JSON merge
 * patch (RFC 7386) and strategic merge patch. Failures carry the HTTP status the server answers.
 */
import { Result, Schema } from "effect"
import * as JsonPatch from "./JsonPatch.ts"
import * as MergePatch from "./MergePatch.ts"
import * as StrategicMergePatch from "./StrategicMergePatch.ts"
import type * as Structure from "./Structure.ts"
import { Json } from "@kubefx/schema/internal"

/**
 * The body cannot be decoded as a patch of its type (HTTP 400).
 *
 * @example
 * import * as Patch from "./Patch.ts"
 * new Patch.PatchUndecodable({ message: "..." }).status // 400
 */
export class PatchUndecodable extends Schema.TaggedError<PatchUndecodable>()("PatchUndecodable", {
  message: Schema.String
}) {
  get status(): 400 {
    return 400
  }
}

/**
 * A JSON patch with more than {@link maxOperations} operations (HTTP 413).
 *
 * @example
 * import * as Patch from "./Patch.ts"
 * new Patch.PatchTooLarge({ message: "..." }).status // 413
 */
export class PatchTooLarge extends Schema.TaggedError<PatchTooLarge>()("PatchTooLarge", {
  message: Schema.String
}) {
  get status(): 413 {
    return 413
  }
}

/**
 * The patch decodes but cannot be applied: a failed `test`, a missing path, a bad directive (HTTP 422).
 *
 * @example
 * import * as Patch from "./Patch.ts"
 * new Patch.PatchFailed({ message: "..." }).status // 422
 */
export class PatchFailed extends Schema.TaggedError<PatchFailed>()("PatchFailed", {
  message: Schema.String
}) {
  get status(): 422 {
    return 422
  }
}

/**
 * The patch cannot be applied for a reason kube-apiserver answers with a plain 500 of no reason (a
 * strategic merge patch's list item without its merge key).
 *
 * @example
 * import * as Patch from "./Patch.ts"
 * new Patch.PatchRejected({ message: "..." }).status // 500
 */
export class PatchRejected extends Schema.TaggedError<PatchRejected>()("PatchRejected", {
  message: Schema.String
}) {
  get status(): 500 {
    return 500
  }
}

/**
 * A Content-Type that is not a patch this module applies (HTTP 415).
 *
 * @example
 * import * as Patch from "./Patch.ts"
 * new Patch.PatchUnsupportedMediaType({ message: "..." }).status // 415
 */
export class PatchUnsupportedMediaType extends Schema.TaggedError<PatchUnsupportedMediaType>()(
  "PatchUnsupportedMediaType",
  { message: Schema.String }
) {
  get status(): 415 {
    return 415
  }
}

/** Every failure of {@link apply}; each has the HTTP `status` to answer with. */
export type PatchError = PatchUndecodable | PatchTooLarge | PatchFailed | PatchRejected | PatchUnsupportedMediaType

/** The most operations a JSON patch may have, as in the Kubernetes API server. */
export const maxOperations = 10_000

/** The patch Content-Types {@link apply} handles (server-side apply is `ServerSideApply`). */
export const contentTypes = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json"
] as const

/**
 * Applies a JSON patch body (already parsed) to a document as kube-apiserver does (see
 * `JsonPatch`); `decoding` is the request's `fieldValidation`.
 *
 * @example
 * import * as Patch from "./Patch.ts"
 * import { Result } from "effect"
 * Patch.jsonPatch({ spec: { replicas: 1 } }, [
 *   { op: "test", path: "/spec/replicas", value: 1 },
 *   { op: "replace", path: "/spec/replicas", value: 3 }
 * ]) // Result.succeed({ spec: { replicas: 3 } })
 */
export const jsonPatch = (
  doc: Json.Json,
  body: Json.Json,
  decoding: JsonPatch.Decoding = "Warn"
): Result.Result<Json.Json, PatchUndecodable | PatchTooLarge | PatchFailed> => {
  const operations = JsonPatch.decodeBody(body, decoding)
  if (Result.isFailure(operations)) return Result.fail(new PatchUndecodable({ message: operations.failure.message }))
  if (operations.success.length > maxOperations) {
    return Result.fail(
      new PatchTooLarge({
        message: `The allowed maximum operations in a JSON patch is ${maxOperations}, got ${operations.success.length}`
      })
    )
  }
  return Result.mapError(JsonPatch.applyOperations(doc, operations.success), ({ message }) => new PatchFailed({ message }))
}

// A merge or strategic merge patch that is not an object, in kube's words: both are read as a Go
// map first (a merge patch only under Warn and Strict); the merge refuses what is left.
const notAnObject = (patch: Json.Json, type: string, decoding: JsonPatch.Decoding): string => {
  const undecodable = `json: cannot unmarshal ${
    Json.isArray(patch) ? "array" : typeof patch === "boolean" ? "bool" : typeof patch
  } into Go value of type map[string]interface {}`
  if (type === "application/strategic-merge-patch+json") return undecodable
  return patch === null || decoding === "Ignore" ? "Invalid JSON Patch" : `error decoding patch: ${undecodable}`
}

const rejected = "the server rejected our request due to an error in our request"

const mediaType = (contentType: string): string => contentType.split(";")[0]!.trim().toLowerCase()

/**
 * Applies a `PATCH` body to the stored object according to its Content-Type
 * (`application/json-patch+json`, `application/merge-patch+json` or
 * `application/strategic-merge-patch+json`; parameters such as `charset` are ignored). The
 * structure gives strategic merge its list strategies. Refusing strategic merge for custom
 * resources (415) is the caller's decision.
 *
 * @example
 * import * as Patch from "./Patch.ts"
 * import { Result } from "effect"
 * const live = { metadata: { name: "x", labels: { a: "1" } } }
 * Patch.apply("application/merge-patch+json", live, '{"metadata":{"labels":{"a":null,"b":"2"}}}', {})
 * // Result.succeed({ metadata: { name: "x", labels: { b: "2" } } })
 * Result.isFailure(Patch.apply("application/json-patch+json", live, '[{"op":"test","path":"/metadata/name","value":"y"}]', {}))
 * // true (PatchFailed, 422)
 */
export const apply = (
  contentType: string,
  live: Json.JsonObject,
  body: string,
  structure: Structure.Structure,
  decoding: JsonPatch.Decoding = "Warn"
): Result.Result<Json.JsonObject, PatchError> => {
  const type = mediaType(contentType)
  if (!(contentTypes as ReadonlyArray<string>).includes(type)) {
    return Result.fail(
      new PatchUnsupportedMediaType({
        message: `the body of the request was in an unknown format - accepted media types include: ${contentTypes.join(", ")}`
      })
    )
  }
  const parsed = Json.parse(body)
  if (Result.isFailure(parsed)) return Result.fail(new PatchUndecodable({ message: `error decoding patch: ${parsed.failure}` }))
  const patch = parsed.success
  if (type === "application/json-patch+json") {
    return jsonPatch(live, patch, decoding).pipe(
      // kube answers a failed operation with apimachinery's generic 422, which keeps none of the
      // library's words (a webhook's patch keeps them: `Webhooks`).
      Result.mapError((error) => error._tag === "PatchFailed" ? new PatchFailed({ message: rejected }) : error),
      Result.flatMap((patched) =>
        Json.isObject(patched)
          ? Result.succeed(patched)
          : Result.fail(new PatchFailed({ message: "the patched document is not an object" })))
    )
  }
  if (!Json.isObject(patch)) {
    // A strategic merge patch of null decodes as an empty map: nothing to change.
    if (patch === null && type === "application/strategic-merge-patch+json") return Result.succeed(live)
    return Result.fail(new PatchUndecodable({ message: notAnObject(patch, type, decoding) }))
  }
  if (type === "application/merge-patch+json") return Result.succeed(MergePatch.apply(live, patch) as Json.JsonObject)
  return Result.mapError(StrategicMergePatch.apply(live, patch, structure), ({ message, plain }) =>
    plain ? new PatchRejected({ message }) : new PatchFailed({ message }))
}
