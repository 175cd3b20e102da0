/**
 * 1.32's validation of Jobs and CronJobs: counts, completion modes, an Indexed Job's success
 * policy and per-index backoff, the restart policy a Job's pods must have, selectors (generated unless `manualSelector`), the schedule and time zone of a
 * CronJob, and what an update of a Job may not change.
 */
import * as Cron from "./Cron.ts"
import * as FieldErrors from "./FieldErrors.ts"
import * as PodValidation from "./PodValidation.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import type * as Status from "./Status.ts"
import * as WorkloadValidation from "./WorkloadValidation.ts"
import { FieldCauses, KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const uidLabel = "batch.kubernetes.io/controller-uid"

const restartPolicy = (podSpec: Json, path: string): Causes => {
  const policy = podSpec.restartPolicy
  if (policy === undefined || policy === "" || policy === "Always") {
    return [FieldErrors.required(`${path}.restartPolicy`, `valid values: "OnFailure", "Never"`)]
  }
  return policy === "OnFailure" || policy === "Never" ? [] : [FieldErrors.notSupported(`${path}.restartPolicy`, policy, ["OnFailure", "Never"])]
}

// validateIndexesFormat: the number of indexes an ordered list such as "0,2-4" names below
// `completions`, or why it is not one.
const indexesFormat = (text: string, completions: number): { readonly total: number } | { readonly error: string } => {
  let total = 0
  let last: number | undefined
  for (const interval of text === "" ? [] : text.split(",")) {
    const limits = interval.split("-")
    if (limits.length > 2) return { error: `the fragment ${FieldErrors.quote(interval)} violates the requirement that an index interval can have at most two parts separated by '-'` }
    const bounds: Array<number> = []
    for (const limit of limits) {
      if (!/^[+-]?\d+$/.test(limit)) return { error: `cannot convert string to integer for index: ${FieldErrors.quote(limit)}` }
      if (Number(limit) >= completions) return { error: `too large index: ${FieldErrors.quote(limit)}` }
      bounds.push(Number(limit))
    }
    const [from, to = from] = bounds as [number, number?]
    if (bounds.length === 2 && from >= to!) return { error: `non-increasing order, previous: ${from}, current: ${to}` }
    if (last !== undefined && last >= from) return { error: `non-increasing order, previous: ${last}, current: ${from}` }
    total += to! - from + 1
    last = to
  }
  return { total }
}

// An Indexed Job's successPolicy: rules, each naming indexes, a count, or both, within its completions.
const successPolicy = (spec: Json, path: string): Causes => {
  const policy = KubeObject.record(spec.successPolicy)
  if (spec.completionMode !== "Indexed") return [FieldErrors.invalid(path, "batch.SuccessPolicy{...}", "requires indexed completion mode")]
  const rules = KubeObject.records(policy.rules)
  const completions = typeof spec.completions === "number" ? spec.completions : 0
  const causes: Array<Status.StatusCause> = []
  if (rules.length === 0) causes.push(FieldErrors.required(`${path}.rules`, "at least one rules must be specified when the successPolicy is specified"))
  if (rules.length > 20) causes.push(FieldCauses.tooMany(`${path}.rules`, rules.length, 20))
  rules.forEach((rule, i) => {
    const at = `${path}.rules[${i}]`
    if (rule.succeededIndexes === undefined && rule.succeededCount === undefined) {
      causes.push(FieldErrors.required(at, "at least one of succeededCount or succeededIndexes must be specified"))
    }
    let total = 0
    if (typeof rule.succeededIndexes === "string") {
      if (rule.succeededIndexes.length > 65536) causes.push(FieldErrors.tooLong(`${at}.succeededIndexes`, 65536))
      const parsed = indexesFormat(rule.succeededIndexes, completions)
      if ("error" in parsed) {
        causes.push(FieldErrors.invalid(`${at}.succeededIndexes`, FieldErrors.quote(rule.succeededIndexes), `error parsing succeededIndexes: ${parsed.error}`))
      } else total = parsed.total
    }
    if (typeof rule.succeededCount === "number") {
      const count = rule.succeededCount
      causes.push(...WorkloadValidation.nonNegative(count, `${at}.succeededCount`))
      if (count > completions) {
        causes.push(FieldErrors.invalid(`${at}.succeededCount`, String(count), `must be less than or equal to ${completions} (the number of specified completions)`))
      }
      if (typeof rule.succeededIndexes === "string" && count > total) {
        causes.push(FieldErrors.invalid(`${at}.succeededCount`, String(count), `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`))
      }
    }
  })
  return causes
}

// backoffLimitPerIndex and maxFailedIndexes: Indexed Jobs' alone, the second with the first.
const perIndex = (spec: Json, path: string): Causes => [
  ...WorkloadValidation.nonNegative(spec.backoffLimitPerIndex, `${path}.backoffLimitPerIndex`),
  ...WorkloadValidation.nonNegative(spec.maxFailedIndexes, `${path}.maxFailedIndexes`),
  ...(spec.maxFailedIndexes !== undefined && spec.backoffLimitPerIndex === undefined
    ? [FieldErrors.required(`${path}.backoffLimitPerIndex`, "when maxFailedIndexes is specified")]
    : []),
  ...(spec.completionMode === "Indexed" && typeof spec.completions === "number" && typeof spec.maxFailedIndexes === "number" &&
      spec.maxFailedIndexes > spec.completions
    ? [FieldErrors.invalid(`${path}.maxFailedIndexes`, String(spec.maxFailedIndexes), "must be less than or equal to completions")]
    : []),
  ...(spec.completionMode !== "Indexed"
    ? (["backoffLimitPerIndex", "maxFailedIndexes"] as const).flatMap((field) =>
      spec[field] === undefined ? [] : [FieldErrors.invalid(`${path}.${field}`, FieldErrors.scalar(spec[field]), "requires indexed completion mode")])
    : [])
]

/** What a Job's spec and a CronJob's job template share (validateJobSpec). */
const jobSpec = (spec: Json, path: string): Causes => {
  const podSpec = KubeObject.record(KubeObject.record(spec.template).spec)
  const mode = spec.completionMode
  return [
    ...WorkloadValidation.nonNegative(spec.parallelism, `${path}.parallelism`),
    ...WorkloadValidation.nonNegative(spec.completions, `${path}.completions`),
    ...WorkloadValidation.nonNegative(spec.activeDeadlineSeconds, `${path}.activeDeadlineSeconds`),
    ...WorkloadValidation.nonNegative(spec.backoffLimit, `${path}.backoffLimit`),
    ...WorkloadValidation.nonNegative(spec.ttlSecondsAfterFinished, `${path}.ttlSecondsAfterFinished`),
    ...(mode === undefined || mode === "NonIndexed"
      ? []
      : mode !== "Indexed"
      ? [FieldErrors.notSupported(`${path}.completionMode`, mode, ["Indexed", "NonIndexed"])]
      : spec.completions === undefined
      ? [FieldErrors.required(`${path}.completions`, "when completion mode is Indexed")]
      : []),
    ...perIndex(spec, path),
    ...(spec.successPolicy === undefined || spec.successPolicy === null ? [] : successPolicy(spec, `${path}.successPolicy`)),
    ...PodValidation.validateSpec(podSpec, `${path}.template.spec`),
    ...restartPolicy(podSpec, `${path}.template.spec`)
  ]
}

const selector = (object: Json, spec: Json): Causes => {
  if (!KubeObject.isObject(spec.selector)) return [FieldErrors.required("spec.selector")]
  const malformed = SelectorValidation.validate(spec.selector, "spec.selector")
  if (malformed.length > 0) return malformed
  const labels = KubeObject.meta(KubeObject.record(spec.template)).labels
  const causes: Array<Status.StatusCause> = []
  if (!SelectorValidation.matches(spec.selector, labels)) {
    causes.push(FieldErrors.invalid("spec.template.metadata.labels", FieldErrors.stringMap(labels), "`selector` does not match template `labels`"))
  }
  const uid = KubeObject.meta(object).uid
  if (spec.manualSelector !== true && uid !== undefined && !SelectorValidation.matches(spec.selector, { [uidLabel]: uid, "controller-uid": uid })) {
    causes.push(FieldErrors.invalid("spec.selector", FieldErrors.labelSelector(spec.selector), "`selector` not auto-generated"))
  }
  return causes
}

const immutable = (spec: Json, oldSpec: Json, field: string, print: (v: unknown) => string): Causes =>
  KubeObject.equals(spec[field], oldSpec[field]) ? [] : [FieldErrors.invalid(`spec.${field}`, print(spec[field]), "field is immutable")]

const jobUpdate = (spec: Json, oldSpec: Json): Causes => [
  ...(spec.completionMode === "Indexed" && spec.completions === spec.parallelism && oldSpec.completions === oldSpec.parallelism
    ? []
    : immutable(spec, oldSpec, "completions", FieldErrors.scalar)),
  ...immutable(spec, oldSpec, "selector", FieldErrors.labelSelector),
  // Go prints the whole internal PodTemplateSpec here; its shape is kept, not its contents.
  ...(spec.suspend === true ? [] : immutable(spec, oldSpec, "template", () => "core.PodTemplateSpec{...}")),
  ...immutable(spec, oldSpec, "completionMode", FieldErrors.scalar),
  ...immutable(spec, oldSpec, "podFailurePolicy", () => "&batch.PodFailurePolicy{...}"),
  ...immutable(spec, oldSpec, "backoffLimitPerIndex", FieldErrors.scalar),
  ...immutable(spec, oldSpec, "successPolicy", () => "&batch.SuccessPolicy{...}")
]

/**
 * A Job (batch/v1).
 *
 * @example
 * import * as JobValidation from "./JobValidation.ts"
 * JobValidation.job({ spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "i" }], restartPolicy: "Always" } } } }, undefined)[0].message
 * // 'Required value: valid values: "OnFailure", "Never"'
 */
export const job = (object: Json, old: Json | undefined): Causes => {
  const spec = KubeObject.record(object.spec)
  return [
    ...jobSpec(spec, "spec"),
    ...selector(object, spec),
    ...(old === undefined ? [] : jobUpdate(spec, KubeObject.record(old.spec)))
  ]
}

const timeZone = (zone: unknown): Causes => {
  if (zone === undefined) return []
  const text = String(zone)
  const bad = (detail: string) => [FieldErrors.invalid("spec.timeZone", FieldErrors.quote(text), detail)]
  if (text === "") return bad("timeZone must be nil or non-empty string")
  if (text.toLowerCase() === "local") return bad("timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")
  const valid = text.split("/").every((part) => part !== "." && part !== ".." && !part.startsWith("-") && /^[A-Za-z.\-_0-9+]{1,14}$/.test(part))
  if (!valid) return bad(`unknown time zone ${text}`)
  try {
    const resolved = new Intl.DateTimeFormat("en-US", { timeZone: text }).resolvedOptions().timeZone
    // Go reads zone files by name, so a differently cased name is not found.
    return resolved.toLowerCase() === text.toLowerCase() && resolved !== text ? bad(`unknown time zone ${text}`) : []
  } catch {
    return bad(`unknown time zone ${text}`)
  }
}

const schedule = (spec: Json, old: Json | undefined): Causes => {
  const value = spec.schedule
  if (typeof value !== "string" || value === "") return [FieldErrors.required("spec.schedule")]
  const error = Cron.parseError(value.replace(/^(CRON_)?TZ=\S+\s*/, ""))
  const causes = error === undefined ? [] : [FieldErrors.invalid("spec.schedule", FieldErrors.quote(value), error)]
  const hadTZ = typeof KubeObject.record(old?.spec).schedule === "string" && String(KubeObject.record(old?.spec).schedule).includes("TZ")
  if (value.includes("TZ") && !hadTZ) {
    causes.push(FieldErrors.invalid("spec.schedule", FieldErrors.quote(value), "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
  }
  return causes
}

/**
 * A CronJob (batch/v1).
 *
 * @example
 * import * as JobValidation from "./JobValidation.ts"
 * JobValidation.cronJob({ metadata: { name: "c" }, spec: { schedule: "@weekly", jobTemplate: { spec: { template: { spec: { containers: [{ name: "a", image: "b" }], restartPolicy: "Never" } } } } } }, undefined) // []
 */
export const cronJob = (object: Json, old: Json | undefined): Causes => {
  const spec = KubeObject.record(object.spec)
  const jobTemplateSpec = KubeObject.record(KubeObject.record(spec.jobTemplate).spec)
  const name = KubeObject.meta(object).name ?? ""
  const policy = spec.concurrencyPolicy
  return [
    ...(old === undefined && name.length > 52 ? [FieldErrors.invalid("metadata.name", FieldErrors.quote(name), "must be no more than 52 characters")] : []),
    ...schedule(spec, old),
    ...timeZone(spec.timeZone),
    ...(policy === undefined || ["Allow", "Forbid", "Replace"].includes(String(policy))
      ? []
      : [FieldErrors.notSupported("spec.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"])]),
    ...WorkloadValidation.nonNegative(spec.startingDeadlineSeconds, "spec.startingDeadlineSeconds"),
    ...WorkloadValidation.nonNegative(spec.successfulJobsHistoryLimit, "spec.successfulJobsHistoryLimit"),
    ...WorkloadValidation.nonNegative(spec.failedJobsHistoryLimit, "spec.failedJobsHistoryLimit"),
    ...jobSpec(jobTemplateSpec, "spec.jobTemplate.spec"),
    ...(jobTemplateSpec.selector === undefined
      ? []
      : [FieldErrors.invalid("spec.jobTemplate.spec.selector", FieldErrors.labelSelector(jobTemplateSpec.selector), "`selector` will be auto-generated")])
  ]
}
