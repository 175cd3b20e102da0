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
    expect(JobRuns.ending({ spec: { backoffLimit: 2 } }, tally({ failed: 2 }))).toBeUndefined()
    expect(JobRuns.ending({ spec: { backoffLimit: 2 } }, tally({ failed: 3 }))).toBe("Failed")
    expect(JobRuns.ending({ spec: {} }, tally({ failed: 7 }))).toBe("Failed")
    expect(JobRuns.ending({ spec: { completions: 2 } }, tally({ succeeded: 1, active: 1 }))).toBeUndefined()
    expect(JobRuns.ending({ spec: { completions: 2 } }, tally({ succeeded: 2 }))).toBe("Complete")
    expect(JobRuns.ending({ spec: {} }, tally({ succeeded: 1, active: 1 }))).toBeUndefined()
    expect(JobRuns.ending({ spec: {} }, tally({ succeeded: 1 }))).toBe("Complete")
    expect(JobRuns.ending({ spec: { completions: 3, completionMode: "Indexed" } }, tally({ succeeded: 3, completed: new Set([0, 1]) }))).toBeUndefined()
  })

  it("spells completed indexes as ranges, and reads them back", () => {
    expect(JobRuns.formatIndexes(new Set([7, 0, 1, 2, 4, 5]))).toBe("0-2,4-5,7")
    expect([...JobRuns.parseIndexes("0-2,4-5,7")]).toEqual([0, 1, 2, 4, 5, 7])
    expect([...JobRuns.parseIndexes(undefined)]).toEqual([])
  })

  it("counts a running Job's pods, omitting zero counters as 1.32 does", () => {
    const status = JobRuns.running({ spec: {} }, "2026-01-01T00:00:00Z", tally({ active: 2 }))
    expect(status).toEqual({ startTime: "2026-01-01T00:00:00Z", active: 2, ready: 0, terminating: 0, uncountedTerminatedPods: {} })
    const failed = JobRuns.finished({ spec: {}, status: { active: 1 } }, "2026-01-01T00:00:00Z", "Failed", tally({ failed: 7 }))
    expect(failed).toMatchObject({ failed: 7, ready: 0 })
    expect(failed).not.toHaveProperty("active")
  })
})
