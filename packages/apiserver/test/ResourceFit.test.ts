/**
 * Room on the node, as kube-scheduler's NodeResourcesFit and NodePorts filters and the kubelet's
 * admission see it: a pod is bound only where its requests (with its sidecars', its init
 * containers' and its overhead) fit beside the other pods' and its host ports are free, and waits
 * `Unschedulable` with kube-scheduler's message until a pod ends or goes; extended resources count
 * as cpu does; a pod bound by name to a node without room is rejected by the kubelet (`OutOfcpu`);
 * `kubectl describe node` adds up what is allocated.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as QuotaUsage from "../src/QuotaUsage.ts"
import * as ResourceFit from "../src/ResourceFit.ts"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { createNamespace, poll } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

let server: Testing.TestServer
let crowded: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({
    controllers: [WorkloadSimulator.make({ delay: "200 millis", nodeCapacity: { cpu: "2", memory: "4Gi", "example.com/gpu": "1" } })]
  })
  crowded = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "200 millis", nodeCapacity: { pods: "2" } })] })
})
afterAll(async () => {
  await server?.close()
  await crowded?.close()
})

const pod = (name: string, resources: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "app", image: "nginx", resources }], ...spec }
})
const cpu = (name: string, amount: string) => pod(name, { requests: { cpu: amount } })

const pods = (namespace: string) => `/api/v1/namespaces/${namespace}/pods`
const running = (server: Testing.TestServer, namespace: string, name: string) =>
  poll(server, `${pods(namespace)}/${name}`, (p) => p.status?.phase === "Running")
const unschedulable = (server: Testing.TestServer, namespace: string, name: string) =>
  poll(server, `${pods(namespace)}/${name}`, (p) =>
    p.status?.conditions?.some((c: any) => c.type === "PodScheduled" && c.reason === "Unschedulable"))
const message = (pod: any) => pod.status.conditions.find((c: any) => c.type === "PodScheduled").message
const noVictims = (reasons: string) =>
  `0/1 nodes are available: ${reasons}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.`

const create = async (server: Testing.TestServer, namespace: string, body: object) => {
  const created = await server.request("POST", pods(namespace), { body })
  expect(created.status, created.text).toBe(201)
}
const remove = async (server: Testing.TestServer, namespace: string, name: string) => {
  expect((await server.request("DELETE", `${pods(namespace)}/${name}`)).status).toBe(200)
  await poll(server, pods(namespace), (list) => !list.items.some((p: any) => p.metadata.name === name))
}

describe("ResourceFit", () => {
  it("binds a pod only while its requests fit, and binds a waiting one once a pod goes or ends", async () => {
    await createNamespace(server, "fit")
    await create(server, "fit", cpu("big", "1500m"))
    await running(server, "fit", "big")
    await create(server, "fit", pod("late", { requests: { cpu: "1", memory: "5Gi" } }))
    expect(message(await unschedulable(server, "fit", "late"))).toBe(noVictims("1 Insufficient cpu, 1 Insufficient memory"))
    const events = await poll(server, "/api/v1/namespaces/fit/events", (list) =>
      list.items.some((e: any) => e.reason === "FailedScheduling" && e.involvedObject.name === "late"))
    expect(events.items.find((e: any) => e.reason === "FailedScheduling").source.component).toBe("default-scheduler")
    // Room for the cpu once "big" is gone; the memory it asks for the node never has.
    await remove(server, "fit", "big")
    expect(message(await poll(server, `${pods("fit")}/late`, (p) => message(p).includes("1 Insufficient memory.")))).toBe(noVictims("1 Insufficient memory"))
    await remove(server, "fit", "late")

    // A pod that ends (its kubelet reports it Succeeded) frees what it asked for.
    await create(server, "fit", cpu("batch", "1500m"))
    await running(server, "fit", "batch")
    await create(server, "fit", cpu("next", "1"))
    expect(message(await unschedulable(server, "fit", "next"))).toBe(noVictims("1 Insufficient cpu"))
    const batch = await server.request("GET", `${pods("fit")}/batch`)
    const ended = await server.request("PUT", `${pods("fit")}/batch/status`, { body: { ...batch.json, status: { ...batch.json.status, phase: "Succeeded" } } })
    expect(ended.status, ended.text).toBe(200)
    expect((await running(server, "fit", "next")).spec.nodeName).toBe("kubefx-node")
    for (const name of ["batch", "next"]) await remove(server, "fit", name)
  })

  it("counts sidecars, init containers and overhead as kube does, and extended resources as cpu", async () => {
    await createNamespace(server, "fit-kinds")
    // Sidecars run beside the containers (600m + 600m), the plain init container alone with the
    // sidecars started before it (1200m + 600m): 1800m, and 300m left of the node's 2.
    await create(server, "fit-kinds", {
      ...cpu("sidecars", "600m"),
      spec: {
        initContainers: [
          { name: "proxy", image: "envoy", restartPolicy: "Always", resources: { requests: { cpu: "600m" } } },
          { name: "migrate", image: "migrate", resources: { requests: { cpu: "1200m" } } }
        ],
        containers: [{ name: "app", image: "nginx", resources: { requests: { cpu: "600m" } } }]
      }
    })
    await running(server, "fit-kinds", "sidecars")
    await create(server, "fit-kinds", cpu("small", "200m"))
    await running(server, "fit-kinds", "small")
    await create(server, "fit-kinds", cpu("too-much", "200m"))
    expect(message(await unschedulable(server, "fit-kinds", "too-much"))).toBe(noVictims("1 Insufficient cpu"))
    // One GPU on the node: a pod asking for two never fits, the one asking for one does.
    const gpus = (name: string, n: string) => pod(name, { requests: { "example.com/gpu": n }, limits: { "example.com/gpu": n } })
    await create(server, "fit-kinds", gpus("two-gpus", "2"))
    expect(message(await unschedulable(server, "fit-kinds", "two-gpus"))).toBe(noVictims("1 Insufficient example.com/gpu"))
    await create(server, "fit-kinds", gpus("one-gpu", "1"))
    await running(server, "fit-kinds", "one-gpu")
    // A pod asking for nothing fits anywhere there is a pod slot.
    await create(server, "fit-kinds", pod("best-effort", {}))
    await running(server, "fit-kinds", "best-effort")

    const { ok } = Kubectl.forServer(() => server)
    const described = await ok("describe", "node", "kubefx-node")
    // 1800m + 200m of 2 cpus requested; the GPU taken.
    expect(described).toMatch(/cpu\s+2 \(100%\)/)
    expect(described).toMatch(/example\.com\/gpu\s+1\s+1/)
    expect(await ok("get", "node", "kubefx-node", "-o", "jsonpath={.status.allocatable.example\\.com/gpu} {.status.allocatable.cpu}")).toBe("1 2")
    for (const name of ["sidecars", "small", "too-much", "two-gpus", "one-gpu", "best-effort"]) await remove(server, "fit-kinds", name)
  })

  it("keeps a pod off a node whose host port another pod holds", async () => {
    await createNamespace(server, "fit-ports")
    const listener = (name: string, hostIP?: string) =>
      pod(name, {}, { containers: [{ name: "app", image: "nginx", ports: [{ containerPort: 80, hostPort: 8080, ...(hostIP ? { hostIP } : {}) }] }] })
    await create(server, "fit-ports", listener("first"))
    await running(server, "fit-ports", "first")
    await create(server, "fit-ports", listener("second", "10.0.0.1"))
    expect(message(await unschedulable(server, "fit-ports", "second"))).toBe(noVictims("1 node(s) didn't have free ports for the requested pod ports"))
    await remove(server, "fit-ports", "first")
    await running(server, "fit-ports", "second")
    await remove(server, "fit-ports", "second")
  })

  it("has the kubelet reject a pod bound by name to a node without room for it", async () => {
    await createNamespace(server, "fit-kubelet")
    await create(server, "fit-kubelet", { ...cpu("pinned", "3"), spec: { ...cpu("pinned", "3").spec, nodeName: "kubefx-node" } })
    const rejected = await poll(server, `${pods("fit-kubelet")}/pinned`, (p) => p.status?.phase === "Failed")
    expect(rejected.status.reason).toBe("OutOfcpu")
    expect(rejected.status.message).toMatch(/^Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: \d+, capacity: 2000$/)
    const events = await poll(server, "/api/v1/namespaces/fit-kubelet/events", (list) => list.items.some((e: any) => e.reason === "OutOfcpu"))
    expect(events.items.find((e: any) => e.reason === "OutOfcpu").source.component).toBe("kubelet")
    // Bound by name where it fits, it runs.
    await create(server, "fit-kubelet", { ...cpu("fits", "10m"), spec: { ...cpu("fits", "10m").spec, nodeName: "kubefx-node" } })
    await running(server, "fit-kubelet", "fits")
  })

  it("binds no more pods than the node's pod count", async () => {
    await createNamespace(crowded, "crowded")
    for (const name of ["a", "b"]) await create(crowded, "crowded", pod(name, {}))
    for (const name of ["a", "b"]) await running(crowded, "crowded", name)
    await create(crowded, "crowded", pod("c", {}))
    expect(message(await unschedulable(crowded, "crowded", "c"))).toBe(noVictims("1 Too many pods"))
    await remove(crowded, "crowded", "a")
    await running(crowded, "crowded", "c")
  })

  it("adds up a pod's requests as kube's PodRequests does", () => {
    const requests = (spec: Record<string, unknown>) => Object.fromEntries(QuotaUsage.podResources(spec, "requests"))
    const container = (cpu: string, extra: object = {}) => ({ name: cpu, resources: { requests: { cpu } }, ...extra })
    expect(requests({ containers: [container("100m"), container("200m")] })).toEqual({ cpu: "300m" })
    // A plain init container larger than the containers sets the request.
    expect(requests({ initContainers: [container("1")], containers: [container("100m")] })).toEqual({ cpu: "1" })
    // A sidecar adds to the containers, and runs beside every init container after it.
    expect(requests({
      initContainers: [container("500m", { restartPolicy: "Always" }), container("1")],
      containers: [container("100m")]
    })).toEqual({ cpu: "1500m" })
    expect(requests({ initContainers: [container("500m", { restartPolicy: "Always" })], containers: [container("100m")], overhead: { cpu: "50m" } }))
      .toEqual({ cpu: "650m" })
    const node = { status: { allocatable: { cpu: "1", pods: "10" } } }
    const asking = (cpu: string) => ({ spec: { containers: [container(cpu)] } })
    expect(ResourceFit.shortfalls(asking("600m"), node, [asking("500m")]).map(ResourceFit.reason)).toEqual(["Insufficient cpu"])
    expect(ResourceFit.shortfalls(asking("500m"), node, [asking("500m")])).toEqual([])
    // A node registered by hand, with no allocatable, is not limited.
    expect(ResourceFit.shortfalls(asking("64"), { status: {} }, [])).toEqual([])
    const port = (hostIP?: string, protocol?: string) => ({ spec: { containers: [{ name: "c", ports: [{ containerPort: 53, hostPort: 53, hostIP, protocol }] }] } })
    expect(ResourceFit.portsTaken(port("10.0.0.1"), [port("10.0.0.2")])).toBe(false)
    expect(ResourceFit.portsTaken(port("10.0.0.1", "UDP"), [port()])).toBe(false)
    expect(ResourceFit.portsTaken(port("10.0.0.1"), [port()])).toBe(true)
  })
})
