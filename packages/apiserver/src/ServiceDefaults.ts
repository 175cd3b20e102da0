/**
 * What 1.32 gives a Service on create and keeps on update: its type, port and policy defaults,
 * a cluster IP from the service range (10.96.0.0/12) and node ports from 30000-32767, the IP
 * family fields, and on update the allocated values an update omits.
 *
 * Addresses are picked from a hash of the Service's namespace and name, not from a shared
 * allocation table: this keeps the defaulter a pure function of the write (no store access), and
 * a Service keeps its address when it is deleted and created again, or when the server restarts.
 * Two Services may share an address only on a hash collision (about one chance in a million per
 * pair); the address of the `kubernetes` Service (10.96.0.1) is never picked.
 */
import { createHash } from "node:crypto"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

/** The service range of the cluster this server plays. */
export const serviceCidr = "10.96.0.0/12"
/** The address of the `kubernetes` Service, the first of the range. */
export const kubernetesServiceIP = "10.96.0.1"
/** The node port range. */
export const nodePortMin = 30000
export const nodePortMax = 32767

/**
 * True for an IPv4 address inside {@link serviceCidr}.
 *
 * @example
 * import * as ServiceDefaults from "./ServiceDefaults.ts"
 * ServiceDefaults.inServiceRange("10.100.3.4") // true
 * ServiceDefaults.inServiceRange("10.112.0.1") // false
 */
export const inServiceRange = (ip: string): boolean => {
  const parts = ip.split(".").map(Number)
  return parts.length === 4 && parts[0] === 10 && parts[1]! >= 96 && parts[1]! <= 111 && parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 255)
}

const pick = (seed: string, size: number, attempt: number): number =>
  createHash("sha256").update(`${seed}#${attempt}`).digest().readUInt32BE(0) % size

/**
 * The cluster IP of the Service `namespace/name`: inside the range, never its network address,
 * its broadcast address or 10.96.0.1.
 *
 * @example
 * import * as ServiceDefaults from "./ServiceDefaults.ts"
 * ServiceDefaults.clusterIP("default/web") === ServiceDefaults.clusterIP("default/web") // true
 */
export const clusterIP = (seed: string): string => {
  const offset = 2 + pick(seed, (1 << 20) - 3, 0)
  return `10.${96 + (offset >> 16)}.${(offset >> 8) & 255}.${offset & 255}`
}

const nodePort = (seed: string, index: number): number => nodePortMin + pick(seed, nodePortMax - nodePortMin + 1, index)

const needsClusterIP = (spec: Json) => spec.type !== "ExternalName"
const needsNodePorts = (spec: Json) =>
  spec.type === "NodePort" || (spec.type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts !== false)

// 1.32 carries a port's node port over an update by the port's name (patchAllocatedValues); the
// ports' node ports are allocated only with `allocate`.
const ports = (spec: Json, oldSpec: Json | undefined, seed: string, allocate: boolean): ReadonlyArray<Json> => {
  const keep = oldSpec !== undefined && needsNodePorts(oldSpec) && needsNodePorts(spec)
  const used = new Set(KubeObject.records(spec.ports).map((p) => p.nodePort).filter((n) => n !== undefined && n !== 0))
  return KubeObject.records(spec.ports).map((p, i) => {
    const previous = keep ? KubeObject.records(oldSpec.ports).find((o) => (o.name ?? "") === (p.name ?? ""))?.nodePort : undefined
    const allocated = p.nodePort !== undefined && p.nodePort !== 0
      ? p.nodePort
      : previous !== undefined && !used.has(previous)
      ? previous
      : nodePort(seed, i)
    const targetPort = p.targetPort === undefined || p.targetPort === 0 || p.targetPort === "" ? p.port : p.targetPort
    return { ...p, protocol: p.protocol ?? "TCP", targetPort, ...(allocate && needsNodePorts(spec) ? { nodePort: allocated } : {}) }
  })
}

/** clusterIP and clusterIPs as 1.32 reconciles them (normalizeClusterIPs, patchAllocatedValues). */
const addresses = (spec: Json, oldSpec: Json | undefined, seed: string): Json => {
  const carried = oldSpec !== undefined && needsClusterIP(oldSpec)
  let ip = spec.clusterIP as string | undefined
  let ips = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0 ? spec.clusterIPs as ReadonlyArray<string> : undefined
  if (carried && (ip === undefined || ip === "")) ip = oldSpec.clusterIP as string | undefined
  if (carried && ips === undefined && Array.isArray(oldSpec.clusterIPs) && ip === oldSpec.clusterIPs[0]) ips = oldSpec.clusterIPs
  if ((ip === undefined || ip === "") && ips !== undefined) ip = ips[0]
  if (ip === undefined || ip === "") ip = clusterIP(seed)
  return { clusterIP: ip, clusterIPs: ips ?? [ip] }
}

// Headless Services without a selector are dual-stack when they can be (a decode-time default).
const dualStack = (spec: Json, ip: unknown): boolean => ip === "None" && Object.keys(KubeObject.record(spec.selector)).length === 0

const families = (spec: Json, ip: string): Json => ({
  ipFamilies: spec.ipFamilies ?? ["IPv4"],
  ipFamilyPolicy: spec.ipFamilyPolicy ?? (dualStack(spec, ip) ? "RequireDualStack" : "SingleStack")
})

const affinity = (spec: Json): Json => {
  const sessionAffinity = spec.sessionAffinity ?? "None"
  if (sessionAffinity === "None") return { sessionAffinity, sessionAffinityConfig: undefined }
  const clientIP = KubeObject.record(KubeObject.record(spec.sessionAffinityConfig).clientIP)
  return { sessionAffinity, sessionAffinityConfig: { clientIP: { ...clientIP, timeoutSeconds: clientIP.timeoutSeconds ?? 10800 } } }
}

const compact = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/**
 * A Service with 1.32's defaults, as kube-apiserver sets them when it decodes a write, before
 * admission: its type, ports' protocols and targets, traffic and affinity policies; not yet the
 * addresses and node ports {@link allocated} adds after admission. `old` is the stored Service on
 * update.
 *
 * @example
 * import * as ServiceDefaults from "./ServiceDefaults.ts"
 * const svc = ServiceDefaults.service({ metadata: { name: "web", namespace: "default" }, spec: { ports: [{ port: 80 }] } }, undefined)
 * svc.spec.type // "ClusterIP"
 * svc.spec.clusterIP // undefined
 */
export const service = (object: Json, old: Json | undefined): Json => withDefaults(object, old, false)

/**
 * The Service with its defaults and what the registry allocates once admission is past: a cluster
 * IP (and `clusterIPs`, IP families), node ports, a health check node port; on update the
 * allocated values the write omits, carried over.
 *
 * @example
 * import * as ServiceDefaults from "./ServiceDefaults.ts"
 * ServiceDefaults.allocated({ metadata: { name: "web", namespace: "default" }, spec: { ports: [{ port: 80 }] } }, undefined).spec.clusterIP
 * // ServiceDefaults.clusterIP("default/web")
 */
export const allocated = (object: Json, old: Json | undefined): Json => withDefaults(object, old, true)

const withDefaults = (object: Json, old: Json | undefined, allocate: boolean): Json => {
  const given = KubeObject.record(object.spec)
  const type = given.type ?? "ClusterIP"
  const spec: Json = { ...given, type }
  const oldSpec = old === undefined ? undefined : KubeObject.record(old.spec)
  const m = KubeObject.meta(object)
  const seed = `${m.namespace}/${m.name}`
  const base = { ...spec, ...affinity(spec), ...(Array.isArray(spec.ports) ? { ports: ports(spec, oldSpec, seed, allocate) } : {}) }
  if (type === "ExternalName") return { ...object, spec: compact(base) }
  const ips = allocate ? addresses(spec, oldSpec, seed) : {}
  const external = type === "NodePort" || type === "LoadBalancer" || (type === "ClusterIP" && KubeObject.records(spec.externalIPs).length > 0)
  const externalTrafficPolicy = external ? spec.externalTrafficPolicy ?? "Cluster" : spec.externalTrafficPolicy
  const healthCheck = allocate && type === "LoadBalancer" && externalTrafficPolicy === "Local"
    ? { healthCheckNodePort: spec.healthCheckNodePort ?? oldSpec?.healthCheckNodePort ?? nodePort(seed, 1000) }
    : {}
  return {
    ...object,
    spec: compact({
      ...base,
      ...ips,
      ...(allocate
        ? families(spec, String(ips.clusterIP))
        : dualStack(spec, spec.clusterIP) && spec.ipFamilyPolicy === undefined ? { ipFamilyPolicy: "RequireDualStack" } : {}),
      internalTrafficPolicy: spec.internalTrafficPolicy ?? "Cluster",
      externalTrafficPolicy,
      ...healthCheck,
      ...(type === "LoadBalancer" ? { allocateLoadBalancerNodePorts: spec.allocateLoadBalancerNodePorts ?? true } : {})
    })
  }
}

const usesNodePorts = (spec: Json) => spec.type === "NodePort" || spec.type === "LoadBalancer"
const same = (a: unknown, b: unknown) => KubeObject.equals(a, b)

/**
 * What 1.32's registry clears when an update changes a Service's type (dropTypeDependentFields): the
 * values the old type needed and the write left as they were (node ports, the health check node
 * port, `allocateLoadBalancerNodePorts`, `loadBalancerClass`, `externalTrafficPolicy`; the
 * addresses and IP families for an ExternalName), and the load balancer status of a Service that
 * is no longer one. So `kubectl patch svc web -p '{"spec":{"type":"ClusterIP"}}'` is valid.
 *
 * @example
 * import * as ServiceDefaults from "./ServiceDefaults.ts"
 * const old = { spec: { type: "NodePort", ports: [{ port: 80, nodePort: 30080 }], externalTrafficPolicy: "Cluster" } }
 * ServiceDefaults.prepareUpdate({ spec: { ...old.spec, type: "ClusterIP" } }, old).spec.ports[0].nodePort // undefined
 */
export const prepareUpdate = (object: Json, old: Json): Json => {
  const spec: Record<string, unknown> = { ...KubeObject.record(object.spec) }
  const oldSpec = KubeObject.record(old.spec)
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (same(spec.clusterIP, oldSpec.clusterIP) && same(spec.clusterIPs, oldSpec.clusterIPs)) {
      delete spec.clusterIP
      delete spec.clusterIPs
    }
    if (same(spec.ipFamilies, oldSpec.ipFamilies)) delete spec.ipFamilies
    if (same(spec.ipFamilyPolicy, oldSpec.ipFamilyPolicy)) delete spec.ipFamilyPolicy
  }
  // Only when the write adds no node port of its own (a new one fails validation instead).
  const nodePorts = (s: Json) => new Set(KubeObject.records(s.ports).map((p) => p.nodePort).filter((n) => n !== undefined && n !== 0))
  const oldNodePorts = nodePorts(oldSpec)
  if (usesNodePorts(oldSpec) && !usesNodePorts(spec) && [...nodePorts(spec)].every((n) => oldNodePorts.has(n))) {
    spec.ports = KubeObject.records(spec.ports).map(({ nodePort: _, ...port }) => port)
  }
  const healthChecked = (s: Json) => s.type === "LoadBalancer" && s.externalTrafficPolicy === "Local"
  if (healthChecked(oldSpec) && !healthChecked(spec) && same(spec.healthCheckNodePort, oldSpec.healthCheckNodePort)) delete spec.healthCheckNodePort
  if (oldSpec.type === "LoadBalancer" && spec.type !== "LoadBalancer") {
    if (spec.allocateLoadBalancerNodePorts !== undefined && same(spec.allocateLoadBalancerNodePorts, oldSpec.allocateLoadBalancerNodePorts)) {
      delete spec.allocateLoadBalancerNodePorts
    }
    if (same(spec.loadBalancerClass, oldSpec.loadBalancerClass)) delete spec.loadBalancerClass
  }
  if (usesNodePorts(oldSpec) && !usesNodePorts(spec) && same(spec.externalTrafficPolicy, oldSpec.externalTrafficPolicy)) delete spec.externalTrafficPolicy
  const status = KubeObject.record(object.status)
  const balanced = spec.type === "LoadBalancer" || status.loadBalancer === undefined
  return { ...object, spec, ...(balanced ? {} : { status: { ...status, loadBalancer: {} } }) }
}
