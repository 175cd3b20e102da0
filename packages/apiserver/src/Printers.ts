/**
 * The `kubectl get` columns of the built-in kinds, computed as 1.32's printers compute them
 * (READY "1/3", PORT(S) "80/TCP,443:30443/TCP", a Pod's STATUS from its containers' states...).
 * A printer gives every column, Name included (Events put it last), and the server always fills
 * the `-o wide` (priority 1) cells: kubectl hides them unless asked. Kinds 1.32 has no printer for
 * (Roles, LimitRanges, CRDs) show NAME and CREATED AT.
 */
import * as F from "./PrinterFormats.ts"
import * as Table from "./Table.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

export interface Column {
  readonly name: string
  readonly type: string
  readonly format?: string
  readonly priority?: number
  readonly description?: string
}

/** Every column of a kind's table and how one object fills them. */
export interface Printer {
  readonly columns: ReadonlyArray<Column>
  readonly cells: (object: Json) => ReadonlyArray<unknown>
}

const { age, int, str } = F
const { record, records: list } = KubeObject
const col = (name: string, type = "string", priority = 0): Column => ({ name, type, priority })
const wide = (name: string): Column => col(name, "string", 1)
const name = (o: Json) => str(KubeObject.meta(o).name)
const nameColumn: Column = { name: "Name", type: "string", format: "name", priority: 0 }
const ageColumn = col("Age")

/** A printer whose first column is Name and whose `cells` give the rest. */
const named = (columns: ReadonlyArray<Column>, cells: (o: Json) => ReadonlyArray<unknown>): Printer => ({
  columns: [nameColumn, ...columns],
  cells: (o) => [name(o), ...cells(o)]
})

// kube-apiserver's default table for kinds without a printer.
const createdAt: Printer = {
  columns: [nameColumn, { name: "Created At", type: "date", priority: 0 }],
  cells: (o) => [name(o), KubeObject.meta(o).creationTimestamp ?? null]
}

const templateSpec = (template: unknown) => record(record(template).spec)
const wideTemplate = [wide("Containers"), wide("Images"), wide("Selector")]

const deployment = named([col("Ready"), col("Up-to-date"), col("Available"), ageColumn, ...wideTemplate], (o) => {
  const spec = record(o.spec)
  const status = record(o.status)
  return [`${int(status.readyReplicas)}/${int(spec.replicas)}`, int(status.updatedReplicas), int(status.availableReplicas), age(o), ...F.containers(templateSpec(spec.template)), F.selector(spec.selector)]
})

const replicaSetColumns = [col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer"), ageColumn, ...wideTemplate]
const replicaSet = named(replicaSetColumns, (o) => {
  const spec = record(o.spec)
  const status = record(o.status)
  return [int(spec.replicas), int(status.replicas), int(status.readyReplicas), age(o), ...F.containers(templateSpec(spec.template)), F.formatSelector(spec.selector)]
})

// A ReplicationController's selector is a plain label map.
const replicationController = named(replicaSetColumns, (o) => {
  const spec = record(o.spec)
  const status = record(o.status)
  return [int(spec.replicas), int(status.replicas), int(status.readyReplicas), age(o), ...F.containers(templateSpec(spec.template)), F.labels(spec.selector)]
})

const statefulSet = named([col("Ready"), ageColumn, wide("Containers"), wide("Images")], (o) => {
  const spec = record(o.spec)
  return [`${int(record(o.status).readyReplicas)}/${int(spec.replicas)}`, age(o), ...F.containers(templateSpec(spec.template))]
})

const daemonSetColumns = [
  col("Desired", "integer"),
  col("Current", "integer"),
  col("Ready", "integer"),
  col("Up-to-date", "integer"),
  col("Available", "integer"),
  col("Node Selector"),
  ageColumn,
  ...wideTemplate
]
const daemonSet = named(daemonSetColumns, (o) => {
  const spec = record(o.spec)
  const s = record(o.status)
  const pod = templateSpec(spec.template)
  return [
    int(s.desiredNumberScheduled),
    int(s.currentNumberScheduled),
    int(s.numberReady),
    int(s.updatedNumberScheduled),
    int(s.numberAvailable),
    F.labels(pod.nodeSelector),
    age(o),
    ...F.containers(pod),
    F.formatSelector(spec.selector)
  ]
})

const hasTrueCondition = (conditions: unknown, type: string) => {
  const found = list(conditions).find((c) => c.type === type)
  return found !== undefined && found.status === "True"
}

const jobStatus = (o: Json): string => {
  const conditions = record(o.status).conditions
  if (hasTrueCondition(conditions, "Complete")) return "Complete"
  if (hasTrueCondition(conditions, "Failed")) return "Failed"
  if (KubeObject.meta(o).deletionTimestamp !== undefined) return "Terminating"
  if (hasTrueCondition(conditions, "Suspended")) return "Suspended"
  if (hasTrueCondition(conditions, "FailureTarget")) return "FailureTarget"
  return "Running"
}

const jobCompletions = (spec: Json, status: Json): string => {
  if (spec.completions !== undefined && spec.completions !== null) return `${int(status.succeeded)}/${int(spec.completions)}`
  const parallelism = int(spec.parallelism)
  return parallelism > 1 ? `${int(status.succeeded)}/1 of ${parallelism}` : `${int(status.succeeded)}/1`
}

const jobDuration = (status: Json): string => {
  const start = Date.parse(str(status.startTime))
  if (Number.isNaN(start)) return ""
  const end = Date.parse(str(status.completionTime))
  return Table.humanDuration((Number.isNaN(end) ? Date.now() : end) - start)
}

const job = named([col("Status"), col("Completions"), col("Duration"), ageColumn, ...wideTemplate], (o) => {
  const spec = record(o.spec)
  const status = record(o.status)
  return [jobStatus(o), jobCompletions(spec, status), jobDuration(status), age(o), ...F.containers(templateSpec(spec.template)), F.formatSelector(spec.selector)]
})

const boolPointer = (u: unknown): string => (u === true ? "True" : u === false ? "False" : "<unset>")

const cronJobColumns = [col("Schedule"), col("Timezone"), col("Suspend", "boolean"), col("Active", "integer"), col("Last Schedule"), ageColumn, ...wideTemplate]
const cronJob = named(cronJobColumns, (o) => {
  const spec = record(o.spec)
  const status = record(o.status)
  const jobSpec = record(record(spec.jobTemplate).spec)
  return [
    str(spec.schedule),
    spec.timeZone === undefined || spec.timeZone === null ? "<none>" : str(spec.timeZone),
    boolPointer(spec.suspend),
    list(status.active).length,
    status.lastScheduleTime === undefined || status.lastScheduleTime === null ? "<none>" : F.since(status.lastScheduleTime),
    age(o),
    ...F.containers(templateSpec(jobSpec.template)),
    F.formatSelector(jobSpec.selector)
  ]
})

const servicePorts = (spec: Json): string => {
  const ports = list(spec.ports).map((p) =>
    int(p.nodePort) > 0 ? `${int(p.port)}:${int(p.nodePort)}/${str(p.protocol)}` : `${int(p.port)}/${str(p.protocol)}`
  )
  return ports.length === 0 ? "<none>" : ports.join(",")
}

/** Load-balancer ingress points, sorted and unique, IP before hostname (the server prints them unclipped). */
const loadBalancer = (status: Json): string =>
  [...new Set(list(record(status.loadBalancer).ingress).map((i) => str(i.ip) !== "" ? str(i.ip) : str(i.hostname)).filter((a) => a !== ""))].sort().join(",")

const externalIP = (spec: Json, status: Json): string => {
  const external = Array.isArray(spec.externalIPs) ? spec.externalIPs.map(str) : []
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return external.length > 0 ? external.join(",") : "<none>"
    case "LoadBalancer": {
      const ingress = loadBalancer(status)
      if (external.length > 0) return [...(ingress === "" ? [] : ingress.split(",")), ...external].join(",")
      return ingress === "" ? "<pending>" : ingress
    }
    case "ExternalName":
      return str(spec.externalName)
    default:
      return "<unknown>"
  }
}

const service = named([col("Type"), col("Cluster-IP"), col("External-IP"), col("Port(s)"), ageColumn, wide("Selector")], (o) => {
  const spec = record(o.spec)
  // Objects written with only `clusterIP` convert to `clusterIPs: [clusterIP]`, as the printer reads them.
  const clusterIPs = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0 ? spec.clusterIPs : spec.clusterIP === undefined ? [] : [spec.clusterIP]
  return [str(spec.type), clusterIPs.length > 0 ? str(clusterIPs[0]) : "<none>", externalIP(spec, record(o.status)), servicePorts(spec), age(o), F.labels(spec.selector)]
})

const endpoints = named([col("Endpoints"), ageColumn], (o) => {
  const subsets = list(o.subsets)
  if (subsets.length === 0) return ["<none>", age(o)]
  const all = subsets.flatMap((s) => {
    const addresses = list(s.addresses).map((a) => str(a.ip))
    const ports = list(s.ports)
    return ports.length === 0 ? addresses : ports.flatMap((p) => addresses.map((ip) => F.hostPort(ip, int(p.port))))
  })
  const shown = all.slice(0, 3).join(",")
  return [all.length > 3 ? `${shown} + ${all.length - 3} more...` : shown, age(o)]
})

const endpointSlice = named([col("AddressType"), col("Ports"), col("Endpoints"), ageColumn], (o) => {
  const ports = list(o.ports).map((p) => (p.port !== undefined && p.port !== null ? str(p.port) : p.name !== undefined && p.name !== null ? str(p.name) : "*"))
  const addresses = list(o.endpoints).flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(str) : []))
  return [str(o.addressType), F.withMore(ports, 3, "<unset>"), F.withMore(addresses, 3, "<unset>"), age(o)]
})

// Up to three hosts; "+ N more..." counts every rule past the third, host or not.
const ingressHosts = (rules: ReadonlyArray<Json>): string => {
  const hosts: Array<string> = []
  let more = false
  for (const rule of rules) {
    if (hosts.length === 3) more = true
    if (!more && str(rule.host) !== "") hosts.push(str(rule.host))
  }
  if (hosts.length === 0) return "*"
  return more ? `${hosts.join(",")} + ${rules.length - 3} more...` : hosts.join(",")
}

const ingress = named([col("Class"), col("Hosts"), col("Address"), col("Ports"), ageColumn], (o) => {
  const spec = record(o.spec)
  return [
    spec.ingressClassName === undefined || spec.ingressClassName === null ? "<none>" : str(spec.ingressClassName),
    ingressHosts(list(spec.rules)),
    loadBalancer(record(o.status)),
    list(spec.tls).length > 0 ? "80, 443" : "80",
    age(o)
  ]
})

const ingressClass = named([col("Controller"), col("Parameters"), ageColumn], (o) => {
  const spec = record(o.spec)
  const p = KubeObject.isObject(spec.parameters) ? spec.parameters : undefined
  const group = p?.apiGroup === undefined || p.apiGroup === null ? "" : `.${str(p.apiGroup)}`
  return [str(spec.controller), p === undefined ? "<none>" : `${str(p.kind)}${group}/${str(p.name)}`, age(o)]
})

const nodeRoles = (o: Json): string => {
  const roles = new Set<string>()
  for (const [k, v] of Object.entries(KubeObject.meta(o).labels ?? {})) {
    if (k.startsWith("node-role.kubernetes.io/") && k.length > 24) roles.add(k.slice(24))
    else if (k === "kubernetes.io/role" && v !== "") roles.add(v)
  }
  return roles.size === 0 ? "<none>" : [...roles].sort().join(",")
}

const nodeAddress = (status: Json, type: string) => str(list(status.addresses).find((a) => a.type === type)?.address ?? "<none>")
const orUnknown = (u: unknown) => (str(u) === "" ? "<unknown>" : str(u))

const nodeColumns = [col("Status"), col("Roles"), ageColumn, col("Version"), wide("Internal-IP"), wide("External-IP"), wide("OS-Image"), wide("Kernel-Version"), wide("Container-Runtime")]
const node = named(nodeColumns, (o) => {
  const status = record(o.status)
  const info = record(status.nodeInfo)
  const ready = list(status.conditions).find((c) => c.type === "Ready")
  const state = [ready === undefined ? "Unknown" : ready.status === "True" ? "Ready" : "NotReady", ...(record(o.spec).unschedulable === true ? ["SchedulingDisabled"] : [])]
  return [
    state.join(","),
    nodeRoles(o),
    age(o),
    str(info.kubeletVersion),
    nodeAddress(status, "InternalIP"),
    nodeAddress(status, "ExternalIP"),
    orUnknown(info.osImage),
    orUnknown(info.kernelVersion),
    orUnknown(info.containerRuntimeVersion)
  ]
})

// The beta annotation still wins over the field, as 1.32's helpers read a volume's class.
const storageClassOf = (o: Json, field: unknown): string => {
  const annotation = (KubeObject.meta(o).annotations ?? {})["volume.beta.kubernetes.io/storage-class"]
  return annotation !== undefined ? annotation : str(field)
}
const unset = (u: unknown) => (u === undefined || u === null ? "<unset>" : str(u))
const terminatingPhase = (o: Json) => (KubeObject.meta(o).deletionTimestamp !== undefined ? "Terminating" : str(record(o.status).phase))
const storageOf = (resources: unknown): string => str(record(resources).storage ?? "0")

const pvColumns = [
  col("Capacity"),
  col("Access Modes"),
  col("Reclaim Policy"),
  col("Status"),
  col("Claim"),
  col("StorageClass"),
  col("VolumeAttributesClass"),
  col("Reason"),
  ageColumn,
  wide("VolumeMode")
]
const persistentVolume = named(pvColumns, (o) => {
  const spec = record(o.spec)
  const claim = KubeObject.isObject(spec.claimRef) ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : ""
  return [
    storageOf(spec.capacity),
    F.accessModes(spec.accessModes),
    str(spec.persistentVolumeReclaimPolicy),
    terminatingPhase(o),
    claim,
    storageClassOf(o, spec.storageClassName),
    unset(spec.volumeAttributesClassName),
    str(record(o.status).reason),
    age(o),
    unset(spec.volumeMode)
  ]
})

const pvcColumns = [col("Status"), col("Volume"), col("Capacity"), col("Access Modes"), col("StorageClass"), col("VolumeAttributesClass"), ageColumn, wide("VolumeMode")]
const persistentVolumeClaim = named(pvcColumns, (o) => {
  const spec = record(o.spec)
  const status = record(o.status)
  // Capacity and access modes show only once the claim names its volume.
  const bound = str(spec.volumeName) !== ""
  return [
    terminatingPhase(o),
    str(spec.volumeName),
    bound ? storageOf(status.capacity) : "",
    bound ? F.accessModes(status.accessModes) : "",
    storageClassOf(o, spec.storageClassName),
    unset(spec.volumeAttributesClassName),
    age(o),
    unset(spec.volumeMode)
  ]
})

const resourceQuota = named([col("Request"), col("Limit"), ageColumn], (o) => {
  const status = record(o.status)
  const hard = record(status.hard)
  const used = record(status.used)
  const entries = Object.keys(hard).sort().map((k) => ({ k, text: `${k}: ${str(used[k] ?? "0")}/${str(hard[k])}` }))
  const isLimit = (k: string) => k.split(".").length > 1 && k.split(".")[0] === "limits"
  return [entries.filter((e) => !isLimit(e.k)).map((e) => e.text).join(", "), entries.filter((e) => isLimit(e.k)).map((e) => e.text).join(", "), age(o)]
})

const podTemplate = named([col("Containers"), col("Images"), col("Pod Labels")], (o) => {
  const template = record(o.template)
  return [...F.containers(templateSpec(template)), F.labels(KubeObject.meta(template).labels)]
})

const controllerRevision = named([col("Controller"), col("Revision"), ageColumn], (o) => {
  const owner = (KubeObject.meta(o).ownerReferences ?? []).find((r) => r.controller === true)
  const group = owner === undefined ? "" : owner.apiVersion.includes("/") ? owner.apiVersion.split("/")[0]! : ""
  const kind = owner === undefined ? "" : (group === "" ? owner.kind : `${owner.kind}.${group}`).toLowerCase()
  return [owner === undefined ? "<none>" : `${kind}/${owner.name}`, int(o.revision), age(o)]
})

const pdb = named([col("Min Available"), col("Max Unavailable"), col("Allowed Disruptions", "integer"), ageColumn], (o) => {
  const spec = record(o.spec)
  const intOrString = (u: unknown) => (u === undefined || u === null ? "N/A" : str(u))
  return [intOrString(spec.minAvailable), intOrString(spec.maxUnavailable), int(record(o.status).disruptionsAllowed), age(o)]
})

const bindingColumns = [col("Role"), ageColumn, wide("Users"), wide("Groups"), wide("ServiceAccounts")]
const binding = named(bindingColumns, (o) => {
  const ref = record(o.roleRef)
  const subjects = list(o.subjects)
  const of = (kind: string) => subjects.filter((s) => s.kind === kind)
  return [
    `${str(ref.kind)}/${str(ref.name)}`,
    age(o),
    of("User").map((s) => str(s.name)).join(", "),
    of("Group").map((s) => str(s.name)).join(", "),
    of("ServiceAccount").map((s) => (str(s.namespace) !== "" ? `${str(s.namespace)}:${str(s.name)}` : str(s.name))).join(", ")
  ]
})

const isDefaultClass = (o: Json): boolean => {
  const a = KubeObject.meta(o).annotations ?? {}
  return a["storageclass.kubernetes.io/is-default-class"] === "true" || a["storageclass.beta.kubernetes.io/is-default-class"] === "true"
}

const flag = (value: unknown, otherwise: boolean): boolean => (typeof value === "boolean" ? value : otherwise)

const csiDriver = named(
  [col("AttachRequired", "boolean"), col("PodInfoOnMount", "boolean"), col("StorageCapacity", "boolean"), col("TokenRequests"), col("RequiresRepublish", "boolean"), col("Modes"), ageColumn],
  (o) => {
    const spec = record(o.spec)
    const modes = Array.isArray(spec.volumeLifecycleModes) ? spec.volumeLifecycleModes.map(str) : []
    return [
      flag(spec.attachRequired, true),
      flag(spec.podInfoOnMount, false),
      flag(spec.storageCapacity, false),
      Array.isArray(spec.tokenRequests) ? list(spec.tokenRequests).map((t) => str(t.audience)).join(",") : "<unset>",
      flag(spec.requiresRepublish, false),
      modes.length === 0 ? "<none>" : modes.join(","),
      age(o)
    ]
  }
)

const volumeAttachment = named([col("Attacher"), col("PV"), col("Node"), col("Attached", "boolean"), ageColumn], (o) => {
  const spec = record(o.spec)
  return [str(spec.attacher), str(record(spec.source).persistentVolumeName), str(spec.nodeName), record(o.status).attached === true, age(o)]
})

const flowSchema = named(
  [col("PriorityLevel"), col("MatchingPrecedence", "integer"), col("DistinguisherMethod"), ageColumn, col("MissingPL")],
  (o) => {
    const spec = record(o.spec)
    const dangling = list(record(o.status).conditions).find((c) => c.type === "Dangling")
    const method = record(spec.distinguisherMethod).type
    return [str(record(spec.priorityLevelConfiguration).name), int(spec.matchingPrecedence), method === undefined ? "<none>" : str(method), age(o), dangling === undefined ? "?" : str(dangling.status)]
  }
)

const priorityLevel = named(
  [col("Type"), col("NominalConcurrencyShares"), col("Queues"), col("HandSize"), col("QueueLengthLimit"), ageColumn],
  (o) => {
    const spec = record(o.spec)
    const limited = KubeObject.isObject(spec.limited) ? spec.limited : undefined
    const queuing = KubeObject.isObject(record(limited?.limitResponse).queuing) ? record(record(limited?.limitResponse).queuing) : undefined
    const or = (value: unknown, present: boolean) => (present ? int(value) : "<none>")
    return [str(spec.type), or(limited?.nominalConcurrencyShares, limited !== undefined), or(queuing?.queues, queuing !== undefined), or(queuing?.handSize, queuing !== undefined), or(queuing?.queueLengthLimit, queuing !== undefined), age(o)]
  }
)

const storageClassColumns = [col("Provisioner"), col("ReclaimPolicy"), col("VolumeBindingMode"), col("AllowVolumeExpansion"), ageColumn]
const storageClass: Printer = {
  columns: [nameColumn, ...storageClassColumns],
  cells: (o) => [
    isDefaultClass(o) ? `${name(o)} (default)` : name(o),
    str(o.provisioner),
    str(o.reclaimPolicy ?? "Delete"),
    str(o.volumeBindingMode ?? "Immediate"),
    o.allowVolumeExpansion === true,
    age(o)
  ]
}

const priorityClass = named([col("Value", "integer"), col("Global-Default", "boolean"), ageColumn, wide("PreemptionPolicy")], (o) => [
  int(o.value),
  o.globalDefault === true,
  age(o),
  str(o.preemptionPolicy)
])

// kube-aggregator's columns: a local APIService's service is "Local"; availability with its reason.
const apiService = named([col("Service"), col("Available"), ageColumn], (o) => {
  const service = KubeObject.record(KubeObject.record(o.spec).service)
  const available = list(KubeObject.record(o.status).conditions).find((c) => c.type === "Available")
  const status = available === undefined
    ? "Unknown"
    : available.status !== "True" && typeof available.reason === "string" && available.reason !== ""
    ? `${str(available.status)} (${available.reason})`
    : str(available.status)
  return [typeof service.name === "string" ? `${str(service.namespace)}/${service.name}` : "Local", status, age(o)]
})

const webhooks = named([col("Webhooks", "integer"), ageColumn], (o) => [list(o.webhooks).length, age(o)])

const admissionPolicy = named([col("Validations", "integer"), col("ParamKind"), ageColumn], (o) => {
  const spec = record(o.spec)
  const kind = KubeObject.isObject(spec.paramKind) ? `${str(spec.paramKind.apiVersion)}/${str(spec.paramKind.kind)}` : "<unset>"
  return [list(spec.validations).length, kind, age(o)]
})

const paramRef = (ref: unknown): string => {
  if (!KubeObject.isObject(ref)) return "<unset>"
  if (str(ref.name) !== "") return str(ref.namespace) !== "" ? `${str(ref.namespace)}/${str(ref.name)}` : `*/${str(ref.name)}`
  return KubeObject.isObject(ref.selector) ? F.selector(ref.selector) : "<unset>"
}

const admissionPolicyBinding = named([col("PolicyName"), col("ParamRef"), ageColumn], (o) => {
  const spec = record(o.spec)
  return [str(spec.policyName), paramRef(spec.paramRef), age(o)]
})

const dataCount = (o: Json) => Object.keys(record(o.data)).length + Object.keys(record(o.binaryData)).length


/** The Pod printer (in its own function: its STATUS logic is the longest of all). */
function pod(): Printer {
  const columns = [col("Ready"), col("Status"), col("Restarts"), ageColumn, wide("IP"), wide("Node"), wide("Nominated Node"), wide("Readiness Gates")]
  return named(columns, (o) => {
    const spec = record(o.spec)
    const status = record(o.status)
    const summary = podSummary(o)
    const ips = list(status.podIPs)
    const ip = ips.length > 0 ? str(ips[0]!.ip) : str(status.podIP)
    const orNone = (s: string) => (s === "" ? "<none>" : s)
    return [
      `${summary.ready}/${summary.total}`,
      summary.reason,
      summary.restarts,
      age(o),
      orNone(ip),
      orNone(str(spec.nodeName)),
      orNone(str(status.nominatedNodeName)),
      readinessGates(spec, status)
    ]
  })
}

function readinessGates(spec: Json, status: Json): string {
  const gates = list(spec.readinessGates)
  if (gates.length === 0) return "<none>"
  const conditions = list(status.conditions)
  const met = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === "True").length
  return `${met}/${gates.length}`
}

/** An Event's row: no leading Name column; Name, source and counts are wide columns. */
function event(): Printer {
  const columns = [
    col("Last Seen"),
    col("Type"),
    col("Reason"),
    col("Object"),
    wide("Subobject"),
    wide("Source"),
    col("Message"),
    wide("First Seen"),
    wide("Count"),
    { ...nameColumn, priority: 1 }
  ]
  return {
    columns,
    cells: (e) => {
      const first = str(e.firstTimestamp) !== "" ? F.since(e.firstTimestamp) : F.since(e.eventTime)
      const series = KubeObject.isObject(e.series) ? e.series : undefined
      const last = series !== undefined ? F.since(series.lastObservedTime) : str(e.lastTimestamp) !== "" ? F.since(e.lastTimestamp) : first
      const count = series !== undefined ? int(series.count) : int(e.count) === 0 ? 1 : int(e.count)
      const involved = record(e.involvedObject)
      const kind = str(involved.kind).toLowerCase()
      const source = record(e.source)
      const component = str(source.component) !== "" ? str(source.component) : str(e.reportingComponent)
      const host = str(source.host) !== "" ? str(source.host) : str(e.reportingInstance)
      return [
        last,
        str(e.type),
        str(e.reason),
        str(involved.name) !== "" ? `${kind}/${str(involved.name)}` : kind,
        str(involved.fieldPath),
        host === "" ? component : `${component}, ${host}`,
        str(e.message).trim(),
        first,
        count,
        name(e)
      ]
    }
  }
}

function autoscaler(): Printer {
  const columns = [col("Reference"), col("Targets"), col("MinPods"), col("MaxPods"), col("Replicas"), ageColumn]
  return named(columns, (o) => {
    const spec = record(o.spec)
    const ref = record(spec.scaleTargetRef)
    const min = spec.minReplicas === undefined || spec.minReplicas === null ? "<unset>" : str(spec.minReplicas)
    return [`${str(ref.kind)}/${str(ref.name)}`, hpaTargets(list(spec.metrics), list(record(o.status).currentMetrics)), min, int(spec.maxReplicas), int(record(o.status).currentReplicas), age(o)]
  })
}

interface PodTally {
  reason: string
  ready: number
  restarts: number
  lastRestart: number
  restartable: number
  lastRestartable: number
  initializing: boolean
}

const finishedAt = (c: Json) => {
  const at = Date.parse(str(record(record(c.lastState).terminated).finishedAt))
  return Number.isNaN(at) ? 0 : at
}

const exitReason = (terminated: Json, prefix: string) =>
  str(terminated.reason) !== "" ? `${prefix}${str(terminated.reason)}`
    : int(terminated.signal) !== 0 ? `${prefix}Signal:${int(terminated.signal)}`
    : `${prefix}ExitCode:${int(terminated.exitCode)}`

const stateOf = (c: Json) => {
  const state = record(c.state)
  return {
    terminated: KubeObject.isObject(state.terminated) ? state.terminated : undefined,
    waiting: KubeObject.isObject(state.waiting) ? state.waiting : undefined,
    running: KubeObject.isObject(state.running)
  }
}

// Init containers run in order: the first one not done decides the status.
const tallyInitContainers = (spec: Json, status: Json, t: PodTally) => {
  const inits = list(spec.initContainers)
  const restartable = (n: unknown) => inits.find((c) => c.name === n)?.restartPolicy === "Always"
  for (const [i, c] of list(status.initContainerStatuses).entries()) {
    t.restarts += int(c.restartCount)
    t.lastRestart = Math.max(t.lastRestart, finishedAt(c))
    if (restartable(c.name)) {
      t.restartable += int(c.restartCount)
      t.lastRestartable = Math.max(t.lastRestartable, finishedAt(c))
    }
    const { terminated, waiting } = stateOf(c)
    if (terminated !== undefined && int(terminated.exitCode) === 0) continue
    if (restartable(c.name) && c.started === true) {
      if (c.ready === true) t.ready++
      continue
    }
    t.initializing = true
    if (terminated !== undefined) t.reason = exitReason(terminated, "Init:")
    else if (waiting !== undefined && str(waiting.reason) !== "" && waiting.reason !== "PodInitializing") t.reason = `Init:${str(waiting.reason)}`
    else t.reason = `Init:${i}/${inits.length}`
    return
  }
}

// App containers: the first (lowest index) waiting or terminated one names the status.
const tallyAppContainers = (status: Json, t: PodTally) => {
  t.restarts = t.restartable
  t.lastRestart = t.lastRestartable
  let hasRunning = false
  for (const c of [...list(status.containerStatuses)].reverse()) {
    t.restarts += int(c.restartCount)
    t.lastRestart = Math.max(t.lastRestart, finishedAt(c))
    const { running, terminated, waiting } = stateOf(c)
    if (waiting !== undefined && str(waiting.reason) !== "") t.reason = str(waiting.reason)
    else if (terminated !== undefined) t.reason = exitReason(terminated, "")
    else if (c.ready === true && running) {
      hasRunning = true
      t.ready++
    }
  }
  if (t.reason === "Completed" && hasRunning) t.reason = hasTrueCondition(status.conditions, "Ready") ? "Running" : "NotReady"
}

/** A Pod's READY counts, STATUS and RESTARTS, from its init and app containers' states. */
const podSummary = (pod: Json) => {
  const spec = record(pod.spec)
  const status = record(pod.status)
  const phase = str(status.phase)
  const gated = list(status.conditions).some((c) => c.type === "PodScheduled" && c.reason === "SchedulingGated")
  const t: PodTally = {
    reason: gated ? "SchedulingGated" : str(status.reason) !== "" ? str(status.reason) : phase,
    ready: 0,
    restarts: 0,
    lastRestart: 0,
    restartable: 0,
    lastRestartable: 0,
    initializing: false
  }
  tallyInitContainers(spec, status, t)
  if (!t.initializing || hasTrueCondition(status.conditions, "Initialized")) tallyAppContainers(status, t)
  const deleting = KubeObject.meta(pod).deletionTimestamp !== undefined
  if (deleting && status.reason === "NodeLost") t.reason = "Unknown"
  else if (deleting && phase !== "Succeeded" && phase !== "Failed") t.reason = "Terminating"
  const total = list(spec.containers).length + list(spec.initContainers).filter((c) => c.restartPolicy === "Always").length
  const restarts = t.restarts !== 0 && t.lastRestart !== 0 ? `${t.restarts} (${Table.humanDuration(Date.now() - t.lastRestart)} ago)` : String(t.restarts)
  return { ready: t.ready, total, reason: t.reason, restarts }
}

const quantity = (u: unknown) => (u === undefined || u === null ? "<nil>" : str(u))

// One HPA metric as "current/target"; statuses pair with specs by position.
const hpaMetric = (spec: Json, i: number, statuses: ReadonlyArray<Json>): string => {
  const key = str(spec.type).charAt(0).toLowerCase() + str(spec.type).slice(1)
  const source = record(spec[key])
  const target = record(source.target)
  const reported = statuses.length > i && KubeObject.isObject(statuses[i]![key])
  const now = record(record(statuses[i]?.[key]).current)
  switch (spec.type) {
    case "External":
    case "Object":
      if (target.averageValue !== undefined) {
        return `${reported && now.averageValue !== undefined ? str(now.averageValue) : "<unknown>"}/${str(target.averageValue)} (avg)`
      }
      return `${reported ? quantity(now.value) : "<unknown>"}/${quantity(target.value)}`
    case "Pods":
      return `${reported ? quantity(now.averageValue) : "<unknown>"}/${quantity(target.averageValue)}`
    case "Resource":
    case "ContainerResource": {
      if (target.averageValue !== undefined) return `${str(source.name)}: ${reported ? quantity(now.averageValue) : "<unknown>"}/${str(target.averageValue)}`
      const utilization = reported && now.averageUtilization !== undefined ? `${str(now.averageUtilization)}%` : "<unknown>"
      const goal = target.averageUtilization !== undefined ? `${str(target.averageUtilization)}%` : "<auto>"
      return `${str(source.name)}: ${utilization}/${goal}`
    }
    default:
      return "<unknown type>"
  }
}

/** An HPA's TARGETS cell: each metric's current value over its target, two at most. */
const hpaTargets = (specs: ReadonlyArray<Json>, statuses: ReadonlyArray<Json>): string => {
  if (specs.length === 0) return "<none>"
  const all = specs.map((s, i) => hpaMetric(s, i, statuses))
  return all.length > 2 ? `${all.slice(0, 2).join(", ")} + ${all.length - 2} more...` : all.join(", ")
}

const printers: Readonly<Record<string, Printer>> = {
  "/Pod": pod(),
  "/Service": service,
  "/ConfigMap": named([col("Data"), ageColumn], (o) => [dataCount(o), age(o)]),
  "/Secret": named([col("Type"), col("Data"), ageColumn], (o) => [str(o.type), Object.keys(record(o.data)).length, age(o)]),
  "/Namespace": named([col("Status"), ageColumn], (o) => [str(record(o.status).phase), age(o)]),
  "/ServiceAccount": named([col("Secrets"), ageColumn], (o) => [list(o.secrets).length, age(o)]),
  "/Event": event(),
  "events.k8s.io/Event": event(),
  "/Endpoints": endpoints,
  "/PersistentVolumeClaim": persistentVolumeClaim,
  "/PersistentVolume": persistentVolume,
  "/Node": node,
  "/ResourceQuota": resourceQuota,
  "/LimitRange": createdAt,
  "/PodTemplate": podTemplate,
  "/ReplicationController": replicationController,
  "apps/Deployment": deployment,
  "apps/ReplicaSet": replicaSet,
  "apps/StatefulSet": statefulSet,
  "apps/DaemonSet": daemonSet,
  "apps/ControllerRevision": controllerRevision,
  "batch/Job": job,
  "batch/CronJob": cronJob,
  "networking.k8s.io/Ingress": ingress,
  "networking.k8s.io/IngressClass": ingressClass,
  "networking.k8s.io/NetworkPolicy": named([col("Pod-Selector"), ageColumn], (o) => [F.formatSelector(record(o.spec).podSelector), age(o)]),
  "discovery.k8s.io/EndpointSlice": endpointSlice,
  "policy/PodDisruptionBudget": pdb,
  "autoscaling/HorizontalPodAutoscaler": autoscaler(),
  "rbac.authorization.k8s.io/Role": createdAt,
  "rbac.authorization.k8s.io/ClusterRole": createdAt,
  "rbac.authorization.k8s.io/RoleBinding": binding,
  "rbac.authorization.k8s.io/ClusterRoleBinding": binding,
  "scheduling.k8s.io/PriorityClass": priorityClass,
  "apiregistration.k8s.io/APIService": apiService,
  "storage.k8s.io/StorageClass": storageClass,
  "storage.k8s.io/CSIDriver": csiDriver,
  "flowcontrol.apiserver.k8s.io/FlowSchema": flowSchema,
  "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration": priorityLevel,
  "storage.k8s.io/CSINode": named([col("Drivers", "integer"), ageColumn], (o) => [list(record(o.spec).drivers).length, age(o)]),
  "storage.k8s.io/CSIStorageCapacity": named([col("StorageClassName"), col("Capacity"), ageColumn], (o) => [str(o.storageClassName), o.capacity === undefined ? "<unset>" : str(o.capacity), age(o)]),
  "storage.k8s.io/VolumeAttachment": volumeAttachment,
  "node.k8s.io/RuntimeClass": named([col("Handler"), ageColumn], (o) => [str(o.handler), age(o)]),
  "/ComponentStatus": named([col("Status"), col("Message"), col("Error")], (o) => {
    const healthy = list(o.conditions).find((c) => c.type === "Healthy")
    const status = healthy === undefined ? "Unknown" : healthy.status === "True" ? "Healthy" : "Unhealthy"
    return [status, str(healthy?.message), str(healthy?.error)]
  }),
  "coordination.k8s.io/Lease": named([col("Holder"), ageColumn], (o) => [str(record(o.spec).holderIdentity), age(o)]),
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": webhooks,
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": webhooks,
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy": admissionPolicy,
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": admissionPolicyBinding,
  "apiextensions.k8s.io/CustomResourceDefinition": createdAt
}

/**
 * The printer of a built-in kind, or undefined (then the table shows NAME and AGE).
 *
 * @example
 * import * as Printers from "./Printers.ts"
 * Printers.lookup("apps", "Deployment")!.cells({ metadata: { name: "web" }, spec: { replicas: 3 }, status: { readyReplicas: 1 } }).slice(0, 2)
 * // ["web", "1/3"]
 */
export const lookup = (group: string, kind: string): Printer | undefined => printers[`${group}/${kind}`]

/**
 * A printer reading objects through `convert` first: a served version prints from the form the
 * printer knows (events.k8s.io Events as core Events, autoscaling/v1 HPAs as v2).
 *
 * @example
 * import * as Printers from "./Printers.ts"
 *  * const printer = Printers.contramap(Printers.lookup("", "Event")!, Events.toCore)
 * printer.cells({ note: "pulled", regarding: { kind: "Pod", name: "p" } })[3] // "pod/p"
 */
export const contramap = (printer: Printer, convert: (object: Json) => Json): Printer => ({
  columns: printer.columns,
  cells: (object) => printer.cells(convert(object))
})

