/**
 * Whether a node has room for a pod, as kube-scheduler's NodeResourcesFit and NodePorts filters
 * and the kubelet's admission decide it: the node's allocatable pods, cpu, memory,
 * ephemeral-storage and scalar resources (extended resources such as `nvidia.com/gpu`, hugepages)
 * against the requests of the pods already on it plus the pod's own (its containers' with their
 * sidecars, an init container's when larger, and its overhead); and the host ports its containers
 * ask for against those the pods on it hold. A Node with no `status.allocatable` (one a test
 * registers by hand, with no kubelet to post it) is not limited.
 */
import * as QuotaUsage from "./QuotaUsage.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

const record = KubeObject.record

/** A resource the node has too little of for the pod. */
export interface Shortfall {
  readonly resource: string
  /** The pod's request, the node's pods' requests and the node's allocatable, as quantities. */
  readonly requested: string
  readonly used: string
  readonly capacity: string
}

// The names kube-scheduler fits besides pods, cpu, memory and ephemeral-storage: extended
// resources (a domain-prefixed name), hugepages and attachable volumes.
const scalar = (name: string) => name.includes("/") || name.startsWith("hugepages-") || name.startsWith("attachable-volumes-")
const basic = ["cpu", "memory", "ephemeral-storage"]

const requests = (pod: KubeObject.KubeObject) => QuotaUsage.podResources(record(pod.spec), "requests")

/**
 * What `node` lacks to run `pod` beside `onNode` (the pods bound to it that have not ended), in
 * kube-scheduler's order: the pod count first, then (unless the pod requests nothing) each resource
 * the pod requests more of than is left. Empty when it fits.
 *
 * @example
 * import * as ResourceFit from "./ResourceFit.ts"
 * const node = { metadata: { name: "n" }, status: { allocatable: { cpu: "2", memory: "4Gi", pods: "110" } } }
 * const pod = (cpu: string) => ({ metadata: { name: cpu }, spec: { containers: [{ name: "c", resources: { requests: { cpu } } }] } })
 * ResourceFit.shortfalls(pod("1500m"), node, [pod("1")]) // [{ resource: "cpu", requested: "1500m", used: "1", capacity: "2" }]
 */
export const shortfalls = (
  pod: KubeObject.KubeObject,
  node: KubeObject.KubeObject,
  onNode: ReadonlyArray<KubeObject.KubeObject>
): ReadonlyArray<Shortfall> => {
  const allocatable = record(record(node.status).allocatable)
  // A Node a test registers without the status a kubelet posts has no limits.
  if (Object.keys(allocatable).length === 0) return []
  const out: Array<Shortfall> = []
  const pods = Number(allocatable.pods ?? 0)
  if (onNode.length + 1 > pods) out.push({ resource: "pods", requested: "1", used: String(onNode.length), capacity: String(pods) })
  const wanted = [...requests(pod)].filter(([name, quantity]) =>
    (basic.includes(name) || scalar(name)) && (QuantityMath.sign(quantity) ?? 0) > 0)
  if (wanted.length === 0) return out
  const used = new Map<string, Array<string>>()
  for (const other of onNode) {
    for (const [name, quantity] of requests(other)) used.set(name, [...used.get(name) ?? [], quantity])
  }
  // kube-scheduler checks cpu, memory and ephemeral-storage first; the message sorts reasons anyway.
  wanted.sort(([a], [b]) => Number(!basic.includes(a)) - Number(!basic.includes(b)) || basic.indexOf(a) - basic.indexOf(b) || a.localeCompare(b))
  for (const [resource, requested] of wanted) {
    const usedNow = QuantityMath.sum(used.get(resource) ?? [])
    const capacity = String(allocatable[resource] ?? "0")
    if ((QuantityMath.compare(QuantityMath.sum([usedNow, requested]), capacity) ?? 1) > 0) {
      out.push({ resource, requested, used: usedNow, capacity })
    }
  }
  return out
}

/**
 * kube-scheduler's reason for a shortfall: `Too many pods`, or `Insufficient <resource>`.
 *
 * @example
 * import * as ResourceFit from "./ResourceFit.ts"
 * ResourceFit.reason({ resource: "cpu", requested: "2", used: "1", capacity: "2" }) // "Insufficient cpu"
 */
export const reason = (shortfall: Shortfall): string =>
  shortfall.resource === "pods" ? "Too many pods" : `Insufficient ${shortfall.resource}`

// How the kubelet prints an amount: cpu in millicores, everything else in whole units.
const amount = (resource: string, quantity: string) =>
  String(Math.ceil(QuantityMath.toNumber(quantity) * (resource === "cpu" ? 1000 : 1)))

/**
 * The kubelet's refusal of a pod bound to a node without room for it (`OutOfcpu`, `OutOfpods`...),
 * as its status reason and message.
 *
 * @example
 * import * as ResourceFit from "./ResourceFit.ts"
 * ResourceFit.rejection({ resource: "cpu", requested: "3", used: "0", capacity: "2" })
 * // { reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000" }
 */
export const rejection = (shortfall: Shortfall): { readonly reason: string; readonly message: string } => ({
  reason: `OutOf${shortfall.resource}`,
  message: `Node didn't have enough resource: ${shortfall.resource}, requested: ${amount(shortfall.resource, shortfall.requested)}, ` +
    `used: ${amount(shortfall.resource, shortfall.used)}, capacity: ${amount(shortfall.resource, shortfall.capacity)}`
})

interface HostPort {
  readonly ip: string
  readonly protocol: string
  readonly port: number
}

const hostPorts = (pod: KubeObject.KubeObject): ReadonlyArray<HostPort> =>
  KubeObject.records(record(pod.spec).containers).flatMap((container) =>
    KubeObject.records(container.ports).flatMap((port) => {
      const number = Number(port.hostPort ?? 0)
      if (!(number > 0)) return []
      const ip = String(port.hostIP ?? "")
      return [{ ip: ip === "" ? "0.0.0.0" : ip, protocol: String(port.protocol ?? "TCP"), port: number }]
    })
  )

const conflict = (a: HostPort, b: HostPort) =>
  a.port === b.port && a.protocol === b.protocol && (a.ip === b.ip || a.ip === "0.0.0.0" || b.ip === "0.0.0.0")

/**
 * Whether a host port the pod's containers ask for is held on the node by one of `onNode` (the
 * same port and protocol, on the same address or on every address): kube-scheduler's NodePorts.
 *
 * @example
 * import * as ResourceFit from "./ResourceFit.ts"
 * const pod = (ip?: string) => ({ spec: { containers: [{ name: "c", ports: [{ containerPort: 80, hostPort: 8080, hostIP: ip }] }] } })
 * ResourceFit.portsTaken(pod(), [pod("10.0.0.1")]) // true
 */
export const portsTaken = (pod: KubeObject.KubeObject, onNode: ReadonlyArray<KubeObject.KubeObject>): boolean => {
  const wanted = hostPorts(pod)
  return wanted.length > 0 && onNode.some((other) => hostPorts(other).some((held) => wanted.some((port) => conflict(port, held))))
}
