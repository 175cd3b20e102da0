/**
 * What kube-apiserver's strict JSON decoding of a built-in kind finds in a write: the first value
 * of the wrong JSON type (a 400 whatever `fieldValidation` says), worded as Go's encoding/json
 * words it (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of
 * type int32`), and the unknown fields, in the order they appear in the document, with list
 * indices and map keys (`spec.template.spec.containers[0].imagePullpolicy`), at most 100.
 *
 * Types with their own decoding fail on their own terms and stop the decoding: timestamps with
 * Go's time parsing errors, quantities with ParseQuantity's, int-or-string numbers with
 * `json: cannot unmarshal number 1.5 into Go value of type int32`.
 */
import type * as BuiltinSchemas from "./BuiltinSchemas.ts"
import * as GoTime from "./GoTime.ts"
import { KubeObject, Quantity } from "@kubefx/schema/internal"

export type Decoded =
  | { readonly _tag: "Failed"; readonly message: string }
  | { readonly _tag: "Decoded"; readonly unknownFields: ReadonlyArray<string> }

/** Go's errorContext: the innermost struct and the path of struct fields (no indices, no keys). */
interface Context {
  readonly struct: string
  readonly field: string
}

interface State {
  /** The first type error; decoding goes on (Go's saveError). */
  saved: string | undefined
  /** An error from a type's own decoder; decoding stops, and it wins over `saved`. */
  stopped: string | undefined
  readonly unknown: Array<string>
}

const maxUnknownFields = 100

const jsonKind = (value: unknown): string =>
  typeof value === "string"
    ? "string"
    : typeof value === "number"
    ? "number"
    : typeof value === "boolean"
    ? "bool"
    : Array.isArray(value)
    ? "array"
    : "object"

const unmarshalError = (what: string, goName: string, context: Context | undefined): string =>
  context === undefined
    ? `json: cannot unmarshal ${what} into Go value of type ${goName}`
    : `json: cannot unmarshal ${what} into Go struct field ${context.struct}.${context.field} of type ${goName}`

const save = (state: State, message: string) => {
  if (state.saved === undefined) state.saved = message
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`)

const walk = (value: unknown, type: BuiltinSchemas.GoType, path: string, context: Context | undefined, state: State) => {
  if (value === null || state.stopped !== undefined) return
  switch (type._tag) {
    case "Struct":
      return walkStruct(value, type, path, context, state)
    case "Slice":
      if (!Array.isArray(value)) return save(state, unmarshalError(jsonKind(value), type.goName, context))
      for (let i = 0; i < value.length && state.stopped === undefined; i++) {
        walk(value[i], type.items, `${path}[${i}]`, context, state)
      }
      return
    case "Map":
      if (!KubeObject.isObject(value)) return save(state, unmarshalError(jsonKind(value), type.goName, context))
      for (const key in value) {
        if (state.stopped !== undefined) return
        walk(value[key], type.values, join(path, key), context, state)
      }
      return
    case "Scalar":
      return scalar(value, type.goName, context, state)
    case "Time":
    case "MicroTime":
      if (typeof value !== "string") {
        state.stopped = unmarshalError(jsonKind(value), "string", undefined)
        return
      }
      state.stopped = GoTime.parseError(type._tag === "Time" ? "RFC3339" : "RFC3339Micro", value)
      return
    case "IntOrString":
      if (typeof value === "string") return
      if (typeof value !== "number") state.stopped = unmarshalError(jsonKind(value), "int32", undefined)
      else if (!isInt(value, 32)) state.stopped = unmarshalError(`number ${value}`, "int32", undefined)
      return
    case "Quantity":
      state.stopped = Quantity.parseError(
        typeof value === "string" || typeof value === "number" || typeof value === "boolean"
          ? String(value)
          : JSON.stringify(value)
      )
      return
    case "Raw":
      return
  }
}

const walkStruct = (
  value: unknown,
  type: BuiltinSchemas.Struct,
  path: string,
  context: Context | undefined,
  state: State
) => {
  if (!KubeObject.isObject(value)) return save(state, unmarshalError(jsonKind(value), type.goName, context))
  for (const key in value) {
    if (state.stopped !== undefined) return
    const field = type.fields.get(key)
    if (field === undefined) {
      if (state.unknown.length < maxUnknownFields) state.unknown.push(join(path, key))
      continue
    }
    const inner = { struct: type.name, field: context === undefined ? key : `${context.field}.${key}` }
    walk(value[key], field, join(path, key), inner, state)
  }
}

const isInt = (n: number, bits: 32 | 64): boolean =>
  Number.isInteger(n) && (bits === 32 ? n >= -2147483648 && n <= 2147483647 : Math.abs(n) <= 9223372036854775807)

const scalar = (value: unknown, goName: BuiltinSchemas.Scalar, context: Context | undefined, state: State) => {
  switch (goName) {
    case "string":
      if (typeof value !== "string") save(state, unmarshalError(jsonKind(value), goName, context))
      return
    case "bool":
      if (typeof value !== "boolean") save(state, unmarshalError(jsonKind(value), goName, context))
      return
    case "float64":
      if (typeof value !== "number") save(state, unmarshalError(jsonKind(value), goName, context))
      return
    case "int32":
    case "int64":
      if (typeof value !== "number") save(state, unmarshalError(jsonKind(value), goName, context))
      else if (!isInt(value, goName === "int32" ? 32 : 64)) save(state, unmarshalError(`number ${value}`, goName, context))
      return
    case "[]uint8":
      // A JSON array of bytes decodes too; only strings are base64.
      if (typeof value === "string") {
        const error = base64Error(value)
        if (error !== undefined) save(state, error)
      } else if (!Array.isArray(value)) save(state, unmarshalError(jsonKind(value), goName, context))
      return
  }
}

const base64Alphabet = /[A-Za-z0-9+/]/

/**
 * Go's base64.StdEncoding decoding error (`illegal base64 data at input byte N`): padding
 * required, newlines ignored, anything after the padding refused.
 *
 * @example
 * import * as Decoding from "./Decoding.ts"
 * Decoding.base64Error("aGVsbG8=") // undefined
 * Decoding.base64Error("hello world") // "illegal base64 data at input byte 5"
 */
export const base64Error = (s: string): string | undefined => {
  const corrupt = (at: number) => `illegal base64 data at input byte ${at}`
  let i = 0
  while (i < s.length) {
    // One quantum: four symbols, or fewer followed by padding.
    let j = 0
    while (j < 4) {
      if (i === s.length) return j === 0 ? undefined : corrupt(i - j)
      const c = s[i++]!
      if (c === "\n" || c === "\r") continue
      if (base64Alphabet.test(c)) {
        j++
        continue
      }
      if (c !== "=" || j < 2) return corrupt(i - 1)
      if (j === 2) {
        while (i < s.length && (s[i] === "\n" || s[i] === "\r")) i++
        if (i === s.length) return corrupt(s.length)
        if (s[i] !== "=") return corrupt(i - 1)
        i++
      }
      while (i < s.length && (s[i] === "\n" || s[i] === "\r")) i++
      return i < s.length ? corrupt(i) : undefined
    }
  }
  return undefined
}

/**
 * Decodes `object` into a kind's Go type: the decoding error, or the unknown fields it found.
 *
 * @example
 * import * as BuiltinSchemas from "./BuiltinSchemas.ts"
 * import * as Decoding from "./Decoding.ts"
 * const deployment = BuiltinSchemas.lookup("apps", "v1", "Deployment")!
 * Decoding.decode({ spec: { replicas: "3" } }, deployment.type)
 * // { _tag: "Failed", message: "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32" }
 * Decoding.decode({ spec: { replicas: 3, foo: 1 } }, deployment.type) // { _tag: "Decoded", unknownFields: ["spec.foo"] }
 */
export const decode = (object: KubeObject.KubeObject, type: BuiltinSchemas.Struct): Decoded => {
  const state: State = { saved: undefined, stopped: undefined, unknown: [] }
  walk(object, type, "", undefined, state)
  const failure = state.stopped ?? state.saved
  return failure === undefined ? { _tag: "Decoded", unknownFields: state.unknown } : { _tag: "Failed", message: failure }
}
