/**
 * CronJob schedules as robfig/cron fires them (fields, descriptors, `@every`, either-day matching,
 * time zones), and what the CronJob controller makes of them: the time due, the Job it makes.
 */
import { describe, expect, it } from "vitest"
import * as Cron from "../src/Cron.ts"
import * as CronJobs from "../src/CronJobs.ts"

const next = (schedule: string, after: string, zone?: string) => {
  const at = Cron.next(Cron.parse(schedule)!, Date.parse(after), zone)
  return at === undefined ? undefined : new Date(at).toISOString()
}

describe("Cron.next", () => {
  it("finds the next minute every field matches, strictly after the time given", () => {
    expect(next("*/15 * * * *", "2026-03-10T10:14:59Z")).toBe("2026-03-10T10:15:00.000Z")
    expect(next("*/15 * * * *", "2026-03-10T10:15:00Z")).toBe("2026-03-10T10:30:00.000Z")
    expect(next("0 9-17/4 * * *", "2026-03-10T13:00:00Z")).toBe("2026-03-10T17:00:00.000Z")
    expect(next("30 2 1 jan *", "2026-03-10T00:00:00Z")).toBe("2027-01-01T02:30:00.000Z")
    expect(next("@daily", "2026-03-10T23:59:00Z")).toBe("2026-03-11T00:00:00.000Z")
    expect(next("@weekly", "2026-03-10T00:00:00Z")).toBe("2026-03-15T00:00:00.000Z")
  })

  it("matches either day field when both are restricted, and both when one is *", () => {
    // 2026-03-10 is a Tuesday: the 15th (a Sunday) or a Friday, whichever comes first.
    expect(next("0 0 15 * 5", "2026-03-10T00:00:00Z")).toBe("2026-03-13T00:00:00.000Z")
    expect(next("0 0 * * 5", "2026-03-10T00:00:00Z")).toBe("2026-03-13T00:00:00.000Z")
    // A step over the day of month is not a star: either again.
    expect(next("0 0 */10 * 1", "2026-03-10T00:00:00Z")).toBe("2026-03-11T00:00:00.000Z")
    expect(next("0 0 30 2 *", "2026-03-10T00:00:00Z")).toBeUndefined()
  })

  it("reads the fields on the time zone's wall clock", () => {
    // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
    expect(next("0 9 * * *", "2026-01-10T12:00:00Z", "Europe/Berlin")).toBe("2026-01-11T08:00:00.000Z")
    expect(next("0 9 * * *", "2026-07-10T12:00:00Z", "Europe/Berlin")).toBe("2026-07-11T07:00:00.000Z")
  })

  it("fires @every a whole number of seconds after the time's second", () => {
    expect(Cron.parse("@every 1m30s")).toEqual({ every: 90_000 })
    expect(Cron.parse("@every 200ms")).toEqual({ every: 1000 })
    expect(next("@every 5s", "2026-03-10T10:00:00.700Z")).toBe("2026-03-10T10:00:05.000Z")
  })
})

describe("CronJobs", () => {
  const cronJob = (spec: Record<string, unknown>, status: Record<string, unknown> = {}) => ({
    metadata: { name: "nightly", namespace: "default", uid: "u", creationTimestamp: "2026-03-10T10:00:30Z" },
    spec: { schedule: "*/5 * * * *", jobTemplate: { metadata: { labels: { app: "backup" } }, spec: { template: { spec: {} } } }, ...spec },
    status
  })

  it("is due for the latest schedule time not yet run, none before the first, none past the deadline", () => {
    expect(CronJobs.due(cronJob({}), Date.parse("2026-03-10T10:04:59Z"))).toBeUndefined()
    expect(new Date(CronJobs.due(cronJob({}), Date.parse("2026-03-10T10:17:00Z"))!).toISOString()).toBe("2026-03-10T10:15:00.000Z")
    expect(CronJobs.due(cronJob({}, { lastScheduleTime: "2026-03-10T10:15:00Z" }), Date.parse("2026-03-10T10:17:00Z"))).toBeUndefined()
    expect(CronJobs.due(cronJob({ startingDeadlineSeconds: 60 }), Date.parse("2026-03-10T10:17:00Z"))).toBeUndefined()
  })

  it("makes the Job of a schedule time: named by its minute, labelled as its template, stamped in the time zone", () => {
    const at = Date.parse("2026-07-10T10:15:00Z")
    const job = CronJobs.jobFor(cronJob({ timeZone: "Europe/Berlin" }), at)
    expect(job.metadata).toEqual({
      name: `nightly-${at / 60_000}`,
      labels: { app: "backup" },
      annotations: { "batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-07-10T12:15:00+02:00" },
      ownerReferences: [{ apiVersion: "batch/v1", kind: "CronJob", name: "nightly", uid: "u", controller: true, blockOwnerDeletion: true }]
    })
    expect(CronJobs.jobFor(cronJob({}), at).metadata.annotations).toEqual({ "batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-07-10T10:15:00Z" })
    expect(job.spec).toEqual({ template: { spec: {} } })
  })
})
