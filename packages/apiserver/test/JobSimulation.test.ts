/**
 * The workload simulator's Job controller against the server: a Job's pods are objects, made from
 * its template, tracked by a finalizer until counted, ended as the Job's outcome says, replaced
 * until the backoff limit (restarted in place with `restartPolicy: OnFailure`, their restarts
 * counted), ended or not counted as its podFailurePolicy says, completed by its successPolicy
 * (validated as 1.32 validates it), stopped at the active deadline,
 * deleted when it is suspended, with the controller's events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { outcomeByLabel, poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({
    controllers: [WorkloadSimulator.make({
      delay: "150 millis",
      jobOutcome: outcomeByLabel
    })]
  })
})
afterAll(async () => {
  await server?.close()
})

const jobs = "/apis/batch/v1/namespaces/default/jobs"
const merge = { "content-type": "application/merge-patch+json" }
const job = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, labels },
  spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "work", image: "busybox" }] } }, ...spec }
})

const podsOf = async (name: string) =>
  ((await server.request("GET", `/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D${name}`)).json.items as Array<any>)
    .sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp) || a.metadata.name.localeCompare(b.metadata.name))
const eventsOf = async (name: string) =>
  ((await server.request("GET", "/api/v1/namespaces/default/events")).json.items as Array<any>)
    .filter((e) => e.involvedObject.kind === "Job" && e.involvedObject.name === name)
const condition = (body: any, type: string) => body.status?.conditions?.find((c: any) => c.type === type && c.status === "True")

const until = async (name: string, check: (job: any, pods: Array<any>) => boolean, invariant: (pods: Array<any>) => void = () => {}) => {
  let last: unknown
  for (let i = 0; i < 300; i++) {
    const body = (await server.request("GET", `${jobs}/${name}`)).json
    const pods = await podsOf(name)
    invariant(pods)
    last = { status: body.status, pods: pods.map((p) => [p.metadata.name, p.status?.phase, p.metadata.finalizers]) }
    if (check(body, pods)) return { job: body, pods }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out on ${name}: ${JSON.stringify(last)}`)
}

describe("JobSimulation", () => {
  it("runs a Job's pods as objects, one at a time at parallelism 1, tracked until counted", async () => {
    expect((await server.request("POST", jobs, { body: job("migrate", { completions: 2 }) })).status).toBe(201)
    // Never more pods running than the parallelism; each tracked by the finalizer while it runs.
    const atMostOne = (pods: Array<any>) => {
      const running = pods.filter((p) => p.status?.phase !== "Succeeded")
      expect(running.length).toBeLessThanOrEqual(1)
      for (const pod of running) expect(pod.metadata.finalizers).toEqual(["batch.kubernetes.io/job-tracking"])
    }
    const { job: done, pods } = await until("migrate", (j, p) => condition(j, "Complete") !== undefined && p.every((x) => x.metadata.finalizers === undefined), atMostOne)
    expect(done.status).toMatchObject({ succeeded: 2, ready: 0, terminating: 0, uncountedTerminatedPods: {} })
    expect(pods).toHaveLength(2)
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^migrate-[a-z0-9]{5}$/)
      expect(pod.metadata.labels).toMatchObject({ "batch.kubernetes.io/job-name": "migrate", "job-name": "migrate", "batch.kubernetes.io/controller-uid": done.metadata.uid })
      expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ apiVersion: "batch/v1", kind: "Job", name: "migrate", controller: true, blockOwnerDeletion: true })])
      expect(pod.status.phase).toBe("Succeeded")
      expect(pod.status.containerStatuses[0]).toMatchObject({ name: "work", ready: false, started: false, state: { terminated: { exitCode: 0, reason: "Completed" } } })
      expect(pod.status.conditions.find((c: any) => c.type === "Ready")).toMatchObject({ status: "False", reason: "PodCompleted" })
    }
    const recorded = (await eventsOf("migrate")).map((e) => [e.reason, e.message, e.source.component])
    expect(recorded).toEqual(expect.arrayContaining([
      ["SuccessfulCreate", `Created pod: ${pods[0].metadata.name}`, "job-controller"],
      ["SuccessfulCreate", `Created pod: ${pods[1].metadata.name}`, "job-controller"],
      ["Completed", "Job completed", "job-controller"]
    ]))
  })

  it("gives an Indexed Job's pods their index: name, annotation, label, hostname and JOB_COMPLETION_INDEX", async () => {
    await server.request("POST", jobs, { body: job("shards", { completions: 3, parallelism: 3, completionMode: "Indexed" }) })
    const { job: done, pods } = await until("shards", (j) => condition(j, "Complete") !== undefined)
    expect(done.status.completedIndexes).toBe("0-2")
    const byIndex = pods.map((p) => Number(p.metadata.annotations["batch.kubernetes.io/job-completion-index"])).sort()
    expect(byIndex).toEqual([0, 1, 2])
    for (const pod of pods) {
      const index = pod.metadata.annotations["batch.kubernetes.io/job-completion-index"]
      expect(pod.metadata.name).toMatch(new RegExp(`^shards-${index}-[a-z0-9]{5}$`))
      expect(pod.metadata.labels["batch.kubernetes.io/job-completion-index"]).toBe(index)
      expect(pod.spec.hostname).toBe(`shards-${index}`)
      expect(pod.spec.containers[0].env).toContainEqual({
        name: "JOB_COMPLETION_INDEX",
        valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } }
      })
    }
  })

  it("names its pods after the Job, not after a name in the template, as kube's controllers make pods", async () => {
    const named = job("named", { completions: 2, parallelism: 2 })
    const template = { ...named.spec.template, metadata: { name: "fixed-pod-name", labels: { tier: "batch" } } }
    expect((await server.request("POST", jobs, { body: { ...named, spec: { ...named.spec, template } } })).status).toBe(201)
    const { pods } = await until("named", (j) => condition(j, "Complete") !== undefined)
    expect(pods.map((p) => [/^named-[a-z0-9]{5}$/.test(p.metadata.name), p.metadata.labels.tier])).toEqual([[true, "batch"], [true, "batch"]])
    // A Deployment's ReplicaSet likewise.
    const deployments = "/apis/apps/v1/namespaces/default/deployments"
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "named-web" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "named-web" } },
        template: { metadata: { name: "fixed-web", labels: { app: "named-web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
      }
    }
    expect((await server.request("POST", deployments, { body: deployment })).status).toBe(201)
    await poll(server, `${deployments}/named-web`, (d) => d.status?.readyReplicas === 2)
    const web = (await server.request("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dnamed-web")).json.items.map((p: any) => p.metadata.name)
    expect(web).toHaveLength(2)
    for (const name of web) expect(name).toMatch(/^named-web-[a-z0-9]+-[a-z0-9]{5}$/)
    await server.request("DELETE", `${deployments}/named-web`)
  })

  it("completes an Indexed Job once a rule of its successPolicy is met, with no pod for the indexes left", async () => {
    const spec = {
      completionMode: "Indexed",
      completions: 3,
      parallelism: 1,
      successPolicy: { rules: [{ succeededIndexes: "2" }, { succeededCount: 1 }] }
    }
    expect((await server.request("POST", jobs, { body: job("leader", spec) })).status).toBe(201)
    const { job: done, pods } = await until("leader", (j) => condition(j, "Complete") !== undefined)
    const said = { status: "True", reason: "SuccessPolicy", message: "Matched rules at index 1" }
    expect(condition(done, "SuccessCriteriaMet")).toMatchObject(said)
    expect(condition(done, "Complete")).toMatchObject(said)
    expect(done.status).toMatchObject({ succeeded: 1, completedIndexes: "0" })
    expect(pods.map((p) => p.metadata.annotations["batch.kubernetes.io/job-completion-index"])).toEqual(["0"])
    expect((await eventsOf("leader")).map((e) => e.reason)).toContain("Completed")
  })

  it("backoffLimitPerIndex: retries each index on its own, fails an index past it, and the Job once every index is done", async () => {
    const spec = { completionMode: "Indexed", completions: 3, parallelism: 3, backoffLimitPerIndex: 1 }
    expect((await server.request("POST", jobs, { body: job("per-index", spec, { "failing-index": "1" }) })).status).toBe(201)
    const { job: done, pods } = await until("per-index", (j) => condition(j, "Failed") !== undefined)
    const said = { status: "True", reason: "FailedIndexes", message: "Job has failed indexes" }
    expect(condition(done, "FailureTarget")).toMatchObject(said)
    expect(condition(done, "Failed")).toMatchObject(said)
    // Index 1 ran twice (its failures before each run on its pod), the others once.
    expect(done.status).toMatchObject({ failedIndexes: "1", completedIndexes: "0,2", succeeded: 2, failed: 2 })
    const runs = pods.map((p) => [p.metadata.annotations["batch.kubernetes.io/job-completion-index"], p.metadata.annotations["batch.kubernetes.io/job-index-failure-count"], p.status.phase])
    expect(runs.sort()).toEqual([["0", "0", "Succeeded"], ["1", "0", "Failed"], ["1", "1", "Failed"], ["2", "0", "Succeeded"]])
    expect((await eventsOf("per-index")).map((e) => e.reason)).toContain("FailedIndexes")

    // With maxFailedIndexes 0, the first index to fail for good fails the Job at once.
    const strict = { completionMode: "Indexed", completions: 3, parallelism: 1, backoffLimitPerIndex: 0, maxFailedIndexes: 0 }
    expect((await server.request("POST", jobs, { body: job("strict", strict, { "failing-index": "0" }) })).status).toBe(201)
    const { job: stopped, pods: ran } = await until("strict", (j) => condition(j, "Failed") !== undefined)
    expect(condition(stopped, "Failed")).toMatchObject({ reason: "MaxFailedIndexesExceeded", message: "Job has exceeded the specified maximal number of failed indexes" })
    expect(stopped.status.failedIndexes).toBe("0")
    expect(ran.map((p) => p.metadata.annotations["batch.kubernetes.io/job-completion-index"])).toEqual(["0"])

    // A FailIndex rule fails the index at its first matching failure, whatever the limit.
    const failIndex = {
      completionMode: "Indexed",
      completions: 2,
      parallelism: 2,
      backoffLimitPerIndex: 3,
      podFailurePolicy: { rules: [{ action: "FailIndex", onExitCodes: { operator: "In", values: [1] } }] }
    }
    expect((await server.request("POST", jobs, { body: job("fail-index", failIndex, { "failing-index": "1" }) })).status).toBe(201)
    const { job: fast, pods: fastPods } = await until("fail-index", (j) => condition(j, "Failed") !== undefined)
    expect([condition(fast, "Failed").reason, fast.status.failedIndexes, fast.status.completedIndexes]).toEqual(["FailedIndexes", "1", "0"])
    expect(fastPods.filter((p) => p.metadata.annotations["batch.kubernetes.io/job-completion-index"] === "1")).toHaveLength(1)
  })

  it("refuses a successPolicy the Job cannot meet or read, as 1.32 validates it", async () => {
    const refused = async (spec: Record<string, unknown>) => {
      const answer = await server.request("POST", jobs, { body: job("refused", spec) })
      expect(answer.status).toBe(422)
      return answer.json.details.causes.map((c: any) => `${c.field}: ${c.message}`)
    }
    const indexed = { completionMode: "Indexed", completions: 3 }
    expect(await refused({ completions: 3, successPolicy: { rules: [{ succeededCount: 1 }] } })).toEqual([
      "spec.successPolicy: Invalid value: batch.SuccessPolicy{...}: requires indexed completion mode"
    ])
    expect(await refused({ ...indexed, successPolicy: { rules: [{ succeededIndexes: "0-7", succeededCount: 4 }, {}] } })).toEqual([
      'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0-7": error parsing succeededIndexes: too large index: "7"',
      "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of specified completions)",
      "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)",
      "spec.successPolicy.rules[1]: Required value: at least one of succeededCount or succeededIndexes must be specified"
    ])
    expect(await refused({ ...indexed, successPolicy: { rules: [{ succeededIndexes: "1,0" }] } })).toEqual([
      'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1,0": error parsing succeededIndexes: non-increasing order, previous: 1, current: 0'
    ])
    expect(await refused({ completions: 3, maxFailedIndexes: 1 })).toEqual([
      "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
      "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode"
    ])
  })

  it("replaces failed pods until the backoff limit, then fails the Job", async () => {
    await server.request("POST", jobs, { body: job("flaky", { backoffLimit: 1 }, { outcome: "fail" }) })
    const { job: failed, pods } = await until("flaky", (j, p) => condition(j, "Failed") !== undefined && p.every((x) => x.metadata.finalizers === undefined))
    expect(failed.status).toMatchObject({ failed: 2, ready: 0, terminating: 0 })
    expect(failed.status).not.toHaveProperty("succeeded")
    expect(pods).toHaveLength(2)
    for (const pod of pods) {
      expect(pod.status.phase).toBe("Failed")
      expect(pod.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 1, reason: "Error" })
    }
    expect((await eventsOf("flaky")).map((e) => [e.type, e.reason, e.message])).toContainEqual(
      ["Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit"]
    )
  })

  it("restarts an OnFailure Job's failed containers in place, counting the restarts against the backoff limit", async () => {
    const onFailure = job("restarting", { backoffLimit: 2 }, { outcome: "fail" })
    onFailure.spec.template.spec.restartPolicy = "OnFailure"
    await server.request("POST", jobs, { body: onFailure })
    // One pod all along, never Failed: its containers restart in it.
    let restarts = 0
    let names = new Set<string>()
    const { job: failed } = await until("restarting", (j) => condition(j, "Failed") !== undefined, (pods) => {
      for (const pod of pods) {
        names.add(pod.metadata.name)
        expect(pod.status?.phase).not.toBe("Failed")
        const status = pod.status?.containerStatuses?.[0]
        if (status?.restartCount > restarts) {
          restarts = status.restartCount
          expect(status.lastState.terminated).toMatchObject({ exitCode: 1, reason: "Error" })
          expect(status.state.running).toBeDefined()
        }
      }
    })
    expect(names.size).toBe(1)
    expect(restarts).toBe(2)
    expect(condition(failed, "Failed")).toMatchObject({ reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" })
    expect((await eventsOf("restarting")).map((e) => [e.type, e.reason])).toContainEqual(["Warning", "BackoffLimitExceeded"])
  })

  it("podFailurePolicy: FailJob ends the Job at the first matching failure; Ignore leaves failures uncounted", async () => {
    const policy = (action: string) => ({ podFailurePolicy: { rules: [{ action, onExitCodes: { containerName: "work", operator: "In", values: [1] } }] } })
    await server.request("POST", jobs, { body: job("fail-fast", { backoffLimit: 6, ...policy("FailJob") }, { outcome: "fail" }) })
    const { job: failed, pods } = await until("fail-fast", (j, p) => condition(j, "Failed") !== undefined && p.every((x) => x.metadata.finalizers === undefined))
    expect(pods).toHaveLength(1)
    const message = `Container work for pod default/${pods[0].metadata.name} failed with exit code 1 matching FailJob rule at index 0`
    expect(condition(failed, "FailureTarget")).toMatchObject({ reason: "PodFailurePolicy", message })
    expect(condition(failed, "Failed")).toMatchObject({ reason: "PodFailurePolicy", message })
    expect((await eventsOf("fail-fast")).map((e) => [e.type, e.reason, e.message])).toContainEqual(["Warning", "PodFailurePolicy", message])

    // With every failure ignored, a backoff limit of 0 never fails the Job: its pods are replaced.
    await server.request("POST", jobs, { body: job("ignoring", { backoffLimit: 0, ...policy("Ignore") }, { outcome: "fail" }) })
    const { job: going } = await until("ignoring", (_, p) => p.filter((x) => x.status?.phase === "Failed" && x.metadata.finalizers === undefined).length >= 3)
    expect(condition(going, "Failed")).toBeUndefined()
    expect(going.status).not.toHaveProperty("failed")
    await server.request("DELETE", `${jobs}/ignoring?propagationPolicy=Background`)
  })

  it("fails a Job still running past its activeDeadlineSeconds: DeadlineExceeded, its active pods deleted", async () => {
    // Fifty pods one after another take far longer than the one second the Job may run.
    await server.request("POST", jobs, { body: job("deadline", { completions: 50, activeDeadlineSeconds: 1 }) })
    const { job: failed } = await until("deadline", (j, p) =>
      condition(j, "Failed") !== undefined && p.every((x) => x.status?.phase === "Succeeded" && x.metadata.finalizers === undefined))
    const reason = { status: "True", reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" }
    expect(condition(failed, "FailureTarget")).toMatchObject(reason)
    expect(condition(failed, "Failed")).toMatchObject(reason)
    expect(failed.status).not.toHaveProperty("active")
    expect(failed.status.succeeded ?? 0).toBeLessThan(50)
    expect(Date.parse(condition(failed, "Failed").lastTransitionTime) - Date.parse(failed.status.startTime)).toBeGreaterThanOrEqual(1000)
    expect((await eventsOf("deadline")).map((e) => [e.type, e.reason, e.message])).toContainEqual(
      ["Warning", "DeadlineExceeded", "Job was active longer than specified deadline"]
    )
  })

  it("deletes a suspended Job's active pods, makes new ones when it resumes, and lets them go when it is deleted", async () => {
    // Pods there never run: the suspension always finds them active.
    const stalled = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "1 hour" })] })
    try {
      const get = async (path: string) => (await stalled.request("GET", path)).json
      const podNames = async () =>
        ((await get("/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dbatch")).items as Array<any>).map((p) => p.metadata.name).sort()
      const wait = async (check: () => Promise<boolean>) => {
        for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25))
        expect(await check()).toBe(true)
      }
      await stalled.request("POST", jobs, { body: job("batch", { parallelism: 2, completions: 4 }) })
      await wait(async () => (await get(`${jobs}/batch`)).status?.active === 2 && (await podNames()).length === 2)
      const first = await podNames()
      await stalled.request("PATCH", `${jobs}/batch`, { body: { spec: { suspend: true } }, headers: merge })
      await wait(async () => condition(await get(`${jobs}/batch`), "Suspended") !== undefined && (await podNames()).length === 0)
      expect((await get(`${jobs}/batch`)).status).not.toHaveProperty("active")
      const events = async () => ((await get("/api/v1/namespaces/default/events")).items as Array<any>).filter((e) => e.involvedObject.name === "batch")
      expect((await events()).filter((e) => e.reason === "SuccessfulDelete").map((e) => e.message).sort()).toEqual(first.map((name) => `Deleted pod: ${name}`))
      expect((await events()).map((e) => e.reason)).toContain("Suspended")
      await stalled.request("PATCH", `${jobs}/batch`, { body: { spec: { suspend: false } }, headers: merge })
      await wait(async () => (await get(`${jobs}/batch`)).status?.active === 2 && (await podNames()).length === 2)
      expect((await podNames()).some((name) => first.includes(name))).toBe(false)
      expect((await events()).map((e) => e.reason)).toContain("Resumed")
      // Deleting the Job collects its pods: each is let go of its tracking finalizer, not left terminating.
      expect((await stalled.request("DELETE", `${jobs}/batch`, { body: { propagationPolicy: "Background" } })).status).toBe(200)
      await wait(async () => (await podNames()).length === 0)
    } finally {
      await stalled.close()
    }
  })

  it("counts a deleted pod as terminating while its kubelet stops it, and replaces it at once", async () => {
    const slow = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "1 second" })] })
    try {
      const get = async (path: string) => (await slow.request("GET", path)).json
      await slow.request("POST", jobs, { body: job("long", { completions: 1 }) })
      const running = await poll(slow, "/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dlong", (list) =>
        list.items.length === 1 && list.items[0].status?.phase === "Running")
      const [pod] = running.items
      await slow.request("DELETE", `/api/v1/namespaces/default/pods/${pod.metadata.name}`)
      const terminating = await poll(slow, `${jobs}/long`, (j) => j.status?.terminating === 1)
      // Deleted before it finished: a failure. TerminatingOrFailed, the default: the replacement does not wait.
      expect(terminating.status.failed).toBe(1)
      expect(terminating.status.active).toBe(1)
      expect((await get("/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dlong")).items).toHaveLength(2)
      await poll(slow, `${jobs}/long`, (j) => j.status?.terminating === 0)
      // With no failure allowed, a deleted pod fails the Job: 1.32 states FailureTarget at once and
      // deletes the other pod, and the Job is Failed once both have terminated, both counted.
      await slow.request("POST", jobs, { body: job("fragile", { completions: 2, parallelism: 2, backoffLimit: 0 }) })
      const fragile = await poll(slow, "/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dfragile", (list) =>
        list.items.length === 2 && list.items.every((p: any) => p.status?.phase === "Running"))
      await slow.request("DELETE", `/api/v1/namespaces/default/pods/${fragile.items[0].metadata.name}`)
      const target = await poll(slow, `${jobs}/fragile`, (j) => condition(j, "FailureTarget") !== undefined)
      expect(condition(target, "FailureTarget")).toMatchObject({ reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" })
      expect([condition(target, "Failed"), target.status.terminating, target.status.active]).toEqual([undefined, 2, undefined])
      const reasons = async () => ((await get("/api/v1/namespaces/default/events")).items as Array<any>).filter((e) => e.involvedObject.name === "fragile").map((e) => e.reason)
      expect(await reasons()).not.toContain("BackoffLimitExceeded")
      const failed = await poll(slow, `${jobs}/fragile`, (j) => condition(j, "Failed") !== undefined)
      expect(condition(failed, "Failed")).toMatchObject({ reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" })
      expect(failed.status).toMatchObject({ failed: 2, terminating: 0 })
      expect(await reasons()).toContain("BackoffLimitExceeded")
      await poll(slow, "/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dfragile", (list) => list.items.length === 0)
    } finally {
      await slow.close()
    }
  })
})
