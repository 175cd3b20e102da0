/**
 * Priority as a 1.32 cluster gives it: the system PriorityClasses, and the Priority admission
 * plugin (a class's value and policy on each Pod, the global default, a missing class or a stated
 * priority refused, an update keeping what creation set, one global default).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { createNamespace, poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
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
