/**
 * The `kubectl get` columns of the built-in kinds, computed as 1.32's printers compute them
 * (READY "1/3", PORT(S) "80/TCP,443:30443/TCP", a Pod's STATUS...). Priority 1 columns are the
 * ones `-o wide` adds. Cells are final values; ages are rendered as kubectl shows them.
 */
import * as KubeObject from "./KubeObject.ts"
import * as Table from "./Table.ts"

type Json = KubeObject.KubeObject

export interface Column {
  readonly name: string
  readonly type: string
  readonly format?: string
  readonly priority?: number
  readonly description?: string
}

/** The columns after NAME and how each object fills them. */
export interface Printer {
  readonly columns: ReadonlyArray<Column>
  readonly cells: (object: Json) => ReadonlyArray<unknown>
}

const record = (u: unknown): Json => (KubeObject.isObject(u) ? u : {})
const list = (u: unknown): ReadonlyArray<Json> => (Array.isArray(u) ? u.map(record) : [])
const num = (u: unknown): number => (typeof u === "number" ? u : 0)
const none = (text: string): string => (text === "" ? "<none>" : text)
const joined = (values: ReadonlyArray<unknown>): string => values.map(String).join(",")

const age = (object: Json): string => {
  const created = Date.parse(String(KubeObject.meta(object).creationTimestamp ?? ""))
  return Number.isNaN(created) ? "<unknown>" : Table.humanDuration(Date.now() - created)
}

const col = (name: string, type = "string", priority = 0): Column => ({ name, type, priority })
const ageColumn = col("Age")
const createdAt: Printer = {
  columns: [{ name: "Created At", type: "date" }],
  cells: (o) => [KubeObject.meta(o).creationTimestamp ?? null]
}

const selectorText = (selector: unknown): string => {
  const s = record(selector)
  const labels = Object.entries(record(s.matchLabels)).map(([k, v]) => `${k}=${v}`)
  const expressions = list(s.matchExpressions).map((e) => {
    const values = Array.isArray(e.values) ? `(${joined(e.values)})` : ""
    switch (e.operator) {
      case "In":
        return `${e.key} in ${values}`
      case "NotIn":
        return `${e.key} notin ${values}`
      case "DoesNotExist":
        return `!${e.key}`
      default:
        return String(e.key)
    }
  })
  const all = [...labels, ...expressions]
  return all.length === 0 && KubeObject.isObject(selector) ? "<none>" : none(joined(all))
}

const mapText = (m: unknown): string => none(joined(Object.entries(record(m)).map(([k, v]) => `${k}=${v}`)))

const podSpecOf = (template: unknown) => record(record(template).spec)
const containerNames = (spec: Json) => none(joined(list(spec.containers).map((c) => c.name)))
const images = (spec: Json) => none(joined(list(spec.containers).map((c) => c.image)))
const wideWorkload = [col("Containers", "string", 1), col("Images", "string", 1), col("Selector", "string", 1)]
const wideCells = (spec: Json) => [containerNames(podSpecOf(spec.template)), images(podSpecOf(spec.template)), selectorText(spec.selector)]

const deployment: Printer = {
  columns: [col("Ready"), col("Up-to-date", "integer"), col("Available", "integer"), ageColumn, ...wideWorkload],
  cells: (o) => {
    const spec = record(o.spec)
    const status = record(o.status)
    return [`${num(status.readyReplicas)}/${num(spec.replicas)}`, num(status.updatedReplicas), num(status.availableReplicas), age(o), ...wideCells(spec)]
  }
}

const replicaSet: Printer = {
  columns: [col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer"), ageColumn, ...wideWorkload],
  cells: (o) => {
    const spec = record(o.spec)
    const status = record(o.status)
    return [num(spec.replicas), num(status.replicas), num(status.readyReplicas), age(o), ...wideCells(spec)]
  }
}

const statefulSet: Printer = {
  columns: [col("Ready"), ageColumn, col("Containers", "string", 1), col("Images", "string", 1)],
  cells: (o) => {
    const spec = record(o.spec)
    const status = record(o.status)
    return [`${num(status.readyReplicas)}/${num(spec.replicas)}`, age(o), containerNames(podSpecOf(spec.template)), images(podSpecOf(spec.template))]
  }
}

const daemonSet: Printer = {
  columns: [
    col("Desired", "integer"),
    col("Current", "integer"),
    col("Ready", "integer"),
    col("Up-to-date", "integer"),
    col("Available", "integer"),
    col("Node Selector"),
    ageColumn,
    ...wideWorkload
  ],
  cells: (o) => {
    const spec = record(o.spec)
    const s = record(o.status)
    return [
      num(s.desiredNumberScheduled),
      num(s.currentNumberScheduled),
      num(s.numberReady),
      num(s.updatedNumberScheduled),
      num(s.numberAvailable),
      mapText(podSpecOf(spec.template).nodeSelector),
      age(o),
      ...wideCells(spec)
    ]
  }
}

/** A Pod's STATUS as kubectl shows it: a waiting or terminated container's reason, else the phase. */
const podStatus = (pod: Json): string => {
  const status = record(pod.status)
  if (KubeObject.meta(pod).deletionTimestamp !== undefined) return "Terminating"
  const states = list(status.containerStatuses).map((c) => record(c.state))
  const waiting = states.map((s) => record(s.waiting).reason).find((r) => r !== undefined && r !== "")
  const terminated = states.map((s) => record(s.terminated).reason).find((r) => r !== undefined && r !== "")
  return String(waiting ?? terminated ?? status.reason ?? status.phase ?? "Unknown")
}

const pod: Printer = {
  columns: [
    col("Ready"),
    col("Status"),
    col("Restarts"),
    ageColumn,
    col("IP", "string", 1),
    col("Node", "string", 1),
    col("Nominated Node", "string", 1),
    col("Readiness Gates", "string", 1)
  ],
  cells: (o) => {
    const spec = record(o.spec)
    const status = record(o.status)
    const statuses = list(status.containerStatuses)
    const gates = list(spec.readinessGates)
    return [
      `${statuses.filter((c) => c.ready === true).length}/${list(spec.containers).length}`,
      podStatus(o),
      String(statuses.reduce((n, c) => n + num(c.restartCount), 0)),
      age(o),
      none(String(status.podIP ?? "")),
      none(String(spec.nodeName ?? "")),
      none(String(status.nominatedNodeName ?? "")),
      gates.length === 0 ? "<none>" : `${gates.filter((g) => list(status.conditions).some((c) => c.type === g.conditionType && c.status === "True")).length}/${gates.length}`
    ]
  }
}

const servicePorts = (spec: Json): string =>
  none(joined(list(spec.ports).map((p) => `${p.port}${p.nodePort === undefined ? "" : `:${p.nodePort}`}/${p.protocol ?? "TCP"}`)))

const externalIP = (spec: Json, status: Json): string => {
  const ingress = list(record(status.loadBalancer).ingress).map((i) => i.ip ?? i.hostname)
  const external = Array.isArray(spec.externalIPs) ? spec.externalIPs : []
  switch (spec.type) {
    case "ExternalName":
      return String(spec.externalName ?? "<none>")
    case "LoadBalancer":
      return ingress.length + external.length === 0 ? "<pending>" : joined([...ingress, ...external])
    default:
      return none(joined(external))
  }
}

const service: Printer = {
  columns: [col("Type"), col("Cluster-IP"), col("External-IP"), col("Port(s)"), ageColumn, col("Selector", "string", 1)],
  cells: (o) => {
    const spec = record(o.spec)
    return [
      String(spec.type ?? "ClusterIP"),
      none(String(spec.clusterIP ?? "")),
      externalIP(spec, record(o.status)),
      servicePorts(spec),
      age(o),
      mapText(spec.selector)
    ]
  }
}

const dataCount = (o: Json) => Object.keys(record(o.data)).length + Object.keys(record(o.binaryData)).length

const printers: Readonly<Record<string, Printer>> = {
  "/Pod": pod,
  "/Service": service,
  "/ConfigMap": { columns: [col("Data", "integer"), ageColumn], cells: (o) => [dataCount(o), age(o)] },
  "/Secret": { columns: [col("Type"), col("Data", "integer"), ageColumn], cells: (o) => [String(o.type ?? "Opaque"), dataCount(o), age(o)] },
  "/Namespace": { columns: [col("Status"), ageColumn], cells: (o) => [String(record(o.status).phase ?? ""), age(o)] },
  "/ServiceAccount": { columns: [col("Secrets", "integer"), ageColumn], cells: (o) => [list(o.secrets).length, age(o)] },
  "/Endpoints": {
    columns: [col("Endpoints"), ageColumn],
    cells: (o) => {
      const pairs = list(o.subsets).flatMap((s) =>
        list(s.addresses).flatMap((a) => (list(s.ports).length === 0 ? [String(a.ip)] : list(s.ports).map((p) => `${a.ip}:${p.port}`)))
      )
      return [pairs.length === 0 ? "<none>" : pairs.slice(0, 3).join(",") + (pairs.length > 3 ? ` + ${pairs.length - 3} more...` : ""), age(o)]
    }
  },
  "/PersistentVolumeClaim": {
    columns: [col("Status"), col("Volume"), col("Capacity"), col("Access Modes"), col("StorageClass"), col("VolumeAttributesClass"), ageColumn],
    cells: (o) => {
      const spec = record(o.spec)
      const status = record(o.status)
      return [
        String(status.phase ?? ""),
        String(spec.volumeName ?? ""),
        String(record(status.capacity).storage ?? ""),
        accessModes(status.accessModes),
        String(spec.storageClassName ?? ""),
        none(String(spec.volumeAttributesClassName ?? "")),
        age(o)
      ]
    }
  },
  "/PersistentVolume": {
    columns: [col("Capacity"), col("Access Modes"), col("Reclaim Policy"), col("Status"), col("Claim"), col("StorageClass"), col("VolumeAttributesClass"), col("Reason"), ageColumn],
    cells: (o) => {
      const spec = record(o.spec)
      const claim = record(spec.claimRef)
      return [
        String(record(spec.capacity).storage ?? ""),
        accessModes(spec.accessModes),
        String(spec.persistentVolumeReclaimPolicy ?? ""),
        String(record(o.status).phase ?? ""),
        claim.name === undefined ? "" : `${claim.namespace}/${claim.name}`,
        String(spec.storageClassName ?? ""),
        none(String(spec.volumeAttributesClassName ?? "")),
        String(record(o.status).reason ?? ""),
        age(o)
      ]
    }
  },
  "/Node": {
    columns: [col("Status"), col("Roles"), ageColumn, col("Version")],
    cells: (o) => {
      const ready = list(record(o.status).conditions).find((c) => c.type === "Ready")
      const roles = Object.keys(KubeObject.meta(o).labels ?? {}).filter((k) => k.startsWith("node-role.kubernetes.io/")).map((k) => k.slice(24))
      const state = ready?.status === "True" ? "Ready" : ready === undefined ? "Unknown" : "NotReady"
      return [record(o.spec).unschedulable === true ? `${state},SchedulingDisabled` : state, none(joined(roles)), age(o), String(record(record(o.status).nodeInfo).kubeletVersion ?? "")]
    }
  },
  "/ResourceQuota": {
    columns: [ageColumn, col("Request"), col("Limit")],
    cells: (o) => {
      const hard = record(record(o.status).hard ?? record(o.spec).hard)
      const used = record(record(o.status).used)
      const entries = (limits: boolean) =>
        Object.keys(hard).filter((k) => k.startsWith("limits.") === limits).sort().map((k) => `${k}: ${used[k] ?? 0}/${hard[k]}`).join(", ")
      return [age(o), entries(false), entries(true)]
    }
  },
  "/LimitRange": createdAt,
  "/PodTemplate": {
    columns: [col("Containers"), col("Images"), col("Pod Labels")],
    cells: (o) => [containerNames(podSpecOf(o.template)), images(podSpecOf(o.template)), mapText(KubeObject.meta(record(o.template)).labels)]
  },
  "/ReplicationController": replicaSet,
  "apps/Deployment": deployment,
  "apps/ReplicaSet": replicaSet,
  "apps/StatefulSet": statefulSet,
  "apps/DaemonSet": daemonSet,
  "apps/ControllerRevision": {
    columns: [col("Controller"), col("Revision", "integer"), ageColumn],
    cells: (o) => {
      const owner = (KubeObject.meta(o).ownerReferences ?? []).find((r) => r.controller === true)
      return [owner === undefined ? "<none>" : `${owner.kind.toLowerCase()}.${owner.apiVersion.split("/")[0]}/${owner.name}`, num(o.revision), age(o)]
    }
  },
  "batch/Job": {
    columns: [col("Status"), col("Completions"), col("Duration"), ageColumn, ...wideWorkload],
    cells: (o) => {
      const spec = record(o.spec)
      const status = record(o.status)
      const conditions = list(status.conditions).filter((c) => c.status === "True").map((c) => c.type)
      const state = conditions.includes("Complete") ? "Complete" : conditions.includes("Failed") ? "Failed"
        : conditions.includes("Suspended") || spec.suspend === true ? "Suspended" : "Running"
      const started = Date.parse(String(status.startTime ?? ""))
      const ended = Date.parse(String(status.completionTime ?? ""))
      const duration = Number.isNaN(started) ? "" : Table.humanDuration((Number.isNaN(ended) ? Date.now() : ended) - started)
      return [state, `${num(status.succeeded)}/${spec.completions ?? 1}`, duration, age(o), ...wideCells(spec)]
    }
  },
  "batch/CronJob": {
    columns: [col("Schedule"), col("Timezone"), col("Suspend", "boolean"), col("Active", "integer"), col("Last Schedule"), ageColumn, ...wideWorkload],
    cells: (o) => {
      const spec = record(o.spec)
      const status = record(o.status)
      const jobSpec = record(record(spec.jobTemplate).spec)
      const last = Date.parse(String(status.lastScheduleTime ?? ""))
      return [
        String(spec.schedule ?? ""),
        none(String(spec.timeZone ?? "")),
        spec.suspend === true,
        list(status.active).length,
        Number.isNaN(last) ? "<none>" : Table.humanDuration(Date.now() - last),
        age(o),
        ...wideCells(jobSpec)
      ]
    }
  },
  "networking.k8s.io/Ingress": {
    columns: [col("Class"), col("Hosts"), col("Address"), col("Ports"), ageColumn],
    cells: (o) => {
      const spec = record(o.spec)
      const hosts = list(spec.rules).map((r) => r.host ?? "*")
      const address = list(record(record(o.status).loadBalancer).ingress).map((i) => i.ip ?? i.hostname)
      return [none(String(spec.ingressClassName ?? "")), hosts.length === 0 ? "*" : joined(hosts), joined(address), list(spec.tls).length > 0 ? "80, 443" : "80", age(o)]
    }
  },
  "networking.k8s.io/IngressClass": {
    columns: [col("Controller"), col("Parameters"), ageColumn],
    cells: (o) => {
      const p = record(record(o.spec).parameters)
      return [String(record(o.spec).controller ?? ""), p.name === undefined ? "<none>" : `${p.kind}/${p.name}`, age(o)]
    }
  },
  "networking.k8s.io/NetworkPolicy": {
    columns: [col("Pod-Selector"), ageColumn],
    cells: (o) => [selectorText(record(o.spec).podSelector), age(o)]
  },
  "discovery.k8s.io/EndpointSlice": {
    columns: [col("AddressType"), col("Ports"), col("Endpoints"), ageColumn],
    cells: (o) => {
      const ports = list(o.ports).map((p) => p.port)
      const addresses = list(o.endpoints).flatMap((e) => (Array.isArray(e.addresses) ? e.addresses : []))
      return [String(o.addressType ?? ""), ports.length === 0 ? "<unset>" : joined(ports), addresses.length === 0 ? "<unset>" : joined(addresses.slice(0, 3)) + (addresses.length > 3 ? ` + ${addresses.length - 3} more...` : ""), age(o)]
    }
  },
  "policy/PodDisruptionBudget": {
    columns: [col("Min Available"), col("Max Unavailable"), col("Allowed Disruptions", "integer"), ageColumn],
    cells: (o) => {
      const spec = record(o.spec)
      return [String(spec.minAvailable ?? "N/A"), String(spec.maxUnavailable ?? "N/A"), num(record(o.status).disruptionsAllowed), age(o)]
    }
  },
  "autoscaling/HorizontalPodAutoscaler": {
    columns: [col("Reference"), col("Targets"), col("MinPods", "integer"), col("MaxPods", "integer"), col("Replicas", "integer"), ageColumn],
    cells: (o) => {
      const spec = record(o.spec)
      const target = record(spec.scaleTargetRef)
      const metrics = list(spec.metrics).map((m) => {
        const resource = record(m.resource)
        const utilization = record(resource.target).averageUtilization
        return resource.name === undefined ? "<unknown>" : `${resource.name}: <unknown>/${utilization === undefined ? "" : `${utilization}%`}`
      })
      return [`${target.kind}/${target.name}`, metrics.length === 0 ? "<none>" : metrics.join(", "), num(spec.minReplicas ?? 1), num(spec.maxReplicas), num(record(o.status).currentReplicas), age(o)]
    }
  },
  "rbac.authorization.k8s.io/Role": createdAt,
  "rbac.authorization.k8s.io/ClusterRole": createdAt,
  "rbac.authorization.k8s.io/RoleBinding": binding(),
  "rbac.authorization.k8s.io/ClusterRoleBinding": binding(),
  "scheduling.k8s.io/PriorityClass": {
    columns: [col("Value", "integer"), col("Global-Default", "boolean"), ageColumn, col("PreemptionPolicy")],
    cells: (o) => [num(o.value), o.globalDefault === true, age(o), String(o.preemptionPolicy ?? "")]
  },
  "storage.k8s.io/StorageClass": {
    columns: [col("Provisioner"), col("ReclaimPolicy"), col("VolumeBindingMode"), col("AllowVolumeExpansion", "boolean"), ageColumn],
    cells: (o) => [String(o.provisioner ?? ""), String(o.reclaimPolicy ?? "Delete"), String(o.volumeBindingMode ?? "Immediate"), o.allowVolumeExpansion === true, age(o)]
  },
  "node.k8s.io/RuntimeClass": { columns: [col("Handler"), ageColumn], cells: (o) => [String(o.handler ?? ""), age(o)] },
  "coordination.k8s.io/Lease": { columns: [col("Holder"), ageColumn], cells: (o) => [String(record(o.spec).holderIdentity ?? ""), age(o)] },
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": webhookConfiguration(),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": webhookConfiguration(),
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy": {
    columns: [col("Validations", "integer"), col("ParamKind"), ageColumn],
    cells: (o) => {
      const kind = record(record(o.spec).paramKind)
      return [list(record(o.spec).validations).length, kind.kind === undefined ? "<unset>" : `${kind.apiVersion}/${kind.kind}`, age(o)]
    }
  },
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": {
    columns: [col("PolicyName"), col("ParamRef"), ageColumn],
    cells: (o) => {
      const ref = record(record(o.spec).paramRef)
      return [String(record(o.spec).policyName ?? ""), ref.name === undefined ? "<unset>" : `${ref.namespace ?? "*"}/${ref.name}`, age(o)]
    }
  },
  "apiextensions.k8s.io/CustomResourceDefinition": createdAt
}

function accessModes(modes: unknown): string {
  const short: Record<string, string> = { ReadWriteOnce: "RWO", ReadOnlyMany: "ROX", ReadWriteMany: "RWX", ReadWriteOncePod: "RWOP" }
  return joined((Array.isArray(modes) ? modes : []).map((m) => short[String(m)] ?? String(m)))
}

function binding(): Printer {
  const subjects = (o: Json, kind: string) =>
    joined(list(o.subjects).filter((s) => s.kind === kind).map((s) => (kind === "ServiceAccount" ? `${s.namespace ?? ""}/${s.name}` : s.name)))
  return {
    columns: [col("Role"), ageColumn, col("Users", "string", 1), col("Groups", "string", 1), col("ServiceAccounts", "string", 1)],
    cells: (o) => {
      const ref = record(o.roleRef)
      return [`${ref.kind}/${ref.name}`, age(o), subjects(o, "User"), subjects(o, "Group"), subjects(o, "ServiceAccount")]
    }
  }
}

function webhookConfiguration(): Printer {
  return { columns: [col("Webhooks", "integer"), ageColumn], cells: (o) => [list(o.webhooks).length, age(o)] }
}

/**
 * The printer of a built-in kind, or undefined (then the table shows NAME and AGE).
 *
 * @example
 * import * as Printers from "./Printers.ts"
 * Printers.lookup("apps", "Deployment")!.cells({ spec: { replicas: 3 }, status: { readyReplicas: 1 } })[0] // "1/3"
 */
export const lookup = (group: string, kind: string): Printer | undefined => printers[`${group}/${kind}`]
