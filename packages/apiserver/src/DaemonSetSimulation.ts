/**
 * The workload simulator's DaemonSet controller, as kube-controller-manager's runs it: a pod on
 * each node that should run one (the simulator's own node, and any other Node stored), pods no
 * longer wanted deleted, outdated ones replaced within `maxUnavailable`, its templates kept as
 * ControllerRevisions, the status counted from the pods, with the controller's events. The steps
 * are {@link DaemonSets}'.
 */
import { Duration, Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as ControllerRevisions from "./ControllerRevisions.ts"
import * as DaemonSets from "./DaemonSets.ts"
import * as Rest from "./Rest.ts"
import * as Rollouts from "./Rollouts.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const component = "daemonset-controller"

/**
 * kube-controller-manager's DaemonSet controller, one look at a DaemonSet.
 *
 * @example
 * import * as DaemonSetSimulation from "./DaemonSetSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const logs: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = DaemonSetSimulation.daemonSet(ctx, { storage: "daemonsets.apps", namespace: "kube-system", name: "logs" }, logs)
 */
export const daemonSet = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  daemonSet: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const { env } = ctx
    const pods = env.registry.byStorage("pods")[0]
    if (KubeObject.meta(daemonSet).deletionTimestamp !== undefined || pods === undefined) return
    const event = (recorded: ControllerEvents.Event) => ControllerEvents.record(env, ctx.writeOptions, daemonSet, component, recorded)
    const nodes = env.store.list("nodes", undefined)
    const own = () => SimulatedController.controlled(env, "pods", key.namespace, daemonSet)
    // The current template's revision, made or taken back as the newest (`kubectl rollout history`).
    const hash = DaemonSets.hash(daemonSet)
    const revisionName = `${key.name}-${hash}`
    if ((yield* ControllerRevisions.ensure(ctx, key.namespace, daemonSet, revisionName, { [DaemonSets.revisionLabel]: hash })) === undefined) return
    const step = DaemonSets.next(daemonSet, nodes, own(), Date.now())
    // A node's pod still terminating is waited for before its replacement is made.
    const terminating = new Set(SimulatedController.controlled(env, "pods", key.namespace, daemonSet, true)
      .filter((p) => KubeObject.meta(p).deletionTimestamp !== undefined)
      .map((p) => DaemonSets.nodeOf(p)))
    for (const node of step.create.filter((n) => !terminating.has(n))) {
      const made = yield* Effect.result(Rest.create(env, pods, key.namespace, DaemonSets.podFor(daemonSet, node), ctx.writeOptions))
      yield* event(made._tag === "Failure"
        ? { type: "Warning", reason: "FailedCreate", message: `Error creating: ${made.failure.message}` }
        : { type: "Normal", reason: "SuccessfulCreate", message: `Created pod: ${KubeObject.meta(made.success.object).name ?? ""}` })
      if (made._tag === "Failure") break
    }
    for (const pod of step.remove) {
      const m = KubeObject.meta(pod)
      const removed = yield* Effect.result(Rest.remove(env, { resource: pods, namespace: key.namespace, name: m.name ?? "" }, {
        propagationPolicy: undefined,
        preconditions: { uid: m.uid ?? "" },
        dryRun: false
      }))
      if (removed._tag === "Success") yield* event({ type: "Normal", reason: "SuccessfulDelete", message: `Deleted pod: ${m.name ?? ""}` })
    }
    // History beyond the limit, but for the revisions its pods run.
    const running = new Set([hash, ...own().map((p) => KubeObject.meta(p).labels?.[DaemonSets.revisionLabel] ?? "")])
    yield* ControllerRevisions.truncate(ctx, key.namespace, daemonSet, new Set([...running].map((h) => `${key.name}-${h}`)))
    const now = Date.now()
    yield* SimulatedController.writeStatus(ctx, key, (current) => DaemonSets.status(current, nodes, own(), now))
    // A pod waiting out minReadySeconds becomes available without an event: look again then.
    const minReady = KubeObject.number(KubeObject.record(daemonSet.spec).minReadySeconds)
    if (minReady > 0 && own().some((p) => Rollouts.podAvailable(p, 0, now) && !Rollouts.podAvailable(p, minReady, now))) {
      yield* ctx.again(key, Duration.seconds(minReady))
    }
  })
