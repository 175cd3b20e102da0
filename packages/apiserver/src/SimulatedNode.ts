/**
 * The Node the workload simulator's kubelet registers, as a 1.32 kubelet registers itself: Ready,
 * with its addresses, capacity and system info, so that `kubectl get nodes` lists it and
 * DaemonSets run a pod on it; and the Lease in `kube-node-lease` it renews as a heartbeat. The simulator's scheduler binds pods to it and its kubelet runs them.
 */
import { createHash } from "node:crypto"
import { arch, cpus, release, totalmem } from "node:os"
import type * as ControllerEvents from "./ControllerEvents.ts"

export const name = "kubefx-node"

/** The address pods report as their host IP. */
export const address = "172.18.0.2"

const goArch = arch() === "x64" ? "amd64" : arch()

/**
 * The Node object as the kubelet creates it.
 *
 * @example
 * import * as SimulatedNode from "./SimulatedNode.ts"
 * SimulatedNode.node().metadata.labels["kubernetes.io/hostname"] // "kubefx-node"
 */
export const node = () => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: {
    name,
    labels: {
      "beta.kubernetes.io/arch": goArch,
      "beta.kubernetes.io/os": "linux",
      "kubernetes.io/arch": goArch,
      "kubernetes.io/hostname": name,
      "kubernetes.io/os": "linux"
    }
  },
  spec: { podCIDR: "10.244.0.0/16", podCIDRs: ["10.244.0.0/16"] }
})

/**
 * What the node has, as a kind node has it (the host's cpus and memory, 110 pods), with `overrides`
 * (a quantity per resource: `cpu`, `memory`, `pods`, an extended resource such as `nvidia.com/gpu`)
 * in their place; allocatable is the same.
 *
 * @example
 * import * as SimulatedNode from "./SimulatedNode.ts"
 * SimulatedNode.capacity({ cpu: "4", "nvidia.com/gpu": "1" }).pods // "110"
 */
export const capacity = (overrides: Readonly<Record<string, string>> = {}): Readonly<Record<string, string>> => ({
  cpu: String(cpus().length),
  "ephemeral-storage": "102400000Ki",
  "hugepages-1Gi": "0",
  "hugepages-2Mi": "0",
  memory: `${Math.floor(totalmem() / 1024)}Ki`,
  pods: "110",
  ...overrides
})

// The ids a node's kubelet reads from its machine, the same for the same node name (a node that
// restarts keeps them, as a machine does).
const machine = (() => {
  const digest = (what: string) => createHash("sha256").update(`${name} ${what}`).digest("hex")
  const uuid = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
  return { machineID: digest("machine").slice(0, 32), systemUUID: uuid(digest("system")), bootID: uuid(digest("boot")) }
})()

/**
 * The status the kubelet reports: Ready, no pressure, its capacity (`capacity`'s, by default the
 * host's) and system info.
 *
 * @example
 * import * as SimulatedNode from "./SimulatedNode.ts"
 * SimulatedNode.status("2026-01-01T00:00:00Z").conditions.find((c) => c.type === "Ready").status // "True"
 */
export const status = (now: string, has: Readonly<Record<string, string>> = capacity()) => {
  const condition = (type: string, value: string, reason: string, message: string) =>
    ({ type, status: value, lastHeartbeatTime: now, lastTransitionTime: now, reason, message })
  return {
    addresses: [{ type: "InternalIP", address }, { type: "Hostname", address: name }],
    allocatable: has,
    capacity: has,
    conditions: [
      condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
      condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
      condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
      condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      architecture: goArch,
      bootID: machine.bootID,
      containerRuntimeVersion: "containerd://1.7.24",
      kernelVersion: release(),
      kubeProxyVersion: "v1.32.0",
      kubeletVersion: "v1.32.0",
      machineID: machine.machineID,
      operatingSystem: "linux",
      osImage: "kubefx workload simulator",
      systemUUID: machine.systemUUID
    }
  }
}

/** How long a node's Lease lasts, and how often its kubelet renews it (a quarter of that). */
export const leaseDurationSeconds = 40

/** A time as a Lease's `renewTime` spells it (RFC 3339 with microseconds). */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

/**
 * The Lease the kubelet holds in `kube-node-lease` for its node, renewed at `now` (ms): held by the
 * node, owned by it, lasting 40 seconds.
 *
 * @example
 * import * as SimulatedNode from "./SimulatedNode.ts"
 * SimulatedNode.lease("u", Date.parse("2026-01-01T00:00:00Z")).spec.renewTime // "2026-01-01T00:00:00.000000Z"
 */
export const lease = (nodeUid: string, now: number) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: {
    name,
    namespace: "kube-node-lease",
    ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: nodeUid }]
  },
  spec: { holderIdentity: name, leaseDurationSeconds, renewTime: microTime(now) }
})

/**
 * The events a kubelet records about its node as it starts: `Starting`, its conditions' statuses,
 * the allocatable limit enforced, and `NodeReady`.
 *
 * @example
 * import * as SimulatedNode from "./SimulatedNode.ts"
 * SimulatedNode.startEvents()[0] // { type: "Normal", reason: "Starting", message: "Starting kubelet." }
 */
export const startEvents = (): ReadonlyArray<ControllerEvents.Event> => {
  const now = (status: string): ControllerEvents.Event => ({ type: "Normal", reason: status, message: `Node ${name} status is now: ${status}` })
  return [
    { type: "Normal", reason: "Starting", message: "Starting kubelet." },
    now("NodeHasSufficientMemory"),
    now("NodeHasNoDiskPressure"),
    now("NodeHasSufficientPID"),
    { type: "Normal", reason: "NodeAllocatableEnforced", message: "Updated Node Allocatable limit across pods" },
    now("NodeReady")
  ]
}
