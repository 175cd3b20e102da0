/**
 * 1.32's validation of PriorityClasses: reserved `system-` names, the highest value a user may
 * give, the preemption policy, and value and policy fixed once created.
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

const systemClasses: Readonly<Record<string, number>> = { "system-node-critical": 2000001000, "system-cluster-critical": 2000000000 }
const highestUserDefinable = 1000000000

/**
 * A PriorityClass (scheduling.k8s.io/v1).
 *
 * @example
 * import * as SchedulingValidation from "./SchedulingValidation.ts"
 * SchedulingValidation.priorityClass({ metadata: { name: "high" }, value: 2000000000 }, undefined)[0].message
 * // "Forbidden: maximum allowed value of a user defined priority is 1000000000"
 */
export const priorityClass = (object: Json, old: Json | undefined): ReadonlyArray<Status.StatusCause> => {
  const name = KubeObject.meta(object).name ?? ""
  const value = typeof object.value === "number" ? object.value : 0
  const causes: Array<Status.StatusCause> = []
  if (name.startsWith("system-")) {
    if (systemClasses[name] === undefined) {
      causes.push(FieldErrors.forbidden("metadata.name", `priority class names with 'system-' prefix are reserved for system use only. error: ${name} is not a known system priority class`))
    } else if (systemClasses[name] !== value) {
      causes.push(FieldErrors.forbidden("metadata.name", `priority class names with 'system-' prefix are reserved for system use only. error: value of ${name} PriorityClass must be ${systemClasses[name]}`))
    }
  } else if (value > highestUserDefinable) {
    causes.push(FieldErrors.forbidden("value", `maximum allowed value of a user defined priority is ${highestUserDefinable}`))
  }
  const policy = object.preemptionPolicy
  if (policy !== undefined && policy !== "Never" && policy !== "PreemptLowerPriority") {
    causes.push(FieldErrors.notSupported("preemptionPolicy", policy, ["Never", "PreemptLowerPriority"]))
  }
  if (old !== undefined) {
    if ((old.value ?? 0) !== (object.value ?? 0)) causes.push(FieldErrors.forbidden("value", "may not be changed in an update."))
    if (old.preemptionPolicy !== policy) causes.push(FieldErrors.invalid("preemptionPolicy", FieldErrors.scalar(policy), "field is immutable"))
  }
  return causes
}
