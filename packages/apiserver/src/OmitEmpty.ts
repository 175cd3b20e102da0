/**
 * A built-in kind's object as kube-apiserver writes it back after decoding it into its Go type:
 * a field whose json tag has `omitempty` is left out when it holds Go's zero value, so a Helm
 * manifest's `nodeSelector:` (null), a ConfigMap's `data: {}` or a container's `tty: false` are not
 * stored, where a pointer's `replicas: 0` or `immutable: false` is. Fields without `omitempty` are
 * kept (a ClusterRole's `rules: []`); a null in a struct-typed field (a chart's `resources:`) is
 * taken as absent, for the kind's defaults to fill as Go's zero struct. Quantities are written in
 * their canonical form (`cpu: 0.5` is stored as `500m`, `memory: 1024Mi` as `1Gi`), times in UTC
 * (`metav1.Time` to the second, `MicroTime` to the microsecond).
 */
import type * as BuiltinSchemas from "./BuiltinSchemas.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

const isEmpty = (value: unknown, type: BuiltinSchemas.GoType): boolean => {
  switch (type._tag) {
    case "Scalar":
      return value === "" || value === 0 || value === false || (Array.isArray(value) && value.length === 0)
    case "Slice":
      return Array.isArray(value) && value.length === 0
    case "Map":
      return KubeObject.isEmptyObject(value)
    default:
      return false
  }
}

const scalarZero: Readonly<Record<BuiltinSchemas.Scalar, unknown>> = {
  string: "",
  bool: false,
  int32: 0,
  int64: 0,
  float64: 0,
  "[]uint8": null
}

const dropped = Symbol()

// What Go writes for a field after decoding `value` into it: `dropped` when it leaves it out. A
// null decodes to the field's zero value (decoding null into a value is a no-op): a nil pointer,
// list or map without omitempty is written as null, a plain scalar as its zero, a struct as its
// zero struct, which is left to the kind's defaults as if the field were absent.
const written = (value: unknown, type: BuiltinSchemas.GoType, encoding: BuiltinSchemas.FieldEncoding | undefined): unknown => {
  if (value === null) {
    if (encoding === "pointer") return null
    // A zero metav1.Time is written as null, omitempty or not (a struct is never left out).
    if (type._tag === "Time" || type._tag === "MicroTime") return encoding === "omitemptyPointer" ? dropped : null
    if (encoding !== undefined) return dropped
    switch (type._tag) {
      case "Slice":
      case "Map":
      case "Raw":
        return null
      case "Scalar":
        return scalarZero[type.goName]
      default:
        return dropped
    }
  }
  return encoding === "omitempty" && isEmpty(value, type) ? dropped : visit(value, type)
}

const visit = (value: unknown, type: BuiltinSchemas.GoType): unknown => {
  switch (type._tag) {
    case "Struct":
      return KubeObject.isObject(value) ? visitStruct(value, type) : value
    case "Slice":
      return Array.isArray(value) && nests(type.items) ? visitEach(value, type.items) : value
    case "Map":
      return KubeObject.isObject(value) && nests(type.values) ? visitValues(value, type.values) : value
    case "Quantity":
      return typeof value === "string" || typeof value === "number" ? canonicalQuantity(value) : value
    case "Time":
    case "MicroTime":
      return typeof value === "string" ? canonicalTime(value, type._tag === "MicroTime") : value
    default:
      return value
  }
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/

// A time as metav1.Time writes it (UTC, whole seconds: the fraction cut) or MicroTime (UTC, six
// digits); the same string when it is already so, or when it is not RFC 3339 (decoding judges it).
const canonicalTime = (value: string, micro: boolean): string => {
  const m = rfc3339.exec(value)
  // Date.UTC reads years below 100 as 19xx: such a time is left as it is.
  if (m === null || Number(m[1]) < 100) return value
  const [, year, month, day, hour, minute, second, fraction = "", sign, offsetHours = "0", offsetMinutes = "0"] = m
  const offset = (sign === "-" ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes))
  const utc = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute) - (sign === undefined ? 0 : offset), Number(second)))
  const whole = utc.toISOString().slice(0, 19)
  const canonical = micro ? `${whole}.${fraction.slice(0, 6).padEnd(6, "0")}Z` : `${whole}Z`
  return canonical === value ? value : canonical
}

// A quantity as resource.Quantity writes it ("0.5" is "500m", "1024Mi" is "1Gi"); the same string
// when it is already so, so that an unchanged object is not copied.
const canonicalQuantity = (value: string | number): string | number => {
  const canonical = QuantityMath.goString(value)
  return canonical === value ? value : canonical
}

const nests = (type: BuiltinSchemas.GoType): boolean =>
  type._tag === "Struct" || type._tag === "Slice" || type._tag === "Map" || type._tag === "Quantity"

const visitStruct = (value: KubeObject.KubeObject, type: BuiltinSchemas.Struct): KubeObject.KubeObject => {
  let out: Record<string, unknown> | undefined
  for (const key in value) {
    const field = type.fields.get(key)
    if (field === undefined) continue
    const inner = value[key]
    const next = written(inner, field, type.encodings.get(key))
    if (next === inner) continue
    out ??= { ...value }
    if (next === dropped) delete out[key]
    else out[key] = next
  }
  return out ?? value
}

const visitEach = (items: ReadonlyArray<unknown>, type: BuiltinSchemas.GoType): ReadonlyArray<unknown> => {
  let out: Array<unknown> | undefined
  for (let i = 0; i < items.length; i++) {
    const next = visit(items[i], type)
    if (next !== items[i]) (out ??= [...items])[i] = next
  }
  return out ?? items
}

const visitValues = (values: KubeObject.KubeObject, type: BuiltinSchemas.GoType): KubeObject.KubeObject => {
  let out: Record<string, unknown> | undefined
  for (const key in values) {
    const next = visit(values[key], type)
    if (next !== values[key]) (out ??= { ...values })[key] = next
  }
  return out ?? values
}

// What Go writes for a field it holds at its zero value: nothing under omitempty (a struct is never
// left out), null for a pointer, list, map or free-form value, a struct's own zero encoding.
const zeroField = (type: BuiltinSchemas.GoType, encoding: BuiltinSchemas.FieldEncoding | undefined): unknown => {
  if (encoding === "pointer") return null
  if (encoding === "omitemptyPointer") return dropped
  switch (type._tag) {
    case "Struct":
      return zeroOf(type)
    case "Time":
    case "MicroTime":
    case "Raw":
      return null
    case "Quantity":
      return "0"
    case "IntOrString":
      return 0
    case "Scalar":
      return encoding === undefined ? scalarZero[type.goName] : dropped
    case "Slice":
    case "Map":
      return encoding === undefined ? null : dropped
  }
}

/**
 * What Go writes for a struct at its zero value: its fields without `omitempty` at their zeros and
 * its struct fields as their own zero structs.
 *
 * @example
 * import * as BuiltinSchemas from "./BuiltinSchemas.ts"
 * import * as OmitEmpty from "./OmitEmpty.ts"
 * const pdb = BuiltinSchemas.lookup("policy", "v1", "PodDisruptionBudget")!
 * OmitEmpty.zeroOf(pdb.type.fields.get("status") as BuiltinSchemas.Struct)
 * // { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }
 */
export const zeroOf = (type: BuiltinSchemas.Struct): KubeObject.KubeObject => {
  const out: Record<string, unknown> = {}
  for (const [name, field] of type.fields) {
    const value = zeroField(field, type.encodings.get(name))
    if (value !== dropped) out[name] = value
  }
  return out
}

/**
 * `object` as Go writes it back: without the `omitempty` fields that hold their zero value, and
 * with each null as Go writes the zero value it decodes to, at any depth; the same object back
 * when that changes nothing.
 *
 * @example
 * import * as BuiltinSchemas from "./BuiltinSchemas.ts"
 * import * as OmitEmpty from "./OmitEmpty.ts"
 * const configMap = BuiltinSchemas.lookup("", "v1", "ConfigMap")!
 * OmitEmpty.apply({ metadata: { name: "a" }, data: {}, immutable: false }, configMap.type)
 * // { metadata: { name: "a" }, immutable: false }
 */
export const apply = (object: KubeObject.KubeObject, type: BuiltinSchemas.Struct): KubeObject.KubeObject =>
  visitStruct(object, type)
