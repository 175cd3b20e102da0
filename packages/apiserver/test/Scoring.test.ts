/**
 * Of the nodes that can run a pod, the one kube-scheduler's scoring prefers: a Deployment's
 * replicas spread over nodes by the default spreading, a preferred node affinity followed, a
 * preferred pod anti-affinity kept, a `PreferNoSchedule` taint avoided.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Scoring from "../src/Scoring.ts"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { createNamespace, poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  // kubefx-node has four times the room of the two nodes registered beside it, as their kubelets
  // register them: the least allocated node is always kubefx-node, and only the default spreading
  // takes a Deployment's replicas elsewhere.
  server = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "100 millis", nodeCapacity: { cpu: "16", memory: "32Gi" } })] })
  for (const [name, labels] of [["node-b", {}], ["node-c", { disk: "ssd" }]] as const) {
    const created = await server.request("POST", "/api/v1/nodes", {
      body: {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels } },
        status: { allocatable: { cpu: "4", memory: "8Gi", pods: "110" }, capacity: { cpu: "4", memory: "8Gi", pods: "110" } }
      }
    })
    expect(created.status, created.text).toBe(201)
  }
  await createNamespace(server, "scores")
})
afterAll(async () => {
  await server?.close()
})

const pods = "/api/v1/namespaces/scores/pods"
const pod = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels },
  spec: { containers: [{ name: "app", image: "nginx" }], ...spec }
})
const placedOn = async (name: string) => (await poll(server, `${pods}/${name}`, (p) => p.spec?.nodeName !== undefined)).spec.nodeName as string

describe("Scoring", () => {
  it("spreads a Deployment's replicas over the nodes, as the default spreading scores them", async () => {
    const deployments = "/apis/apps/v1/namespaces/scores/deployments"
    const created = await server.request("POST", deployments, {
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
        }
      }
    })
    expect(created.status).toBe(201)
    const listed = await poll(server, `${pods}?labelSelector=app%3Dweb`, (list) => list.items.length === 3 && list.items.every((p: any) => p.spec.nodeName !== undefined))
    expect(listed.items.map((p: any) => p.spec.nodeName).sort()).toEqual(["kubefx-node", "node-b", "node-c"])
    expect((await server.request("DELETE", `${deployments}/web`)).status).toBe(200)
    await poll(server, `${pods}?labelSelector=app%3Dweb`, (list) => list.items.length === 0)
  })

  it("follows a preferred node affinity and keeps off a PreferNoSchedule taint it does not tolerate", async () => {
    const ssd = { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, preference: { matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] } }] } }
    await server.request("POST", pods, { body: pod("fast", { affinity: ssd }) })
    expect(await placedOn("fast")).toBe("node-c")
    // kubefx-node and node-c are tainted PreferNoSchedule: a pod with no preference goes to node-b.
    const merge = { "content-type": "application/merge-patch+json" }
    for (const node of ["kubefx-node", "node-c"]) {
      const tainted = await server.request("PATCH", `/api/v1/nodes/${node}`, { body: { spec: { taints: [{ key: "spare", value: "yes", effect: "PreferNoSchedule" }] } }, headers: merge })
      expect(tainted.status, tainted.text).toBe(200)
    }
    await server.request("POST", pods, { body: pod("plain") })
    expect(await placedOn("plain")).toBe("node-b")
    for (const node of ["kubefx-node", "node-c"]) await server.request("PATCH", `/api/v1/nodes/${node}`, { body: { spec: { taints: null } }, headers: merge })
  })

  it("keeps a pod away from the node of a pod its preferred anti-affinity names", () => {
    const node = (name: string) => ({ metadata: { name, labels: { "kubernetes.io/hostname": name } }, status: { allocatable: { cpu: "4", memory: "8Gi" } } })
    const nodes = [node("a"), node("b")]
    const db = (name: string) => ({
      metadata: { name, namespace: "default", labels: { app: "db" } },
      spec: {
        containers: [{ name: "db" }],
        affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: "db" } }, topologyKey: "kubernetes.io/hostname" } }] } }
      }
    })
    const candidates = { pod: db("db-1"), feasible: nodes, nodes, placed: [{ pod: db("db-0"), node: nodes[0]! }], namespaceLabels: () => ({}) }
    const [onA, onB] = Scoring.scores(candidates)
    expect(onB! - onA!).toBeGreaterThanOrEqual(2 * 100)
    expect(Scoring.best(candidates)).toBe(nodes[1])
  })
})
