/**
 * What 1.32's endpoints and EndpointSlice controllers keep for a Service with a selector, from the
 * Pods it selects: an Endpoints object of its name (ready addresses, not-ready ones, the ports) and
 * an EndpointSlice labelled with its name, owned by it. Pure, for the workload simulator, whose Pods
 * are the ones that get addresses.
 */
import { KubeObject } from "@kubefx/schema/internal"

type Obj = Readonly<Record<string, unknown>>

const record = KubeObject.record

/** The label that names a slice's Service. */
export const serviceNameLabel = "kubernetes.io/service-name"
/** The label that names the controller that keeps a slice. */
export const managedByLabel = "endpointslice.kubernetes.io/managed-by"
export const managedBy = "endpointslice-controller.k8s.io"

/**
 * Whether the Service's selector selects the Pod (a Service without one selects none: its
 * endpoints are someone else's to keep).
 *
 * @example
 * import * as ServiceEndpoints from "./ServiceEndpoints.ts"
 * ServiceEndpoints.selects({ spec: { selector: { app: "web" } } }, { metadata: { labels: { app: "web", tier: "a" } } }) // true
 */
export const selects = (service: KubeObject.KubeObject, pod: KubeObject.KubeObject): boolean => {
  const selector = Object.entries(record(record(service.spec).selector))
  if (selector.length === 0) return false
  const labels = KubeObject.meta(pod).labels ?? {}
  return selector.every(([key, value]) => labels[key] === value)
}

/** Whether the endpoints controllers keep this Service's endpoints. */
export const kept = (service: KubeObject.KubeObject): boolean => {
  const spec = record(service.spec)
  return spec.type !== "ExternalName" && Object.keys(record(spec.selector)).length > 0
}

interface Endpoint {
  readonly ip: string
  readonly ready: boolean
  readonly terminating: boolean
  readonly pod: KubeObject.KubeObject
}

// A Pod counts once it has an address and until it ended; one being deleted, as terminating.
const endpointsOf = (pods: ReadonlyArray<KubeObject.KubeObject>): ReadonlyArray<Endpoint> =>
  pods.flatMap((pod) => {
    const status = record(pod.status)
    if (typeof status.podIP !== "string" || status.phase === "Succeeded" || status.phase === "Failed") return []
    const ready = KubeObject.records(status.conditions).some((c) => c.type === "Ready" && c.status === "True")
    return [{ ip: status.podIP, ready, terminating: KubeObject.meta(pod).deletionTimestamp !== undefined, pod }]
  })

// The node an endpoint's Pod runs on, as both controllers record it.
const onNode = (pod: KubeObject.KubeObject) => {
  const nodeName = record(pod.spec).nodeName
  return typeof nodeName === "string" && nodeName !== "" ? { nodeName } : {}
}

// A Service port's target on a Pod: a number, or the number of the container port of that name.
const targetPort = (port: Obj, pod: KubeObject.KubeObject | undefined): number | undefined => {
  const target = port.targetPort ?? port.port
  if (typeof target === "number") return target
  const named = KubeObject.records(record(pod?.spec).containers)
    .flatMap((c) => KubeObject.records(c.ports))
    .find((p) => p.name === target)
  return typeof named?.containerPort === "number" ? named.containerPort : undefined
}

const ports = (service: KubeObject.KubeObject, pod: KubeObject.KubeObject | undefined) =>
  KubeObject.records(record(service.spec).ports).flatMap((port) => {
    const target = targetPort(port, pod)
    return target === undefined ? [] : [{ name: typeof port.name === "string" ? port.name : "", port: target, protocol: port.protocol ?? "TCP" }]
  })

const reference = (pod: KubeObject.KubeObject) => {
  const m = KubeObject.meta(pod)
  return { kind: "Pod", namespace: m.namespace, name: m.name, uid: m.uid }
}

/**
 * The Endpoints object the endpoints controller keeps for the Service: one subset of the selected
 * Pods' addresses (ready ones as `addresses`, others as `notReadyAddresses`) and the Service's
 * ports resolved on them; no subset while no Pod has an address.
 *
 * @example
 * import * as ServiceEndpoints from "./ServiceEndpoints.ts"
 * ServiceEndpoints.endpoints({ metadata: { name: "web", namespace: "default" }, spec: { selector: { app: "web" }, ports: [{ port: 80 }] } }, []).subsets // undefined
 */
export const endpoints = (service: KubeObject.KubeObject, pods: ReadonlyArray<KubeObject.KubeObject>): KubeObject.KubeObject => {
  const m = KubeObject.meta(service)
  // Terminating Pods are left out, as the endpoints controller leaves them.
  const found = endpointsOf(pods).filter((e) => !e.terminating)
  const address = (e: Endpoint) => ({ ip: e.ip, ...onNode(e.pod), targetRef: reference(e.pod) })
  const ready = found.filter((e) => e.ready).map(address)
  const notReady = found.filter((e) => !e.ready).map(address)
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: m.name, namespace: m.namespace, labels: { ...KubeObject.meta(service).labels } },
    ...(found.length === 0 ? {} : {
      subsets: [{
        ...(ready.length === 0 ? {} : { addresses: ready }),
        ...(notReady.length === 0 ? {} : { notReadyAddresses: notReady }),
        ports: ports(service, found[0]?.pod)
      }]
    })
  }
}

/**
 * The EndpointSlice the EndpointSlice controller keeps for the Service (without its generated
 * name): every selected Pod with an address, terminating ones too, its readiness as conditions,
 * the ports resolved.
 *
 * @example
 * import * as ServiceEndpoints from "./ServiceEndpoints.ts"
 * ServiceEndpoints.slice({ metadata: { name: "web", namespace: "default", uid: "u" }, spec: { selector: { app: "web" }, ports: [{ port: 80 }] } }, []).endpoints // []
 */
export const slice = (service: KubeObject.KubeObject, pods: ReadonlyArray<KubeObject.KubeObject>): KubeObject.KubeObject => {
  const m = KubeObject.meta(service)
  const found = endpointsOf(pods)
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      generateName: `${m.name ?? ""}-`,
      namespace: m.namespace,
      labels: { ...KubeObject.meta(service).labels, [serviceNameLabel]: m.name ?? "", [managedByLabel]: managedBy },
      ownerReferences: [{ apiVersion: "v1", kind: "Service", name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
    },
    addressType: "IPv4",
    endpoints: found.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready && !e.terminating, serving: e.ready, terminating: e.terminating },
      ...onNode(e.pod),
      targetRef: reference(e.pod)
    })),
    ports: ports(service, found[0]?.pod)
  }
}
