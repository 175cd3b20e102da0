/**
 * The `kubernetes` Service of the `default` namespace, as kube-apiserver's bootstrap controller
 * keeps it: 10.96.0.1, port 443 (`https`) to the server's own port, its Endpoints and EndpointSlice
 * the address clients reach the server at; made again when deleted, its endpoints kept to the
 * server's address when it restarts on another port.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import * as ServiceDefaults from "./ServiceDefaults.ts"
import type * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

export const name = "kubernetes"
export const namespace = "default"

const writeOptions: Rest.WriteOptions = { dryRun: false, fieldManager: "kube-apiserver", fieldValidation: "Ignore" }

/**
 * The Service, as the bootstrap controller makes it.
 *
 * @example
 * import * as KubernetesService from "./KubernetesService.ts"
 * KubernetesService.service(6443).spec.clusterIP // "10.96.0.1"
 */
export const service = (port: number) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace, labels: { component: "apiserver", provider: "kubernetes" } },
  spec: {
    type: "ClusterIP",
    clusterIP: ServiceDefaults.kubernetesServiceIP,
    sessionAffinity: "None",
    ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: port }]
  }
})

/**
 * Its Endpoints: the server's address and port (not mirrored into another EndpointSlice).
 *
 * @example
 * import * as KubernetesService from "./KubernetesService.ts"
 * KubernetesService.endpoints("127.0.0.1", 6443).subsets[0].ports[0].port // 6443
 */
export const endpoints = (host: string, port: number) => ({
  apiVersion: "v1",
  kind: "Endpoints",
  metadata: { name, namespace, labels: { "endpointslice.kubernetes.io/skip-mirror": "true" } },
  subsets: [{ addresses: [{ ip: host }], ports: [{ name: "https", port, protocol: "TCP" }] }]
})

/**
 * Its EndpointSlice, named as the Service.
 *
 * @example
 * import * as KubernetesService from "./KubernetesService.ts"
 * KubernetesService.slice("127.0.0.1", 6443).endpoints[0].addresses // ["127.0.0.1"]
 */
export const slice = (host: string, port: number) => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
  addressType: host.includes(":") ? "IPv6" : "IPv4",
  endpoints: [{ addresses: [host], conditions: { ready: true } }],
  ports: [{ name: "https", port, protocol: "TCP" }]
})

// Made when missing; put back as `restore` makes it when `same` says it differs.
const ensure = (
  env: Rest.Env,
  storage: string,
  wanted: KubeObject.KubeObject,
  same: (stored: KubeObject.KubeObject) => boolean,
  restore: (current: KubeObject.KubeObject) => KubeObject.KubeObject
) =>
  Effect.gen(function*() {
    const resource = env.registry.byStorage(storage)[0]
    if (resource === undefined) return
    const stored = env.store.get(storage, namespace, name)
    if (stored === undefined) return yield* Effect.asVoid(Rest.create(env, resource, namespace, wanted, writeOptions))
    if (same(stored)) return
    yield* Effect.asVoid(Rest.update(env, { resource, namespace, name }, undefined, writeOptions, (current) => Effect.succeed(restore(current))))
  })

/**
 * Makes the Service and its endpoints what they should be for a server reached at `host`:`port`.
 *
 * @example
 * import * as KubernetesService from "./KubernetesService.ts"
 * declare const env: import("./Rest.ts").Env
 * const kept = KubernetesService.reconcile(env, "127.0.0.1", 6443)
 */
export const reconcile = (env: Rest.Env, host: string, port: number): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    if (env.store.get("namespaces", "", namespace) === undefined) return
    const wantedService = service(port)
    yield* ensure(env, "services", wantedService, (stored) => KubeObject.equals(KubeObject.record(stored.spec).ports, wantedService.spec.ports), (current) =>
      ({ ...current, spec: { ...KubeObject.record(current.spec), ports: wantedService.spec.ports } }))
    const wantedEndpoints = endpoints(host, port)
    yield* ensure(env, "endpoints", wantedEndpoints, (stored) => KubeObject.equals(stored.subsets, wantedEndpoints.subsets), (current) =>
      ({ ...current, subsets: wantedEndpoints.subsets }))
    const wantedSlice = slice(host, port)
    yield* ensure(env, "endpointslices.discovery.k8s.io", wantedSlice, (stored) =>
      KubeObject.equals(stored.endpoints, wantedSlice.endpoints) && KubeObject.equals(stored.ports, wantedSlice.ports), (current) =>
      ({ ...current, addressType: wantedSlice.addressType, endpoints: wantedSlice.endpoints, ports: wantedSlice.ports }))
  })

/**
 * Whether a store event touches what {@link reconcile} keeps.
 *
 * @example
 * import * as KubernetesService from "./KubernetesService.ts"
 * KubernetesService.concerns({ type: "DELETED", storage: "services", namespace: "default", object: { metadata: { name: "kubernetes" } } } as never) // true
 */
export const concerns = (event: Store.Event): boolean =>
  event.namespace === namespace && KubeObject.meta(event.object).name === name &&
  (event.storage === "services" || event.storage === "endpoints" || event.storage === "endpointslices.discovery.k8s.io")
