/**
 * apimachinery's field errors as kube-apiserver's schema validation reports them: `metav1` causes
 * (`reason`, `message`, `field`) whose bad values print the way Go's `%v`/`%#v` print them, the
 * Status message built from them, and field paths (`spec.items[0]`, `metadata.labels[app]`).
 */
import * as KubeObject from "./KubeObject.ts"

/** `metav1.CauseType` of a field error. */
export type CauseReason =
  | "FieldValueInvalid"
  | "FieldValueRequired"
  | "FieldValueNotSupported"
  | "FieldValueDuplicate"
  | "FieldValueTypeInvalid"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueForbidden"
  | "FieldValueNotFound"
  | "InternalError"

/** One `details.causes[]` entry of a 422 Status. */
export interface Cause {
  readonly reason: CauseReason
  readonly message: string
  readonly field: string
}

const typeText: Record<CauseReason, string> = {
  FieldValueInvalid: "Invalid value",
  FieldValueRequired: "Required value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueTypeInvalid: "Invalid value",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  FieldValueForbidden: "Forbidden",
  FieldValueNotFound: "Not found",
  InternalError: "Internal error"
}

const goLiteralKey: unique symbol = Symbol.for("kubefx/GoLiteral")

/** A bad value already rendered the way Go's `%#v` prints it (typed slices, structs). */
export interface GoLiteral {
  readonly [goLiteralKey]: string
}

/**
 * Wraps text that should appear verbatim as a cause's value.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.invalid("metadata.finalizers", FieldCauses.goLiteral('[]string{"a"}'), "bad").message
 * // 'Invalid value: []string{"a"}: bad'
 */
export const goLiteral = (text: string): GoLiteral => ({ [goLiteralKey]: text })

const isGoLiteral = (u: unknown): u is GoLiteral => typeof u === "object" && u !== null && goLiteralKey in u

const goEscapes: Readonly<Record<string, string>> = {
  "\"": "\\\"",
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\v": "\\v"
}

/**
 * Go's `strconv.Quote`, which `%q` uses for string values in messages.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.goQuote('a"b') // '"a\\"b"'
 */
export const goQuote = (s: string): string => {
  let out = "\""
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0
    out += goEscapes[ch] ?? (code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : ch)
  }
  return `${out}"`
}

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e21 on. */
export const goFloat = (n: number): string => {
  if (Number.isNaN(n)) return "NaN"
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : "-Inf"
  const abs = Math.abs(n)
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    const [mantissa = "", exponent = "+0"] = n.toExponential().split("e")
    return `${mantissa}e${exponent[0]}${exponent.slice(1).padStart(2, "0")}`
  }
  return String(n)
}

/** A JSON number as Go's JSON decoding types it: int64 when integral, float64 otherwise. */
export const isGoInteger = (n: number): boolean => Number.isInteger(n) && Math.abs(n) < 2 ** 63

const goNumber = (n: number): string => (isGoInteger(n) ? String(n) : goFloat(n))

/** `%#v` of a value held in an `interface{}` (map and slice elements). */
export const goSharp = (value: unknown): string => {
  if (value === null || value === undefined) return "interface {}(nil)"
  if (typeof value === "string") return goQuote(value)
  if (typeof value === "number") return goNumber(value)
  if (typeof value === "boolean") return String(value)
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSharp).join(", ")}}`
  if (KubeObject.isObject(value)) {
    const entries = Object.keys(value).sort().map((k) => `${goQuote(k)}:${goSharp(value[k])}`)
    return `map[string]interface {}{${entries.join(", ")}}`
  }
  return String(value)
}

/** How `field.Error.ErrorBody` prints a bad value. */
const goValue = (value: unknown): string => {
  if (isGoLiteral(value)) return value[goLiteralKey]
  if (value === null || value === undefined) return goQuote("null")
  if (typeof value === "string") return goQuote(value)
  if (typeof value === "number") return goNumber(value)
  if (typeof value === "boolean") return String(value)
  return goSharp(value)
}

/**
 * JSON as Go's `encoding/json` writes it: sorted keys, `<`, `>` and `&` escaped.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.goJson({ b: 1, a: "<" }) // '{"a":"\\u003c","b":1}'
 */
export const goJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`
  if (KubeObject.isObject(value)) {
    return `{${Object.keys(value).sort().map((k) => `${goJson(k)}:${goJson(value[k])}`).join(",")}}`
  }
  if (value === undefined) return "null"
  return JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)
}

const noValue: unique symbol = Symbol("noValue")

const cause = (reason: CauseReason, field: string, value: unknown, detail: string): Cause => {
  const head = value === noValue ? typeText[reason] : `${typeText[reason]}: ${goValue(value)}`
  return { reason, field, message: detail === "" ? head : `${head}: ${detail}` }
}

/**
 * `field.Required`: `spec.cronSpec: Required value`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.required("spec.cronSpec").message // "Required value"
 */
export const required = (field: string, detail = ""): Cause => cause("FieldValueRequired", field, noValue, detail)

/**
 * `field.Invalid`: `Invalid value: <value>: <detail>`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.invalid("spec.replicas", 15, "too big").message // "Invalid value: 15: too big"
 */
export const invalid = (field: string, value: unknown, detail: string): Cause =>
  cause("FieldValueInvalid", field, value, detail)

/**
 * `field.TypeInvalid`: printed like Invalid, with reason FieldValueTypeInvalid.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.typeInvalid("spec.image", "integer", "wrong").reason // "FieldValueTypeInvalid"
 */
export const typeInvalid = (field: string, value: unknown, detail: string): Cause =>
  cause("FieldValueTypeInvalid", field, value, detail)

/**
 * `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.notSupported("spec.scope", "x", ["a", "b"]).message
 * // 'Unsupported value: "x": supported values: "a", "b"'
 */
export const notSupported = (field: string, value: unknown, supported: ReadonlyArray<string>): Cause =>
  cause(
    "FieldValueNotSupported",
    field,
    value,
    supported.length === 0 ? "" : `supported values: ${supported.map(goQuote).join(", ")}`
  )

/**
 * `field.Duplicate`: `Duplicate value: "a"`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.duplicate("spec.tags[1]", "a").message // 'Duplicate value: "a"'
 */
export const duplicate = (field: string, value: unknown): Cause => cause("FieldValueDuplicate", field, value, "")

/**
 * `field.Forbidden`: `Forbidden: <detail>`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.forbidden("metadata.namespace", "not allowed on this type").message
 * // "Forbidden: not allowed on this type"
 */
export const forbidden = (field: string, detail: string): Cause => cause("FieldValueForbidden", field, noValue, detail)

/**
 * `field.NotFound`: `Not found: "data"`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.notFound("spec.volumes[0].name", "data").message // 'Not found: "data"'
 */
export const notFound = (field: string, value: unknown): Cause => cause("FieldValueNotFound", field, value, "")

/**
 * `field.TooLong` (1.32 wording): `Too long: may not be more than 10 bytes`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.tooLong("spec.name", 10).message // "Too long: may not be more than 10 bytes"
 */
export const tooLong = (field: string, max: number): Cause =>
  cause("FieldValueTooLong", field, noValue, `may not be more than ${max} bytes`)

/**
 * `field.TooMany`: `Too many: 3: must have at most 2 items`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.tooMany("spec.ports", 3, 2).message // "Too many: 3: must have at most 2 items"
 */
export const tooMany = (field: string, actual: number, max: number): Cause =>
  cause("FieldValueTooMany", field, actual, `must have at most ${max} items`)

/**
 * A cause as `field.Error.Error()` prints it: `<field>: <message>`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.causeText(FieldCauses.required("spec.cronSpec")) // "spec.cronSpec: Required value"
 */
export const causeText = (c: Cause): string => `${c.field}: ${c.message}`

/**
 * The message of a 422 Invalid Status: one cause inline, several as `[a, b]` (identical ones once),
 * as `errors.NewInvalid` writes it.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.invalidMessage("CronTab.stable.example.com", "x", [FieldCauses.required("spec.cronSpec")])
 * // 'CronTab.stable.example.com "x" is invalid: spec.cronSpec: Required value'
 */
export const invalidMessage = (qualifiedKind: string, name: string, causes: ReadonlyArray<Cause>): string => {
  const texts = [...new Set(causes.map(causeText))]
  const head = `${qualifiedKind} ${goQuote(name)} is invalid`
  if (texts.length === 0) return head
  return `${head}: ${texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`}`
}

/**
 * The whole 422 `metav1.Status` body for causes, with `details.kind` the Kind and `details.group`
 * the group.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.invalidStatus({ group: "stable.example.com", kind: "CronTab" }, "x", []).code // 422
 */
export const invalidStatus = (
  target: { readonly group: string; readonly kind: string },
  name: string,
  causes: ReadonlyArray<Cause>
): Record<string, unknown> => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: invalidMessage(target.group === "" ? target.kind : `${target.kind}.${target.group}`, name, causes),
  reason: "Invalid",
  details: { name, group: target.group, kind: target.kind, causes },
  code: 422
})

/**
 * `path.Child(name)`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.child("spec", "versions") // "spec.versions"
 */
export const child = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`)

/**
 * `path.Index(i)`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.index("spec.versions", 0) // "spec.versions[0]"
 */
export const index = (path: string, i: number): string => `${path}[${i}]`

/**
 * `path.Key(k)`.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.key("spec.properties", "spec") // "spec.properties[spec]"
 */
export const key = (path: string, k: string): string => `${path}[${k}]`

/**
 * A `[]string` as `%#v` prints it.
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.invalid("f", FieldCauses.goStrings(["a", "b"]), "x").message // 'Invalid value: []string{"a", "b"}: x'
 */
export const goStrings = (values: ReadonlyArray<string>): GoLiteral =>
  goLiteral(`[]string{${values.map(goQuote).join(", ")}}`)

/**
 * A Go struct value as `%#v` prints it, approximately: the scalar fields given, in order, and
 * `{...}` for nested values (Go would print pointers as addresses, which nobody can match).
 *
 * @example
 * import * as FieldCauses from "./FieldCauses.ts"
 * FieldCauses.invalid("spec.versions", FieldCauses.goStruct("v1.Version", [["Name", "v1"], ["Served", true]]), "x").message
 * // 'Invalid value: v1.Version{Name:"v1", Served:true}: x'
 */
export const goStruct = (typeName: string, fields: ReadonlyArray<readonly [string, unknown]>): GoLiteral => {
  const shown = fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}:${typeof v === "object" && v !== null ? "{...}" : goSharp(v)}`)
  return goLiteral(`${typeName}{${shown.join(", ")}}`)
}
