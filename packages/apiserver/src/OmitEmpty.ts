/**
 * A built-in kind's object as kube-apiserver writes it back after decoding it into its Go type:
 * a field whose json tag has `omitempty` is left out when it holds Go's zero value, so a Helm
 * manifest's `nodeSelector:` (null), a ConfigMap's `data: {}` or a container's `tty: false` are not
 * stored, where a pointer's `replicas: 0` or `immutable: false` is. Struct-typed fields are kept as
 * sent, as are fields without `omitempty` (a ClusterRole's `rules: []`).
 */
import type * as BuiltinSchemas from "./BuiltinSchemas.ts"
import { KubeObject } from "@kubefx/schema/internal"

const isEmptyRecord = (value: KubeObject.KubeObject): boolean => {
  for (const _ in value) return false
  return true
}

// Go's zero values by JSON shape; a struct's zero is written out (`{}`), so it is never empty here.
const isZero = (value: unknown, type: BuiltinSchemas.GoType, omission: "zero" | "nil"): boolean => {
  if (omission === "nil") return value === null
  switch (type._tag) {
    case "Scalar":
      return value === null || value === "" || value === 0 || value === false || (Array.isArray(value) && value.length === 0)
    case "Slice":
      return value === null || (Array.isArray(value) && value.length === 0)
    case "Map":
      return value === null || (KubeObject.isObject(value) && isEmptyRecord(value))
    default:
      return false
  }
}

const visit = (value: unknown, type: BuiltinSchemas.GoType): unknown => {
  switch (type._tag) {
    case "Struct":
      return KubeObject.isObject(value) ? visitStruct(value, type) : value
    case "Slice":
      return Array.isArray(value) && nests(type.items) ? visitEach(value, type.items) : value
    case "Map":
      return KubeObject.isObject(value) && nests(type.values) ? visitValues(value, type.values) : value
    default:
      return value
  }
}

const nests = (type: BuiltinSchemas.GoType): boolean => type._tag === "Struct" || type._tag === "Slice" || type._tag === "Map"

const visitStruct = (value: KubeObject.KubeObject, type: BuiltinSchemas.Struct): KubeObject.KubeObject => {
  let out: Record<string, unknown> | undefined
  for (const key in value) {
    const field = type.fields.get(key)
    if (field === undefined) continue
    const inner = value[key]
    const omission = type.omitted.get(key)
    if (omission !== undefined && isZero(inner, field, omission)) {
      out ??= { ...value }
      delete out[key]
      continue
    }
    const next = visit(inner, field)
    if (next !== inner) (out ??= { ...value })[key] = next
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

/**
 * `object` without the `omitempty` fields that hold their zero value, at any depth; the same
 * object back when there are none.
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
