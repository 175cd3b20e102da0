/**
 * DaemonSets under the workload simulator: their generation observed and their pods desired on the
 * nodes they would run on (a node selector's, tolerating taints), none scheduled.
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

  it("are observed by the simulator, none of their pods scheduled, the nodes counted", async () => {
    const path = "/apis/apps/v1/namespaces/default/daemonsets"
    expect((await server.request("POST", path, { body: daemonSet("logs") })).status).toBe(201)
    const until = (check: (ds: any) => boolean) => poll(server, `${path}/logs`, check)
    const empty = await until((ds) => ds.status?.observedGeneration === 1)
    expect(empty.status).toEqual({ currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, observedGeneration: 1 })
    expect((await server.request("POST", "/api/v1/nodes", { body: { metadata: { name: "worker-1" } } })).status).toBe(201)
    const counted = await until((ds) => ds.status?.desiredNumberScheduled === 1)
    expect(counted.status).toMatchObject({ currentNumberScheduled: 0, numberReady: 0, numberUnavailable: 1 })
  })
})
