/**
 * ResourceQuotas as a 1.32 cluster keeps and enforces them, through the real kubectl and raw
 * requests: status `hard` and `used`, creations refused when they would exceed a limit or do not
 * state the cpu and memory a quota tracks, ended and deleted objects no longer counted, scopes.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { createNamespace } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

const { kubectl, ok, server } = Kubectl.withServer({ namespace: null })

const settled = () => Effect.runPromise(server().settled)

const quota = (namespace: string, name: string, spec: Record<string, unknown>) =>
  server().request("POST", `/api/v1/namespaces/${namespace}/resourcequotas`, { body: { metadata: { name }, spec } })

const pod = (name: string, resources: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { containers: [{ name: "app", image: "nginx", resources }], ...spec }
})

const createPod = (namespace: string, body: unknown) => server().request("POST", `/api/v1/namespaces/${namespace}/pods`, { body })

const usedOf = async (namespace: string, name: string) => {
  await settled()
  return (await server().request("GET", `/api/v1/namespaces/${namespace}/resourcequotas/${name}`)).json.status
}

describe("ResourceQuota", () => {
  it("keeps hard and used in status, as kubectl describe shows them, and refuses what would exceed it", async () => {
    await createNamespace(server(), "limited")
    expect((await quota("limited", "compute", { hard: { pods: "2", "requests.cpu": "1", "limits.memory": "1Gi", "count/configmaps": "1" } })).status).toBe(201)
    expect(await usedOf("limited", "compute")).toEqual({
      hard: { pods: "2", "requests.cpu": "1", "limits.memory": "1Gi", "count/configmaps": "1" },
      used: { "count/configmaps": "0", "limits.memory": "0", pods: "0", "requests.cpu": "0" }
    })
    // cpu and memory a quota tracks must be stated by every container.
    const unstated = await kubectl("-n", "limited", "run", "bare", "--image=nginx")
    expect(unstated.stderr.trim()).toBe(
      `Error from server (Forbidden): pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: bare; requests.cpu for: bare`
    )
    expect((await createPod("limited", pod("a", { requests: { cpu: "600m" }, limits: { memory: "512Mi" } }))).status).toBe(201)
    const over = await createPod("limited", pod("b", { requests: { cpu: "0.5" }, limits: { memory: "256Mi" } }))
    expect(over.status).toBe(403)
    expect(over.json.message).toBe(
      `pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1`
    )
    expect((await usedOf("limited", "compute")).used).toEqual({ "count/configmaps": "0", "limits.memory": "512Mi", pods: "1", "requests.cpu": "600m" })
    const described = await ok("-n", "limited", "describe", "quota", "compute")
    expect(described).toMatch(/requests\.cpu\s+600m\s+1\n/)
    expect(described).toMatch(/limits\.memory\s+512Mi\s+1Gi\n/)
    // Object counts: any kind, by its count/ name.
    await ok("-n", "limited", "create", "configmap", "one")
    const second = await kubectl("-n", "limited", "create", "configmap", "two")
    expect(second.stderr).toContain(
      `configmaps "two" is forbidden: exceeded quota: compute, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`
    )
  })

  it("stops counting a pod that has ended or is deleted", async () => {
    await createNamespace(server(), "churn")
    await quota("churn", "pods", { hard: { pods: "1" } })
    expect((await createPod("churn", pod("first"))).status).toBe(201)
    expect((await createPod("churn", pod("second"))).status).toBe(403)
    const ended = await server().request("PATCH", "/api/v1/namespaces/churn/pods/first/status", {
      body: { status: { phase: "Succeeded" } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(ended.status).toBe(200)
    expect((await usedOf("churn", "pods")).used).toEqual({ pods: "0" })
    expect((await createPod("churn", pod("second"))).status).toBe(201)
    await ok("-n", "churn", "delete", "pod", "second")
    expect((await usedOf("churn", "pods")).used).toEqual({ pods: "0" })
  })

  it("counts under scopes only the pods they select", async () => {
    await createNamespace(server(), "scoped")
    await quota("scoped", "best-effort", { hard: { pods: "1" }, scopes: ["BestEffort"] })
    expect((await createPod("scoped", pod("free"))).status).toBe(201)
    expect((await createPod("scoped", pod("free-2"))).json.message).toContain("exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1")
    // A pod stating resources is not BestEffort: the quota does not count it.
    expect((await createPod("scoped", pod("sized", { requests: { cpu: "100m" } }))).status).toBe(201)
    expect((await usedOf("scoped", "best-effort")).used).toEqual({ pods: "1" })
  })
})
