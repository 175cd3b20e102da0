/**
 * Pods spread over zones as kube-scheduler's PodTopologySpread filter spreads them: each goes where
 * its zone stays within `maxSkew` of the emptiest, a node without the zone label never takes one,
 * and a pod no zone can take waits `Unschedulable` with the scheduler's reasons until one can.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TopologySpread from "../src/TopologySpread.ts"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { createNamespace, poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "200 millis" })] })
})
afterAll(async () => {
  await server?.close()
})

const zone = "topology.kubernetes.io/zone"
const spread = (extra: Record<string, unknown> = {}) => ({
  maxSkew: 1,
  topologyKey: zone,
  whenUnsatisfiable: "DoNotSchedule",
  labelSelector: { matchLabels: { app: "web" } },
  ...extra
})
const web = (name: string, constraint: Record<string, unknown> = spread()) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels: { app: "web" } },
  spec: { containers: [{ name: "app", image: "nginx" }], topologySpreadConstraints: [constraint] }
})
const pods = "/api/v1/namespaces/spread/pods"
const merge = { "content-type": "application/merge-patch+json" }
const scheduled = (name: string) => poll(server, `${pods}/${name}`, (p) => p.spec?.nodeName !== undefined).then((p) => p.spec.nodeName)

describe("TopologySpread", () => {
  it("spreads pods over zones within maxSkew, and keeps one waiting while no zone can take it", async () => {
    for (const [name, value] of [["zone-a-1", "a"], ["zone-b-1", "b"]]) {
      const created = await server.request("POST", "/api/v1/nodes", { body: { apiVersion: "v1", kind: "Node", metadata: { name, labels: { [zone]: value } } } })
      expect(created.status).toBe(201)
    }
    await createNamespace(server, "spread")
    // kubefx-node has no zone: the first pod goes to zone a, the second to b, the third to either.
    await server.request("POST", pods, { body: web("web-1") })
    expect(await scheduled("web-1")).toBe("zone-a-1")
    await server.request("POST", pods, { body: web("web-2") })
    expect(await scheduled("web-2")).toBe("zone-b-1")
    // With zone b cordoned, a third may still go to a (skew 1), a fourth nowhere.
    await server.request("PATCH", "/api/v1/nodes/zone-b-1", { body: { spec: { unschedulable: true } }, headers: merge })
    await server.request("POST", pods, { body: web("web-3") })
    expect(await scheduled("web-3")).toBe("zone-a-1")
    await server.request("POST", pods, { body: web("web-4") })
    const waiting = await poll(server, `${pods}/web-4`, (p) => p.status?.conditions?.some((c: any) => c.reason === "Unschedulable"))
    expect(waiting.status.conditions.find((c: any) => c.type === "PodScheduled").message).toBe(
      "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints, " +
        "1 node(s) didn't match pod topology spread constraints (missing required label), 1 node(s) were unschedulable. " +
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    // A pod that asks ScheduleAnyway is not held back: it goes to zone a, past its skew, as scoring
    // rates kubefx-node (no zone to count) lowest for its spread.
    await server.request("POST", pods, { body: web("anyway", spread({ whenUnsatisfiable: "ScheduleAnyway" })) })
    expect(await scheduled("anyway")).toBe("zone-a-1")
    await server.request("PATCH", "/api/v1/nodes/zone-b-1", { body: { spec: { unschedulable: false } }, headers: merge })
    expect(await scheduled("web-4")).toBe("zone-b-1")
  })

  it("counts domains as the constraint says: matchLabelKeys, minDomains, and node affinity unless ignored", () => {
    const node = (name: string, value: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels: { [zone]: value, ...labels } } })
    const [a, b] = [node("a", "a", { disk: "ssd" }), node("b", "b")]
    const pod = (name: string, labels: Record<string, string>, constraint: Record<string, unknown>, nodeSelector?: Record<string, string>) => ({
      metadata: { name, namespace: "default", labels },
      spec: { topologySpreadConstraints: [constraint], ...(nodeSelector ? { nodeSelector } : {}) }
    })
    // A pod of another revision does not count against this one's spread.
    const byRevision = spread({ matchLabelKeys: ["rev"] })
    const old = pod("old", { app: "web", rev: "1" }, byRevision)
    expect(TopologySpread.misfit(pod("new", { app: "web", rev: "2" }, byRevision), a, [a, b], [{ pod: old, node: a }])).toBeUndefined()
    expect(TopologySpread.misfit(pod("same", { app: "web", rev: "1" }, byRevision), a, [a, b], [{ pod: old, node: a }])).toEqual({ _tag: "TopologySpread", missingLabel: false })
    // Fewer domains than minDomains: the emptiest counts as 0, so a second pod in zone a is too many.
    const wide = spread({ minDomains: 3 })
    const first = pod("first", { app: "web" }, wide)
    expect(TopologySpread.misfit(pod("second", { app: "web" }, wide), b, [a, b], [{ pod: first, node: b }])).toEqual({ _tag: "TopologySpread", missingLabel: false })
    expect(TopologySpread.misfit(pod("second", { app: "web" }, spread()), b, [a, b], [{ pod: first, node: a }])).toBeUndefined()
    // Pinned to ssd nodes, the pod counts zone a alone; with the policy Ignore, zone b too.
    const placed = [{ pod: pod("x", { app: "web" }, spread()), node: a }]
    expect(TopologySpread.misfit(pod("y", { app: "web" }, spread(), { disk: "ssd" }), a, [a, b], placed)).toBeUndefined()
    expect(TopologySpread.misfit(pod("y", { app: "web" }, spread({ nodeAffinityPolicy: "Ignore" }), { disk: "ssd" }), a, [a, b], placed))
      .toEqual({ _tag: "TopologySpread", missingLabel: false })
  })
})
