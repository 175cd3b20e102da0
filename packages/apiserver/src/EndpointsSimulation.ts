/**
 * The workload simulator's endpoints and EndpointSlice controllers, as kube-controller-manager's
 * run them: a selecting Service's Endpoints and its EndpointSlice hold the addresses of the Pods it
 * selects (the shapes are {@link ServiceEndpoints}'), and its Endpoints go with it.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import * as ServiceEndpoints from "./ServiceEndpoints.ts"
import type * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

/**
 * One look at a Service: its Endpoints and EndpointSlice made, or brought to the Pods it selects.
 *
 * @example
 * import * as EndpointsSimulation from "./EndpointsSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const web: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = EndpointsSimulation.endpoints(ctx, { storage: "services", namespace: "default", name: "web" }, web)
 */
export const endpoints = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  service: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const { env } = ctx
    if (!ServiceEndpoints.kept(service)) return
    const pods = env.store.list("pods", key.namespace).filter((pod) => ServiceEndpoints.selects(service, pod))
    const endpointsResource = env.registry.byStorage("endpoints")[0]
    const slices = env.registry.byStorage("endpointslices.discovery.k8s.io")[0]
    if (endpointsResource === undefined || slices === undefined) return
    const wanted = ServiceEndpoints.endpoints(service, pods)
    const stored = env.store.get("endpoints", key.namespace, key.name)
    if (stored === undefined) yield* Effect.ignore(Rest.create(env, endpointsResource, key.namespace, wanted, ctx.writeOptions))
    else if (!KubeObject.equals(stored.subsets, wanted.subsets)) {
      yield* ctx.update({ storage: "endpoints", namespace: key.namespace, name: key.name }, undefined, (current) => {
        const { subsets: _, ...rest } = current
        return wanted.subsets === undefined ? rest : { ...rest, subsets: wanted.subsets }
      })
    }
    const slice = ServiceEndpoints.slice(service, pods)
    const own = env.store.list("endpointslices.discovery.k8s.io", key.namespace).filter((s) =>
      KubeObject.meta(s).labels?.[ServiceEndpoints.serviceNameLabel] === key.name &&
      KubeObject.meta(s).labels?.[ServiceEndpoints.managedByLabel] === ServiceEndpoints.managedBy)
    const first = own[0]
    if (first === undefined) return yield* Effect.ignore(Rest.create(env, slices, key.namespace, slice, ctx.writeOptions))
    if (KubeObject.equals(first.endpoints, slice.endpoints) && KubeObject.equals(first.ports, slice.ports)) return
    yield* ctx.update({ storage: "endpointslices.discovery.k8s.io", namespace: key.namespace, name: KubeObject.meta(first).name ?? "" }, undefined, (current) =>
      ({ ...current, endpoints: slice.endpoints, ports: slice.ports }))
  })

/**
 * A deleted Service's Endpoints deleted with it (its slices are owned, and collected).
 *
 * @example
 * import * as EndpointsSimulation from "./EndpointsSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * const gone = EndpointsSimulation.forget(ctx, "default", "web")
 */
export const forget = (ctx: SimulatedController.Context, namespace: string, name: string): Effect.Effect<void> => {
  const resource = ctx.env.registry.byStorage("endpoints")[0]
  return resource === undefined
    ? Effect.void
    : Effect.ignore(Rest.remove(ctx.env, { resource, namespace, name }, { propagationPolicy: undefined, preconditions: undefined, dryRun: false }))
}
