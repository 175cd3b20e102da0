/**
 * The Job controller's arithmetic: how many pods it makes next, when a Job ends, and how completed
 * indexes are spelled.
 */
import { describe, expect, it } from "vitest"
import * as JobRuns from "../src/JobRuns.ts"

const tally = (counts: Partial<JobRuns.Tally> = {}): JobRuns.Tally => ({
  active: 0,
  ready: 0,
  terminating: 0,
  succeeded: 0,
  failed: 0,
  completed: new Set(),
  ...counts
})

describe("JobRuns", () => {
  it("makes pods up to the parallelism, no more than the completions left", () => {
    expect(JobRuns.toCreate({ spec: { completions: 5, parallelism: 2 } }, tally(), new Set())).toHaveLength(2)
    expect(JobRuns.toCreate({ spec: { completions: 5, parallelism: 2 } }, tally({ active: 1, succeeded: 3 }), new Set())).toHaveLength(1)
    expect(JobRuns.toCreate({ spec: { completions: 5, parallelism: 2 } }, tally({ active: 1, succeeded: 4 }), new Set())).toHaveLength(0)
    // Without completions: parallelism pods, and none more once one succeeded.
    expect(JobRuns.toCreate({ spec: { parallelism: 3 } }, tally(), new Set())).toHaveLength(3)
    expect(JobRuns.toCreate({ spec: { parallelism: 3 } }, tally({ active: 1, succeeded: 1 }), new Set())).toHaveLength(0)
  })

  it("gives an Indexed Job's new pods the lowest indexes neither completed nor running", () => {
    const spec = { completions: 5, parallelism: 3, completionMode: "Indexed" }
    expect(JobRuns.toCreate({ spec }, tally({ active: 1, completed: new Set([0, 2]) }), new Set([1]))).toEqual([3, 4])
  })

  it("ends a Job past its backoff limit, or once its completions succeeded", () => {
    const now = Date.now()
    expect(JobRuns.ending({ spec: { backoffLimit: 2 } }, tally({ failed: 2 }), now)).toBeUndefined()
    expect(JobRuns.ending({ spec: { backoffLimit: 2 } }, tally({ failed: 3 }), now)).toBe("BackoffLimitExceeded")
    expect(JobRuns.ending({ spec: {} }, tally({ failed: 7 }), now)).toBe("BackoffLimitExceeded")
    expect(JobRuns.ending({ spec: { completions: 2 } }, tally({ succeeded: 1, active: 1 }), now)).toBeUndefined()
    expect(JobRuns.ending({ spec: { completions: 2 } }, tally({ succeeded: 2 }), now)).toBe("Complete")
    expect(JobRuns.ending({ spec: {} }, tally({ succeeded: 1, active: 1 }), now)).toBeUndefined()
    expect(JobRuns.ending({ spec: {} }, tally({ succeeded: 1 }), now)).toBe("Complete")
    expect(JobRuns.ending({ spec: { completions: 3, completionMode: "Indexed" } }, tally({ succeeded: 3, completed: new Set([0, 1]) }), now)).toBeUndefined()
  })

  it("counts an OnFailure Job's container restarts against its backoff limit; a limit of 0 allows none", () => {
    const onFailure = (backoffLimit: number) => ({ spec: { backoffLimit, template: { spec: { restartPolicy: "OnFailure" } } } })
    const now = Date.now()
    expect(JobRuns.ending(onFailure(2), tally({ active: 1, restarts: 1 }), now)).toBeUndefined()
    expect(JobRuns.ending(onFailure(2), tally({ active: 1, restarts: 2 }), now)).toBe("BackoffLimitExceeded")
    expect(JobRuns.ending(onFailure(0), tally({ active: 1, restarts: 1 }), now)).toBe("BackoffLimitExceeded")
    expect(JobRuns.ending(onFailure(0), tally({ active: 1, restarts: 0 }), now)).toBeUndefined()
    expect(JobRuns.ending({ spec: { backoffLimit: 2, template: { spec: { restartPolicy: "Never" } } } }, tally({ active: 1, restarts: 5 }), now)).toBeUndefined()
  })

  it("ends a Job past its active deadline, counted from its start time; the backoff limit first", () => {
    const started = { startTime: "2026-01-01T00:00:00Z" }
    const at = (iso: string) => Date.parse(iso)
    const spec = { activeDeadlineSeconds: 60, completions: 2 }
    expect(JobRuns.deadline({ spec, status: started })).toBe(at("2026-01-01T00:01:00Z"))
    expect(JobRuns.deadline({ spec: {}, status: started })).toBeUndefined()
    expect(JobRuns.deadline({ spec, status: {} })).toBeUndefined()
    expect(JobRuns.ending({ spec, status: started }, tally({ active: 2 }), at("2026-01-01T00:00:59Z"))).toBeUndefined()
    expect(JobRuns.ending({ spec, status: started }, tally({ active: 2 }), at("2026-01-01T00:01:00Z"))).toBe("DeadlineExceeded")
    expect(JobRuns.ending({ spec: { ...spec, backoffLimit: 0 }, status: started }, tally({ failed: 1 }), at("2026-01-01T00:02:00Z"))).toBe("BackoffLimitExceeded")
    const failed = JobRuns.finished({ spec, status: started }, "2026-01-01T00:01:00Z", "DeadlineExceeded", tally({ active: 0 }))
    expect(failed.conditions).toMatchObject([
      { type: "FailureTarget", status: "True", reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" },
      { type: "Failed", status: "True", reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" }
    ])
  })

  it("spells completed indexes as ranges, and reads them back", () => {
    expect(JobRuns.formatIndexes(new Set([7, 0, 1, 2, 4, 5]))).toBe("0-2,4-5,7")
    expect([...JobRuns.parseIndexes("0-2,4-5,7")]).toEqual([0, 1, 2, 4, 5, 7])
    expect([...JobRuns.parseIndexes(undefined)]).toEqual([])
  })

  it("counts a running Job's pods, omitting zero counters as 1.32 does", () => {
    const status = JobRuns.running({ spec: {} }, "2026-01-01T00:00:00Z", tally({ active: 2 }))
    expect(status).toEqual({ startTime: "2026-01-01T00:00:00Z", active: 2, ready: 0, terminating: 0, uncountedTerminatedPods: {} })
    const failed = JobRuns.finished({ spec: {}, status: { active: 1 } }, "2026-01-01T00:00:00Z", "BackoffLimitExceeded", tally({ failed: 7 }))
    expect(failed).toMatchObject({ failed: 7, ready: 0 })
    expect(failed).not.toHaveProperty("active")
  })
})
