/**
 * DaemonSets under the workload simulator: a pod on each node they should run on (a node
 * selector's, tolerating taints), the simulator's own node among them, rolled out to a new template.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as DaemonSets from "../src/DaemonSets.ts"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "100 millis" })] })
})
afterAll(async () => {
  await server?.close()
})

const daemonSet = (name: string, podSpec: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "agent", image: "fluent-bit" }], ...podSpec } }
  }
})

describe("DaemonSets", () => {
  it("desire a pod on each node the selector picks whose taints they tolerate", () => {
    const nodes = [
      { metadata: { name: "ssd", labels: { disk: "ssd" } } },
      { metadata: { name: "gpu", labels: { disk: "ssd" } }, spec: { taints: [{ key: "gpu", value: "yes", effect: "NoSchedule" }] } },
      { metadata: { name: "cordoned", labels: { disk: "ssd" } }, spec: { unschedulable: true, taints: [{ key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" }] } },
      { metadata: { name: "hdd", labels: { disk: "hdd" } }, spec: { taints: [{ key: "soft", effect: "PreferNoSchedule" }] } }
    ]
    const names = (podSpec: Record<string, unknown>) => DaemonSets.eligible(daemonSet("x", podSpec), nodes).map((n) => (n.metadata as { name: string }).name)
    expect(names({})).toEqual(["ssd", "cordoned", "hdd"])
    expect(names({ nodeSelector: { disk: "ssd" } })).toEqual(["ssd", "cordoned"])
    expect(names({ nodeSelector: { disk: "ssd" }, tolerations: [{ key: "gpu", operator: "Equal", value: "yes", effect: "NoSchedule" }] })).toEqual(["ssd", "gpu", "cordoned"])
    expect(names({ tolerations: [{ operator: "Exists" }] })).toEqual(["ssd", "gpu", "cordoned", "hdd"])
  })

  it("run a pod on the simulator's node and on every other node, and roll a new template out", async () => {
    const node = (await server.request("GET", "/api/v1/nodes/kubefx-node")).json
    expect(node.metadata.labels).toMatchObject({ "kubernetes.io/hostname": "kubefx-node", "kubernetes.io/os": "linux" })
    expect(node.status.conditions.find((c: any) => c.type === "Ready")).toMatchObject({ status: "True", reason: "KubeletReady" })
    const path = "/apis/apps/v1/namespaces/default/daemonsets"
    const created = await server.request("POST", path, { body: daemonSet("logs") })
    expect(created.status).toBe(201)
    expect(created.json.metadata.annotations).toEqual({ "deprecated.daemonset.template.generation": "1" })
    const until = (check: (ds: any) => boolean) => poll(server, `${path}/logs`, check)
    const running = await until((ds) => ds.status?.numberAvailable === 1)
    expect(running.status).toEqual({
      currentNumberScheduled: 1,
      numberMisscheduled: 0,
      desiredNumberScheduled: 1,
      numberReady: 1,
      observedGeneration: 1,
      updatedNumberScheduled: 1,
      numberAvailable: 1
    })
    const podsOf = async () => ((await server.request("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dlogs")).json.items as Array<any>)
    const [pod] = await podsOf()
    expect(pod.metadata.name).toMatch(/^logs-[a-z0-9]{5}$/)
    expect(pod.metadata.labels).toMatchObject({ app: "logs", "pod-template-generation": "1" })
    expect(DaemonSets.nodeOf(pod)).toBe("kubefx-node")
    expect(pod.spec.tolerations).toContainEqual({ key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" })
    // Another node: another pod.
    expect((await server.request("POST", "/api/v1/nodes", { body: { metadata: { name: "worker-1" } } })).status).toBe(201)
    await until((ds) => ds.status?.desiredNumberScheduled === 2 && ds.status?.currentNumberScheduled === 2)
    expect((await podsOf()).map((p) => DaemonSets.nodeOf(p)).sort()).toEqual(["kubefx-node", "worker-1"])
    // A new image: every pod replaced, the template generation one more.
    const patched = await server.request("PATCH", `${path}/logs`, {
      body: { spec: { template: { spec: { containers: [{ name: "agent", image: "fluent-bit:3" }] } } } },
      headers: { "content-type": "application/strategic-merge-patch+json" }
    })
    expect(patched.json.metadata.annotations["deprecated.daemonset.template.generation"]).toBe("2")
    await until((ds) => ds.status?.observedGeneration === 2 && ds.status?.updatedNumberScheduled === 2 && ds.status?.numberAvailable === 2)
    const rolled = await podsOf()
    expect(rolled).toHaveLength(2)
    expect(rolled.map((p) => p.spec.containers[0].image)).toEqual(["fluent-bit:3", "fluent-bit:3"])
    expect(rolled.map((p) => p.metadata.labels["pod-template-generation"])).toEqual(["2", "2"])
    // Each template a ControllerRevision (kubectl rollout history), the newest the current one.
    const revisions = async () =>
      ((await server.request("GET", "/apis/apps/v1/namespaces/default/controllerrevisions")).json.items as Array<any>)
        .filter((r) => r.metadata.ownerReferences?.[0]?.name === "logs")
        .map((r) => [r.metadata.name, r.revision, r.metadata.labels["controller-revision-hash"]])
        .sort((a, b) => a[1] - b[1])
    const [first, second] = await revisions()
    expect(first![0]).toBe(`logs-${pod.metadata.labels["controller-revision-hash"]}`)
    expect([second![0], second![1], second![2]]).toEqual([`logs-${rolled[0].metadata.labels["controller-revision-hash"]}`, 2, rolled[0].metadata.labels["controller-revision-hash"]])
  })
})
