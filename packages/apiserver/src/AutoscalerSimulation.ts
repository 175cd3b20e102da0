/**
 * The workload simulator's HorizontalPodAutoscaler controller, as kube-controller-manager's runs it
 * without metrics: the target's scale read (or `FailedGetScale`), held within `minReplicas` and
 * `maxReplicas` through its scale subresource, the metrics' failure stated (the resource metrics
 * API as discovery finds it: missing, or its APIService unavailable), the status and events
 * written, and a look again every 15 seconds. The decisions are {@link AutoscalerRuns}'.
 */
import { Duration, Effect } from "effect"
import * as ApiServices from "./ApiServices.ts"
import * as AutoscalerRuns from "./AutoscalerRuns.ts"
import * as ControllerEvents from "./ControllerEvents.ts"
import type * as Registry from "./Registry.ts"
import * as Rest from "./Rest.ts"
import * as Scale from "./Scale.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const component = "horizontal-pod-autoscaler"

/**
 * The resource an HPA's `scaleTargetRef` names (its group and kind, any served version with the
 * scale subresource).
 *
 * @example
 * import * as AutoscalerSimulation from "./AutoscalerSimulation.ts"
 * declare const registry: import("./Registry.ts").Registry
 * AutoscalerSimulation.targetResource(registry, { apiVersion: "apps/v1", kind: "Deployment", name: "web" })?.type.plural // "deployments"
 */
export const targetResource = (registry: Registry.Registry, ref: Readonly<Record<string, unknown>>): Registry.Resource | undefined => {
  const apiVersion = String(ref.apiVersion ?? "")
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0]! : ""
  return registry.all().find((r) => r.type.group === group && r.type.kind === ref.kind && r.type.subresources.scale !== undefined)
}

// What the resource metrics API answers, as the HPA controller's client reports it.
const metricsAnswer = (store: import("./Store.ts").Store) => {
  const apiService = ApiServices.remote(store, "metrics.k8s.io", "v1beta1")
  return apiService === undefined
    ? "the server could not find the requested resource"
    : "the server is currently unable to handle the request"
}

/**
 * kube-controller-manager's HPA controller, one look at an HPA.
 *
 * @example
 * import * as AutoscalerSimulation from "./AutoscalerSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const hpa: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = AutoscalerSimulation.autoscaler(ctx, { storage: "horizontalpodautoscalers.autoscaling", namespace: "default", name: "web" }, hpa)
 */
export const autoscaler = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  hpa: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const { env } = ctx
    if (KubeObject.meta(hpa).deletionTimestamp !== undefined) return
    const event = (recorded: ControllerEvents.Event) => ControllerEvents.record(env, ctx.writeOptions, hpa, component, recorded)
    const now = KubeObject.timestamp()
    yield* ctx.again(key, Duration.seconds(15))
    const ref = record(record(hpa.spec).scaleTargetRef)
    const resource = targetResource(env.registry, ref)
    const target = resource === undefined ? undefined : env.store.get(resource.storage, key.namespace, String(ref.name ?? ""))
    if (resource === undefined || target === undefined) {
      const name = String(ref.name ?? "")
      const what = resource === undefined
        ? `no matches for kind "${String(ref.kind ?? "")}" in group "${String(ref.apiVersion ?? "").split("/")[0]}"`
        : `${resource.type.group === "" ? resource.type.plural : `${resource.type.plural}.${resource.type.group}`} "${name}" not found`
      const message = `the HPA controller was unable to get the target's current scale: ${what}`
      const failed: AutoscalerRuns.Decision = {
        rescale: undefined,
        desired: KubeObject.number(record(hpa.status).desiredReplicas),
        conditions: [{ type: "AbleToScale", status: "False", reason: "FailedGetScale", message }],
        events: []
      }
      yield* SimulatedController.writeStatus(ctx, key, (current) => AutoscalerRuns.status(current, undefined, failed, now))
      return yield* event({ type: "Warning", reason: "FailedGetScale", message: what })
    }
    const scale = Scale.toScale(resource, Rest.present(env, resource, target))
    // kube's controller reads the target's current replicas from its scale's spec, not its status.
    const specReplicas = KubeObject.number(record(scale.spec).replicas)
    const decided = AutoscalerRuns.decide(hpa, specReplicas, metricsAnswer(env.store))
    // Looks here follow the target's every change, where kube's come every 15 seconds: a rescale
    // the target's spec already has (its pods still coming) is not made, nor recorded, again.
    const decision = decided.rescale === specReplicas ? { ...decided, rescale: undefined, events: [] } : decided
    if (decision.rescale !== undefined) {
      yield* ctx.update({ storage: resource.storage, namespace: key.namespace, name: String(ref.name) }, undefined, (current) =>
        KubeObject.setPath(current, resource.type.subresources.scale!.specReplicasPath, decision.rescale!))
    }
    yield* SimulatedController.writeStatus(ctx, key, (current) => AutoscalerRuns.status(current, specReplicas, decision, now))
    for (const recorded of decision.events) yield* event(recorded)
  })
