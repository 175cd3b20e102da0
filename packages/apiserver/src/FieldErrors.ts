/**
 * apimachinery's field errors (`field.Invalid`, `field.Required`, `field.NotSupported`...) as the
 * built-in kinds' validation reports them: FieldCauses builds the causes, and the values are printed
 * here the way Go prints typed fields in those messages: strings quoted, numbers bare, and maps,
 * slices and structs as `%#v` shows them (`map[string]string{"app":"web"}`,
 * `v1.LabelSelector{MatchLabels:..., MatchExpressions:...}`).
 */
import type * as Status from "./Status.ts"
import { FieldCauses, KubeObject } from "@kubefx/schema/internal"

type Cause = Status.StatusCause

/**
 * A Go-quoted string (`%q`).
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.quote("a\"b") // '"a\\"b"'
 */
export const quote = (s: unknown): string => FieldCauses.goQuote(String(s ?? ""))

/**
 * A `map[string]string` as `%#v` prints it: keys sorted, `(nil)` when absent.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.stringMap({ b: "2", a: "1" }) // 'map[string]string{"a":"1", "b":"2"}'
 */
export const stringMap = (m: unknown): string => {
  if (!KubeObject.isObject(m)) return "map[string]string(nil)"
  const entries = Object.keys(m).sort().map((k) => `${quote(k)}:${quote(m[k])}`)
  return `map[string]string{${entries.join(", ")}}`
}

/**
 * A slice of strings as `%#v` prints it, typed as `type` (default `[]string`).
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.stringSlice(["a", "b"]) // '[]string{"a", "b"}'
 * FieldErrors.stringSlice(undefined) // "[]string(nil)"
 */
export const stringSlice = (xs: unknown, type = "[]string"): string =>
  Array.isArray(xs) ? `${type}{${xs.map(quote).join(", ")}}` : `${type}(nil)`

const requirement = (r: unknown): string => {
  const o = KubeObject.isObject(r) ? r : {}
  return `v1.LabelSelectorRequirement{Key:${quote(o.key)}, Operator:${quote(o.operator)}, Values:${stringSlice(o.values)}}`
}

/**
 * A `metav1.LabelSelector` as `%#v` prints it.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.labelSelector({ matchLabels: { app: "web" } })
 * // 'v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}'
 */
export const labelSelector = (selector: unknown): string => {
  if (!KubeObject.isObject(selector)) return "null"
  const expressions = Array.isArray(selector.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${selector.matchExpressions.map(requirement).join(", ")}}`
    : "[]v1.LabelSelectorRequirement(nil)"
  return `v1.LabelSelector{MatchLabels:${stringMap(selector.matchLabels)}, MatchExpressions:${expressions}}`
}

/**
 * An `intstr.IntOrString` as `%#v` prints it.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.intOrString(0) // 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}'
 * FieldErrors.intOrString("25%") // 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}'
 */
export const intOrString = (value: unknown): string =>
  typeof value === "string"
    ? `intstr.IntOrString{Type:1, IntVal:0, StrVal:${quote(value)}}`
    : `intstr.IntOrString{Type:0, IntVal:${Number(value ?? 0)}, StrVal:""}`

/**
 * A scalar as Go prints a bad value: strings quoted, numbers and booleans bare, absent as `null`.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.scalar(-1) // "-1"
 * FieldErrors.scalar("x") // '"x"'
 */
export const scalar = (value: unknown): string =>
  typeof value === "string" ? quote(value) : value === undefined || value === null ? "null" : String(value)

/**
 * `field.Invalid`: the value is printed already (see {@link scalar}, {@link stringMap}...).
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.invalid("spec.replicas", "-1", "must be greater than or equal to 0").message
 * // "Invalid value: -1: must be greater than or equal to 0"
 */
export const invalid = (field: string, printed: string, detail: string): Cause =>
  FieldCauses.invalid(field, FieldCauses.goLiteral(printed), detail)

/**
 * `field.Required`, with an optional detail.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.required("spec.selector").message // "Required value"
 */
export const required = (field: string, detail?: string): Cause => FieldCauses.required(field, detail)

/**
 * `field.NotSupported`: the value and the supported values, quoted.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.notSupported("spec.type", "Foo", ["ClusterIP", "NodePort"]).message
 * // 'Unsupported value: "Foo": supported values: "ClusterIP", "NodePort"'
 */
export const notSupported = (field: string, value: unknown, supported: ReadonlyArray<string>): Cause =>
  FieldCauses.notSupported(field, FieldCauses.goLiteral(scalar(value)), supported)

/**
 * `field.Duplicate`.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.duplicate("spec.containers[1].name", "app").message // 'Duplicate value: "app"'
 */
export const duplicate = (field: string, value: unknown): Cause => FieldCauses.duplicate(field, FieldCauses.goLiteral(scalar(value)))

/**
 * `field.Forbidden`.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.forbidden("spec", "is immutable").message // "Forbidden: is immutable"
 */
export const forbidden = (field: string, detail: string): Cause => FieldCauses.forbidden(field, detail)

/**
 * `field.NotFound`.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.notFound("spec.containers[0].volumeMounts[0].name", "data").message // 'Not found: "data"'
 */
export const notFound = (field: string, value: unknown): Cause => FieldCauses.notFound(field, FieldCauses.goLiteral(scalar(value)))

/**
 * `field.TooLong` as 1.32 words it for byte limits.
 *
 * @example
 * import * as FieldErrors from "./FieldErrors.ts"
 * FieldErrors.tooLong("data", 1048576).message // "Too long: may not be more than 1048576 bytes"
 */
export const tooLong = (field: string, max: number): Cause => FieldCauses.tooLong(field, max)
