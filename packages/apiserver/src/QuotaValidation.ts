/**
 * 1.32's validation of ResourceQuotas and LimitRanges: quantities that are not negative, limit
 * types, and a limit range's min <= default request <= default limit <= max.
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const nonNegative = (values: Json, path: string): Causes =>
  Object.entries(values).flatMap(([name, q]) =>
    (QuantityMath.sign(q) ?? 0) < 0 ? [FieldErrors.invalid(`${path}[${name}]`, FieldErrors.quote(QuantityMath.format(q)), "must be greater than or equal to 0")] : []
  )

/**
 * A ResourceQuota: hard limits are not negative.
 *
 * @example
 * import * as QuotaValidation from "./QuotaValidation.ts"
 * QuotaValidation.quota({ spec: { hard: { pods: "-1" } } }, undefined)[0].field // "spec.hard[pods]"
 */
export const quota = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const scopes = ["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity", "VolumeAttributesClass"]
  return [
    ...nonNegative(KubeObject.record(spec.hard), "spec.hard"),
    ...(Array.isArray(spec.scopes) ? spec.scopes : []).flatMap((s) =>
      scopes.includes(String(s)) ? [] : [FieldErrors.invalid("spec.scopes", FieldErrors.quote(s), "unsupported scope")]
    )
  ]
}

const limitTypes = ["Container", "Pod", "PersistentVolumeClaim"]

const ordered = (item: Json, at: string): Causes => {
  const pairs: ReadonlyArray<readonly [string, string, string]> = [
    ["min", "max", "min value %v is greater than max value %v"],
    ["defaultRequest", "max", "default request value %v is greater than max value %v"],
    ["min", "defaultRequest", "min value %v is greater than default request value %v"],
    ["defaultRequest", "default", "default request value %v is greater than default limit value %v"],
    ["default", "max", "default value %v is greater than max value %v"],
    ["min", "default", "min value %v is greater than default value %v"]
  ]
  return pairs.flatMap(([low, high, detail]) =>
    Object.entries(KubeObject.record(item[low])).flatMap(([name, q]) => {
      const bound = KubeObject.record(item[high])[name]
      if (bound === undefined || (QuantityMath.compare(q, bound) ?? 0) <= 0) return []
      const message = detail.replace("%v", QuantityMath.format(q)).replace("%v", QuantityMath.format(bound))
      return [FieldErrors.invalid(`${at}.${low}[${name}]`, FieldErrors.quote(QuantityMath.format(q)), message)]
    })
  )
}

/**
 * A LimitRange: each limit's type, non-negative quantities, and their order.
 *
 * @example
 * import * as QuotaValidation from "./QuotaValidation.ts"
 * QuotaValidation.limitRange({ spec: { limits: [{ type: "Container", min: { cpu: "2" }, max: { cpu: "1" } }] } }, undefined)[0].message
 * // 'Invalid value: "2": min value 2 is greater than max value 1'
 */
export const limitRange = (object: Json): Causes =>
  KubeObject.records(KubeObject.record(object.spec).limits).flatMap((item, i) => {
    const at = `spec.limits[${i}]`
    const type = item.type
    const causes: Array<Status.StatusCause> = []
    if (type === undefined || type === "") causes.push(FieldErrors.required(`${at}.type`))
    else if (!limitTypes.includes(String(type))) causes.push(FieldErrors.notSupported(`${at}.type`, type, limitTypes))
    for (const kind of ["max", "min", "default", "defaultRequest", "maxLimitRequestRatio"]) causes.push(...nonNegative(KubeObject.record(item[kind]), `${at}.${kind}`))
    return [...causes, ...ordered(item, at)]
  })
