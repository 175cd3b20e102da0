/**
 * Validation ratcheting (CRDValidationRatcheting, on by default in kube-apiserver 1.32): on an
 * update, a schema error at a value the update leaves as it was is not an error, so tightening a
 * CRD's schema never blocks writes to other fields of objects stored before. A value correlates
 * with the old object through properties and map keys; through a list, only the whole list does.
 */
import type * as FieldCauses from "./FieldCauses.ts"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"
import * as OpenApiValidation from "./OpenApiValidation.ts"

type Segment = { readonly _tag: "Name"; readonly name: string } | { readonly _tag: "Bracket"; readonly text: string }

// A cause's field path as FieldCauses writes it: `spec.ports[0].name`, `spec.labels[a.b/c]`.
const segments = (field: string): ReadonlyArray<Segment> => {
  const out: Array<Segment> = []
  let i = 0
  while (i < field.length) {
    if (field[i] === ".") i++
    if (field[i] === "[") {
      const end = field.indexOf("]", i)
      out.push({ _tag: "Bracket", text: field.slice(i + 1, end === -1 ? field.length : end) })
      i = end === -1 ? field.length : end + 1
    } else {
      let end = i
      while (end < field.length && field[end] !== "." && field[end] !== "[") end++
      out.push({ _tag: "Name", name: field.slice(i, end) })
      i = end
    }
  }
  return out
}

/**
 * Whether the value at `field` is the same in `object` and `old` (for a path into a list: whether
 * the whole list is).
 *
 * @example
 * import * as Ratcheting from "./Ratcheting.ts"
 * Ratcheting.unchanged({ spec: { a: 1, b: 2 } }, { spec: { a: 1, b: 3 } }, "spec.a") // true
 * Ratcheting.unchanged({ spec: { l: [1, 2] } }, { spec: { l: [1, 3] } }, "spec.l[0]") // false
 */
export const unchanged = (object: unknown, old: unknown, field: string): boolean => {
  let now: unknown = object
  let before: unknown = old
  for (const segment of segments(field)) {
    if (Array.isArray(now) || Array.isArray(before)) return KubeObject.equals(now, before)
    const key = segment._tag === "Name" ? segment.name : segment.text
    now = KubeObject.isObject(now) ? now[key] : undefined
    before = KubeObject.isObject(before) ? before[key] : undefined
  }
  return KubeObject.equals(now, before)
}

/**
 * The schema's causes an update keeps: those at values it changed (all of them for a create).
 *
 * @example
 * import * as Ratcheting from "./Ratcheting.ts"
 * declare const causes: ReadonlyArray<{ readonly field: string }>
 * const kept = Ratcheting.keep(causes, { spec: { a: 1 } }, { spec: { a: 1 } }) // []
 */
export const keep = <C extends { readonly field: string }>(causes: ReadonlyArray<C>, object: unknown, old: unknown): ReadonlyArray<C> =>
  old === undefined ? causes : causes.filter((c) => !unchanged(object, old, c.field))


/**
 * `object`'s schema causes as an update from `old` keeps them (all of them for a create): each
 * correlated at the value it is about, so that a failed anyOf or oneOf (reported at `<nil>`) goes
 * with the value that failed it.
 *
 * @example
 * import * as Ratcheting from "./Ratcheting.ts"
 * const schema = { type: "object" as const, properties: { qty: { anyOf: [{ type: "integer" as const }, { type: "string" as const }] } } }
 * Ratcheting.validate({ qty: 1.5 }, schema, { qty: 1.5 }) // []
 * Ratcheting.validate({ qty: 1.5 }, schema, { qty: 1 }).length // 3
 */
export const validate = (object: unknown, schema: JsonSchemaProps, old: unknown): ReadonlyArray<FieldCauses.Cause> =>
  keep(OpenApiValidation.validateAt(object, schema).map(({ at, cause }) => ({ field: at, cause })), object, old).map(({ cause }) => cause)
