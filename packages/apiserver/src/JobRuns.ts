/**
 * A Job's status as kube-controller-manager 1.32's Job controller writes it, for the workload
 * simulator, which runs a Job's pods without running them: where the Job stands (new, suspended,
 * running, finished), and the status it gets when its pods start, when it is suspended, and when
 * it completes or fails.
 */
import * as StatusConditions from "./StatusConditions.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** How a simulated Job ends: its pods succeed, or fail until its backoff limit. */
export type Outcome = "Complete" | "Failed"

/** Where a Job stands, as its spec and status tell. */
export type Stage = "new" | "suspended" | "running" | "finished"

const record = KubeObject.record
const count = KubeObject.number

const conditions = (job: KubeObject.KubeObject) => KubeObject.records(record(job.status).conditions)

const holds = (job: KubeObject.KubeObject, type: string) => conditions(job).some((c) => c.type === type && c.status === "True")

/**
 * Where a Job stands: finished once `Complete` or `Failed` holds; suspended when its spec says so
 * and its status shows it; running once started (and not suspended since); new otherwise.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.stage({ spec: {}, status: { startTime: "2026-01-01T00:00:00Z" } }) // "running"
 */
export const stage = (job: KubeObject.KubeObject): Stage => {
  if (holds(job, "Complete") || holds(job, "Failed")) return "finished"
  if (record(job.spec).suspend === true) return holds(job, "Suspended") ? "suspended" : "new"
  return typeof record(job.status).startTime === "string" && !holds(job, "Suspended") ? "running" : "new"
}

/** How many pods run at once: `parallelism` (default 1), no more than `completions`. */
const pods = (job: KubeObject.KubeObject): number => {
  const spec = record(job.spec)
  const parallelism = count(spec.parallelism, 1)
  return spec.completions === undefined || spec.completions === null ? parallelism : Math.min(parallelism, count(spec.completions, 1))
}

// The conditions with `next` stated; the others stay.
const withCondition = (job: KubeObject.KubeObject, now: string, ...next: ReadonlyArray<StatusConditions.Condition>) =>
  StatusConditions.set(record(job.status).conditions, next, { stamp: "lastProbeTime", keep: () => true, now })

const counters = { ready: 0, terminating: 0, uncountedTerminatedPods: {} }

/**
 * The status of a Job whose pods start: its start time (now, also on resuming), its pods active,
 * none ready yet; `refused` (admission refused its pods) leaves none active, as the Job controller
 * leaves a Job whose pod creations fail.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.started({ spec: { parallelism: 2, completions: 5 } }, "2026-01-01T00:00:00Z", false).active // 2
 */
export const started = (job: KubeObject.KubeObject, now: string, refused: boolean): Record<string, unknown> => {
  const status = record(job.status)
  const resumed = holds(job, "Suspended")
  return {
    ...status,
    startTime: resumed || typeof status.startTime !== "string" ? now : status.startTime,
    active: refused ? 0 : pods(job),
    ...counters,
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
export const suspended = (job: KubeObject.KubeObject, now: string): Record<string, unknown> => ({
  ...record(job.status),
  active: 0,
  ...counters,
  conditions: withCondition(job, now, { type: "Suspended", status: "True", reason: "JobSuspended", message: "Job suspended" })
})

/**
 * The status of a Job whose pods ended: `Complete` with every completion succeeded (and, for an
 * Indexed Job, its completed indexes), or `Failed` with its backoff limit's worth of failed pods
 * and one more. 1.32 states the criterion first (`SuccessCriteriaMet`, `FailureTarget`), then the end.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.finished({ spec: { completions: 3 } }, "2026-01-01T00:00:00Z", "Complete").succeeded // 3
 * JobRuns.finished({ spec: {} }, "2026-01-01T00:00:00Z", "Failed").failed // 7
 */
export const finished = (job: KubeObject.KubeObject, now: string, outcome: Outcome): Record<string, unknown> => {
  const spec = record(job.spec)
  const status: Record<string, unknown> = { ...record(job.status), active: 0, ...counters }
  if (outcome === "Failed") {
    const reason = { status: "True", reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" } as const
    return {
      ...status,
      failed: count(status.failed, 0) + count(spec.backoffLimit, 6) + 1,
      conditions: withCondition(job, now, { type: "FailureTarget", ...reason }, { type: "Failed", ...reason })
    }
  }
  const completions = spec.completions === undefined || spec.completions === null ? pods(job) : count(spec.completions, 1)
  const reason = { status: "True", reason: "CompletionsReached", message: "Reached expected number of succeeded pods" } as const
  return {
    ...status,
    succeeded: completions,
    ...(spec.completionMode === "Indexed" && completions > 0 ? { completedIndexes: completions === 1 ? "0" : `0-${completions - 1}` } : {}),
    completionTime: now,
    conditions: withCondition(job, now, { type: "SuccessCriteriaMet", ...reason }, { type: "Complete", ...reason })
  }
}

/**
 * When a finished Job ended: the time its `Complete` or `Failed` condition became true.
 *
 * @example
 * import * as JobRuns from "./JobRuns.ts"
 * JobRuns.endedAt(JobRuns.finished({ spec: {} }, "2026-01-01T00:00:00Z", "Failed")) // "2026-01-01T00:00:00Z"
 */
export const endedAt = (job: KubeObject.KubeObject): string | undefined => {
  const end = conditions(job).find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True")
  return typeof end?.lastTransitionTime === "string" ? end.lastTransitionTime : undefined
}
