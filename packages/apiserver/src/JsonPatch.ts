/**
 * RFC 6902 JSON patches as kube-apiserver applies them, to `PATCH` bodies and to the patches
 * mutating webhooks answer with. kube vendors evanphx/json-patch v4, whose leniencies clients come
 * to rely on and whose words they see, so both are kept: `replace` of an absent member adds it,
 * negative array indices count from the end, a `null` member is as good as absent, `copy` of an
 * absent member copies `null`, `add` to the root fails and `replace` of it with a scalar does
 * nothing; a failure reads `error in remove for path: '/b': Unable to remove nonexistent key: b:
 * missing value`.
 *
 * effect's `JsonPatch` is not used: it implements only add/remove/replace, strictly.
 */
import { Result } from "effect"
import { Json } from "@kubefx/schema/internal"

/**
 * How a patch failed: `undecodable` before any operation ran (the server's 400), `failed` by an
 * operation (422 for a `PATCH`).
 */
export interface Failure {
  readonly kind: "undecodable" | "failed"
  readonly message: string
}

/**
 * How the request's `fieldValidation` has the body decoded: `Warn` and `Strict` (the default) read
 * it into kube's typed operations first, which words type errors differently.
 */
export type Decoding = "Ignore" | "Warn" | "Strict"

type Mutable = Array<Json.Json> | { [key: string]: Json.Json }

// A container's read: the value (`undefined` for absent or null, as Go's nil node) or Go's error.
type Read = { readonly value: Json.Json | undefined; readonly error?: undefined } | { readonly error: string }

const missing = "missing value"
const invalidIndex = (i: number) => `Unable to access invalid index: ${i}: invalid index referenced`

const goKind = (value: Json.Json): string =>
  Json.isArray(value) ? "array" : value === null ? "null" : typeof value === "object" ? "object" : typeof value === "boolean" ? "bool" : typeof value

// strconv.Atoi, for the indices a path names.
const atoi = (token: string): number | string =>
  /^[+-]?[0-9]+$/.test(token) ? Number(token) : `strconv.Atoi: parsing ${JSON.stringify(token)}: invalid syntax`

const decodeKey = (token: string): string => token.replace(/~[01]/g, (escape) => (escape === "~1" ? "/" : "~"))

const isContainer = (value: Json.Json | undefined): value is Mutable => value !== null && typeof value === "object"

const get = (container: Mutable, key: string): Read => {
  if (!Array.isArray(container)) {
    const value = Object.hasOwn(container, key) ? container[key] : undefined
    return { value: value === null ? undefined : value }
  }
  const i = atoi(key)
  if (typeof i === "string") return { error: i }
  const at = i < 0 ? i + container.length : i
  if (at < 0 || at >= container.length) return { error: invalidIndex(i) }
  const value = container[at]
  return { value: value === null ? undefined : value }
}

// `replace`'s write: the index is known to exist.
const set = (container: Mutable, key: string, value: Json.Json): void => {
  if (!Array.isArray(container)) {
    container[key] = value
    return
  }
  const i = Number(key)
  container[i < 0 ? i + container.length : i] = value
}

const add = (container: Mutable, key: string, value: Json.Json): string | undefined => {
  if (!Array.isArray(container)) {
    container[key] = value
    return undefined
  }
  if (key === "-") {
    container.push(value)
    return undefined
  }
  const i = atoi(key)
  if (typeof i === "string") return `value was not a proper array index: '${key}': ${i}`
  const size = container.length + 1
  if (i >= size || i < -size) return invalidIndex(i)
  container.splice(i < 0 ? i + size : i, 0, value)
  return undefined
}

const remove = (container: Mutable, key: string): string | undefined => {
  if (!Array.isArray(container)) {
    if (!Object.hasOwn(container, key)) return `Unable to remove nonexistent key: ${key}: ${missing}`
    delete container[key]
    return undefined
  }
  const i = atoi(key)
  if (typeof i === "string") return i
  if (i >= container.length || i < -container.length) return invalidIndex(i)
  container.splice(i < 0 ? i + container.length : i, 1)
  return undefined
}

// The container the last token of `path` is in, and that token; undefined when a step is absent,
// null or a scalar, or the path has no leading `/`.
const findObject = (doc: Mutable, path: string): { readonly container: Mutable; readonly key: string } | undefined => {
  const split = path.split("/")
  if (split.length < 2) return undefined
  let container = doc
  for (const part of split.slice(1, -1)) {
    const next = get(container, decodeKey(part))
    if (next.error !== undefined || !isContainer(next.value)) return undefined
    container = next.value
  }
  return { container, key: decodeKey(split[split.length - 1]!) }
}

type Operation = Readonly<Record<string, Json.Json>>

// Operation.Path and Operation.From: the member's string, or Go's error.
const member = (operation: Operation, name: "path" | "from"): { readonly text: string } | { readonly error: string } => {
  const value = operation[name]
  if (value === undefined || value === null) {
    return { error: name === "path" ? `operation missing path field: ${missing}` : `operation, missing from field: ${missing}` }
  }
  return typeof value === "string"
    ? { text: value }
    : { error: `json: cannot unmarshal ${goKind(value)} into Go value of type string` }
}

const clone = (value: Json.Json): Json.Json => structuredClone(value) as Json.Json

// Applies one operation to `root.doc` in place; the failure's words are the library's.
const applyOperation = (root: { doc: Mutable }, operation: Operation): string | undefined => {
  const kind = typeof operation.op === "string" ? operation.op : "unknown"
  const value = operation.value === undefined ? undefined : clone(operation.value)
  const path = member(operation, "path")
  switch (kind) {
    case "add": {
      if ("error" in path) return `add operation failed to decode path: ${missing}`
      const at = findObject(root.doc, path.text)
      if (at === undefined) return `add operation does not apply: doc is missing path: "${path.text}": ${missing}`
      const error = add(at.container, at.key, value ?? null)
      return error === undefined ? undefined : `error in add for path: '${path.text}': ${error}`
    }
    case "remove": {
      if ("error" in path) return `remove operation failed to decode path: ${missing}`
      const at = findObject(root.doc, path.text)
      if (at === undefined) return `remove operation does not apply: doc is missing path: "${path.text}": ${missing}`
      const error = remove(at.container, at.key)
      return error === undefined ? undefined : `error in remove for path: '${path.text}': ${error}`
    }
    case "replace": {
      if ("error" in path) return `replace operation failed to decode path: ${path.error}`
      if (path.text === "") {
        if (isContainer(value)) root.doc = value
        return undefined
      }
      const at = findObject(root.doc, path.text)
      if (at === undefined) return `replace operation does not apply: doc is missing path: ${path.text}: ${missing}`
      if (get(at.container, at.key).error !== undefined) {
        return `replace operation does not apply: doc is missing key: ${path.text}: ${missing}`
      }
      set(at.container, at.key, value ?? null)
      return undefined
    }
    case "move":
    case "copy": {
      const from = member(operation, "from")
      if ("error" in from) return `${kind} operation failed to decode from: ${from.error}`
      const source = findObject(root.doc, from.text)
      if (source === undefined) return `${kind} operation does not apply: doc is missing from path: ${from.text}: ${missing}`
      const read = get(source.container, source.key)
      if (read.error !== undefined) {
        return kind === "move"
          ? `error in move for path: '${source.key}': ${read.error}`
          : `error in copy for from: '${from.text}': ${read.error}`
      }
      if (kind === "move") {
        const error = remove(source.container, source.key)
        if (error !== undefined) return `error in move for path: '${source.key}': ${error}`
      }
      if ("error" in path) return `${kind} operation failed to decode path: ${kind === "move" ? path.error : missing}`
      const target = findObject(root.doc, path.text)
      if (target === undefined) return `${kind} operation does not apply: doc is missing destination path: ${path.text}: ${missing}`
      const moved = read.value === undefined ? null : kind === "copy" ? clone(read.value) : read.value
      const error = add(target.container, target.key, moved)
      if (error === undefined) return undefined
      return kind === "move" ? `error in move for path: '${path.text}': ${error}` : `error while adding value during copy: ${error}`
    }
    case "test": {
      if ("error" in path) return `test operation failed to decode path: ${path.error}`
      const failed = `testing value ${path.text} failed: test failed`
      if (path.text === "") return Json.equals(root.doc, value) ? undefined : failed
      const at = findObject(root.doc, path.text)
      if (at === undefined) return `test operation does not apply: is missing path: ${path.text}: ${missing}`
      const read = get(at.container, at.key)
      if (read.error !== undefined) return `error in test for path: '${path.text}': ${read.error}`
      if (read.value === undefined) return value === undefined || value === null ? undefined : failed
      return value !== undefined && Json.equals(read.value, value) ? undefined : failed
    }
    default:
      return `Unexpected kind: ${kind}`
  }
}

// kube's first reading under Warn and Strict: the body as a list of its typed operations.
const typedError = (body: Json.Json): string | undefined => {
  if (body === null) return undefined
  if (!Json.isArray(body)) return `json: cannot unmarshal ${goKind(body)} into Go value of type []handlers.jsonPatchOp`
  for (const item of body) {
    if (item === null) continue
    if (!Json.isObject(item)) return `json: cannot unmarshal ${goKind(item)} into Go value of type handlers.jsonPatchOp`
    for (const field of ["op", "path", "from"] as const) {
      const value = item[field]
      if (value !== undefined && value !== null && typeof value !== "string") {
        return `json: cannot unmarshal ${goKind(value)} into Go struct field jsonPatchOp.${field} of type string`
      }
    }
  }
  return undefined
}

// jsonpatch.DecodePatch: a list of objects, `null` being none.
const decode = (body: Json.Json): ReadonlyArray<Operation> | string => {
  if (body === null) return []
  if (!Json.isArray(body)) return `json: cannot unmarshal ${goKind(body)} into Go value of type jsonpatch.Patch`
  const operations: Array<Operation> = []
  for (const item of body) {
    if (item !== null && !Json.isObject(item)) {
      return `json: cannot unmarshal ${goKind(item)} into Go value of type jsonpatch.Operation`
    }
    operations.push(item ?? {})
  }
  return operations
}

/**
 * Decodes a parsed JSON patch body into its operations, as kube does before applying any.
 *
 * @example
 * import * as JsonPatch from "./JsonPatch.ts"
 * JsonPatch.decodeBody({ op: "add" }, "Strict")
 * // Result.fail({ kind: "undecodable", message: "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp" })
 */
export const decodeBody = (body: Json.Json, decoding: Decoding): Result.Result<ReadonlyArray<Operation>, Failure> => {
  const typed = decoding === "Ignore" ? undefined : typedError(body)
  if (typed !== undefined) return Result.fail({ kind: "undecodable", message: `error decoding patch: ${typed}` })
  const operations = decode(body)
  return typeof operations === "string" ? Result.fail({ kind: "undecodable", message: operations }) : Result.succeed(operations)
}

/**
 * Applies decoded operations to a document, all or nothing; the document is not changed.
 *
 * @example
 * import * as JsonPatch from "./JsonPatch.ts"
 * JsonPatch.applyOperations({ metadata: { name: "x" } }, [{ op: "replace", path: "/metadata/labels", value: { a: "b" } }])
 * // Result.succeed({ metadata: { name: "x", labels: { a: "b" } } }): replace adds what is absent
 */
export const applyOperations = (doc: Json.Json, operations: ReadonlyArray<Operation>): Result.Result<Json.Json, Failure> => {
  if (!isContainer(doc)) return operations.length === 0 ? Result.succeed(doc) : Result.fail({ kind: "failed", message: "the document is not an object" })
  const root = { doc: clone(doc) as Mutable }
  for (const operation of operations) {
    const error = applyOperation(root, operation)
    if (error !== undefined) return Result.fail({ kind: "failed", message: error })
  }
  return Result.succeed(root.doc)
}
