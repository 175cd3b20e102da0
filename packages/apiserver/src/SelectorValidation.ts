/**
 * `metav1.LabelSelector` as 1.32's validation sees it: whether it is well formed (operators,
 * values, label keys and values) and whether it selects a set of labels (a workload's selector
 * must select its own template).
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
const strings = (u: unknown): ReadonlyArray<string> => (Array.isArray(u) ? u.map(String) : [])

/**
 * True when the selector selects nothing in particular (no labels, no expressions).
 *
 * @example
 * import * as SelectorValidation from "./SelectorValidation.ts"
 * SelectorValidation.isEmpty({}) // true
 */
export const isEmpty = (selector: Json): boolean =>
  Object.keys(KubeObject.record(selector.matchLabels)).length === 0 && KubeObject.records(selector.matchExpressions).length === 0

/**
 * Whether `selector` selects `labels`; an absent selector (a webhook's unset `objectSelector`)
 * selects everything.
 *
 * @example
 * import * as SelectorValidation from "./SelectorValidation.ts"
 * SelectorValidation.matches({ matchLabels: { app: "web" } }, { app: "web", tier: "x" }) // true
 * SelectorValidation.matches(undefined, { app: "web" }) // true
 */
export const matches = (selector: unknown, labels: unknown): boolean => {
  if (!KubeObject.isObject(selector)) return true
  const have = KubeObject.record(labels)
  const byLabels = Object.entries(KubeObject.record(selector.matchLabels)).every(([k, v]) => have[k] === v)
  return byLabels && KubeObject.records(selector.matchExpressions).every((e) => {
    const key = String(e.key)
    const present = Object.hasOwn(have, key)
    const values = strings(e.values)
    switch (e.operator) {
      case "In":
        return present && values.includes(String(have[key]))
      case "NotIn":
        return !present || !values.includes(String(have[key]))
      case "Exists":
        return present
      case "DoesNotExist":
        return !present
      default:
        return false
    }
  })
}

const labelKey = (key: string, field: string) =>
  NameRules.qualifiedName(key).map((m) => FieldErrors.invalid(field, FieldErrors.quote(key), m))

/**
 * The causes for a malformed selector at `path`.
 *
 * @example
 * import * as SelectorValidation from "./SelectorValidation.ts"
 * SelectorValidation.validate({ matchExpressions: [{ key: "a", operator: "Is" }] }, "spec.selector")[0].message
 * // 'Invalid value: "Is": not a valid selector operator'
 */
export const validate = (selector: Json, path: string): ReadonlyArray<Status.StatusCause> => {
  const expressions = KubeObject.records(selector.matchExpressions).flatMap((e, i) => {
    const at = `${path}.matchExpressions[${i}]`
    const causes: Array<Status.StatusCause> = []
    const values = strings(e.values)
    if (e.operator === "In" || e.operator === "NotIn") {
      if (values.length === 0) causes.push(FieldErrors.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"))
    } else if (e.operator === "Exists" || e.operator === "DoesNotExist") {
      if (values.length > 0) causes.push(FieldErrors.forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    } else {
      causes.push(FieldErrors.invalid(`${at}.operator`, FieldErrors.quote(e.operator), "not a valid selector operator"))
    }
    return [...causes, ...labelKey(String(e.key ?? ""), `${at}.key`)]
  })
  const labels = Object.entries(KubeObject.record(selector.matchLabels)).flatMap(([k, v]) => [
    ...labelKey(k, `${path}.matchLabels`),
    ...NameRules.labelValue(String(v)).map((m) => FieldErrors.invalid(`${path}.matchLabels`, FieldErrors.quote(v), m))
  ])
  return [...labels, ...expressions]
}

/**
 * A workload's selector: required, not empty, well formed, and selecting the template's labels.
 *
 * @example
 * import * as SelectorValidation from "./SelectorValidation.ts"
 * SelectorValidation.selectsTemplate({ selector: { matchLabels: { app: "a" } }, template: { metadata: { labels: { app: "b" } } } }, "spec", "deployment")[0].message
 * // 'Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`'
 */
export const selectsTemplate = (spec: Json, path: string, kind: string): ReadonlyArray<Status.StatusCause> => {
  if (!KubeObject.isObject(spec.selector)) return [FieldErrors.required(`${path}.selector`)]
  const selector = spec.selector
  if (isEmpty(selector)) {
    return [FieldErrors.invalid(`${path}.selector`, FieldErrors.labelSelector(selector), `empty selector is invalid for ${kind}`)]
  }
  const malformed = validate(selector, `${path}.selector`)
  if (malformed.length > 0) return malformed
  const labels = KubeObject.meta(KubeObject.record(spec.template)).labels
  return matches(selector, labels)
    ? []
    : [FieldErrors.invalid(`${path}.template.metadata.labels`, FieldErrors.stringMap(labels), "`selector` does not match template `labels`")]
}
