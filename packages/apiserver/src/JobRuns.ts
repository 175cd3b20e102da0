/**
 * What kube-controller-manager 1.32's Job controller makes of a Job, as pure functions for the
 * workload simulator: where the Job stands (new, suspended, running, finished), the pods it makes,
 * how many more it wants, when it ends, and the status it writes.
 */
import * as PodTemplates from "./PodTemplates.ts"
import * as StatusConditions from "./StatusConditions.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** How a simulated Job ends: its pods succeed, or fail until its backoff limit. */
export type Outcome = "Complete" | "Failed"

/** How a Job ended: completed, or failed by its pod failure policy, past its backoff limit or its active deadline. */
export type Ending =
  | "Complete"
  | "SuccessPolicy"
  | "PodFailurePolicy"
  | "BackoffLimitExceeded"
  | "DeadlineExceeded"
  | "MaxFailedIndexesExceeded"
  | "FailedIndexes"

/** Where a Job stands, as its spec and status tell: `ending` once its end is decided, while its pods terminate. */
export type Stage = "new" | "suspended" | "running" | "ending" | "finished"

const record = KubeObject.record
const count = KubeObject.number

const conditions = (job: KubeObject.KubeObject) => KubeObject.records(record(job.status).conditions)

const holds = (job: KubeObject.KubeObject, type: string) => conditions(job).some((c) => c.type === type && c.status === "True")

/**
 * Where a Job stands: finished once `Complete` or `Failed` holds; ending once `SuccessCriteriaMet`
 * or `FailureTarget` does; suspended when its spec says so and its status shows it; running once
 * started (and not suspended since); new otherwise.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.stage({ spec: {}, status: { startTime: "2026-01-01T00:00:00Z" } }) // "running"
 */
export const stage = (job: KubeObject.KubeObject): Stage => {
  if (holds(job, "Complete") || holds(job, "Failed")) return "finished"
  if (holds(job, "SuccessCriteriaMet") || holds(job, "FailureTarget")) return "ending"
  if (record(job.spec).suspend === true) return holds(job, "Suspended") ? "suspended" : "new"
  return typeof record(job.status).startTime === "string" && !holds(job, "Suspended") ? "running" : "new"
}

/** How many pods run at once: `parallelism` (default 1), no more than `completions`. */
const parallelism = (job: KubeObject.KubeObject): number => {
  const spec = record(job.spec)
  const wanted = count(spec.parallelism, 1)
  return spec.completions === undefined || spec.completions === null ? wanted : Math.min(wanted, count(spec.completions, 1))
}

const completionsOf = (job: KubeObject.KubeObject): number | undefined => {
  const completions = record(job.spec).completions
  return completions === undefined || completions === null ? undefined : count(completions, 1)
}

const indexed = (job: KubeObject.KubeObject) => record(job.spec).completionMode === "Indexed"

export const trackingFinalizer = "batch.kubernetes.io/job-tracking"
/** How often an index of a Job with `backoffLimitPerIndex` failed before this pod of it. */
export const failureCountAnnotation = "batch.kubernetes.io/job-index-failure-count"

const limitedPerIndex = (job: KubeObject.KubeObject) => indexed(job) && typeof record(job.spec).backoffLimitPerIndex === "number"
export const indexAnnotation = "batch.kubernetes.io/job-completion-index"

/**
 * The completion index of an Indexed Job's pod (undefined for any other pod).
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.indexOf({ metadata: { annotations: { "batch.kubernetes.io/job-completion-index": "2" } } }) // 2
 */
export const indexOf = (pod: KubeObject.KubeObject): number | undefined => {
  const text = KubeObject.meta(pod).annotations?.[indexAnnotation]
  const value = Number(text)
  return text !== undefined && Number.isInteger(value) && value >= 0 ? value : undefined
}

/**
 * Completed indexes as a Job's status spells them (`0-3,5`), and back.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.formatIndexes(new Set([5, 0, 1, 2, 3])) // "0-3,5"
 * [...JobRuns.parseIndexes("0-2,7")] // [0, 1, 2, 7]
 */
export const formatIndexes = (indexes: ReadonlySet<number>): string => {
  const sorted = [...indexes].sort((a, b) => a - b)
  const ranges: Array<string> = []
  for (let i = 0; i < sorted.length;) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++
    ranges.push(j === i ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`)
    i = j + 1
  }
  return ranges.join(",")
}

/** The inverse of {@link formatIndexes}. */
export const parseIndexes = (text: unknown): Set<number> => {
  const indexes = new Set<number>()
  for (const part of typeof text === "string" && text !== "" ? text.split(",") : []) {
    const [from, to] = part.split("-").map(Number)
    for (let i = from!; i <= (to ?? from!); i++) if (Number.isInteger(i)) indexes.add(i)
  }
  return indexes
}

/**
 * A pod the Job makes, as 1.32's Job controller makes it: from its template (whose labels name the
 * Job), `<job>-` (an Indexed Job's `<job>-<index>-`, with its index as annotation, label, hostname
 * and `JOB_COMPLETION_INDEX`, and with `backoffLimitPerIndex` the index's `failures` so far), held
 * by the tracking finalizer until the Job counts it, owned.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.podFor({ metadata: { name: "backup", uid: "u" }, spec: { template: { spec: { containers: [] } } } }, undefined).metadata.generateName // "backup-"
 */
export const podFor = (
  job: KubeObject.KubeObject,
  index: number | undefined,
  failures = 0
): KubeObject.KubeObject & { readonly metadata: Record<string, unknown> } => {
  const m = KubeObject.meta(job)
  const template = record(record(job.spec).template)
  const templateMeta = record(template.metadata)
  const templateSpec = record(template.spec)
  const name = m.name ?? ""
  const byIndex = index === undefined ? undefined : {
    annotations: {
      ...record(templateMeta.annotations),
      [indexAnnotation]: String(index),
      ...(limitedPerIndex(job) ? { [failureCountAnnotation]: String(failures) } : {})
    },
    labels: { ...record(templateMeta.labels), [indexAnnotation]: String(index) }
  }
  const indexEnv = {
    name: "JOB_COMPLETION_INDEX",
    valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: `metadata.annotations['${indexAnnotation}']` } }
  }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      ...PodTemplates.podMetadata(template),
      ...byIndex,
      generateName: index === undefined ? `${name}-` : `${name}-${index}-`,
      finalizers: [trackingFinalizer],
      ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
    },
    spec: index === undefined ? templateSpec : {
      ...templateSpec,
      hostname: templateSpec.hostname ?? `${name}-${index}`,
      containers: KubeObject.records(templateSpec.containers).map((c) => ({ ...c, env: [...KubeObject.records(c.env), indexEnv] }))
    }
  }
}

/** What a Job's pods come to: those running (or waiting), ready, being deleted, and those counted. */
export interface Tally {
  readonly active: number
  readonly ready: number
  readonly terminating: number
  readonly succeeded: number
  readonly failed: number
  /** An Indexed Job's succeeded indexes. */
  readonly completed: ReadonlySet<number>
  /** With `backoffLimitPerIndex`, the indexes that failed more often than it allows (or by `FailIndex`). */
  readonly failedIndexes?: ReadonlySet<number> | undefined
  /** The container restarts of its active pods (`restartPolicy: OnFailure` restarts in place). */
  readonly restarts?: number | undefined
  /** The message of the first failed pod its `podFailurePolicy` fails the Job for. */
  readonly failJob?: string | undefined
}

/**
 * The pods to make next (their indexes, undefined for a Job that is not Indexed): up to its
 * parallelism, no more than the completions left; none once a Job without completions had a pod
 * succeed.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.toCreate({ spec: { completions: 3, parallelism: 2 } }, { active: 1, ready: 0, terminating: 0, succeeded: 1, failed: 0, completed: new Set() }, new Set()) // [undefined]
 */
export const toCreate = (job: KubeObject.KubeObject, tally: Tally, activeIndexes: ReadonlySet<number>): ReadonlyArray<number | undefined> => {
  const completions = completionsOf(job)
  const room = parallelism(job) - tally.active
  if (room <= 0) return []
  if (indexed(job) && completions !== undefined) {
    const free: Array<number> = []
    for (let i = 0; i < completions && free.length < room; i++) {
      if (!tally.completed.has(i) && !activeIndexes.has(i) && tally.failedIndexes?.has(i) !== true) free.push(i)
    }
    return free
  }
  const left = completions === undefined ? (tally.succeeded > 0 ? 0 : room) : Math.min(room, completions - tally.succeeded - tally.active)
  return Array.from({ length: Math.max(0, left) }, () => undefined)
}

/**
 * When a running Job's `activeDeadlineSeconds` passes (ms since the epoch), counted from its start
 * time; undefined without one.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.deadline({ spec: { activeDeadlineSeconds: 60 }, status: { startTime: "2026-01-01T00:00:00Z" } }) // 1767225660000
 */
export const deadline = (job: KubeObject.KubeObject): number | undefined => {
  const seconds = record(job.spec).activeDeadlineSeconds
  const startTime = record(job.status).startTime
  if (typeof seconds !== "number" || typeof startTime !== "string") return undefined
  const start = Date.parse(startTime)
  return Number.isNaN(start) ? undefined : start + seconds * 1000
}

/**
 * The first rule of an Indexed Job's `successPolicy` its succeeded indexes meet (its position), as
 * 1.32's Job controller matches them: all of a rule's `succeededIndexes` succeeded, or
 * `succeededCount` of them (of any index, for a rule with a count alone).
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * const job = { spec: { completionMode: "Indexed", completions: 5, successPolicy: { rules: [{ succeededIndexes: "0-2", succeededCount: 2 }] } } }
 * JobRuns.successRule(job, new Set([0, 4])) // undefined
 * JobRuns.successRule(job, new Set([0, 2])) // 0
 */
export const successRule = (job: KubeObject.KubeObject, succeeded: ReadonlySet<number>): number | undefined => {
  const completions = completionsOf(job) ?? 0
  if (!indexed(job) || succeeded.size === 0) return undefined
  const rules = KubeObject.records(record(record(job.spec).successPolicy).rules)
  const index = rules.findIndex((rule) => {
    const count = typeof rule.succeededCount === "number" ? rule.succeededCount : undefined
    if (typeof rule.succeededIndexes !== "string") return count !== undefined && succeeded.size >= count
    // A rule that names no index within the completions matches nothing.
    const required = [...parseIndexes(rule.succeededIndexes)].filter((i) => i < completions)
    if (required.length === 0) return false
    const met = required.filter((i) => succeeded.has(i)).length
    return met === required.length || (count !== undefined && met >= count)
  })
  return index < 0 ? undefined : index
}

// A pod that restarts on failure never fails: its containers' restarts count against the limit.
const pastBackoffLimitOnFailure = (job: KubeObject.KubeObject, restarts: number, backoffLimit: number): boolean =>
  record(record(record(job.spec).template).spec).restartPolicy === "OnFailure" &&
  (backoffLimit === 0 ? restarts > 0 : restarts >= backoffLimit)

/**
 * How the Job ends, if it does at `now` (ms): failed by its pod failure policy, past its backoff limit (its failed pods, or with
 * `restartPolicy: OnFailure` its active pods' restarts), then past its active deadline,
 * as 1.32's controller looks, then past its `maxFailedIndexes`; successful by its `successPolicy`;
 * failed with every index done and some failed (`backoffLimitPerIndex`); `Complete` with its
 * completions succeeded (without completions: once a pod succeeded and none is active).
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.ending({ spec: { backoffLimit: 1 } }, { active: 0, ready: 0, terminating: 0, succeeded: 0, failed: 2, completed: new Set() }, Date.now()) // "BackoffLimitExceeded"
 */
export const ending = (job: KubeObject.KubeObject, tally: Tally, now: number): Ending | undefined => {
  if (tally.failJob !== undefined) return "PodFailurePolicy"
  const backoffLimit = count(record(job.spec).backoffLimit, 6)
  if (tally.failed > backoffLimit || pastBackoffLimitOnFailure(job, tally.restarts ?? 0, backoffLimit)) return "BackoffLimitExceeded"
  const due = deadline(job)
  if (due !== undefined && now >= due) return "DeadlineExceeded"
  const failedIndexes = tally.failedIndexes?.size ?? 0
  const maxFailedIndexes = record(job.spec).maxFailedIndexes
  if (limitedPerIndex(job) && typeof maxFailedIndexes === "number" && failedIndexes > maxFailedIndexes) return "MaxFailedIndexesExceeded"
  if (successRule(job, tally.completed) !== undefined) return "SuccessPolicy"
  const completions = completionsOf(job)
  // Every index done, some of them failed: the Job failed.
  if (indexed(job) && completions !== undefined && failedIndexes > 0 && tally.completed.size + failedIndexes >= completions) return "FailedIndexes"
  const succeeded = indexed(job) ? tally.completed.size : tally.succeeded
  if (completions === undefined ? succeeded > 0 && tally.active === 0 : succeeded >= completions) return "Complete"
  return undefined
}

// The conditions with `next` stated; the others stay.
const withCondition = (job: KubeObject.KubeObject, now: string, ...next: ReadonlyArray<StatusConditions.Condition>) =>
  StatusConditions.set(record(job.status).conditions, next, { stamp: "lastProbeTime", keep: () => true, now })

// The counters 1.32 always writes, and those it omits at zero.
const counted = (tally: Tally) => ({
  ...(tally.active > 0 ? { active: tally.active } : {}),
  ...(tally.succeeded > 0 ? { succeeded: tally.succeeded } : {}),
  ...(tally.failed > 0 ? { failed: tally.failed } : {}),
  ready: tally.ready,
  terminating: tally.terminating,
  uncountedTerminatedPods: {}
})

// A Job with `backoffLimitPerIndex` always states its failed indexes, none as "".
const failedIndexesOf = (job: KubeObject.KubeObject, tally: Tally) =>
  limitedPerIndex(job) ? { failedIndexes: formatIndexes(tally.failedIndexes ?? new Set()) } : {}

const omitCounters = ({ active: _, succeeded: __, failed: ___, ...status }: Record<string, unknown>) => status

/**
 * The status of a Job whose pods run: its start time (set when it starts and when it resumes), its
 * pods counted; an Indexed Job's completed indexes.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.running({ spec: {} }, "2026-01-01T00:00:00Z", { active: 2, ready: 0, terminating: 0, succeeded: 0, failed: 0, completed: new Set() }).active // 2
 */
export const running = (job: KubeObject.KubeObject, now: string, tally: Tally): Record<string, unknown> => {
  const status = record(job.status)
  const resumed = holds(job, "Suspended")
  return {
    ...omitCounters(status),
    startTime: resumed || typeof status.startTime !== "string" ? now : status.startTime,
    ...counted(tally),
    ...(tally.completed.size > 0 ? { completedIndexes: formatIndexes(tally.completed) } : {}),
    ...failedIndexesOf(job, tally),
    ...(resumed ? { conditions: withCondition(job, now, { type: "Suspended", status: "False", reason: "JobResumed", message: "Job resumed" }) } : {})
  }
}

/**
 * The status of a suspended Job: no pod active, `Suspended` true.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.suspended({ spec: { suspend: true } }, "2026-01-01T00:00:00Z").conditions // [{ type: "Suspended", status: "True", reason: "JobSuspended", ... }]
 */
export const suspended = (job: KubeObject.KubeObject, now: string): Record<string, unknown> => {
  const { active: _, ...status } = record(job.status)
  return {
    ...status,
    ready: 0,
    terminating: 0,
    uncountedTerminatedPods: {},
    conditions: withCondition(job, now, { type: "Suspended", status: "True", reason: "JobSuspended", message: "Job suspended" })
  }
}

// An ending Job's status with its pods counted: none active, none ready.
const endingStatus = (job: KubeObject.KubeObject, tally: Tally) =>
  ({ ...omitCounters(record(job.status)), ...counted({ ...tally, active: 0, ready: 0 }), ...failedIndexesOf(job, tally) })

/**
 * The status of a Job whose end is decided, its pods counted: 1.32 states the criterion at once
 * (`SuccessCriteriaMet`, an Indexed Job's completed indexes; `FailureTarget`), and the end itself
 * (`Complete` and its completion time, or `Failed`) only once none of its pods is terminating.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.finished({ spec: { completions: 3 } }, "2026-01-01T00:00:00Z", "Complete", { active: 0, ready: 0, terminating: 0, succeeded: 3, failed: 0, completed: new Set() }).succeeded // 3
 */
export const finished = (job: KubeObject.KubeObject, now: string, ending: Ending, tally: Tally): Record<string, unknown> => {
  const status = endingStatus(job, tally)
  const success = ending === "Complete" || ending === "SuccessPolicy"
  const reason = !success
    ? { status: "True", reason: ending, message: failureMessage(ending, tally) } as const
    : ending === "SuccessPolicy"
    ? { status: "True", reason: "SuccessPolicy", message: `Matched rules at index ${successRule(job, tally.completed) ?? 0}` } as const
    : { status: "True", reason: "CompletionsReached", message: "Reached expected number of succeeded pods" } as const
  const decided = {
    ...status,
    ...(success && tally.completed.size > 0 ? { completedIndexes: formatIndexes(tally.completed) } : {}),
    conditions: withCondition(job, now, { type: success ? "SuccessCriteriaMet" : "FailureTarget", ...reason })
  }
  return tally.terminating === 0 ? ended({ ...job, status: decided }, now, tally) : decided
}

/**
 * The status of an ending Job (see {@link stage}), its pods counted: once none is terminating, the
 * end its criterion decided, `Complete` (with its completion time) or `Failed`, with the
 * criterion's reason and message.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * const job = { spec: {}, status: { conditions: [{ type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" }] } }
 * JobRuns.ended(job, "2026-01-01T00:00:00Z", { active: 0, ready: 0, terminating: 0, succeeded: 0, failed: 1, completed: new Set() }).conditions // [FailureTarget, Failed]
 */
export const ended = (job: KubeObject.KubeObject, now: string, tally: Tally): Record<string, unknown> => {
  const status = endingStatus(job, tally)
  const decided = criterion(job)
  if (decided === undefined || tally.terminating > 0) return status
  return {
    ...status,
    ...(decided.success ? { completionTime: now } : {}),
    conditions: withCondition(job, now, { type: decided.success ? "Complete" : "Failed", status: "True", reason: decided.reason, message: decided.message })
  }
}

/**
 * The end an ending Job's criterion decided (`SuccessCriteriaMet` a success, `FailureTarget` a
 * failure), with its reason and message; undefined for a Job whose end is not decided.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.criterion({ status: { conditions: [{ type: "SuccessCriteriaMet", status: "True", reason: "SuccessPolicy", message: "Matched rules at index 0" }] } })?.success // true
 */
export const criterion = (job: KubeObject.KubeObject): { readonly success: boolean; readonly reason: string; readonly message: string } | undefined => {
  const stated = conditions(job).find((c) => (c.type === "SuccessCriteriaMet" || c.type === "FailureTarget") && c.status === "True")
  return stated === undefined
    ? undefined
    : { success: stated.type === "SuccessCriteriaMet", reason: String(stated.reason ?? ""), message: String(stated.message ?? "") }
}

/**
 * The message of a failed Job's conditions and its Warning event, as 1.32's controller words them.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.failureMessages.DeadlineExceeded // "Job was active longer than specified deadline"
 */
export const failureMessages = {
  BackoffLimitExceeded: "Job has reached the specified backoff limit",
  DeadlineExceeded: "Job was active longer than specified deadline",
  MaxFailedIndexesExceeded: "Job has exceeded the specified maximal number of failed indexes",
  FailedIndexes: "Job has failed indexes"
} as const

/**
 * The message of a Job's failure: the pod failure policy's names the pod and the rule.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.failureMessage("DeadlineExceeded", { active: 0, ready: 0, terminating: 0, succeeded: 0, failed: 0, completed: new Set() }) // "Job was active longer than specified deadline"
 */
export const failureMessage = (ending: Exclude<Ending, "Complete" | "SuccessPolicy">, tally: Tally): string =>
  ending === "PodFailurePolicy" ? tally.failJob ?? "" : failureMessages[ending]

/**
 * When a finished Job ended: the time its `Complete` or `Failed` condition became true.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.endedAt(JobRuns.finished({ spec: {} }, "2026-01-01T00:00:00Z", "BackoffLimitExceeded")) // "2026-01-01T00:00:00Z"
 */
export const endedAt = (job: KubeObject.KubeObject): string | undefined => {
  const end = conditions(job).find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True")
  return typeof end?.lastTransitionTime === "string" ? end.lastTransitionTime : undefined
}
