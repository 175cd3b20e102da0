/**
 * The workload simulator's load balancers, as kube-controller-manager's service controller runs them
 * against a cloud (kind's cloud-provider-kind, MetalLB): a `LoadBalancer` Service without a
 * `loadBalancerClass` gets the cleanup finalizer and an address of the given pool in
 * `status.loadBalancer.ingress` (one waits, tried again, while the pool has none left); a Service
 * deleted, or no longer a load balancer, loses both. With the service controller's events.
 */
import { Duration, Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const component = "service-controller"

/** The finalizer the service controller keeps on a load balancer's Service until it is cleaned up. */
export const cleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup"

const wanted = (service: KubeObject.KubeObject) => {
  const spec = record(service.spec)
  return spec.type === "LoadBalancer" && spec.loadBalancerClass === undefined && KubeObject.meta(service).deletionTimestamp === undefined
}

const finalized = (service: KubeObject.KubeObject) => (KubeObject.meta(service).finalizers ?? []).includes(cleanupFinalizer)

const ingressOf = (service: KubeObject.KubeObject) => KubeObject.records(record(record(service.status).loadBalancer).ingress)

/**
 * Whether the service controller has something to do for the Service.
 *
 * @example
 * import * as LoadBalancerSimulation from "./LoadBalancerSimulation.ts"
 * LoadBalancerSimulation.concerns({ spec: { type: "LoadBalancer" } }) // true
 */
export const concerns = (service: KubeObject.KubeObject): boolean => wanted(service) || finalized(service)

/**
 * The host addresses of an IPv4 pool, as numbers, first and last ("172.18.255.200/29": .201 to
 * .206; a /31 or /32 has no network or broadcast address to leave out), or undefined when the
 * text is not an IPv4 CIDR.
 *
 * @example
 * import * as LoadBalancerSimulation from "./LoadBalancerSimulation.ts"
 * LoadBalancerSimulation.hosts("172.18.255.200/30") // [2886926281, 2886926282]: .201 and .202
 * LoadBalancerSimulation.hosts("172.18.300.0/24") // undefined
 */
export const hosts = (pool: string): readonly [first: number, last: number] | undefined => {
  const match = pool.match(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/)
  if (match === null) return undefined
  const octets = match.slice(1, 5).map(Number)
  const bits = Number(match[5])
  if (octets.some((o) => o > 255) || bits > 32) return undefined
  const size = 2 ** (32 - bits)
  const network = Math.floor((octets[0]! * 2 ** 24 + octets[1]! * 2 ** 16 + octets[2]! * 2 ** 8 + octets[3]!) / size) * size
  return size > 2 ? [network + 1, network + size - 2] : [network, network + size - 1]
}

// The pool's first address no Service holds, or undefined when none is left.
const firstFree = (pool: string, taken: ReadonlySet<string>): string | undefined => {
  const [first, last] = hosts(pool) ?? [1, 0]
  for (let n = first; n <= last; n++) {
    const address = [Math.floor(n / 2 ** 24), Math.floor(n / 2 ** 16) % 256, Math.floor(n / 2 ** 8) % 256, n % 256].join(".")
    if (!taken.has(address)) return address
  }
  return undefined
}

/**
 * One look at a Service: a load balancer ensured (finalizer, then an address of `pool` no other
 * Service holds), or cleaned up (address and finalizer gone) once it is deleted or no longer one.
 *
 * @example
 * import * as LoadBalancerSimulation from "./LoadBalancerSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const web: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = LoadBalancerSimulation.service(ctx, { storage: "services", namespace: "default", name: "web" }, web, "172.18.255.200/29")
 */
export const service = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  service: KubeObject.KubeObject,
  pool: string
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const event = (reason: string, message: string) =>
      ControllerEvents.record(ctx.env, ctx.writeOptions, service, component, { type: "Normal", reason, message })
    const withFinalizer = (add: boolean) =>
      ctx.update(key, undefined, (current) => {
        const rest = (KubeObject.meta(current).finalizers ?? []).filter((f) => f !== cleanupFinalizer)
        return KubeObject.withMeta(current, { finalizers: add ? [...rest, cleanupFinalizer] : rest })
      })
    if (!wanted(service)) {
      if (!finalized(service)) return
      const deleting = KubeObject.meta(service).deletionTimestamp !== undefined
      yield* event(deleting ? "DeletingLoadBalancer" : "Type", deleting ? "Deleting load balancer" : `LoadBalancer -> ${String(record(service.spec).type)}`)
      if (ingressOf(service).length > 0) yield* SimulatedController.writeStatus(ctx, key, (current) => ({ ...record(current.status), loadBalancer: {} }))
      yield* withFinalizer(false)
      yield* event("DeletedLoadBalancer", "Deleted load balancer")
      // Its address is free: the Services waiting for one are looked at again.
      for (const waiting of ctx.env.store.list("services", undefined)) {
        if (wanted(waiting) && ingressOf(waiting).length === 0) {
          yield* ctx.again({ storage: key.storage, namespace: KubeObject.meta(waiting).namespace ?? "", name: KubeObject.meta(waiting).name ?? "" }, Duration.zero)
        }
      }
      return
    }
    if (!finalized(service)) return yield* withFinalizer(true)
    if (ingressOf(service).length > 0) return
    yield* event("EnsuringLoadBalancer", "Ensuring load balancer")
    const taken = new Set(ctx.env.store.list("services", undefined).flatMap((other) => ingressOf(other).map((i) => String(i.ip))))
    const address = firstFree(pool, taken)
    if (address === undefined) {
      yield* ControllerEvents.record(ctx.env, ctx.writeOptions, service, component, {
        type: "Warning",
        reason: "SyncLoadBalancerFailed",
        message: `Error syncing load balancer: failed to ensure load balancer: no address left in ${pool}`
      })
      // Tried again as the service controller retries, and at once when an address is freed.
      return yield* ctx.again(key, Duration.seconds(5))
    }
    yield* SimulatedController.writeStatus(ctx, key, (current) => ({
      ...record(current.status),
      loadBalancer: { ingress: [{ ip: address, ipMode: "VIP" }] }
    }))
    yield* event("EnsuredLoadBalancer", "Ensured load balancer")
  })
