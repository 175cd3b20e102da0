/**
 * The built-in kinds of a 1.32 cluster as the real kubectl sees them: `kubectl api-resources -o
 * wide` lists each with 1.32's names, scope, verbs and categories, and `kubectl get` (plain and
 * `-o wide`) prints 1.32's columns with cells computed from the objects' spec and status.
 */
import { describe, expect, it } from "vitest"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as Structure from "../src/Structure.ts"
import * as Kubectl from "./kubectl.ts"

const { file, ok, server } = Kubectl.withServer()

/** A kubectl table as rows of cells, cut at the header's column starts (cells may be empty or hold spaces). */
const table = (out: string): ReadonlyArray<Readonly<Record<string, string>>> => {
  const [header = "", ...lines] = out.split("\n").filter((l) => l.trim() !== "")
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index }))
  return lines.map((line) =>
    Object.fromEntries(starts.map((s, i) => [s.name, line.slice(s.at, starts[i + 1]?.at ?? line.length).trim()]))
  )
}

const headers = (out: string) => out.split("\n")[0]!.trim().split(/\s{2,}/)

const all = "create,delete,deletecollection,get,list,patch,update,watch"

// NAME, SHORTNAMES, APIVERSION, NAMESPACED, KIND, VERBS, CATEGORIES as 1.32 lists them.
const expectedResources: ReadonlyArray<readonly [string, string, string, string, string, string, string]> = [
  ["componentstatuses", "cs", "v1", "false", "ComponentStatus", "get,list", ""],
  ["configmaps", "cm", "v1", "true", "ConfigMap", all, ""],
  ["endpoints", "ep", "v1", "true", "Endpoints", all, ""],
  ["events", "ev", "v1", "true", "Event", all, ""],
  ["limitranges", "limits", "v1", "true", "LimitRange", all, ""],
  ["namespaces", "ns", "v1", "false", "Namespace", "create,delete,get,list,patch,update,watch", ""],
  ["nodes", "no", "v1", "false", "Node", all, ""],
  ["persistentvolumeclaims", "pvc", "v1", "true", "PersistentVolumeClaim", all, ""],
  ["persistentvolumes", "pv", "v1", "false", "PersistentVolume", all, ""],
  ["pods", "po", "v1", "true", "Pod", all, "all"],
  ["podtemplates", "", "v1", "true", "PodTemplate", all, ""],
  ["replicationcontrollers", "rc", "v1", "true", "ReplicationController", all, "all"],
  ["resourcequotas", "quota", "v1", "true", "ResourceQuota", all, ""],
  ["secrets", "", "v1", "true", "Secret", all, ""],
  ["serviceaccounts", "sa", "v1", "true", "ServiceAccount", all, ""],
  ["services", "svc", "v1", "true", "Service", all, "all"],
  ["mutatingwebhookconfigurations", "", "admissionregistration.k8s.io/v1", "false", "MutatingWebhookConfiguration", all, "api-extensions"],
  ["validatingadmissionpolicies", "", "admissionregistration.k8s.io/v1", "false", "ValidatingAdmissionPolicy", all, "api-extensions"],
  ["validatingadmissionpolicybindings", "", "admissionregistration.k8s.io/v1", "false", "ValidatingAdmissionPolicyBinding", all, "api-extensions"],
  ["validatingwebhookconfigurations", "", "admissionregistration.k8s.io/v1", "false", "ValidatingWebhookConfiguration", all, "api-extensions"],
  ["customresourcedefinitions", "crd,crds", "apiextensions.k8s.io/v1", "false", "CustomResourceDefinition", all, "api-extensions"],
  ["apiservices", "", "apiregistration.k8s.io/v1", "false", "APIService", all, "api-extensions"],
  ["controllerrevisions", "", "apps/v1", "true", "ControllerRevision", all, ""],
  ["daemonsets", "ds", "apps/v1", "true", "DaemonSet", all, "all"],
  ["deployments", "deploy", "apps/v1", "true", "Deployment", all, "all"],
  ["replicasets", "rs", "apps/v1", "true", "ReplicaSet", all, "all"],
  ["statefulsets", "sts", "apps/v1", "true", "StatefulSet", all, "all"],
  ["horizontalpodautoscalers", "hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler", all, "all"],
  ["cronjobs", "cj", "batch/v1", "true", "CronJob", all, "all"],
  ["jobs", "", "batch/v1", "true", "Job", all, "all"],
  ["leases", "", "coordination.k8s.io/v1", "true", "Lease", all, ""],
  ["endpointslices", "", "discovery.k8s.io/v1", "true", "EndpointSlice", all, ""],
  ["events", "ev", "events.k8s.io/v1", "true", "Event", all, ""],
  ["flowschemas", "", "flowcontrol.apiserver.k8s.io/v1", "false", "FlowSchema", all, ""],
  ["prioritylevelconfigurations", "", "flowcontrol.apiserver.k8s.io/v1", "false", "PriorityLevelConfiguration", all, ""],
  ["ingressclasses", "", "networking.k8s.io/v1", "false", "IngressClass", all, ""],
  ["ingresses", "ing", "networking.k8s.io/v1", "true", "Ingress", all, ""],
  ["networkpolicies", "netpol", "networking.k8s.io/v1", "true", "NetworkPolicy", all, ""],
  ["runtimeclasses", "", "node.k8s.io/v1", "false", "RuntimeClass", all, ""],
  ["poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget", all, ""],
  ["clusterrolebindings", "", "rbac.authorization.k8s.io/v1", "false", "ClusterRoleBinding", all, ""],
  ["clusterroles", "", "rbac.authorization.k8s.io/v1", "false", "ClusterRole", all, ""],
  ["rolebindings", "", "rbac.authorization.k8s.io/v1", "true", "RoleBinding", all, ""],
  ["roles", "", "rbac.authorization.k8s.io/v1", "true", "Role", all, ""],
  ["priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass", all, ""],
  ["csidrivers", "", "storage.k8s.io/v1", "false", "CSIDriver", all, ""],
  ["csinodes", "", "storage.k8s.io/v1", "false", "CSINode", all, ""],
  ["csistoragecapacities", "", "storage.k8s.io/v1", "true", "CSIStorageCapacity", all, ""],
  ["storageclasses", "sc", "storage.k8s.io/v1", "false", "StorageClass", all, ""],
  ["volumeattachments", "", "storage.k8s.io/v1", "false", "VolumeAttachment", all, ""]
]

describe("discovery of the built-in kinds", () => {
  it("kubectl api-resources -o wide lists each kind with 1.32's short names, scope, verbs and categories", async () => {
    const listed = table(await ok("api-resources", "-o", "wide")).map((r) =>
      [r.NAME, r.SHORTNAMES, r.APIVERSION, r.NAMESPACED, r.KIND, r.VERBS, r.CATEGORIES].join(" | ")
    )
    for (const expected of expectedResources) expect(listed).toContain(expected.join(" | "))
  })

  it("serves autoscaling/v2 and v1, listing the preferred v2 first", async () => {
    const group = await server().request("GET", "/apis/autoscaling")
    expect(group.json.versions.map((v: { version: string }) => v.version)).toEqual(["v2", "v1"])
    expect(group.json.preferredVersion.version).toBe("v2")
    const v1 = await server().request("GET", "/apis/autoscaling/v1")
    expect(v1.json.resources.map((r: { name: string }) => r.name)).toEqual(["horizontalpodautoscalers", "horizontalpodautoscalers/status"])
  })

  it("kubectl api-resources selects by category: api-extensions holds the admission kinds, CRDs and APIServices", async () => {
    const names = table(await ok("api-resources", "--categories=api-extensions")).map((r) => r.NAME)
    expect([...names].sort()).toEqual([
      "apiservices",
      "customresourcedefinitions",
      "mutatingwebhookconfigurations",
      "validatingadmissionpolicies",
      "validatingadmissionpolicybindings",
      "validatingwebhookconfigurations"
    ])
  })
})

const patchStatus = (resource: string, status: unknown, ...rest: ReadonlyArray<string>) =>
  ok("patch", resource, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status }), ...rest)

const row = async (...args: ReadonlyArray<string>) => {
  const out = await ok("get", ...args)
  return { headers: headers(out), cells: table(out)[0]! }
}

const apply = (name: string, object: unknown) => ok("apply", "-f", file(name, object))

describe("kubectl get prints 1.32's columns", () => {
  it("Pods: READY, STATUS from container states, RESTARTS with the last restart, and the wide columns", async () => {
    await apply("pod.json", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web" },
      spec: { nodeName: "node-1", containers: [{ name: "app", image: "nginx:1.27" }, { name: "log", image: "busybox:1.36" }] }
    })
    const pending = await row("pod", "web")
    expect(pending.headers).toEqual(["NAME", "READY", "STATUS", "RESTARTS", "AGE"])
    expect([pending.cells.READY, pending.cells.STATUS, pending.cells.RESTARTS]).toEqual(["0/2", "Pending", "0"])
    const finished = new Date(Date.now() - 300_000).toISOString().replace(/\.\d+Z$/, "Z")
    await patchStatus("pod/web", {
      phase: "Running",
      podIP: "10.244.0.7",
      podIPs: [{ ip: "10.244.0.7" }],
      containerStatuses: [
        { name: "app", image: "nginx:1.27", imageID: "", ready: true, restartCount: 0, state: { running: { startedAt: finished } } },
        {
          name: "log",
          image: "busybox:1.36",
          imageID: "",
          ready: false,
          restartCount: 3,
          state: { waiting: { reason: "CrashLoopBackOff" } },
          lastState: { terminated: { exitCode: 1, reason: "Error", finishedAt: finished } }
        }
      ]
    })
    const wide = await row("pod", "web", "-o", "wide")
    expect(wide.headers).toEqual(["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"])
    expect([wide.cells.READY, wide.cells.STATUS, wide.cells.IP, wide.cells.NODE, wide.cells["NOMINATED NODE"], wide.cells["READINESS GATES"]])
      .toEqual(["1/2", "CrashLoopBackOff", "10.244.0.7", "node-1", "<none>", "<none>"])
    expect(wide.cells.RESTARTS).toMatch(/^3 \(5m\d*s? ago\)$/)
  })

  it("Deployments: READY as ready/desired, and containers, images and selector when wide", async () => {
    await apply("deploy.json", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "api" },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: "api" } },
        template: { metadata: { labels: { app: "api" } }, spec: { containers: [{ name: "api", image: "ghcr.io/acme/api:2.1" }] } }
      }
    })
    await patchStatus("deployment/api", { replicas: 3, readyReplicas: 1, updatedReplicas: 3, availableReplicas: 1 })
    const wide = await row("deployment", "api", "-o", "wide")
    expect(wide.headers).toEqual(["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"])
    expect([wide.cells.READY, wide.cells["UP-TO-DATE"], wide.cells.AVAILABLE, wide.cells.CONTAINERS, wide.cells.IMAGES, wide.cells.SELECTOR])
      .toEqual(["1/3", "3", "1", "api", "ghcr.io/acme/api:2.1", "app=api"])
  })

  it("Services: TYPE, CLUSTER-IP, EXTERNAL-IP and PORT(S) with node ports; a LoadBalancer pends", async () => {
    await apply("svc.json", {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "edge" },
      spec: { type: "NodePort", clusterIP: "10.96.40.10", selector: { app: "edge" }, ports: [{ name: "http", port: 80 }, { name: "https", port: 443, nodePort: 30443 }] }
    })
    const wide = await row("service", "edge", "-o", "wide")
    expect(wide.headers).toEqual(["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"])
    expect([wide.cells.TYPE, wide.cells["CLUSTER-IP"], wide.cells["EXTERNAL-IP"], wide.cells.SELECTOR]).toEqual(["NodePort", "10.96.40.10", "<none>", "app=edge"])
    expect(wide.cells["PORT(S)"]).toMatch(/^80:3\d{4}\/TCP,443:30443\/TCP$/)
    await apply("lb.json", { apiVersion: "v1", kind: "Service", metadata: { name: "lb" }, spec: { type: "LoadBalancer", ports: [{ port: 443 }] } })
    expect((await row("service", "lb")).cells["EXTERNAL-IP"]).toBe("<pending>")
    await patchStatus("service/lb", { loadBalancer: { ingress: [{ ip: "203.0.113.9" }] } })
    expect((await row("service", "lb")).cells["EXTERNAL-IP"]).toBe("203.0.113.9")
  })

  it("ConfigMaps count DATA, Secrets show TYPE and DATA, Namespaces their STATUS", async () => {
    await apply("cm.json", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "conf" }, data: { a: "1", b: "2" }, binaryData: { c: "AA==" } })
    await apply("secret.json", { apiVersion: "v1", kind: "Secret", metadata: { name: "tls" }, type: "kubernetes.io/tls", data: { "tls.crt": "AA==", "tls.key": "AA==" } })
    const cm = await row("configmap", "conf")
    expect(cm.headers).toEqual(["NAME", "DATA", "AGE"])
    expect(cm.cells.DATA).toBe("3")
    const secret = await row("secret", "tls")
    expect(secret.headers).toEqual(["NAME", "TYPE", "DATA", "AGE"])
    expect([secret.cells.TYPE, secret.cells.DATA]).toEqual(["kubernetes.io/tls", "2"])
    const ns = await row("namespace", "default")
    expect(ns.headers).toEqual(["NAME", "STATUS", "AGE"])
    expect(ns.cells.STATUS).toBe("Active")
  })

  it("Jobs show STATUS, COMPLETIONS and DURATION; CronJobs SCHEDULE, TIMEZONE, SUSPEND, ACTIVE and LAST SCHEDULE", async () => {
    const template = { spec: { restartPolicy: "Never", containers: [{ name: "migrate", image: "acme/migrate:7" }] } }
    await apply("job.json", { apiVersion: "batch/v1", kind: "Job", metadata: { name: "migrate" }, spec: { completions: 2, template } })
    await patchStatus("job/migrate", {
      startTime: "2025-03-01T10:00:00Z",
      completionTime: "2025-03-01T10:01:30Z",
      succeeded: 2,
      conditions: [
        { type: "SuccessCriteriaMet", status: "True", lastProbeTime: "2025-03-01T10:01:30Z", lastTransitionTime: "2025-03-01T10:01:30Z" },
        { type: "Complete", status: "True", lastProbeTime: "2025-03-01T10:01:30Z", lastTransitionTime: "2025-03-01T10:01:30Z" }
      ]
    })
    const jobRow = await row("job", "migrate", "-o", "wide")
    expect(jobRow.headers).toEqual(["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"])
    expect([jobRow.cells.STATUS, jobRow.cells.COMPLETIONS, jobRow.cells.DURATION, jobRow.cells.CONTAINERS, jobRow.cells.IMAGES])
      .toEqual(["Complete", "2/2", "90s", "migrate", "acme/migrate:7"])

    await apply("cj.json", {
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "nightly" },
      spec: { schedule: "0 3 * * *", timeZone: "Europe/Paris", jobTemplate: { spec: { template } } }
    })
    const cj = await row("cronjob", "nightly")
    expect(cj.headers).toEqual(["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"])
    expect([cj.cells.SCHEDULE, cj.cells.TIMEZONE, cj.cells.SUSPEND, cj.cells.ACTIVE, cj.cells["LAST SCHEDULE"]])
      .toEqual(["0 3 * * *", "Europe/Paris", "False", "0", "<none>"])
  })

  it("PersistentVolumeClaims: STATUS, VOLUME, CAPACITY, ACCESS MODES, STORAGECLASS, VOLUMEATTRIBUTESCLASS", async () => {
    await apply("pvc.json", {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "standard", resources: { requests: { storage: "10Gi" } } }
    })
    const pending = await row("pvc", "data", "-o", "wide")
    expect(pending.headers).toEqual(["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE", "VOLUMEMODE"])
    expect([pending.cells.STATUS, pending.cells.VOLUME, pending.cells.CAPACITY, pending.cells.STORAGECLASS, pending.cells.VOLUMEATTRIBUTESCLASS, pending.cells.VOLUMEMODE])
      .toEqual(["Pending", "", "", "standard", "<unset>", "Filesystem"])
    await ok("patch", "pvc/data", "--type=merge", "-p", JSON.stringify({ spec: { volumeName: "pv-0001" } }))
    await patchStatus("pvc/data", { phase: "Bound", accessModes: ["ReadWriteOnce"], capacity: { storage: "10Gi" } })
    const bound = await row("pvc", "data")
    expect([bound.cells.STATUS, bound.cells.VOLUME, bound.cells.CAPACITY, bound.cells["ACCESS MODES"]]).toEqual(["Bound", "pv-0001", "10Gi", "RWO"])
  })

  it("CSI kinds, as a CSI driver's manifests make them: a CSIDriver's defaults and columns, its nodes, attachments and capacities", async () => {
    const manifest = [
      { apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: "ebs.csi.aws.com" }, spec: { tokenRequests: [{ audience: "sts.amazonaws.com" }] } },
      { apiVersion: "storage.k8s.io/v1", kind: "CSINode", metadata: { name: "node-a" }, spec: { drivers: [{ name: "ebs.csi.aws.com", nodeID: "i-1" }] } },
      { apiVersion: "storage.k8s.io/v1", kind: "VolumeAttachment", metadata: { name: "va" }, spec: { attacher: "ebs.csi.aws.com", nodeName: "node-a", source: { persistentVolumeName: "pv-1" } } },
      { apiVersion: "storage.k8s.io/v1", kind: "CSIStorageCapacity", metadata: { name: "cap", namespace: "default" }, storageClassName: "gp3", capacity: "100Gi" }
    ]
    await ok("apply", "--server-side", "-f", file("csi.json", { apiVersion: "v1", kind: "List", items: manifest }))
    const driver = JSON.parse(await ok("get", "csidriver", "ebs.csi.aws.com", "-o", "json")).spec
    expect(driver).toEqual({
      attachRequired: true,
      podInfoOnMount: false,
      storageCapacity: false,
      fsGroupPolicy: "ReadWriteOnceWithFSType",
      requiresRepublish: false,
      seLinuxMount: false,
      tokenRequests: [{ audience: "sts.amazonaws.com" }],
      volumeLifecycleModes: ["Persistent"]
    })
    const drivers = await ok("get", "csidrivers")
    expect(headers(drivers)).toEqual(["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES", "AGE"])
    expect(table(drivers)[0]).toMatchObject({ NAME: "ebs.csi.aws.com", ATTACHREQUIRED: "true", TOKENREQUESTS: "sts.amazonaws.com", MODES: "Persistent" })
    expect(table(await ok("get", "csinodes"))[0]).toMatchObject({ NAME: "node-a", DRIVERS: "1" })
    expect(table(await ok("get", "volumeattachments"))[0]).toMatchObject({ NAME: "va", ATTACHER: "ebs.csi.aws.com", PV: "pv-1", NODE: "node-a", ATTACHED: "false" })
    expect(table(await ok("get", "csistoragecapacities"))[0]).toMatchObject({ NAME: "cap", STORAGECLASSNAME: "gp3", CAPACITY: "100Gi" })
  })

  it("RBAC: bindings show ROLE and their subjects when wide; Roles show CREATED AT", async () => {
    await apply("rb.json", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "readers" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [
        { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "jane" },
        { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "auditors" },
        { kind: "ServiceAccount", name: "ci", namespace: "default" }
      ]
    })
    const rb = await row("rolebinding", "readers", "-o", "wide")
    expect(rb.headers).toEqual(["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"])
    expect([rb.cells.ROLE, rb.cells.USERS, rb.cells.GROUPS, rb.cells.SERVICEACCOUNTS]).toEqual(["ClusterRole/view", "jane", "auditors", "default:ci"])
    await apply("role.json", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "pod-reader" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }]
    })
    const role = await row("role", "pod-reader")
    expect(role.headers).toEqual(["NAME", "CREATED AT"])
    expect(role.cells["CREATED AT"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  })

  it("CRDs show CREATED AT, a timestamp", async () => {
    await apply("crd.json", {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }]
      }
    })
    const crd = await row("crd", "widgets.example.com")
    expect(crd.headers).toEqual(["NAME", "CREATED AT"])
    expect(crd.cells["CREATED AT"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  })

  it("Leases show HOLDER, Endpoints their addresses, Nodes STATUS, ROLES and VERSION", async () => {
    await apply("lease.json", { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "leader" }, spec: { holderIdentity: "operator-7d9f" } })
    expect((await row("lease", "leader")).cells.HOLDER).toBe("operator-7d9f")
    await apply("ep.json", {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "db" },
      subsets: [{ addresses: [{ ip: "10.0.0.1" }, { ip: "10.0.0.2" }], ports: [{ port: 5432 }, { port: 9187 }] }]
    })
    const ep = await row("endpoints", "db")
    expect(ep.headers).toEqual(["NAME", "ENDPOINTS", "AGE"])
    expect(ep.cells.ENDPOINTS).toBe("10.0.0.1:5432,10.0.0.2:5432,10.0.0.1:9187 + 1 more...")
    await apply("node.json", { apiVersion: "v1", kind: "Node", metadata: { name: "node-1", labels: { "node-role.kubernetes.io/control-plane": "" } }, spec: { unschedulable: true } })
    await patchStatus("node/node-1", {
      conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "ok", lastHeartbeatTime: "2025-03-01T10:00:00Z", lastTransitionTime: "2025-03-01T10:00:00Z" }],
      addresses: [{ type: "InternalIP", address: "172.18.0.2" }],
      nodeInfo: { kubeletVersion: "v1.32.0", osImage: "Debian GNU/Linux 12", kernelVersion: "6.1.0", containerRuntimeVersion: "containerd://1.7.24", machineID: "", systemUUID: "", bootID: "", kubeProxyVersion: "", operatingSystem: "linux", architecture: "amd64" }
    })
    const node = await row("node", "node-1", "-o", "wide")
    expect(node.headers).toEqual(["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"])
    expect([node.cells.STATUS, node.cells.ROLES, node.cells.VERSION, node.cells["INTERNAL-IP"], node.cells["EXTERNAL-IP"], node.cells["CONTAINER-RUNTIME"]])
      .toEqual(["Ready,SchedulingDisabled", "control-plane", "v1.32.0", "172.18.0.2", "<none>", "containerd://1.7.24"])
  })

  it("Events print LAST SEEN, TYPE, REASON, OBJECT and MESSAGE, and no NAME unless wide", async () => {
    await apply("event.json", {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "web.17f3" },
      involvedObject: { kind: "Pod", name: "web", namespace: "default", fieldPath: "spec.containers{log}" },
      reason: "BackOff",
      message: "Back-off restarting failed container",
      type: "Warning",
      count: 4,
      source: { component: "kubelet", host: "node-1" },
      firstTimestamp: "2025-03-01T10:00:00Z",
      lastTimestamp: "2025-03-01T10:05:00Z"
    })
    const events = await row("events", "--field-selector", "involvedObject.name=web")
    expect(events.headers).toEqual(["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])
    expect([events.cells.TYPE, events.cells.REASON, events.cells.OBJECT, events.cells.MESSAGE]).toEqual(["Warning", "BackOff", "pod/web", "Back-off restarting failed container"])
    const wide = await row("events", "--field-selector", "involvedObject.name=web", "-o", "wide")
    expect(wide.headers).toEqual(["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"])
    expect([wide.cells.SUBOBJECT, wide.cells.SOURCE, wide.cells.COUNT, wide.cells.NAME]).toEqual(["spec.containers{log}", "kubelet, node-1", "4", "web.17f3"])
    const v1 = await row("events.v1.events.k8s.io", "--field-selector", "regarding.name=web")
    expect([v1.cells.REASON, v1.cells.OBJECT]).toEqual(["BackOff", "pod/web"])
  })

  it("PDBs, HPAs (written as v2 or v1), Ingresses, webhook configurations, priority and storage classes", async () => {
    await apply("pdb.json", { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "api" }, spec: { minAvailable: "50%", selector: { matchLabels: { app: "api" } } } })
    await patchStatus("pdb/api", { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, observedGeneration: 1 })
    const pdb = await row("pdb", "api")
    expect(pdb.headers).toEqual(["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"])
    expect([pdb.cells["MIN AVAILABLE"], pdb.cells["MAX UNAVAILABLE"], pdb.cells["ALLOWED DISRUPTIONS"]]).toEqual(["50%", "N/A", "1"])

    await apply("hpa.json", {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "api" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "api" },
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }]
      }
    })
    await patchStatus("hpa/api", {
      currentReplicas: 3,
      desiredReplicas: 3,
      currentMetrics: [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 42, averageValue: "210m" } } }]
    })
    const hpa = await row("hpa", "api")
    expect(hpa.headers).toEqual(["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"])
    expect([hpa.cells.REFERENCE, hpa.cells.TARGETS, hpa.cells.MINPODS, hpa.cells.MAXPODS, hpa.cells.REPLICAS]).toEqual(["Deployment/api", "cpu: 42%/70%", "2", "10", "3"])
    const asV1 = JSON.parse(await ok("get", "horizontalpodautoscalers.v1.autoscaling", "api", "-o", "json"))
    expect(asV1.apiVersion).toBe("autoscaling/v1")
    expect(asV1.spec.targetCPUUtilizationPercentage).toBe(70)
    expect(asV1.status.currentCPUUtilizationPercentage).toBe(42)

    await apply("hpa-v1.json", {
      apiVersion: "autoscaling/v1",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "legacy" },
      spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "api" }, maxReplicas: 4, targetCPUUtilizationPercentage: 60 }
    })
    const legacy = await row("hpa", "legacy")
    expect([legacy.cells.TARGETS, legacy.cells.MINPODS, legacy.cells.MAXPODS]).toEqual(["cpu: <unknown>/60%", "1", "4"])

    await apply("ing.json", {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "site" },
      spec: {
        ingressClassName: "nginx",
        tls: [{ hosts: ["shop.example.com"], secretName: "tls" }],
        rules: [
          { host: "shop.example.com", http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "edge", port: { number: 80 } } } }] } },
          { host: "api.example.com", http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "api", port: { number: 80 } } } }] } }
        ]
      }
    })
    await patchStatus("ingress/site", { loadBalancer: { ingress: [{ hostname: "lb.example.net" }] } })
    const ing = await row("ingress", "site")
    expect(ing.headers).toEqual(["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"])
    expect([ing.cells.CLASS, ing.cells.HOSTS, ing.cells.ADDRESS, ing.cells.PORTS]).toEqual(["nginx", "shop.example.com,api.example.com", "lb.example.net", "80, 443"])

    await apply("vwc.json", {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "policy" },
      webhooks: ["a", "b"].map((n) => ({
        name: `${n}.policy.example.com`,
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        clientConfig: { service: { name: "policy", namespace: "default", path: "/validate" } },
        rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }]
      }))
    })
    const vwc = await row("validatingwebhookconfiguration", "policy")
    expect(vwc.headers).toEqual(["NAME", "WEBHOOKS", "AGE"])
    expect(vwc.cells.WEBHOOKS).toBe("2")

    await apply("pc.json", { apiVersion: "scheduling.k8s.io/v1", kind: "PriorityClass", metadata: { name: "critical" }, value: 100000, description: "critical" })
    const pc = await row("priorityclass", "critical", "-o", "wide")
    expect(pc.headers).toEqual(["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"])
    expect([pc.cells.VALUE, pc.cells["GLOBAL-DEFAULT"], pc.cells.PREEMPTIONPOLICY]).toEqual(["100000", "false", "PreemptLowerPriority"])

    await apply("sc.json", {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: "fast", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
      provisioner: "ebs.csi.aws.com",
      volumeBindingMode: "WaitForFirstConsumer",
      allowVolumeExpansion: true
    })
    const sc = await ok("get", "storageclass", "fast")
    expect(headers(sc)).toEqual(["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"])
    expect(table(sc)[0]).toMatchObject({ NAME: "fast (default)", PROVISIONER: "ebs.csi.aws.com", RECLAIMPOLICY: "Delete", VOLUMEBINDINGMODE: "WaitForFirstConsumer", ALLOWVOLUMEEXPANSION: "true" })
  })
})

describe("merge structures of the built-in kinds", () => {
  const smp = (path: string, body: unknown) =>
    server().request("PATCH", path, { body, headers: { "content-type": "application/strategic-merge-patch+json" } })

  it("merges webhooks by name and replaces a binding's subjects whole under strategic merge patch", async () => {
    const path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/policy"
    const patched = await smp(path, { webhooks: [{ name: "a.policy.example.com", timeoutSeconds: 5 }] })
    expect(patched.status).toBe(200)
    expect(patched.json.webhooks.map((w: { name: string; timeoutSeconds: number }) => [w.name, w.timeoutSeconds]))
      .toEqual([["a.policy.example.com", 5], ["b.policy.example.com", 10]])
    const binding = await smp("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/readers", {
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "joe" }]
    })
    expect(binding.json.subjects).toEqual([{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "joe" }])
  })

  it("merges a Job template's containers by name (a CronJob's, its template being mutable) and a Node's addresses by type", async () => {
    const jobContainers = Structure.field(Structure.field(Structure.field(Structure.field(BuiltinStructures.lookup("batch", "Job")!, "spec"), "template"), "spec"), "containers")
    expect(jobContainers.listType).toEqual({ _tag: "Map", keys: ["name"] })
    const cj = await smp("/apis/batch/v1/namespaces/default/cronjobs/nightly", {
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: "migrate", env: [{ name: "MODE", value: "full" }] }] } } } } }
    })
    expect(cj.status).toBe(200)
    const containers = cj.json.spec.jobTemplate.spec.template.spec.containers
    expect(containers.map((c: { name: string; image: string; env: unknown }) => [c.name, c.image, c.env])).toEqual([["migrate", "acme/migrate:7", [{ name: "MODE", value: "full" }]]])
    const node = await server().request("PATCH", "/api/v1/nodes/node-1/status", {
      body: { status: { addresses: [{ type: "Hostname", address: "node-1" }] } },
      headers: { "content-type": "application/strategic-merge-patch+json" }
    })
    const byType = (a: { type: string }, b: { type: string }) => a.type.localeCompare(b.type)
    expect([...node.json.status.addresses].sort(byType)).toEqual([{ type: "Hostname", address: "node-1" }, { type: "InternalIP", address: "172.18.0.2" }])
  })
})
