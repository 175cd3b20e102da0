/**
 * Running a custom resource's `x-kubernetes-validations` on a write, as kube-apiserver 1.32 does:
 * every rule on every present value (object, property, map value, list item), `self` bound to the
 * value and, on updates, `oldSelf` to the value it replaces (transition rules run only where the
 * old value correlates: same property, same map key, same list-type=map key; with
 * `optionalOldSelf` they also run on new values, `oldSelf` then being an empty optional). A false
 * rule is one cause at the rule's location plus its `fieldPath`, of its `reason`'s type, with its
 * message, its messageExpression's result, or `failed rule: <rule>`. Evaluation is charged
 * against a per-request budget and a per-rule limit, as kube-apiserver charges it.
 */
import { isCelError } from "@bufbuild/cel"
import * as CelLibrary from "./CelLibrary.ts"
import * as CelRules from "./CelRules.ts"
import * as CelValues from "./CelValues.ts"
import * as FieldCauses from "./FieldCauses.ts"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"

/** The CEL cost one request may spend on validation rules (RuntimeCELCostBudget). */
export const requestBudget = 10_000_000
/** The cost one rule evaluation may spend (PerCallLimit). */
export const callLimit = 1_000_000

interface Node {
  readonly schema: JsonSchemaProps
  /** The schema `self` is typed with: at the top level, with apiVersion, kind and metadata's names. */
  readonly selfSchema: JsonSchemaProps
  readonly rules: ReadonlyArray<CelRules.Compiled | CelRules.CompileError>
  readonly properties: ReadonlyMap<string, Node>
  readonly additional: Node | undefined
  readonly items: Node | undefined
}

// Whether any part of the schema has rules (kube-apiserver builds no CEL validator otherwise).
const hasRules = (schema: JsonSchemaProps | undefined): schema is JsonSchemaProps =>
  schema !== undefined && (
    (schema["x-kubernetes-validations"]?.length ?? 0) > 0 ||
    Object.values(schema.properties ?? {}).some(hasRules) ||
    (typeof schema.additionalProperties === "object" && hasRules(schema.additionalProperties)) ||
    hasRules(schema.items)
  )

const node = (schema: JsonSchemaProps, root: boolean): Node | undefined => {
  if (!hasRules(schema)) return undefined
  const selfSchema = root ? CelRules.resourceRoot(schema) : schema
  const properties = new Map<string, Node>()
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    const child = node(v, false)
    if (child !== undefined) properties.set(k, child)
  }
  return {
    schema,
    selfSchema,
    rules: (schema["x-kubernetes-validations"] ?? []).map((rule) => CelRules.compile(rule, selfSchema)),
    properties,
    additional: typeof schema.additionalProperties === "object" ? node(schema.additionalProperties, false) : undefined,
    items: schema.items === undefined ? undefined : node(schema.items, false)
  }
}

const compiled = new WeakMap<JsonSchemaProps, Node | null>()

const rootOf = (schema: JsonSchemaProps): Node | undefined => {
  let found = compiled.get(schema)
  if (found === undefined) {
    found = node(schema, true) ?? null
    compiled.set(schema, found)
  }
  return found ?? undefined
}

interface Walk {
  budget: number
  readonly causes: Array<FieldCauses.Cause>
}

const typeOf = (schema: JsonSchemaProps) => schema.type ?? ""

const ruleText = (rule: CelRules.Rule) => rule.message !== undefined && rule.message.trim() !== "" ? rule.message.trim() : rule.rule.trim()

const defaultMessage = (rule: CelRules.Rule) =>
  rule.message !== undefined && rule.message.trim() !== "" ? rule.message.trim() : `failed rule: ${rule.rule.trim()}`

/**
 * cel-go's wording of a runtime error, from @bufbuild/cel's.
 *
 * @example
 * import * as CelValidation from "./CelValidation.ts"
 * CelValidation.goError("field not found: tier") // "no such key: tier"
 * CelValidation.goError("found no matching overload for '_>_' applied to '(string, int)'") // "no such overload"
 */
export const goError = (message: string): string =>
  message
    .replace(/^field not found: (.*)$/, "no such key: $1")
    .replace(/^index (-?\d+) out of bounds.*$/, "index out of bounds: $1")
    .replace(/^int (divide|modulus) by zero$/, (_, op) => op === "divide" ? "division by zero" : "modulus by zero")
    .replace(/^(int|uint) overflow.*$/, "integer overflow")
    .replace(/^unbound function: (.*)$/, "no such overload: $1")
    // An operator on a dyn value (an int-or-string) of a type it does not take: cel-go's bare error.
    .replace(/^found no matching overload for .*$/, "no such overload")

const normalizedFieldPath = (fieldPath: string | undefined): string | undefined => {
  if (fieldPath === undefined || fieldPath.trim() === "") return undefined
  return fieldPath.trim().replace(/^\./, "").replace(/\['((?:[^'\\]|\\.)*)'\]/g, (_, name: string) => `[${name.replace(/\\(.)/g, "$1")}]`)
}

// The top level has no path: Go prints a nil field.Path as "<nil>".
const fieldOf = (path: string) => path === "" ? "<nil>" : path

const failure = (path: string, schema: JsonSchemaProps, rule: CelRules.Rule, detail: string): FieldCauses.Cause => {
  const at = normalizedFieldPath(rule.fieldPath)
  const field = at === undefined ? fieldOf(path) : at.startsWith("[") ? `${path}${at}` : FieldCauses.child(path, at)
  switch (rule.reason) {
    case "FieldValueForbidden":
      return FieldCauses.forbidden(field, detail)
    case "FieldValueRequired":
      return FieldCauses.required(field, detail)
    case "FieldValueDuplicate":
      return FieldCauses.duplicate(field, typeOf(schema))
    default:
      return FieldCauses.invalid(field, typeOf(schema), detail)
  }
}

const messageOf = (compiledRule: CelRules.Compiled, bindings: Record<string, unknown>): string => {
  if (compiledRule.message === undefined) return defaultMessage(compiledRule.rule)
  const result = compiledRule.message(bindings as never)
  return typeof result === "string" && result.trim() !== "" && !/[\n\r]/.test(result) ? result : defaultMessage(compiledRule.rule)
}

/** Runs one node's rules; false when the budget ran out (no further rule runs). */
const runRules = (at: Node, path: string, value: unknown, old: unknown, unchanged: boolean, walk: Walk): boolean => {
  // A node on the way to rules below it converts nothing itself.
  if (at.rules.length === 0) return true
  const schema = at.selfSchema
  const self = CelValues.toCel(value, schema)
  const oldSelf = old === undefined ? undefined : CelValues.toCel(old, schema)
  // Nothing inside the value (or the old one) is longer than its JSON: the runtime cost's bound.
  const length = Math.max(JSON.stringify(value)?.length ?? 1, old === undefined ? 0 : JSON.stringify(old)?.length ?? 0)
  const sizes = CelRules.actualSizes(length)
  const vars = new Map([["self", schema], ["oldSelf", schema]])
  for (const entry of at.rules) {
    if ("detail" in entry) {
      walk.causes.push(FieldCauses.invalid(fieldOf(path), typeOf(schema), `rule compile error: ${entry.detail}`))
      continue
    }
    const optionalOld = entry.rule.optionalOldSelf === true
    if (entry.usesOldSelf && old === undefined && !optionalOld) continue
    const cost = CelRules.estimate(entry.expr, vars, sizes)
    if (cost > callLimit) {
      walk.causes.push(FieldCauses.invalid(fieldOf(path), typeOf(schema), `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(entry.rule)}`))
      walk.budget = -1
      return false
    }
    if (cost > walk.budget) {
      walk.causes.push(FieldCauses.invalid(fieldOf(path), typeOf(schema), "validation failed due to running out of cost budget, no further validation rules will be run"))
      walk.budget = -1
      return false
    }
    walk.budget -= cost
    const bindings = { self, oldSelf: optionalOld ? CelLibrary.optional(oldSelf) : oldSelf ?? null }
    const result = entry.program(bindings as never)
    if (isCelError(result)) {
      const message = goError(result.message)
      walk.causes.push(FieldCauses.invalid(
        fieldOf(path),
        typeOf(schema),
        message.startsWith("no such overload")
          ? `'${message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(entry.rule)}`
          : `${message} evaluating rule: ${ruleText(entry.rule)}`
      ))
      continue
    }
    // Ratcheting (on by default in 1.32): a value the update leaves as it was keeps passing rules
    // that do not read oldSelf, so adding a rule never blocks writes of other fields.
    if (result !== true && !(unchanged && !entry.usesOldSelf)) walk.causes.push(failure(path, schema, entry.rule, messageOf(entry, bindings)))
  }
  return true
}

// Items of a list-type=map correlate with the old item of the same keys; other lists do not.
const oldItem = (schema: JsonSchemaProps, item: unknown, old: unknown): unknown => {
  if (schema["x-kubernetes-list-type"] !== "map" || !Array.isArray(old) || !KubeObject.isObject(item)) return undefined
  const keys = schema["x-kubernetes-list-map-keys"] ?? []
  return old.find((o) => KubeObject.isObject(o) && keys.every((k) => JSON.stringify(o[k]) === JSON.stringify(item[k])))
}

// `parentUnchanged`: whether the nearest value that correlates with the old object is as it was
// (for items of lists that are not list-type=map, the list itself).
const visit = (at: Node, path: string, value: unknown, old: unknown, parentUnchanged: boolean, walk: Walk): void => {
  if (value === null || value === undefined || walk.budget < 0) return
  const unchanged = old === undefined ? parentUnchanged : KubeObject.equals(value, old)
  if (!runRules(at, path, value, old, unchanged, walk)) return
  if (Array.isArray(value)) {
    if (at.items === undefined) return
    value.forEach((item, i) => visit(at.items!, FieldCauses.index(path, i), item, oldItem(at.schema, item, old), unchanged, walk))
    return
  }
  if (!KubeObject.isObject(value)) return
  const previous = KubeObject.isObject(old) ? old : {}
  for (const [k, v] of Object.entries(value)) {
    const property = at.properties.get(k)
    if (property !== undefined) visit(property, FieldCauses.child(path, k), v, previous[k], false, walk)
    else if (at.additional !== undefined && at.schema.properties?.[k] === undefined) visit(at.additional, FieldCauses.key(path, k), v, previous[k], false, walk)
  }
}

// kube-apiserver's hasBlockingErr: errors that mean the object's shape is wrong.
const blocking = new Set(["FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany", "FieldValueTypeInvalid"])

/**
 * The rules' causes after the schema's `causes`, as kube-apiserver runs them: not at all when the
 * schema already found the object's shape wrong (one cause saying so instead), and nothing when the
 * schema has no rules.
 *
 * @example
 * import * as CelValidation from "./CelValidation.ts"
 * declare const schema: import("./JsonSchemaProps.ts").JsonSchemaProps
 * const all = (object: unknown) => CelValidation.afterSchema([], schema, object, undefined)
 */
export const afterSchema = (
  causes: ReadonlyArray<FieldCauses.Cause>,
  schema: JsonSchemaProps,
  object: unknown,
  old: unknown
): ReadonlyArray<FieldCauses.Cause> => {
  if (rootOf(schema) === undefined) return []
  return causes.some((c) => blocking.has(c.reason))
    ? [FieldCauses.invalid("<nil>", null, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")]
    : validate(schema, object, old)
}

/**
 * The causes the rules of `schema` give for a write of `object` (replacing `old` on updates).
 *
 * @example
 * import * as CelValidation from "./CelValidation.ts"
 * const schema = {
 *   type: "object",
 *   properties: { spec: { type: "object", properties: { min: { type: "integer" }, max: { type: "integer" } },
 *     "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min must not exceed max" }] } }
 * } as const
 * CelValidation.validate(schema, { spec: { min: 2, max: 1 } }, undefined)[0]?.message
 * // 'Invalid value: "object": min must not exceed max'
 */
export const validate = (schema: JsonSchemaProps, object: unknown, old: unknown): ReadonlyArray<FieldCauses.Cause> => {
  const root = rootOf(schema)
  if (root === undefined) return []
  const walk: Walk = { budget: requestBudget, causes: [] }
  visit(root, "", object, old, false, walk)
  return walk.causes
}
