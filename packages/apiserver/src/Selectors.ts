/**
 * Label and field selectors, as list, watch and deletecollection take them in `labelSelector` and
 * `fieldSelector`. Parsing failures are 400s with the message kube-apiserver gives.
 */
import { Result } from "effect"
import * as Status from "./Status.ts"
import { FieldSelectors, KubeObject, LabelSelectors } from "@kubefx/schema/internal"

export type LabelRequirement = LabelSelectors.LabelRequirement

// Interfaces of the server's own, so the declarations of what takes a selector name them here.
/** All requirements must hold (comma means AND). Empty matches everything. */
export interface LabelSelector extends ReadonlyArray<LabelRequirement> {}

export type FieldRequirement = FieldSelectors.FieldRequirement

export interface FieldSelector extends ReadonlyArray<FieldRequirement> {}

/** Fields every resource can be selected on. */
export const commonFields: ReadonlyArray<string> = ["metadata.name", "metadata.namespace"]

/**
 * Parses a label selector, or fails with a 400 carrying the parser's message.
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * Result.isSuccess(Selectors.parseLabelSelector("app=web,tier in (a,b),!legacy")) // true
 * Result.isFailure(Selectors.parseLabelSelector("app in (a")) // true
 */
export const parseLabelSelector = (input: string): Result.Result<LabelSelector, Status.ApiError> =>
  Result.mapError(LabelSelectors.parse(input), (message) => Status.badRequest(message))

/** Whether labels satisfy a selector (see `LabelSelectors.matches`). */
export const matchesLabels = LabelSelectors.matches

/**
 * Whether a label's value (undefined: the label is not there) meets a selector requirement:
 * `In`, `NotIn`, `Exists`, `DoesNotExist`, and a node selector's `Gt` and `Lt` (integers).
 *
 * @example
 * import * as Selectors from "./Selectors.ts"
 * Selectors.requirementHolds({ key: "tier", operator: "NotIn", values: ["db"] }, "web") // true
 * Selectors.requirementHolds({ key: "cores", operator: "Gt", values: ["4"] }, "8") // true
 */
export const requirementHolds = (requirement: Readonly<Record<string, unknown>>, value: string | undefined): boolean => {
  const values = Array.isArray(requirement.values) ? requirement.values.map(String) : []
  switch (requirement.operator) {
    case "In":
      return value !== undefined && values.includes(value)
    case "NotIn":
      return value === undefined || !values.includes(value)
    case "Exists":
      return value !== undefined
    case "DoesNotExist":
      return value === undefined
    case "Gt":
    case "Lt": {
      const left = Number.parseInt(value ?? "", 10)
      const right = Number.parseInt(values[0] ?? "", 10)
      if (Number.isNaN(left) || Number.isNaN(right)) return false
      return requirement.operator === "Gt" ? left > right : left < right
    }
    default:
      return false
  }
}

/**
 * Whether labels satisfy a `metav1.LabelSelector` object (`matchLabels` and `matchExpressions`);
 * an empty one matches every set of labels.
 *
 * @example
 * import * as Selectors from "./Selectors.ts"
 * Selectors.matchesSelector({ matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] }, { app: "web" }) // true
 */
export const matchesSelector = (selector: Readonly<Record<string, unknown>>, labels: Readonly<Record<string, string>>): boolean =>
  Object.entries(KubeObject.record(selector.matchLabels)).every(([key, value]) => labels[key] === value) &&
  KubeObject.records(selector.matchExpressions).every((r) => requirementHolds(r, labels[String(r.key)]))

/**
 * Parses a field selector (`metadata.name=x,status.phase!=Running`) against the fields the
 * resource supports, or fails with a 400 (`field label not supported: spec.foo`).
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * Result.isSuccess(Selectors.parseFieldSelector("metadata.name=web", Selectors.commonFields)) // true
 * Result.isFailure(Selectors.parseFieldSelector("spec.foo=1", Selectors.commonFields)) // true
 */
export const parseFieldSelector = (
  input: string,
  supported: ReadonlyArray<string>
): Result.Result<FieldSelector, Status.ApiError> =>
  Result.flatMap(
    Result.mapError(FieldSelectors.parse(input), (message) => Status.badRequest(message)),
    (selector) => {
      const unsupported = selector.find((requirement) => !supported.includes(requirement.field))
      return unsupported === undefined
        ? Result.succeed(selector)
        : Result.fail(Status.badRequest(`field label not supported: ${unsupported.field}`))
    }
  )

/**
 * Whether an object satisfies a field selector; fields read as strings (absent = ""), those
 * `derived` names (a resource's `fieldValues`) as it derives them.
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * const selector = Result.getOrThrow(Selectors.parseFieldSelector("metadata.name=web", Selectors.commonFields))
 * Selectors.matchesFields(selector, { metadata: { name: "web" } }) // true
 */
export const matchesFields = (
  selector: FieldSelector,
  object: KubeObject.KubeObject,
  derived: Readonly<Record<string, (object: KubeObject.KubeObject) => string>> = {}
): boolean => {
  for (const r of selector) {
    const derive = derived[r.field]
    const raw = derive === undefined ? KubeObject.getPath(object, r.field) : derive(object)
    const value = raw === undefined || raw === null ? "" : typeof raw === "object" ? JSON.stringify(raw) : String(raw)
    if ((value === r.value) !== (r.op === "=")) return false
  }
  return true
}

/**
 * The exact name a field selector pins (`metadata.name=x`), if any: lets a watch or list skip
 * other objects cheaply.
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * Selectors.pinnedName(Result.getOrThrow(Selectors.parseFieldSelector("metadata.name=x", Selectors.commonFields))) // "x"
 */
export const pinnedName = (selector: FieldSelector): string | undefined =>
  selector.find((r) => r.field === "metadata.name" && r.op === "=")?.value
