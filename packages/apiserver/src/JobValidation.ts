/**
 * 1.32's validation of Jobs and CronJobs: counts, completion modes, the restart policy a Job's
 * pods must have, selectors (generated unless `manualSelector`), the schedule and time zone of a
 * CronJob, and what an update of a Job may not change.
 */
import * as Cron from "./Cron.ts"
import * as FieldErrors from "./FieldErrors.ts"
import * as PodValidation from "./PodValidation.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import type * as Status from "./Status.ts"
import * as WorkloadValidation from "./WorkloadValidation.ts"
import { KubeObject } from "@kubefx/schema/internal"

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
  ...immutable(spec, oldSpec, "podFailurePolicy", () => "&batch.PodFailurePolicy{...}")
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
