/**
 * The non-apply patches of `PATCH` requests, by Content-Type: JSON patch (RFC 6902), JSON merge
 * patch (RFC 7386) and strategic merge patch. Failures carry the HTTP status the server answers.
 *
 * effect's `JsonPatch` is not used for RFC 6902: it implements only add/remove/replace (no `test`,
 * `move`, `copy`) and throws plain errors.
 */
import { JsonPointer, Result, Schema } from "effect"
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

type Operation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: Json.Json }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly path: string; readonly from: string }

const decodeOperation = (raw: Json.Json, i: number): Result.Result<Operation, string> => {
  if (!Json.isObject(raw)) return Result.fail(`operation ${i} is not an object`)
  const { from, op, path, value } = raw
  if (typeof path !== "string") return Result.fail(`operation ${i} has no "path"`)
  switch (op) {
    case "add":
    case "replace":
    case "test":
      return value === undefined ? Result.fail(`operation ${i} (${op}) has no "value"`) : Result.succeed({ op, path, value })
    case "remove":
      return Result.succeed({ op, path })
    case "move":
    case "copy":
      return typeof from === "string" ? Result.succeed({ op, path, from }) : Result.fail(`operation ${i} (${op}) has no "from"`)
    default:
      return Result.fail(`operation ${i} has an unknown "op": ${JSON.stringify(op)}`)
  }
}

const tokens = (pointer: string): Result.Result<ReadonlyArray<string>, string> =>
  pointer === ""
    ? Result.succeed([])
    : pointer.startsWith("/") && !/~[^01]|~$/.test(pointer)
    ? Result.succeed(pointer.slice(1).split("/").map(JsonPointer.unescapeToken))
    : Result.fail(`invalid JSON pointer ${JSON.stringify(pointer)}`)

const arrayIndex = (token: string, length: number): number | undefined => {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined
  const i = Number(token)
  return i < length ? i : undefined
}

const childOf = (doc: Json.Json, token: string): Json.Json | undefined => {
  if (Json.isArray(doc)) {
    const i = arrayIndex(token, doc.length)
    return i === undefined ? undefined : doc[i]
  }
  return Json.isObject(doc) && Object.hasOwn(doc, token) ? doc[token] : undefined
}

const valueAt = (doc: Json.Json, path: ReadonlyArray<string>): Json.Json | undefined =>
  path.reduce<Json.Json | undefined>((at, token) => (at === undefined ? undefined : childOf(at, token)), doc)

const withChild = (doc: Json.Json, token: string, child: Json.Json): Json.Json =>
  Json.isArray(doc)
    ? doc.map((item, i) => (String(i) === token ? child : item))
    : Object.fromEntries([...Object.entries(doc as Json.JsonObject), [token, child]])

// Rebuilds `doc` with `change` applied to the container holding the last token of `path`.
const edit = (
  doc: Json.Json,
  path: ReadonlyArray<string>,
  change: (parent: Json.Json, token: string) => Result.Result<Json.Json, string>
): Result.Result<Json.Json, string> => {
  const [token, ...rest] = path
  if (token === undefined) return Result.fail("the root cannot be the target")
  if (rest.length === 0) return change(doc, token)
  const child = childOf(doc, token)
  if (child === undefined) return Result.fail(`missing path: /${path.join("/")}`)
  return Result.map(edit(child, rest, change), (updated) => withChild(doc, token, updated))
}

const add = (value: Json.Json) => (parent: Json.Json, token: string): Result.Result<Json.Json, string> => {
  if (Json.isArray(parent)) {
    const i = token === "-" ? parent.length : /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : Number.NaN
    if (!(i <= parent.length)) return Result.fail(`index ${token} is out of bounds`)
    return Result.succeed([...parent.slice(0, i), value, ...parent.slice(i)])
  }
  if (Json.isObject(parent)) return Result.succeed(withChild(parent, token, value))
  return Result.fail(`cannot add ${JSON.stringify(token)} to a scalar`)
}

const remove = (parent: Json.Json, token: string): Result.Result<Json.Json, string> => {
  if (childOf(parent, token) === undefined) return Result.fail(`unable to remove nonexistent key: ${token}`)
  if (Json.isArray(parent)) return Result.succeed(parent.filter((_, i) => String(i) !== token))
  return Result.succeed(Object.fromEntries(Object.entries(parent as Json.JsonObject).filter(([k]) => k !== token)))
}

const replace = (value: Json.Json) => (parent: Json.Json, token: string): Result.Result<Json.Json, string> =>
  childOf(parent, token) === undefined
    ? Result.fail(`unable to replace nonexistent key: ${token}`)
    : Result.succeed(withChild(parent, token, value))

const applyOperation = (doc: Json.Json, operation: Operation): Result.Result<Json.Json, string> =>
  Result.flatMap(tokens(operation.path), (path) => {
    switch (operation.op) {
      case "add":
        return path.length === 0 ? Result.succeed(operation.value) : edit(doc, path, add(operation.value))
      case "replace":
        return path.length === 0 ? Result.succeed(operation.value) : edit(doc, path, replace(operation.value))
      case "remove":
        return edit(doc, path, remove)
      case "test": {
        const actual = valueAt(doc, path)
        return Json.equals(actual, operation.value)
          ? Result.succeed(doc)
          : Result.fail(`testing value ${operation.path} failed: expected ${Json.canonical(operation.value)}, found ${
            actual === undefined ? "nothing" : Json.canonical(actual)
          }`)
      }
      case "move":
      case "copy":
        return Result.flatMap(tokens(operation.from), (from) => {
          const value = valueAt(doc, from)
          if (value === undefined) return Result.fail(`${operation.op} from a missing path: ${operation.from}`)
          if (operation.op === "copy") return path.length === 0 ? Result.succeed(value) : edit(doc, path, add(value))
          if (operation.path.startsWith(`${operation.from}/`)) {
            return Result.fail(`cannot move ${operation.from} into itself (${operation.path})`)
          }
          return Result.flatMap(edit(doc, from, remove), (without) =>
            path.length === 0 ? Result.succeed(value) : edit(without, path, add(value)))
        })
    }
  })

/**
 * Applies an RFC 6902 JSON patch (already parsed) to a document.
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
  body: Json.Json
): Result.Result<Json.Json, PatchUndecodable | PatchTooLarge | PatchFailed> => {
  // Go's encoding/json on jsonpatch.Patch, a list: what else the body is, by its JSON kind.
  if (!Json.isArray(body)) {
    const kind = body === null ? undefined : typeof body === "object" ? "object" : typeof body === "boolean" ? "bool" : typeof body
    return kind === undefined
      ? Result.succeed(doc)
      : Result.fail(new PatchUndecodable({ message: `json: cannot unmarshal ${kind} into Go value of type jsonpatch.Patch` }))
  }
  if (body.length > maxOperations) {
    return Result.fail(
      new PatchTooLarge({
        message: `The allowed maximum operations in a JSON patch is ${maxOperations}, got ${body.length}`
      })
    )
  }
  const operations: Array<Operation> = []
  for (const [i, raw] of body.entries()) {
    const operation = decodeOperation(raw, i)
    if (Result.isFailure(operation)) return Result.fail(new PatchUndecodable({ message: operation.failure }))
    operations.push(operation.success)
  }
  let current = doc
  for (const operation of operations) {
    const next = applyOperation(current, operation)
    if (Result.isFailure(next)) return Result.fail(new PatchFailed({ message: next.failure }))
    current = next.success
  }
  return Result.succeed(current)
}

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
  structure: Structure.Structure
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
    return Result.flatMap(jsonPatch(live, patch), (patched) =>
      Json.isObject(patched)
        ? Result.succeed(patched)
        : Result.fail(new PatchFailed({ message: "the patched document is not an object" })))
  }
  if (!Json.isObject(patch)) return Result.fail(new PatchUndecodable({ message: "a merge patch must be a JSON object" }))
  if (type === "application/merge-patch+json") return Result.succeed(MergePatch.apply(live, patch) as Json.JsonObject)
  return Result.mapError(StrategicMergePatch.apply(live, patch, structure), ({ message, plain }) =>
    plain ? new PatchRejected({ message }) : new PatchFailed({ message }))
}
