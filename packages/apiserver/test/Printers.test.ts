/**
 * The cells of 1.32's printers, computed from objects in the states a cluster shows them.
 */
import { describe, expect, it } from "vitest"
import * as HorizontalPodAutoscalers from "../src/HorizontalPodAutoscalers.ts"
import * as PrinterFormats from "../src/PrinterFormats.ts"
import * as Printers from "../src/Printers.ts"

type Obj = Record<string, unknown>

/** The cells by column name, for one object of `group/kind`. */
const row = (group: string, kind: string, object: Obj): Record<string, unknown> => {
  const printer = Printers.lookup(group, kind)!
  const cells = printer.cells({ metadata: { name: "x", creationTimestamp: "2020-01-01T00:00:00Z" }, ...object })
  return Object.fromEntries(printer.columns.map((c, i) => [c.name, cells[i]]))
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString()

const running = (name: string, restartCount = 0) => ({ name, ready: true, restartCount, state: { running: {} } })

describe("Pod STATUS, READY and RESTARTS", () => {
  const spec = { containers: [{ name: "a" }, { name: "b" }] }

  it("takes the first waiting or terminated container's reason over the phase, and counts ready running containers", () => {
    const pod = row("", "Pod", {
      spec,
      status: {
        phase: "Running",
        containerStatuses: [
          { name: "a", ready: false, restartCount: 1, state: { terminated: { exitCode: 137, reason: "OOMKilled" } } },
          { name: "b", ready: false, restartCount: 5, state: { waiting: { reason: "CrashLoopBackOff" } } }
        ]
      }
    })
    expect([pod.Ready, pod.Status, pod.Restarts]).toEqual(["0/2", "OOMKilled", "6"])
    const oneReady = row("", "Pod", { spec, status: { phase: "Running", containerStatuses: [running("a"), { name: "b", ready: false, restartCount: 0, state: { waiting: { reason: "ImagePullBackOff" } } }] } })
    expect([oneReady.Ready, oneReady.Status]).toEqual(["1/2", "ImagePullBackOff"])
  })

  it("names a terminated container without reason by its signal or exit code", () => {
    const signal = row("", "Pod", { spec: { containers: [{ name: "a" }] }, status: { phase: "Failed", containerStatuses: [{ name: "a", state: { terminated: { exitCode: 0, signal: 9 } } }] } })
    expect(signal.Status).toBe("Signal:9")
    const code = row("", "Pod", { spec: { containers: [{ name: "a" }] }, status: { phase: "Failed", containerStatuses: [{ name: "a", state: { terminated: { exitCode: 2 } } }] } })
    expect(code.Status).toBe("ExitCode:2")
  })

  it("reports init containers: Init:N/M while pending, Init:<reason> when one fails, and sidecars count as containers", () => {
    const initSpec = { initContainers: [{ name: "migrate" }, { name: "seed" }], containers: [{ name: "app" }] }
    const waiting = row("", "Pod", {
      spec: initSpec,
      status: { phase: "Pending", initContainerStatuses: [{ name: "migrate", state: { terminated: { exitCode: 0, reason: "Completed" } } }, { name: "seed", state: { running: {} } }] }
    })
    expect([waiting.Ready, waiting.Status]).toEqual(["0/1", "Init:1/2"])
    const failing = row("", "Pod", {
      spec: initSpec,
      status: { phase: "Pending", initContainerStatuses: [{ name: "migrate", restartCount: 2, state: { waiting: { reason: "CrashLoopBackOff" } } }] }
    })
    expect([failing.Status, failing.Restarts]).toEqual(["Init:CrashLoopBackOff", "2"])
    const sidecar = row("", "Pod", {
      spec: { initContainers: [{ name: "proxy", restartPolicy: "Always" }], containers: [{ name: "app" }] },
      status: {
        phase: "Running",
        conditions: [{ type: "Initialized", status: "True" }],
        initContainerStatuses: [{ name: "proxy", started: true, ready: true, state: { running: {} } }],
        containerStatuses: [running("app")]
      }
    })
    expect([sidecar.Ready, sidecar.Status]).toEqual(["2/2", "Running"])
  })

  it("shows Completed pods with a running container as Running or NotReady, deleting ones as Terminating", () => {
    const mixed = {
      spec,
      status: { phase: "Running", containerStatuses: [running("a"), { name: "b", state: { terminated: { exitCode: 0, reason: "Completed" } } }] }
    }
    expect(row("", "Pod", mixed).Status).toBe("NotReady")
    expect(row("", "Pod", { ...mixed, status: { ...mixed.status, conditions: [{ type: "Ready", status: "True" }] } }).Status).toBe("Running")
    const deleting = row("", "Pod", { metadata: { name: "x", deletionTimestamp: ago(0) }, spec, status: { phase: "Running" } })
    expect(deleting.Status).toBe("Terminating")
    const gated = row("", "Pod", { spec, status: { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "SchedulingGated" }] } })
    expect(gated.Status).toBe("SchedulingGated")
  })

  it("adds the time since the last restart to RESTARTS, and reads IP from podIPs", () => {
    const pod = row("", "Pod", {
      spec: { containers: [{ name: "a" }], readinessGates: [{ conditionType: "example.com/lb" }] },
      status: {
        phase: "Running",
        podIPs: [{ ip: "fd00::5" }, { ip: "10.0.0.5" }],
        conditions: [{ type: "example.com/lb", status: "True" }],
        containerStatuses: [{ ...running("a", 4), lastState: { terminated: { exitCode: 1, finishedAt: ago(125_000) } } }]
      }
    })
    expect(pod.Restarts).toBe("4 (2m5s ago)")
    expect([pod.IP, pod.Node, pod["Nominated Node"], pod["Readiness Gates"]]).toEqual(["fd00::5", "<none>", "<none>", "1/1"])
  })
})

describe("Service cells", () => {
  it("prints ports with node ports and protocols, and EXTERNAL-IP per type", () => {
    const nodePort = row("", "Service", { spec: { type: "NodePort", clusterIPs: ["10.96.3.4"], ports: [{ port: 53, protocol: "UDP" }, { port: 443, nodePort: 30443, protocol: "TCP" }] } })
    expect([nodePort.Type, nodePort["Cluster-IP"], nodePort["External-IP"], nodePort["Port(s)"], nodePort.Selector])
      .toEqual(["NodePort", "10.96.3.4", "<none>", "53/UDP,443:30443/TCP", "<none>"])
    expect(row("", "Service", { spec: { type: "ClusterIP", clusterIP: "None", ports: [] } })["Cluster-IP"]).toBe("None")
    expect(row("", "Service", { spec: { type: "ClusterIP", externalIPs: ["198.51.100.1"] } })["External-IP"]).toBe("198.51.100.1")
    expect(row("", "Service", { spec: { type: "LoadBalancer" } })["External-IP"]).toBe("<pending>")
    const lb = row("", "Service", { spec: { type: "LoadBalancer", externalIPs: ["198.51.100.1"] }, status: { loadBalancer: { ingress: [{ ip: "203.0.113.2" }, { hostname: "a.example.net" }] } } })
    expect(lb["External-IP"]).toBe("203.0.113.2,a.example.net,198.51.100.1")
    expect(row("", "Service", { spec: { type: "ExternalName", externalName: "db.example.com" } })["External-IP"]).toBe("db.example.com")
    expect(row("", "Service", { spec: { type: "ClusterIP" } })["Port(s)"]).toBe("<none>")
  })
})

describe("workload cells", () => {
  it("prints Deployment READY and the selector sorted by key with sorted set values", () => {
    const d = row("apps", "Deployment", {
      spec: {
        replicas: 3,
        selector: { matchLabels: { tier: "web" }, matchExpressions: [{ key: "env", operator: "In", values: ["prod", "dev"] }, { key: "canary", operator: "DoesNotExist" }] },
        template: { spec: { containers: [{ name: "app", image: "nginx:1.27" }, { name: "log", image: "busybox" }] } }
      },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 }
    })
    expect([d.Ready, d["Up-to-date"], d.Available, d.Containers, d.Images, d.Selector])
      .toEqual(["2/3", 3, 2, "app,log", "nginx:1.27,busybox", "!canary,env in (dev,prod),tier=web"])
    expect(row("apps", "ReplicaSet", { spec: { replicas: 1 } }).Selector).toBe("<none>")
    expect(row("", "ReplicationController", { spec: { replicas: 2, selector: { b: "2", a: "1" } }, status: { replicas: 2, readyReplicas: 1 } }))
      .toMatchObject({ Desired: 2, Current: 2, Ready: 1, Selector: "a=1,b=2" })
  })

  it("prints DaemonSet counts and node selector, StatefulSet READY", () => {
    const ds = row("apps", "DaemonSet", {
      spec: { template: { spec: { nodeSelector: { "kubernetes.io/os": "linux" }, containers: [{ name: "agent", image: "agent:1" }] } } },
      status: { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 }
    })
    expect([ds.Desired, ds.Current, ds.Ready, ds["Up-to-date"], ds.Available, ds["Node Selector"]]).toEqual([3, 3, 2, 3, 2, "kubernetes.io/os=linux"])
    expect(row("apps", "StatefulSet", { spec: { replicas: 3 }, status: { readyReplicas: 3 } }).Ready).toBe("3/3")
  })

  it("prints Job STATUS, COMPLETIONS (with parallelism) and DURATION, and CronJob cells", () => {
    const done = row("batch", "Job", {
      spec: { completions: 1 },
      status: { succeeded: 1, conditions: [{ type: "Complete", status: "True" }], startTime: "2024-01-01T00:00:00Z", completionTime: "2024-01-01T00:00:42Z" }
    })
    expect([done.Status, done.Completions, done.Duration]).toEqual(["Complete", "1/1", "42s"])
    const parallel = row("batch", "Job", { spec: { parallelism: 3 }, status: { succeeded: 0 } })
    expect([parallel.Status, parallel.Completions, parallel.Duration]).toEqual(["Running", "0/1 of 3", ""])
    expect(row("batch", "Job", { spec: { completions: 2, suspend: true }, status: { conditions: [{ type: "Suspended", status: "True" }] } }).Status).toBe("Suspended")
    expect(row("batch", "Job", { spec: {}, status: { conditions: [{ type: "Failed", status: "True" }] } }).Status).toBe("Failed")
    const cj = row("batch", "CronJob", { spec: { schedule: "*/5 * * * *", suspend: true, jobTemplate: { spec: { template: { spec: { containers: [{ name: "c", image: "i" }] } } } } }, status: { active: [{ name: "j" }], lastScheduleTime: ago(90_000) } })
    expect([cj.Schedule, cj.Timezone, cj.Suspend, cj.Active, cj["Last Schedule"], cj.Containers]).toEqual(["*/5 * * * *", "<none>", "True", 1, "90s", "c"])
  })
})

describe("other kinds' cells", () => {
  it("prints volumes and claims with access modes in 1.32's order and the beta storage-class annotation first", () => {
    const pv = row("", "PersistentVolume", {
      metadata: { name: "pv", annotations: { "volume.beta.kubernetes.io/storage-class": "legacy" } },
      spec: { capacity: { storage: "5Gi" }, accessModes: ["ReadWriteMany", "ReadWriteOnce"], persistentVolumeReclaimPolicy: "Retain", claimRef: { namespace: "db", name: "data" }, storageClassName: "standard" },
      status: { phase: "Bound" }
    })
    expect([pv.Capacity, pv["Access Modes"], pv["Reclaim Policy"], pv.Status, pv.Claim, pv.StorageClass, pv.VolumeAttributesClass, pv.VolumeMode])
      .toEqual(["5Gi", "RWO,RWX", "Retain", "Bound", "db/data", "legacy", "<unset>", "<unset>"])
    const pvc = row("", "PersistentVolumeClaim", { spec: { storageClassName: "standard" }, status: { phase: "Pending", capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] } })
    expect([pvc.Status, pvc.Volume, pvc.Capacity, pvc["Access Modes"], pvc.StorageClass]).toEqual(["Pending", "", "", "", "standard"])
  })

  it("prints Endpoints and EndpointSlices with at most three entries and '+ N more...'", () => {
    const ep = row("", "Endpoints", { subsets: [{ addresses: [{ ip: "fd00::1" }, { ip: "10.0.0.2" }], ports: [{ port: 80 }] }, { addresses: [{ ip: "10.0.0.3" }, { ip: "10.0.0.4" }] }] })
    expect(ep.Endpoints).toBe("[fd00::1]:80,10.0.0.2:80,10.0.0.3 + 1 more...")
    expect(row("", "Endpoints", {}).Endpoints).toBe("<none>")
    const slice = row("discovery.k8s.io", "EndpointSlice", { addressType: "IPv4", ports: [{ port: 80 }, { name: "metrics" }, {}], endpoints: [{ addresses: ["10.0.0.1"] }] })
    expect([slice.AddressType, slice.Ports, slice.Endpoints]).toEqual(["IPv4", "80,metrics,*", "10.0.0.1"])
    expect(row("discovery.k8s.io", "EndpointSlice", { addressType: "IPv6" }).Ports).toBe("<unset>")
  })

  it("prints Ingress hosts (three at most, * for none), class and ports", () => {
    const rules = ["a", "b", "c", "d", "e"].map((h) => ({ host: `${h}.example.com` }))
    expect(row("networking.k8s.io", "Ingress", { spec: { rules } }).Hosts).toBe("a.example.com,b.example.com,c.example.com + 2 more...")
    const plain = row("networking.k8s.io", "Ingress", { spec: { rules: [{}] } })
    expect([plain.Class, plain.Hosts, plain.Address, plain.Ports]).toEqual(["<none>", "*", "", "80"])
  })

  it("prints Nodes, PDBs, HPAs, RBAC bindings, quotas, controller revisions and admission objects", () => {
    const node = row("", "Node", { metadata: { name: "n", labels: { "node-role.kubernetes.io/worker": "", "kubernetes.io/role": "edge" } }, status: { conditions: [{ type: "Ready", status: "False" }] } })
    expect([node.Status, node.Roles, node["OS-Image"]]).toEqual(["NotReady", "edge,worker", "<unknown>"])
    expect(row("", "Node", {}).Status).toBe("Unknown")
    expect(row("policy", "PodDisruptionBudget", { spec: { maxUnavailable: 1 }, status: { disruptionsAllowed: 0 } }))
      .toMatchObject({ "Min Available": "N/A", "Max Unavailable": "1", "Allowed Disruptions": 0 })
    const hpa = row("autoscaling", "HorizontalPodAutoscaler", {
      spec: {
        scaleTargetRef: { kind: "Deployment", name: "web" },
        maxReplicas: 5,
        metrics: [
          { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "512Mi" } } },
          { type: "Pods", pods: { metric: { name: "qps" }, target: { type: "AverageValue", averageValue: "100" } } },
          { type: "External", external: { metric: { name: "queue" }, target: { type: "Value", value: "30" } } }
        ]
      },
      status: { currentReplicas: 2, currentMetrics: [{ type: "Resource", resource: { name: "memory", current: { averageValue: "300Mi" } } }] }
    })
    expect([hpa.Reference, hpa.Targets, hpa.MinPods, hpa.MaxPods, hpa.Replicas]).toEqual(["Deployment/web", "memory: 300Mi/512Mi, <unknown>/100 + 1 more...", "<unset>", 5, 2])
    const crb = row("rbac.authorization.k8s.io", "ClusterRoleBinding", { roleRef: { kind: "ClusterRole", name: "admin" }, subjects: [{ kind: "User", name: "a" }, { kind: "User", name: "b" }, { kind: "ServiceAccount", name: "sa" }] })
    expect([crb.Role, crb.Users, crb.Groups, crb.ServiceAccounts]).toEqual(["ClusterRole/admin", "a, b", "", "sa"])
    const quota = row("", "ResourceQuota", { status: { hard: { "requests.cpu": "2", pods: "10", "limits.memory": "4Gi" }, used: { pods: "3", "requests.cpu": "500m" } } })
    expect([quota.Request, quota.Limit]).toEqual(["pods: 3/10, requests.cpu: 500m/2", "limits.memory: 0/4Gi"])
    const revision = row("apps", "ControllerRevision", { metadata: { name: "r", ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "u", controller: true }] }, revision: 3 })
    expect([revision.Controller, revision.Revision]).toEqual(["statefulset.apps/db", 3])
    const binding = row("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", { spec: { policyName: "p", paramRef: { name: "cfg" } } })
    expect([binding.PolicyName, binding.ParamRef]).toEqual(["p", "*/cfg"])
    expect(row("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", { spec: { validations: [{}, {}] } })).toMatchObject({ Validations: 2, ParamKind: "<unset>" })
  })

  it("puts an Event's Name last and prints its series count and source", () => {
    const printer = Printers.lookup("", "Event")!
    expect(printer.columns.map((c) => c.name)).toEqual(["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"])
    const cells = printer.cells({
      metadata: { name: "e1" },
      eventTime: ago(600_000),
      series: { count: 7, lastObservedTime: ago(30_000) },
      reportingComponent: "operator",
      reportingInstance: "operator-0",
      involvedObject: { kind: "Deployment", name: "web" },
      message: "  scaled  ",
      type: "Normal",
      reason: "Scaled"
    })
    expect(cells).toEqual(["30s", "Normal", "Scaled", "deployment/web", "", "operator, operator-0", "scaled", "10m", 7, "e1"])
  })

  it("shows CREATED AT, a timestamp, for kinds 1.32 has no printer for", () => {
    const printer = Printers.lookup("apiextensions.k8s.io", "CustomResourceDefinition")!
    expect(printer.columns.map((c) => [c.name, c.type])).toEqual([["Name", "string"], ["Created At", "date"]])
    expect(printer.cells({ metadata: { name: "a.b", creationTimestamp: "2024-05-01T00:00:00Z" } })).toEqual(["a.b", "2024-05-01T00:00:00Z"])
    expect(Printers.lookup("rbac.authorization.k8s.io", "Role")).toBe(Printers.lookup("", "LimitRange"))
  })
})

describe("formats and conversions", () => {
  it("formats labels and selectors as apimachinery does", () => {
    expect(PrinterFormats.labels({})).toBe("<none>")
    expect(PrinterFormats.formatSelector({})).toBe("<none>")
    expect(PrinterFormats.selector({ matchExpressions: [{ key: "a", operator: "NotIn", values: ["y", "x"] }, { key: "b", operator: "Exists" }] })).toBe("a notin (x,y),b")
  })

  it("serves a v2 HPA as v1 and back without losing what v1 cannot express", () => {
    const v2 = {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "h" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        minReplicas: 1,
        maxReplicas: 4,
        metrics: [
          { type: "Pods", pods: { metric: { name: "qps" }, target: { type: "AverageValue", averageValue: "100" } } },
          { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }
        ]
      },
      status: { currentReplicas: 1, desiredReplicas: 1, currentMetrics: [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 20 } } }] }
    }
    const v1 = HorizontalPodAutoscalers.toV1(v2)
    expect(v1.spec).toEqual({ scaleTargetRef: v2.spec.scaleTargetRef, minReplicas: 1, maxReplicas: 4, targetCPUUtilizationPercentage: 50 })
    expect(v1.status).toEqual({ currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 20 })
    expect(JSON.parse((v1.metadata as { annotations: Record<string, string> }).annotations["autoscaling.alpha.kubernetes.io/metrics"]!))
      .toEqual([{ type: "Pods", pods: { metricName: "qps", targetAverageValue: "100" } }])
    expect(HorizontalPodAutoscalers.toV2(v1)).toEqual(v2)
  })
})
