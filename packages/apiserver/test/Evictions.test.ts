/**
 * The Eviction API as kube-apiserver 1.32 serves it, PodDisruptionBudgets as the disruption
 * controller counts them under the workload simulator, and `kubectl drain` over both: evictions
 * that a budget allows go through, those it does not are refused with 429 until it does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { deployment, poll } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

const { kubectl, server: simulated } = Kubectl.withServer({ server: { controllers: [WorkloadSimulator.make({ delay: "200 millis" })] } })

let plain: Testing.TestServer
beforeAll(async () => {
  plain = await Testing.start()
})
afterAll(async () => {
  await plain?.close()
})

const pods = "/api/v1/namespaces/default/pods"
const budgets = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
const eviction = (name: string, deleteOptions?: Record<string, unknown>) =>
  ({ apiVersion: "policy/v1", kind: "Eviction", metadata: { name }, ...(deleteOptions === undefined ? {} : { deleteOptions }) })

// A pod running and ready on a node no kubelet serves here: nothing but the test changes it.
const runningPod = async (name: string, labels: Record<string, string>) => {
  await plain.request("POST", pods, { body: { metadata: { name, labels }, spec: { nodeName: "node-1", containers: [{ name: "web", image: "nginx" }] } } })
  const current = (await plain.request("GET", `${pods}/${name}`)).json
  const status = { ...current.status, phase: "Running", conditions: [{ type: "Ready", status: "True" }] }
  await plain.request("PUT", `${pods}/${name}/status`, { body: { ...current, status } })
}
const budget = async (name: string, labels: Record<string, string>, status?: Record<string, unknown>) => {
  const created = (await plain.request("POST", budgets, { body: { metadata: { name }, spec: { minAvailable: 1, selector: { matchLabels: labels } } } })).json
  if (status !== undefined) await plain.request("PUT", `${budgets}/${name}/status`, { body: { ...created, status } })
}

describe("pods/eviction", () => {
  it("deletes a pod that is not running at once, whatever its budgets", async () => {
    await plain.request("POST", pods, { body: { metadata: { name: "waiting", labels: { app: "waiting" } }, spec: { containers: [{ name: "web", image: "nginx" }] } } })
    await budget("waiting", { app: "waiting" }, { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 1 })
    const evicted = await plain.request("POST", `${pods}/waiting/eviction`, { body: eviction("waiting") })
    expect([evicted.status, evicted.json]).toEqual([201, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 }])
    expect((await plain.request("GET", `${pods}/waiting`)).status).toBe(404)
    expect((await plain.request("POST", `${pods}/waiting/eviction`, { body: eviction("other") })).status).toBe(400)
  })

  it("refuses a running pod's eviction while its budget is unprocessed or allows none, and takes a disruption when it allows one", async () => {
    await runningPod("guarded", { app: "guarded" })
    await budget("guarded", { app: "guarded" })
    const unprocessed = await plain.request("POST", `${pods}/guarded/eviction`, { body: eviction("guarded") })
    expect([unprocessed.status, unprocessed.json.message, unprocessed.json.details]).toEqual([
      429,
      "Cannot evict pod as it would violate the pod's disruption budget.",
      { causes: [{ reason: "DisruptionBudget", message: "The disruption budget guarded is still being processed by the server." }], retryAfterSeconds: 10 }
    ])
    const current = (await plain.request("GET", `${budgets}/guarded`)).json
    const counted = { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 }
    await plain.request("PUT", `${budgets}/guarded/status`, { body: { ...current, status: counted } })
    const none = await plain.request("POST", `${pods}/guarded/eviction`, { body: eviction("guarded") })
    expect([none.status, none.json.details]).toEqual([429, { causes: [{ reason: "DisruptionBudget", message: "The disruption budget guarded needs 1 healthy pods and has 1 currently" }] }])
    // No room now is no retry soon: no Retry-After, which client-go would take as "retry at once".
    expect([unprocessed.headers.get("retry-after"), none.headers.get("retry-after")]).toEqual(["10", null])

    const allowing = (await plain.request("GET", `${budgets}/guarded`)).json
    await plain.request("PUT", `${budgets}/guarded/status`, {
      body: { ...allowing, status: { ...counted, disruptionsAllowed: 1, currentHealthy: 2, conditions: [{ type: "DisruptionAllowed", status: "True", reason: "SufficientPods", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }] } }
    })
    const evicted = await plain.request("POST", `${pods}/guarded/eviction`, { body: eviction("guarded") })
    expect(evicted.status).toBe(201)
    // Taken from the budget, the pod recorded as disrupted; the pod marked, then deleted gracefully.
    const after = (await plain.request("GET", `${budgets}/guarded`)).json.status
    expect(after.disruptionsAllowed).toBe(0)
    expect(Object.keys(after.disruptedPods)).toEqual(["guarded"])
    expect(after.conditions[0]).toMatchObject({ type: "DisruptionAllowed", status: "False", reason: "InsufficientPods" })
    const pod = (await plain.request("GET", `${pods}/guarded`)).json
    expect(pod.metadata.deletionGracePeriodSeconds).toBe(30)
    expect(pod.status.conditions).toContainEqual(expect.objectContaining({ type: "DisruptionTarget", status: "True", reason: "EvictionByEvictionAPI", message: "Eviction API: evicting" }))
  })

  it("refuses a pod two budgets select", async () => {
    await runningPod("doubly", { app: "doubly" })
    await budget("doubly-a", { app: "doubly" })
    await budget("doubly-b", { app: "doubly" })
    const refused = await plain.request("POST", `${pods}/doubly/eviction`, { body: eviction("doubly") })
    expect([refused.status, refused.json.message]).toEqual([500, "Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."])
  })
})

describe("PodDisruptionBudgets under the simulator, and kubectl drain", () => {
  it("counts a budget from its pods and their Deployment, and drains a node as far as the budget allows", async () => {
    await simulated().request("POST", "/apis/apps/v1/namespaces/default/deployments", { body: deployment("web", 2) })
    await simulated().request("POST", budgets, { body: { metadata: { name: "web" }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: "web" } } } } })
    const counted = await poll(simulated(), `${budgets}/web`, (b) => b.status?.currentHealthy === 2)
    expect(counted.status).toMatchObject({ observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 })
    expect(counted.status.conditions).toEqual([expect.objectContaining({ type: "DisruptionAllowed", status: "True", reason: "SufficientPods", message: "", observedGeneration: 1 })])

    // A second ready node takes the evicted pods' replacements, one at a time as the budget allows.
    const ready = [{ type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" }]
    expect((await simulated().request("POST", "/api/v1/nodes", { body: { metadata: { name: "worker-2" }, status: { conditions: ready } } })).status).toBe(201)
    const drained = await kubectl("drain", "kubefx-node", "--ignore-daemonsets", "--timeout=60s")
    expect(drained.code, drained.stderr).toBe(0)
    expect(drained.stdout).toContain("node/kubefx-node drained")
    const running = await poll(simulated(), `${pods}?labelSelector=app%3Dweb`, (list) =>
      list.items.length === 2 && list.items.every((p: any) => p.status?.phase === "Running" && p.spec.nodeName === "worker-2"))
    expect(running.items).toHaveLength(2)
    expect((await simulated().request("GET", "/api/v1/nodes/kubefx-node")).json.spec.unschedulable).toBe(true)

    // Without evictions kubectl deletes the pods, its DeleteOptions in protobuf.
    expect((await kubectl("uncordon", "kubefx-node")).code).toBe(0)
    const deleting = await kubectl("drain", "worker-2", "--ignore-daemonsets", "--disable-eviction", "--timeout=60s", "-v=8")
    expect(deleting.code, deleting.stderr).toBe(0)
    expect(deleting.stderr).toContain("Content-Type: application/vnd.kubernetes.protobuf")
    await poll(simulated(), `${pods}?labelSelector=app%3Dweb`, (list) =>
      list.items.length === 2 && list.items.every((p: any) => p.status?.phase === "Running" && p.spec.nodeName === "kubefx-node"))
  })
})
