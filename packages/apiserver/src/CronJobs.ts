/**
 * What 1.32's CronJob controller makes of a CronJob, as pure functions for the workload simulator:
 * the schedule time it is due for, the Job it makes for that time, and the references its status
 * keeps.
 */
import * as Cron from "./Cron.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

export const scheduledAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"

const timeZoneOf = (cronJob: KubeObject.KubeObject) => {
  const zone = record(cronJob.spec).timeZone
  return typeof zone === "string" && zone !== "" ? zone : undefined
}

/**
 * The CronJob's schedule, parsed; undefined when it does not parse.
 *
 * @example
 * import * as CronJobs from "./CronJobs.ts"
 * CronJobs.schedule({ spec: { schedule: "@every 5s" } }) // { every: 5000 }
 */
export const schedule = (cronJob: KubeObject.KubeObject): Cron.Schedule | undefined =>
  Cron.parse(String(record(cronJob.spec).schedule ?? ""))

/**
 * The latest schedule time the CronJob has not run for, up to `now` (milliseconds), counted from its
 * last schedule time (or its creation); undefined when none is due, or when the latest is older
 * than `startingDeadlineSeconds`.
 *
 * @example
 * import * as CronJobs from "./CronJobs.ts"
 * const cj = { metadata: { creationTimestamp: "2026-01-01T10:00:30Z" }, spec: { schedule: "* * * * *" } }
 * new Date(CronJobs.due(cj, Date.parse("2026-01-01T10:03:10Z"))!).toISOString() // "2026-01-01T10:03:00.000Z"
 */
export const due = (cronJob: KubeObject.KubeObject, now: number): number | undefined => {
  const parsed = schedule(cronJob)
  if (parsed === undefined) return undefined
  const last = record(cronJob.status).lastScheduleTime
  const from = Date.parse(typeof last === "string" ? last : KubeObject.meta(cronJob).creationTimestamp ?? "")
  if (Number.isNaN(from)) return undefined
  let latest: number | undefined
  // As kube, schedules missed long ago are not all counted: the walk stops at the first hundred.
  for (let t = Cron.next(parsed, from, timeZoneOf(cronJob)), i = 0; t !== undefined && t <= now && i < 100; i++) {
    latest = t
    t = Cron.next(parsed, t, timeZoneOf(cronJob))
  }
  const deadline = record(cronJob.spec).startingDeadlineSeconds
  if (latest !== undefined && typeof deadline === "number" && latest < now - deadline * 1000) return undefined
  return latest
}

/**
 * When the CronJob next fires after `now`.
 *
 * @example
 * import * as CronJobs from "./CronJobs.ts"
 * CronJobs.nextAfter({ spec: { schedule: "@every 5s" } }, 1_000) // 6000
 */
export const nextAfter = (cronJob: KubeObject.KubeObject, now: number): number | undefined => {
  const parsed = schedule(cronJob)
  return parsed === undefined ? undefined : Cron.next(parsed, now, timeZoneOf(cronJob))
}

// RFC 3339 in the CronJob's time zone, as Go's time.Format prints it.
const rfc3339 = (at: number, zone: string | undefined): string => {
  if (zone === undefined) return KubeObject.timestamp(new Date(at))
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "longOffset"
  }).formatToParts(at).map((p) => [p.type, p.value]))
  const offset = String(parts.timeZoneName ?? "GMT").replace("GMT", "")
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset === "" ? "Z" : offset}`
}

/**
 * The Job the CronJob makes for a schedule time: `<name>-<minutes since the epoch>`, its template's
 * labels and annotations with the scheduled time, owned by the CronJob.
 *
 * @example
 * import * as CronJobs from "./CronJobs.ts"
 * const cj = { metadata: { name: "backup", uid: "u" }, spec: { jobTemplate: { spec: { template: {} } } } }
 * CronJobs.jobFor(cj, Date.parse("2026-01-01T10:00:00Z")).metadata.name // "backup-29454360"
 */
export const jobFor = (cronJob: KubeObject.KubeObject, scheduled: number): KubeObject.KubeObject & { readonly metadata: Record<string, unknown> } => {
  const m = KubeObject.meta(cronJob)
  const template = record(record(cronJob.spec).jobTemplate)
  const templateMeta = record(template.metadata)
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: `${m.name ?? ""}-${Math.floor(scheduled / 60_000)}`,
      ...(templateMeta.labels === undefined ? {} : { labels: templateMeta.labels }),
      annotations: { ...record(templateMeta.annotations), [scheduledAnnotation]: rfc3339(scheduled, timeZoneOf(cronJob)) },
      ownerReferences: [{ apiVersion: "batch/v1", kind: "CronJob", name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
    },
    spec: record(template.spec)
  }
}

/**
 * The reference a CronJob's status keeps of an active Job.
 *
 * @example
 * import * as CronJobs from "./CronJobs.ts"
 * CronJobs.reference({ metadata: { name: "backup-1", namespace: "default", uid: "j", resourceVersion: "7" } }).kind // "Job"
 */
export const reference = (job: KubeObject.KubeObject): Record<string, unknown> => {
  const m = KubeObject.meta(job)
  return { apiVersion: "batch/v1", kind: "Job", name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion, uid: m.uid }
}

/**
 * When a Job ended and how (`Complete` or `Failed`), if it did.
 *
 * @example
 * import * as CronJobs from "./CronJobs.ts"
 * CronJobs.ended({ status: { conditions: [{ type: "Complete", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" }] } })?.type // "Complete"
 */
export const ended = (job: KubeObject.KubeObject): { readonly type: "Complete" | "Failed"; readonly at: string } | undefined => {
  const end = KubeObject.records(record(job.status).conditions).find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True")
  if (end === undefined) return undefined
  const at = record(job.status).completionTime ?? end.lastTransitionTime
  return { type: end.type as "Complete" | "Failed", at: typeof at === "string" ? at : "" }
}
