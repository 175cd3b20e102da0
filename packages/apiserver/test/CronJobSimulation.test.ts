/**
 * The workload simulator's CronJob controller against the server: a Job at each schedule time,
 * seen to completion, kept to the history limits, and the concurrency policies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { outcomeByLabel } from "./fixtures.ts"

let server: Testing.TestServer
// Jobs there never end: what the concurrency policies meet.
let stalled: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({
    controllers: [WorkloadSimulator.make({
      delay: "100 millis",
      jobOutcome: outcomeByLabel
    })]
  })
  stalled = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "1 hour" })] })
})
afterAll(async () => {
  await server?.close()
  await stalled?.close()
})

const cronJobs = "/apis/batch/v1/namespaces/default/cronjobs"
const cronJob = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "batch/v1",
  kind: "CronJob",
  metadata: { name },
  spec: {
    schedule: "@every 1s",
    jobTemplate: { metadata: { labels: { app: name } }, spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "work", image: "busybox" }] } } } },
    ...spec
  }
})

const jobsOf = async (on: Testing.TestServer, name: string) =>
  ((await on.request("GET", "/apis/batch/v1/namespaces/default/jobs")).json.items as Array<any>)
    .filter((j) => j.metadata.ownerReferences?.[0]?.name === name)
const eventsOf = async (on: Testing.TestServer, name: string) =>
  ((await on.request("GET", "/api/v1/namespaces/default/events")).json.items as Array<any>)
    .filter((e) => e.involvedObject.kind === "CronJob" && e.involvedObject.name === name)
const until = async <A>(look: () => Promise<A>, check: (a: A) => boolean): Promise<A> => {
  let last = await look()
  for (let i = 0; i < 200 && !check(last); i++) {
    await new Promise((r) => setTimeout(r, 25))
    last = await look()
  }
  expect(check(last), JSON.stringify(last)).toBe(true)
  return last
}

describe("CronJobSimulation", () => {
  it("makes a Job at the schedule time, sees it complete, and makes none while suspended", async () => {
    expect((await server.request("POST", cronJobs, { body: cronJob("tick") })).status).toBe(201)
    const [job] = await until(() => jobsOf(server, "tick"), (jobs) => jobs.length === 1)
    const scheduled = job.metadata.annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    expect(job.metadata.name).toBe(`tick-${Math.floor(Date.parse(scheduled) / 60_000)}`)
    expect(job.metadata.labels).toMatchObject({ app: "tick" })
    expect(job.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: "CronJob", name: "tick", controller: true })])
    const seen = await until(async () => (await server.request("GET", `${cronJobs}/tick`)).json, (cj) => cj.status?.lastSuccessfulTime !== undefined)
    expect(seen.status.lastScheduleTime).toBe(scheduled)
    const events = (await eventsOf(server, "tick")).map((e) => [e.reason, e.message, e.source.component])
    expect(events).toContainEqual(["SuccessfulCreate", `Created job ${job.metadata.name}`, "cronjob-controller"])
    expect(events).toContainEqual(["SawCompletedJob", `Saw completed job: ${job.metadata.name}, condition: Complete`, "cronjob-controller"])
    // Suspended, it makes no more Jobs.
    await server.request("PATCH", `${cronJobs}/tick`, { body: { spec: { suspend: true } }, headers: { "content-type": "application/merge-patch+json" } })
    await new Promise((r) => setTimeout(r, 300))
    const before = (await jobsOf(server, "tick")).map((j) => j.metadata.name)
    await new Promise((r) => setTimeout(r, 1500))
    expect((await jobsOf(server, "tick")).map((j) => j.metadata.name)).toEqual(before)
  })

  it("deletes the oldest finished Jobs beyond the history limit", async () => {
    // Two minutes of Jobs would be slow: the history is seeded with Jobs of earlier minutes, which fail.
    const created = await server.request("POST", cronJobs, { body: cronJob("trimmed", { schedule: "0 0 1 1 *", failedJobsHistoryLimit: 1 }) })
    const owner = { apiVersion: "batch/v1", kind: "CronJob", name: "trimmed", uid: created.json.metadata.uid, controller: true }
    for (const minute of [1, 2]) {
      const job = cronJob("x").spec.jobTemplate
      await server.request("POST", "/apis/batch/v1/namespaces/default/jobs", {
        body: { apiVersion: "batch/v1", kind: "Job", metadata: { name: `trimmed-${minute}`, labels: { outcome: "fail" }, ownerReferences: [owner] }, spec: { ...job.spec, backoffLimit: 0 } }
      })
    }
    // Their pods fail (jobOutcome), and with no retries left the Jobs fail: the failed history is
    // trimmed to one, the oldest (by start time, then name) gone.
    const left = await until(() => jobsOf(server, "trimmed"), (jobs) => jobs.length === 1)
    expect(left.map((j) => j.metadata.name)).toEqual(["trimmed-2"])
    expect((await eventsOf(server, "trimmed")).map((e) => e.message)).toContain("Deleted job trimmed-1")
  })

  it("with Forbid, starts no Job while one runs; with Replace, replaces it", async () => {
    await stalled.request("POST", cronJobs, { body: cronJob("forbidden", { concurrencyPolicy: "Forbid" }) })
    const [first] = await until(() => jobsOf(stalled, "forbidden"), (jobs) => jobs.length === 1)
    await until(() => eventsOf(stalled, "forbidden"), (events) => events.some((e) => e.reason === "JobAlreadyActive"))
    expect((await eventsOf(stalled, "forbidden")).find((e) => e.reason === "JobAlreadyActive").message)
      .toBe("Not starting job because prior execution is running and concurrency policy is Forbid")
    expect((await jobsOf(stalled, "forbidden")).map((j) => j.metadata.uid)).toEqual([first.metadata.uid])
    const status = (await stalled.request("GET", `${cronJobs}/forbidden`)).json.status
    expect(status.active).toEqual([expect.objectContaining({ kind: "Job", name: first.metadata.name, uid: first.metadata.uid })])

    await stalled.request("POST", cronJobs, { body: cronJob("replaced", { concurrencyPolicy: "Replace" }) })
    const [original] = await until(() => jobsOf(stalled, "replaced"), (jobs) => jobs.length === 1)
    await until(() => eventsOf(stalled, "replaced"), (events) => events.some((e) => e.reason === "SuccessfulDelete"))
    expect((await eventsOf(stalled, "replaced")).map((e) => e.message)).toContain(`Deleted job ${original.metadata.name}`)
  })
})
