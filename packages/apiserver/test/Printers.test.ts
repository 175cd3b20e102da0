/**
 * The cells of 1.32's printers, computed from objects in the states a cluster shows them.
 */
import { describe, expect, it } from "vitest"
import * as Printers from "../src/Printers.ts"

const cells = (group: string, kind: string, object: Record<string, unknown>) => Printers.lookup(group, kind)!.cells(object)

describe("Printers", () => {
  it("prints a Pod's ready count, the reason of a waiting container over the phase, and restarts", () => {
    const pod = {
      metadata: { name: "p" },
      spec: { containers: [{ name: "a" }, { name: "b" }], nodeName: "node-1" },
      status: {
        phase: "Running",
        podIP: "10.244.0.5",
        containerStatuses: [
          { name: "a", ready: true, restartCount: 2, state: { running: {} } },
          { name: "b", ready: false, restartCount: 5, state: { waiting: { reason: "CrashLoopBackOff" } } }
        ]
      }
    }
    expect(cells("", "Pod", pod).slice(0, 3)).toEqual(["1/2", "CrashLoopBackOff", "7"])
    expect(cells("", "Pod", pod).slice(4, 6)).toEqual(["10.244.0.5", "node-1"])
    expect(cells("", "Pod", { spec: { containers: [{}] }, status: { phase: "Pending" } }).slice(0, 2)).toEqual(["0/1", "Pending"])
  })

  it("prints Service ports with node ports, and EXTERNAL-IP per type", () => {
    const nodePort = { spec: { type: "NodePort", clusterIP: "10.96.3.4", ports: [{ port: 80, protocol: "TCP" }, { port: 443, nodePort: 30443, protocol: "TCP" }] } }
    expect(cells("", "Service", nodePort).slice(0, 4)).toEqual(["NodePort", "10.96.3.4", "<none>", "80/TCP,443:30443/TCP"])
    expect(cells("", "Service", { spec: { type: "LoadBalancer", ports: [] } })[2]).toBe("<pending>")
    expect(cells("", "Service", { spec: { type: "ExternalName", externalName: "db.example.com" } })[2]).toBe("db.example.com")
  })

  it("prints workloads' ready counts and wide columns, bindings' roles and Jobs' status", () => {
    const deployment = {
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] },
        template: { spec: { containers: [{ name: "app", image: "nginx:1.27" }, { name: "log", image: "busybox" }] } }
      },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 }
    }
    const row = cells("apps", "Deployment", deployment)
    expect([row[0], row[1], row[2]]).toEqual(["2/3", 3, 2])
    expect(row.slice(4)).toEqual(["app,log", "nginx:1.27,busybox", "app=web,tier in (a,b)"])
    expect(cells("rbac.authorization.k8s.io", "RoleBinding", { roleRef: { kind: "ClusterRole", name: "view" } })[0]).toBe("ClusterRole/view")
    const complete = { spec: { completions: 1 }, status: { succeeded: 1, conditions: [{ type: "Complete", status: "True" }], startTime: "2024-01-01T00:00:00Z", completionTime: "2024-01-01T00:00:42Z" } }
    expect(cells("batch", "Job", complete).slice(0, 3)).toEqual(["Complete", "1/1", "42s"])
    expect(cells("", "PersistentVolumeClaim", { spec: { storageClassName: "standard" }, status: { phase: "Bound", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] } }).slice(0, 5))
      .toEqual(["Bound", "", "1Gi", "RWO", "standard"])
  })
})
