/**
 * Priority as a 1.32 cluster gives it and kube-scheduler acts on it: the system PriorityClasses, the
 * Priority admission plugin (a class's value and policy on each Pod, the global default, a missing
 * class or a stated priority refused, an update keeping what creation set, one global default);
 * and preemption: a pod no node has room for takes the fewest pods of lower priority off a node,
 * waits for them to go while nominated there (pods of no higher priority leaving it the room), and
 * runs; a pod that may not preempt says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { createNamespace, poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  // A second for a preempted pod to go: long enough to see it marked and the preemptor nominated.
  server = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "1 second", nodeCapacity: { cpu: "2" } })] })
})
afterAll(async () => {
  await server?.close()
})

const classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
const priorityClass = (name: string, value: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: "scheduling.k8s.io/v1",
  kind: "PriorityClass",
  metadata: { name },
  value,
  ...extra
})
const pod = (name: string, cpu: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "app", image: "nginx", resources: { requests: { cpu } } }], ...spec }
})
const pods = (namespace: string) => `/api/v1/namespaces/${namespace}/pods`
const create = async (path: string, body: object) => {
  const created = await server.request("POST", path, { body })
  expect(created.status, created.text).toBe(201)
  return created.json
}
const running = (namespace: string, name: string) => poll(server, `${pods(namespace)}/${name}`, (p) => p.status?.phase === "Running")
const scheduledMessage = (p: any): string | undefined => p.status?.conditions?.find((c: any) => c.type === "PodScheduled")?.message

describe("Priority admission", () => {
  it("gives each Pod its class's priority and policy, or the global default's, and refuses what does not add up", async () => {
    const listed = (await server.request("GET", classes)).json.items.map((c: any) => [c.metadata.name, c.value, c.preemptionPolicy])
    expect(listed).toEqual(expect.arrayContaining([
      ["system-node-critical", 2000001000, "PreemptLowerPriority"],
      ["system-cluster-critical", 2000000000, "PreemptLowerPriority"]
    ]))
    await createNamespace(server, "priority")
    await create(classes, priorityClass("batch", 100, { preemptionPolicy: "Never" }))
    const batch = await create(pods("priority"), pod("batch", "10m", { priorityClassName: "batch" }))
    expect(batch.spec).toMatchObject({ priority: 100, preemptionPolicy: "Never" })
    const critical = await create(pods("priority"), pod("critical", "10m", { priorityClassName: "system-cluster-critical" }))
    expect(critical.spec.priority).toBe(2000000000)
    expect((await create(pods("priority"), pod("plain", "10m"))).spec).toMatchObject({ priority: 0, preemptionPolicy: "PreemptLowerPriority" })

    const refused = async (body: object, message: string) => {
      const answer = await server.request("POST", pods("priority"), { body })
      expect(answer.status).toBe(403)
      expect(answer.json.message).toBe(message)
    }
    await refused(pod("missing", "10m", { priorityClassName: "nope" }), 'pods "missing" is forbidden: no PriorityClass with name nope was found')
    await refused(
      pod("stated", "10m", { priorityClassName: "batch", priority: 5 }),
      'pods "stated" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 100 from the given PriorityClass name'
    )
    await refused(
      pod("policy", "10m", { priorityClassName: "batch", preemptionPolicy: "PreemptLowerPriority" }),
      'pods "policy" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name'
    )

    // With a global default, a Pod without a class gets it; a second default is refused.
    await create(classes, priorityClass("everyday", 10, { globalDefault: true }))
    expect((await create(pods("priority"), pod("defaulted", "10m"))).spec).toMatchObject({ priorityClassName: "everyday", priority: 10 })
    const second = await server.request("POST", classes, { body: priorityClass("another", 20, { globalDefault: true }) })
    expect(second.status).toBe(403)
    expect(second.json.message).toBe('priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass everyday is already marked as default. Only one default can exist')
    // An update of a Pod that leaves its priority out keeps it.
    const stored = (await server.request("GET", `${pods("priority")}/defaulted`)).json
    const { priority: _, ...specWithout } = stored.spec
    const updated = await server.request("PUT", `${pods("priority")}/defaulted`, { body: { ...stored, metadata: { ...stored.metadata, labels: { seen: "yes" } }, spec: specWithout } })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.json.spec.priority).toBe(10)

    expect((await server.request("DELETE", `${classes}/everyday`)).status).toBe(200)
    for (const name of ["batch", "critical", "plain", "defaulted"]) expect((await server.request("DELETE", `${pods("priority")}/${name}`)).status).toBe(200)
    await poll(server, pods("priority"), (list) => list.items.length === 0)
  })
})

describe("preemption", () => {
  it("takes the fewest pods of lower priority off the node, holds the room for the preemptor, and runs it", async () => {
    await createNamespace(server, "preempt")
    await create(classes, priorityClass("urgent", 1000))
    await create(pods("preempt"), pod("low-a", "900m"))
    await running("preempt", "low-a")
    await create(pods("preempt"), pod("low-b", "900m"))
    await running("preempt", "low-b")
    // 1800m of 2 cpus taken; "vip" needs 1000m: one of the two must go, the later started one.
    const vip = await create(pods("preempt"), pod("vip", "1", { priorityClassName: "urgent" }))
    const marked = await poll(server, `${pods("preempt")}/low-b`, (p) => p.status?.conditions?.some((c: any) => c.type === "DisruptionTarget"))
    expect(marked.status.conditions.find((c: any) => c.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "PreemptionByScheduler",
      message: "default-scheduler: preempting to accommodate a higher priority pod"
    })
    expect(marked.metadata.deletionTimestamp).toBeDefined()
    await poll(server, `${pods("preempt")}/vip`, (p) => p.status?.nominatedNodeName === "kubefx-node")
    // Preempting, it failed to schedule with no word of preemption; then it waits for its victim.
    const failures = await poll(server, "/api/v1/namespaces/preempt/events", (list) =>
      list.items.filter((e: any) => e.reason === "FailedScheduling" && e.involvedObject.name === "vip").length >= 2)
    expect(failures.items.filter((e: any) => e.reason === "FailedScheduling" && e.involvedObject.name === "vip").map((e: any) => e.message).sort()).toEqual([
      "0/1 nodes are available: 1 Insufficient cpu.",
      "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node."
    ])
    // A pod of lower priority arriving meanwhile leaves the room to the nominated one.
    await create(pods("preempt"), pod("low-c", "900m"))
    const events = await poll(server, "/api/v1/namespaces/preempt/events", (list) => list.items.some((e: any) => e.reason === "Preempted"))
    expect(events.items.find((e: any) => e.reason === "Preempted")).toMatchObject({
      involvedObject: { name: "low-b" },
      message: `Preempted by pod ${vip.metadata.uid} on node kubefx-node`,
      source: { component: "default-scheduler" }
    })
    expect((await running("preempt", "vip")).spec.nodeName).toBe("kubefx-node")
    await poll(server, pods("preempt"), (list) => !list.items.some((p: any) => p.metadata.name === "low-b"))
    expect((await server.request("GET", `${pods("preempt")}/low-a`)).json.status.phase).toBe("Running")
    const waiting = await poll(server, `${pods("preempt")}/low-c`, (p) => scheduledMessage(p) !== undefined)
    expect(scheduledMessage(waiting)).toBe(
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    expect(waiting.spec.nodeName).toBeUndefined()
  })

  it("preempts nothing for a pod whose policy is Never, and says so", async () => {
    await createNamespace(server, "never")
    await create(classes, priorityClass("urgent-polite", 1000, { preemptionPolicy: "Never" }))
    // The node is full from the test before: "low-a" and "vip" hold 1900m.
    await create(pods("never"), pod("polite", "500m", { priorityClassName: "urgent-polite" }))
    const waiting = await poll(server, `${pods("never")}/polite`, (p) => scheduledMessage(p) !== undefined)
    expect(scheduledMessage(waiting)).toBe("0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.")
    await new Promise((resolve) => setTimeout(resolve, 300))
    const left = (await server.request("GET", pods("preempt"))).json.items.map((p: any) => [p.metadata.name, p.metadata.deletionTimestamp])
    expect(left).toEqual(expect.arrayContaining([["low-a", undefined], ["vip", undefined]]))
  })

  it("takes the node from a pod of lower priority nominated there when it preempts on it", async () => {
    const cluster = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "1 second", nodeCapacity: { cpu: "2" } })] })
    try {
      const at = (path: string) => `/api/v1/namespaces/renominate/pods${path}`
      const make = async (path: string, body: object) => expect((await cluster.request("POST", path, { body })).status).toBe(201)
      await createNamespace(cluster, "renominate")
      await make(classes, priorityClass("middling", 500))
      await make(classes, priorityClass("urgent", 1000))
      for (const name of ["low-a", "low-b"]) {
        await make(at(""), pod(name, "900m"))
        await poll(cluster, at(`/${name}`), (p) => p.status?.phase === "Running")
      }
      await make(at(""), pod("mid", "1", { priorityClassName: "middling" }))
      await poll(cluster, at("/mid"), (p) => p.status?.nominatedNodeName === "kubefx-node")
      // While mid's victim goes, vip preempts the other pod of lower priority and takes the nomination.
      await make(at(""), pod("vip", "1", { priorityClassName: "urgent" }))
      await poll(cluster, at("/vip"), (p) => p.status?.nominatedNodeName === "kubefx-node")
      await poll(cluster, at("/mid"), (p) => p.status?.nominatedNodeName === undefined)
      const [vip, mid] = [await poll(cluster, at("/vip"), (p) => p.status?.phase === "Running"), await poll(cluster, at("/mid"), (p) => p.status?.phase === "Running")]
      expect([vip.spec.nodeName, mid.spec.nodeName]).toEqual(["kubefx-node", "kubefx-node"])
    } finally {
      await cluster.close()
    }
  })

  it("keeps the pods a PodDisruptionBudget protects where taking others makes the same room", async () => {
    const guarded = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "1 second", nodeCapacity: { cpu: "2" } })] })
    try {
      const at = (path: string) => `/api/v1/namespaces/budgets/pods${path}`
      const make = async (path: string, body: object) => expect((await guarded.request("POST", path, { body })).status).toBe(201)
      await createNamespace(guarded, "budgets")
      await make("/apis/scheduling.k8s.io/v1/priorityclasses", priorityClass("urgent", 1000))
      const labelled = (name: string, app: string) => ({ ...pod(name, "900m"), metadata: { name, labels: { app } } })
      // The older pod is the more important: without the budget, the newer one would go.
      await make(at(""), labelled("batch-worker", "batch"))
      await poll(guarded, at("/batch-worker"), (p) => p.status?.phase === "Running")
      await new Promise((resolve) => setTimeout(resolve, 1100))
      await make(at(""), labelled("db-0", "db"))
      await poll(guarded, at("/db-0"), (p) => p.status?.phase === "Running")
      await make("/apis/policy/v1/namespaces/budgets/poddisruptionbudgets", {
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name: "db" },
        spec: { minAvailable: 1, selector: { matchLabels: { app: "db" } } }
      })
      await poll(guarded, "/apis/policy/v1/namespaces/budgets/poddisruptionbudgets/db", (b) => b.status?.currentHealthy === 1 && b.status?.disruptionsAllowed === 0)
      await make(at(""), pod("vip", "1", { priorityClassName: "urgent" }))
      const taken = await poll(guarded, at("/batch-worker"), (p) => p.status?.conditions?.some((c: any) => c.type === "DisruptionTarget"))
      expect(taken.status.conditions.find((c: any) => c.type === "DisruptionTarget").reason).toBe("PreemptionByScheduler")
      const db = (await guarded.request("GET", at("/db-0"))).json
      expect([db.metadata.deletionTimestamp, db.status.conditions.some((c: any) => c.type === "DisruptionTarget")]).toEqual([undefined, false])
    } finally {
      await guarded.close()
    }
  })
})
