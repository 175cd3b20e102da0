/**
 * Nodes failing as kube-controller-manager sees them: a node's conditions and cordon become its
 * taints (and go again), a pod that does not tolerate a NoExecute taint is evicted at once, one
 * that tolerates it for `tolerationSeconds` is evicted after them, one that tolerates it for ever
 * stays; the pods of a node that is not ready are not ready, and one evicted from it stays
 * Terminating until its kubelet is back, or until the node is declared out of service.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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

const merge = { "content-type": "application/merge-patch+json" }
const nodes = "/api/v1/nodes"
const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z")
const readiness = (status: "True" | "False" | "Unknown", extra: ReadonlyArray<object> = []) => ({
  status: { conditions: [{ type: "Ready", status, reason: status === "True" ? "KubeletReady" : "KubeletNotReady", lastHeartbeatTime: now(), lastTransitionTime: now() }, ...extra] }
})
const register = async (name: string) => {
  const created = await server.request("POST", nodes, { body: { apiVersion: "v1", kind: "Node", metadata: { name }, ...readiness("True") } })
  expect(created.status, created.text).toBe(201)
}
const setStatus = async (name: string, body: object) => {
  const patched = await server.request("PATCH", `${nodes}/${name}/status`, { body, headers: merge })
  expect(patched.status, patched.text).toBe(200)
}
const taintsOf = async (name: string) =>
  ((await server.request("GET", `${nodes}/${name}`)).json.spec.taints ?? []).map((t: any) => `${t.key}=${t.value ?? ""}:${t.effect}${t.timeAdded ? "@" : ""}`)
const settledTaints = (name: string, expected: ReadonlyArray<string>) =>
  poll(server, `${nodes}/${name}`, (node) =>
    JSON.stringify((node.spec.taints ?? []).map((t: any) => `${t.key}=${t.value ?? ""}:${t.effect}${t.timeAdded ? "@" : ""}`)) === JSON.stringify(expected))

const pods = (namespace: string) => `/api/v1/namespaces/${namespace}/pods`
const pinned = (name: string, node: string, tolerations: ReadonlyArray<object> = []) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { nodeName: node, containers: [{ name: "app", image: "nginx" }], tolerations }
})
const marked = (namespace: string, name: string) =>
  poll(server, `${pods(namespace)}/${name}`, (p) => p.metadata?.deletionTimestamp !== undefined || p.status?.conditions?.some((c: any) => c.type === "DisruptionTarget"))

describe("NodeLifecycle", () => {
  it("taints a node as its conditions and cordon say, keeps other taints, and takes its own off again", async () => {
    await register("worker-taints")
    const patched = await server.request("PATCH", `${nodes}/worker-taints`, { body: { spec: { taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }] } }, headers: merge })
    expect(patched.status).toBe(200)
    await setStatus("worker-taints", readiness("False"))
    await settledTaints("worker-taints", ["dedicated=db:NoSchedule", "node.kubernetes.io/not-ready=:NoSchedule", "node.kubernetes.io/not-ready=:NoExecute@"])
    await setStatus("worker-taints", readiness("Unknown"))
    await settledTaints("worker-taints", ["dedicated=db:NoSchedule", "node.kubernetes.io/unreachable=:NoSchedule", "node.kubernetes.io/unreachable=:NoExecute@"])
    await setStatus("worker-taints", readiness("True", [{ type: "MemoryPressure", status: "True" }]))
    await settledTaints("worker-taints", ["dedicated=db:NoSchedule", "node.kubernetes.io/memory-pressure=:NoSchedule"])
    await server.request("PATCH", `${nodes}/worker-taints`, { body: { spec: { unschedulable: true } }, headers: merge })
    await setStatus("worker-taints", readiness("True"))
    await settledTaints("worker-taints", ["dedicated=db:NoSchedule", "node.kubernetes.io/unschedulable=:NoSchedule"])
    await server.request("PATCH", `${nodes}/worker-taints`, { body: { spec: { unschedulable: false } }, headers: merge })
    await settledTaints("worker-taints", ["dedicated=db:NoSchedule"])
    expect(await taintsOf("worker-taints")).toEqual(["dedicated=db:NoSchedule"])
  })

  it("evicts a pod that does not tolerate a NoExecute taint at once, one that tolerates it after its tolerationSeconds, and leaves one that tolerates it for ever", async () => {
    await createNamespace(server, "evictions")
    await register("worker-evict")
    const dedicated = (seconds?: number) => ({ key: "dedicated", operator: "Exists", effect: "NoExecute", ...(seconds === undefined ? {} : { tolerationSeconds: seconds }) })
    for (const body of [pinned("intolerant", "worker-evict"), pinned("patient", "worker-evict", [dedicated(2)]), pinned("steadfast", "worker-evict", [dedicated()])]) {
      expect((await server.request("POST", pods("evictions"), { body })).status).toBe(201)
    }
    for (const name of ["intolerant", "patient", "steadfast"]) await poll(server, `${pods("evictions")}/${name}`, (p) => p.status?.phase === "Running")
    await server.request("PATCH", `${nodes}/worker-evict`, { body: { spec: { taints: [{ key: "dedicated", value: "db", effect: "NoExecute" }] } }, headers: merge })
    const intolerant = await marked("evictions", "intolerant")
    expect(intolerant.status.conditions.find((c: any) => c.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "DeletionByTaintManager",
      message: "Taint manager: deleting due to NoExecute taint"
    })
    // Two seconds to go for "patient" when "intolerant" went.
    expect((await server.request("GET", `${pods("evictions")}/patient`)).json.metadata.deletionTimestamp).toBeUndefined()
    const events = await poll(server, "/api/v1/namespaces/evictions/events", (list) => list.items.some((e: any) => e.reason === "TaintManagerEviction"))
    expect(events.items.find((e: any) => e.reason === "TaintManagerEviction")).toMatchObject({
      involvedObject: { name: "intolerant" },
      message: "Marking for deletion Pod evictions/intolerant",
      source: { component: "taint-eviction-controller" }
    })
    await poll(server, pods("evictions"), (list) => !list.items.some((p: any) => p.metadata.name === "intolerant"))
    await marked("evictions", "patient")
    await poll(server, pods("evictions"), (list) => !list.items.some((p: any) => p.metadata.name === "patient"))
    const steadfast = (await server.request("GET", `${pods("evictions")}/steadfast`)).json
    expect([steadfast.status.phase, steadfast.metadata.deletionTimestamp]).toEqual(["Running", undefined])
  })

  it("evicts the pods of a node that is not ready once their tolerance is up, and they stay Terminating until its kubelet is back", async () => {
    await createNamespace(server, "node-down")
    await register("worker-down")
    const notReady = { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 1 }
    const forEver = { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" }
    expect((await server.request("POST", pods("node-down"), { body: pinned("db-0", "worker-down", [notReady]) })).status).toBe(201)
    expect((await server.request("POST", pods("node-down"), { body: pinned("agent", "worker-down", [forEver]) })).status).toBe(201)
    for (const name of ["db-0", "agent"]) await poll(server, `${pods("node-down")}/${name}`, (p) => p.status?.phase === "Running")
    await setStatus("worker-down", readiness("False"))
    // Its pods are not ready from then on, as the node lifecycle controller marks them.
    const readyOf = (p: any) => p.status?.conditions?.find((c: any) => c.type === "Ready")?.status
    await poll(server, `${pods("node-down")}/agent`, (p) => readyOf(p) === "False")
    const told = await poll(server, "/api/v1/namespaces/node-down/events", (list) => list.items.some((e: any) => e.reason === "NodeNotReady"))
    expect(told.items.find((e: any) => e.reason === "NodeNotReady")).toMatchObject({ type: "Warning", message: "Node is not ready", source: { component: "node-controller" } })
    // Evicted once its second of tolerance is up: marked, then deleted.
    const evicted = await poll(server, `${pods("node-down")}/db-0`, (p) => p.metadata.deletionTimestamp !== undefined)
    expect(evicted.status.conditions.find((c: any) => c.type === "DisruptionTarget")?.reason).toBe("DeletionByTaintManager")
    // No kubelet to finish it: still there, Terminating, a while later.
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect((await server.request("GET", `${pods("node-down")}/db-0`)).status).toBe(200)
    await setStatus("worker-down", readiness("True"))
    await poll(server, pods("node-down"), (list) => list.items.length === 1)
    // The one that tolerates it for ever stayed, and is ready again with its kubelet back.
    const agent = await poll(server, `${pods("node-down")}/agent`, (p) => readyOf(p) === "True")
    expect([agent.status.phase, agent.metadata.deletionTimestamp]).toEqual(["Running", undefined])
    await settledTaints("worker-down", [])
  })

  it("deletes the pods left Terminating on a node that is not ready once it is declared out of service", async () => {
    await createNamespace(server, "out-of-service")
    await register("worker-gone")
    expect((await server.request("POST", pods("out-of-service"), { body: pinned("db-1", "worker-gone") })).status).toBe(201)
    await poll(server, `${pods("out-of-service")}/db-1`, (p) => p.status?.phase === "Running")
    await setStatus("worker-gone", readiness("Unknown"))
    await settledTaints("worker-gone", ["node.kubernetes.io/unreachable=:NoSchedule", "node.kubernetes.io/unreachable=:NoExecute@"])
    // Deleted (as a StatefulSet's scale-down or a drain would), it stays Terminating: no kubelet.
    expect((await server.request("DELETE", `${pods("out-of-service")}/db-1`)).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect((await server.request("GET", `${pods("out-of-service")}/db-1`)).json.metadata.deletionTimestamp).toBeDefined()
    const taints = (await server.request("GET", `${nodes}/worker-gone`)).json.spec.taints
    const declared = await server.request("PATCH", `${nodes}/worker-gone`, {
      body: { spec: { taints: [...taints, { key: "node.kubernetes.io/out-of-service", value: "nodeshutdown", effect: "NoExecute" }] } },
      headers: merge
    })
    expect(declared.status).toBe(200)
    await poll(server, pods("out-of-service"), (list) => list.items.length === 0)
  })
})
