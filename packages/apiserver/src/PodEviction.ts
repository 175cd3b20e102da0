/**
 * How kube's controllers take a running pod off its node (the scheduler preempting it, the taint
 * eviction controller evicting it): the pod marked `DisruptionTarget` with why, an event on it,
 * then a graceful deletion, its kubelet finishing it in its grace period.
 */
import { Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as PodRuns from "./PodRuns.ts"
import * as Rest from "./Rest.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** Why the pod goes: its `DisruptionTarget` condition's reason and message. */
export interface Why {
  readonly reason: string
  readonly message: string
}

/**
 * Evicts `pod`: `DisruptionTarget` as `why` says, `event` recorded on it by `component`, then
 * deleted with its grace period. A pod gone or replaced meanwhile is left alone.
 *
 * @example
 * import * as PodEviction from "./PodEviction.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pod: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const evicted = PodEviction.evict(ctx, pod, { reason: "DeletionByTaintManager", message: "Taint manager: deleting due to NoExecute taint" }, "taint-eviction-controller", {
 *   type: "Normal", reason: "TaintManagerEviction", message: "Marking for deletion Pod default/web"
 * })
 */
export const evict = (
  ctx: SimulatedController.Context,
  pod: KubeObject.KubeObject,
  why: Why,
  component: string,
  event: ControllerEvents.Event
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const m = KubeObject.meta(pod)
    const key = { storage: "pods", namespace: m.namespace ?? "", name: m.name ?? "" }
    yield* SimulatedController.writeStatus(ctx, key, (current) => PodRuns.disrupted(current, why.reason, why.message, KubeObject.timestamp()))
    yield* ControllerEvents.record(ctx.env, ctx.writeOptions, pod, component, event)
    const resource = ctx.env.registry.byStorage("pods")[0]
    if (resource === undefined) return
    yield* Rest.remove(ctx.env, { resource, namespace: key.namespace, name: key.name }, {
      propagationPolicy: undefined,
      gracePeriodSeconds: undefined,
      preconditions: { uid: m.uid ?? "" },
      dryRun: false
    }).pipe(Effect.asVoid, Effect.catchIf((error: Status.ApiError) => error.code === 404 || error.code === 409, () => Effect.void))
  })
