/**
 * What kube-apiserver 1.32 checks of `x-kubernetes-validations` when a CRD is written, once the
 * schema itself is valid: each rule and messageExpression compiles against the schema; its
 * estimated cost, times how often it can run per object (the product of the maxItems and
 * maxProperties above it, or, when one of them is missing, as many values of the rule's type as
 * fit into one request), stays within the per-rule limit, and all rules together within the per-CRD limit;
 * `oldSelf` appears only where old values correlate (not under a list that is not list-type=map,
 * nor a map of x-kubernetes-map-type other than granular/atomic), and `optionalOldSelf` only in
 * rules that read `oldSelf`.
 */
import * as CelRules from "./CelRules.ts"
import * as FieldCauses from "./FieldCauses.ts"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"

const { child, index, key } = FieldCauses

interface Walk {
  readonly causes: Array<FieldCauses.Cause>
  readonly costs: Array<{ readonly path: string; readonly cost: number }>
}

const reasonLiteral = (reason: string | undefined) =>
  reason === undefined ? "(*apiextensions.FieldValueErrorReason)(nil)" : "(*apiextensions.FieldValueErrorReason)(0xc000a3c1f0)"

/** The rule as Go's `%#v` prints an apiextensions.ValidationRule (a set pointer shows an address). */
const ruleLiteral = (rule: CelRules.Rule) =>
  FieldCauses.goLiteral(
    `apiextensions.ValidationRule{Rule:${FieldCauses.goQuote(rule.rule)}, Message:${FieldCauses.goQuote(rule.message ?? "")}, ` +
      `MessageExpression:${FieldCauses.goQuote(rule.messageExpression ?? "")}, Reason:${reasonLiteral(rule.reason)}, ` +
      `FieldPath:${FieldCauses.goQuote(rule.fieldPath ?? "")}, OptionalOldSelf:${rule.optionalOldSelf === undefined ? "(*bool)(nil)" : "(*bool)(0xc000a3c1f8)"}}`
  )

const checkRules = (schema: JsonSchemaProps, path: string, root: boolean, cardinality: number | undefined, uncorrelatable: string | undefined, walk: Walk) => {
  const self = root ? CelRules.resourceRoot(schema) : schema
  ;(schema["x-kubernetes-validations"] ?? []).forEach((rule: CelRules.Rule, i) => {
    const at = index(child(path, "x-kubernetes-validations"), i)
    const compiled = CelRules.compile(rule, self)
    if ("detail" in compiled) {
      const inMessage = compiled.detail.startsWith("messageExpression ")
      walk.causes.push(FieldCauses.invalid(
        child(at, inMessage ? "messageExpression" : "rule"),
        ruleLiteral(rule),
        compiled.detail
      ))
      return
    }
    const cost = Math.min(Number.MAX_SAFE_INTEGER, compiled.cost * (cardinality ?? CelRules.unboundedCardinality(self)))
    if (cost > CelRules.ruleCostLimit) {
      walk.causes.push(FieldCauses.forbidden(child(at, "rule"), CelRules.costMessage("estimated rule cost", cost, CelRules.ruleCostLimit)))
    }
    walk.costs.push({ path: child(at, "rule"), cost })
    if (compiled.usesOldSelf && uncorrelatable !== undefined) {
      walk.causes.push(FieldCauses.invalid(child(at, "rule"), rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`))
    } else if (!compiled.usesOldSelf && rule.optionalOldSelf !== undefined) {
      walk.causes.push(FieldCauses.invalid(child(at, "optionalOldSelf"), rule.optionalOldSelf, "may not be set if oldSelf is not used in rule"))
    }
  })
}

// How many of each child a value of this schema holds at most: undefined for a list or map without
// maxItems or maxProperties.
const childFactor = (schema: JsonSchemaProps): number | undefined =>
  schema.type === "array"
    ? schema.maxItems
    : schema.type === "object" && schema.additionalProperties !== undefined
    ? schema.maxProperties
    : 1

const visit = (schema: JsonSchemaProps | undefined, path: string, root: boolean, parent: number | undefined, uncorrelatable: string | undefined, walk: Walk): void => {
  if (schema === undefined) return
  checkRules(schema, path, root, parent, uncorrelatable, walk)
  const factor = childFactor(schema)
  const cardinality = parent === undefined || factor === undefined ? undefined : Math.min(Number.MAX_SAFE_INTEGER, parent * factor)
  const mapType = schema["x-kubernetes-map-type"]
  const propertiesUncorrelatable = mapType === undefined || mapType === "granular" || mapType === "atomic" ? uncorrelatable : uncorrelatable ?? path
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    visit(property, key(child(path, "properties"), name), false, cardinality, propertiesUncorrelatable, walk)
  }
  if (typeof schema.additionalProperties === "object") {
    visit(schema.additionalProperties, child(path, "additionalProperties"), false, cardinality, uncorrelatable, walk)
  }
  if (schema.items !== undefined) {
    const itemsUncorrelatable = schema["x-kubernetes-list-type"] === "map" ? uncorrelatable : uncorrelatable ?? path
    visit(schema.items, child(path, "items"), false, cardinality, itemsUncorrelatable, walk)
  }
}

/**
 * The causes for the rules of one version's openAPIV3Schema at `path`.
 *
 * @example
 * import * as CelSchemaChecks from "./CelSchemaChecks.ts"
 * CelSchemaChecks.validate({
 *   type: "object",
 *   properties: { spec: { type: "object", properties: { a: { type: "integer" } }, "x-kubernetes-validations": [{ rule: "self.b > 0" }] } }
 * }, "spec.validation.openAPIV3Schema")[0]?.field
 * // "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
 */
export const validate = (schema: JsonSchemaProps, path: string): ReadonlyArray<FieldCauses.Cause> => {
  const walk: Walk = { causes: [], costs: [] }
  visit(schema, path, true, 1, undefined, walk)
  const total = walk.costs.reduce((sum, c) => sum + c.cost, 0)
  if (total > CelRules.crdCostLimit) {
    // The most expensive rules, until what is left fits (kube-apiserver names the worst offenders).
    const worst = [...walk.costs].sort((a, b) => b.cost - a.cost)
    let left = total
    for (const c of worst) {
      if (left <= CelRules.crdCostLimit) break
      walk.causes.push(FieldCauses.forbidden(c.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
      left -= c.cost
    }
    walk.causes.push(FieldCauses.forbidden(path, CelRules.costMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", total, CelRules.crdCostLimit)))
  }
  return walk.causes
}
