/**
 * 1.32's validation of what scales and protects workloads: HorizontalPodAutoscalers (target,
 * replica bounds) and PodDisruptionBudgets (one of minAvailable and maxUnavailable, as a count
 * or a percentage).
 */
import * as FieldErrors from "./FieldErrors.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

/**
 * A HorizontalPodAutoscaler (autoscaling/v2 or v1).
 *
 * @example
 * import * as ScalingValidation from "./ScalingValidation.ts"
 * ScalingValidation.autoscaler({ spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, minReplicas: 1 } }, undefined)[0].message
 * // "Invalid value: 0: must be greater than 0"
 */
export const autoscaler = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const target = KubeObject.record(spec.scaleTargetRef)
  const min = typeof spec.minReplicas === "number" ? spec.minReplicas : undefined
  const max = typeof spec.maxReplicas === "number" ? spec.maxReplicas : 0
  const causes: Array<Status.StatusCause> = []
  if (min !== undefined && min < 1) causes.push(FieldErrors.invalid("spec.minReplicas", String(min), "must be greater than or equal to 1"))
  if (max < 1) causes.push(FieldErrors.invalid("spec.maxReplicas", String(max), "must be greater than 0"))
  if (min !== undefined && max < min) causes.push(FieldErrors.invalid("spec.maxReplicas", String(max), "must be greater than or equal to `minReplicas`"))
  if (String(target.kind ?? "") === "") causes.push(FieldErrors.required("spec.scaleTargetRef.kind"))
  if (String(target.name ?? "") === "") causes.push(FieldErrors.required("spec.scaleTargetRef.name"))
  const utilization = spec.targetCPUUtilizationPercentage
  if (typeof utilization === "number" && utilization < 1) {
    causes.push(FieldErrors.invalid("spec.targetCPUUtilizationPercentage", String(utilization), "must be greater than 0"))
  }
  return causes
}

const positiveIntOrPercent = (value: unknown, field: string): Causes => {
  if (value === undefined) return []
  if (typeof value === "number") return value < 0 ? [FieldErrors.invalid(field, String(value), "must be greater than or equal to 0")] : []
  const m = /^(\d+)%$/.exec(String(value))
  if (m === null) return [FieldErrors.invalid(field, FieldErrors.quote(value), "must be an integer or percentage (e.g '5%')")]
  return Number(m[1]) > 100 ? [FieldErrors.invalid(field, FieldErrors.quote(value), "must not be greater than 100%")] : []
}

// Go prints the whole spec struct, pointers as addresses; the addresses here are placeholders.
const goSpec = (spec: Json): string => {
  const pointer = (v: unknown, type: string) => (v === undefined ? `(*${type})(nil)` : `(*${type})(0xc000010000)`)
  return `policy.PodDisruptionBudgetSpec{MinAvailable:${pointer(spec.minAvailable, "intstr.IntOrString")}, Selector:${pointer(spec.selector, "v1.LabelSelector")}, MaxUnavailable:${pointer(spec.maxUnavailable, "intstr.IntOrString")}, UnhealthyPodEvictionPolicy:${pointer(spec.unhealthyPodEvictionPolicy, "policy.UnhealthyPodEvictionPolicy")}}`
}

/**
 * A PodDisruptionBudget (policy/v1).
 *
 * @example
 * import * as ScalingValidation from "./ScalingValidation.ts"
 * ScalingValidation.disruptionBudget({ spec: { minAvailable: 1, maxUnavailable: 1 } }, undefined)[0].message.endsWith("minAvailable and maxUnavailable cannot be both set") // true
 */
export const disruptionBudget = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const policy = spec.unhealthyPodEvictionPolicy
  return [
    ...(spec.minAvailable !== undefined && spec.maxUnavailable !== undefined
      ? [FieldErrors.invalid("spec", goSpec(spec), "minAvailable and maxUnavailable cannot be both set")]
      : []),
    ...positiveIntOrPercent(spec.minAvailable, "spec.minAvailable"),
    ...positiveIntOrPercent(spec.maxUnavailable, "spec.maxUnavailable"),
    ...(KubeObject.isObject(spec.selector) ? SelectorValidation.validate(spec.selector, "spec.selector") : []),
    ...(policy === undefined || policy === "IfHealthyBudget" || policy === "AlwaysAllow"
      ? []
      : [FieldErrors.notSupported("spec.unhealthyPodEvictionPolicy", policy, ["AlwaysAllow", "IfHealthyBudget"])])
  ]
}
