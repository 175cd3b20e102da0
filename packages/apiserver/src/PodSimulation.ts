/**
 * The workload simulator's scheduler and kubelets for a Pod: kube-scheduler binds a Pod to a node
 * it fits (its node selector, required node affinity and tolerations, room for its requests and
 * host ports, its topology spread constraints, the required pod affinity and anti-affinity of it
 * and the pods already placed; the simulated node first), preempting pods of lower priority where
 * that makes room, or marks it `Unschedulable` with its `FailedScheduling` event; each Ready node's
 * kubelet (the simulated node's, and one for every Node a test registers) admits the Pods bound to
 * it that it has room for, runs them, and stops one being deleted (`Killing`), reports it ended,
 * and deletes it for good, as a kubelet finishes a graceful deletion. A node whose `Ready`
 * condition is not true has no kubelet (its taints are {@link NodeLifecycle}'s). The pod garbage
 * collector fails and deletes a Pod bound to a node that is gone, and one left Terminating on a node
 * declared out of service.
 */
import { Effect } from "effect"
import * as Bindings from "./Bindings.ts"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as NodeLifecycle from "./NodeLifecycle.ts"
import * as PodRuns from "./PodRuns.ts"
import * as Preemption from "./Preemption.ts"
import * as ResourceFit from "./ResourceFit.ts"
import * as Rest from "./Rest.ts"
import * as Scheduling from "./Scheduling.ts"
import * as Scoring from "./Scoring.ts"
import * as SimulatedController from "./SimulatedController.ts"
import * as SimulatedNode from "./SimulatedNode.ts"
import type * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import * as TopologySpread from "./TopologySpread.ts"
import * as VolumeSimulation from "./VolumeSimulation.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

const nodeName = (pod: KubeObject.KubeObject): string => {
  const name = record(pod.spec).nodeName
  return typeof name === "string" ? name : ""
}


/**
 * Whether a kubelet runs the Pod: it is bound to a Node that is there and ready.
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const store: import("./Store.ts").Store
 * PodSimulation.runs(store, { spec: { nodeName: "kubefx-node" } })
 */
export const runs = (store: Store.Store, pod: KubeObject.KubeObject): boolean => {
  const node = nodeName(pod) === "" ? undefined : store.get("nodes", "", nodeName(pod))
  return node !== undefined && NodeLifecycle.ready(node)
}

/**
 * Whether the Pod waits for the default scheduler: on no node, not gated, and the default
 * scheduler's (another scheduler's Pods are left to it).
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * PodSimulation.unbound({ spec: { schedulerName: "default-scheduler" } }) // true
 */
export const unbound = (pod: KubeObject.KubeObject): boolean => {
  const spec = record(pod.spec)
  return nodeName(pod) === "" && (spec.schedulerName ?? "default-scheduler") === "default-scheduler" &&
    KubeObject.records(spec.schedulingGates).length === 0
}

/**
 * Whether the scheduler found no node for the Pod last time it looked.
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * PodSimulation.unschedulable({ spec: {}, status: { conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable" }] } }) // true
 */
export const unschedulable = (pod: KubeObject.KubeObject): boolean =>
  unbound(pod) && KubeObject.records(record(pod.status).conditions).some((c) => c.type === "PodScheduled" && c.reason === "Unschedulable")

/**
 * Whether a kubelet has a deletion to finish: the Pod runs and is being deleted.
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const store: import("./Store.ts").Store
 * PodSimulation.terminating(store, { metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" }, spec: { nodeName: "kubefx-node" } })
 */
export const terminating = (store: Store.Store, pod: KubeObject.KubeObject): boolean =>
  KubeObject.meta(pod).deletionTimestamp !== undefined && runs(store, pod)

const podTarget = (ctx: SimulatedController.Context, pod: KubeObject.KubeObject): Rest.Target | undefined => {
  const resource = ctx.env.registry.byStorage("pods")[0]
  const m = KubeObject.meta(pod)
  return resource === undefined ? undefined : { resource, namespace: m.namespace ?? "", name: m.name ?? "" }
}

/**
 * kube-scheduler's look at an unbound Pod: bound to the simulated node (its `Scheduled` event)
 * when it fits there; otherwise `PodScheduled` false, `Unschedulable`, with the scheduler's message
 * and a `FailedScheduling` event, after preempting pods of lower priority on a node where their
 * going would let it in (it is then nominated there). Answers whether it was bound.
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pod: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const bound = PodSimulation.schedule(ctx, { storage: "pods", namespace: "default", name: "web" }, pod)
 */
export const schedule = (ctx: SimulatedController.Context, key: SimulatedController.Key, pod: KubeObject.KubeObject): Effect.Effect<boolean, Status.ApiError> =>
  Effect.gen(function*() {
    const target = podTarget(ctx, pod)
    if (target === undefined) return false
    // A node that is not ready carries the node lifecycle controller's not-ready taint.
    const nodes = [...ctx.env.store.list("nodes", undefined)]
      .sort((a, b) => Number(KubeObject.meta(b).name === SimulatedNode.name) - Number(KubeObject.meta(a).name === SimulatedNode.name))
    // The pods already on nodes, as the scheduler's cache holds them (ended ones left out).
    const byName = new Map(nodes.map((node) => [KubeObject.meta(node).name ?? "", node]))
    const pods = ctx.env.store.list("pods", undefined)
    const placed = pods.flatMap((other) => {
      const on = byName.get(nodeName(other))
      return on === undefined || PodRuns.done(other) ? [] : [{ pod: other, node: on }]
    })
    const namespaceLabels = (namespace: string) => KubeObject.meta(ctx.env.store.get("namespaces", "", namespace) ?? {}).labels ?? {}
    const volumes = VolumeSimulation.binding(ctx.env.store, pod)
    const held = volumes._tag !== "Unresolvable" && VolumeSimulation.heldReadWriteOncePod(ctx.env.store, pod)
    const spec = record(pod.spec)
    const mine = Preemption.priorityOf(pod)
    const uid = KubeObject.meta(pod).uid
    // Pods nominated to a node after preempting there hold their room against pods of no higher priority.
    const nominated = pods.filter((other) =>
      nodeName(other) === "" && KubeObject.meta(other).uid !== uid && typeof record(other.status).nominatedNodeName === "string" &&
      Preemption.priorityOf(other) >= mine && PodRuns.pending(other)
    )
    // kube-scheduler's filters in its order: the node itself, host ports, requests, volumes, spread, other pods.
    const misfitOn = (node: KubeObject.KubeObject, on: ReadonlyArray<Scheduling.Placed>): Scheduling.Misfit | undefined => {
      const misfit = Scheduling.misfit(spec, node)
      if (misfit !== undefined) return misfit
      const name = KubeObject.meta(node).name
      const onNode = [
        ...on.flatMap((p) => p.node === node ? [p.pod] : []),
        ...nominated.filter((other) => record(other.status).nominatedNodeName === name)
      ]
      if (ResourceFit.portsTaken(pod, onNode)) return { _tag: "Ports" }
      const short = ResourceFit.shortfalls(pod, node, onNode)
      if (short.length > 0) return { _tag: "Insufficient", reasons: short.map(ResourceFit.reason) }
      if (held) return { _tag: "ReadWriteOncePod" }
      return TopologySpread.misfit(pod, node, nodes, on) ?? Scheduling.podMisfit(pod, node, on, namespaceLabels)
    }
    const misfits: Array<Scheduling.Misfit> = []
    const feasible = volumes._tag === "Unresolvable" ? [] : nodes.filter((node) => {
      const why = misfitOn(node, placed)
      if (why !== undefined) misfits.push(why)
      return why === undefined
    })
    // Of the nodes that will do, the one kube-scheduler's scoring prefers.
    const fit = feasible.length <= 1 ? feasible[0] : Scoring.best({ pod, feasible, nodes, placed, namespaceLabels, spreadSelector: spreadSelector(ctx.env.store, pod) })
    const event = (recorded: ControllerEvents.Event) => ControllerEvents.record(ctx.env, ctx.writeOptions, pod, "default-scheduler", recorded)
    const unschedulable = (message: string, nominee?: string) => markUnschedulable(ctx, key, pod, message, nominee)
    if (fit !== undefined) {
      const m = KubeObject.meta(pod)
      const node = KubeObject.meta(fit).name ?? ""
      // Claims that wait for their first pod get its node, and the pod is bound once they are.
      if (volumes._tag === "Waiting") {
        yield* VolumeSimulation.select(ctx, volumes.claims, node)
        return false
      }
      const bound = yield* Effect.result(Bindings.bind(ctx.env, target, { metadata: { name: m.name, uid: m.uid }, target: { kind: "Node", name: node } }, false))
      if (bound._tag === "Failure") return false
      yield* event({ type: "Normal", reason: "Scheduled", message: `Successfully assigned ${m.namespace ?? ""}/${m.name ?? ""} to ${node}` })
      return true
    }
    if (volumes._tag === "Unresolvable") return yield* unschedulable(Scheduling.unresolvable(nodes.length, volumes.reason))
    // No node has room: preemption, where taking pods of lower priority off a node lets the pod in.
    const nominatedTo = record(pod.status).nominatedNodeName
    const refusal = Preemption.ineligible(pod, placed.flatMap((p) => KubeObject.meta(p.node).name === nominatedTo ? [p.pod] : []))
    if (refusal !== undefined) return yield* unschedulable(Scheduling.unschedulable(misfits, refusal))
    const budgets = ctx.env.store.list("poddisruptionbudgets.policy", undefined)
    const chosen = held ? undefined : Preemption.pick(nodes.flatMap((node) => {
      if (Scheduling.misfit(spec, node) !== undefined) return []
      const onNode = placed.flatMap((p) => p.node === node ? [p.pod] : [])
      const elsewhere = placed.filter((p) => p.node !== node)
      const fits = (kept: ReadonlyArray<KubeObject.KubeObject>) => misfitOn(node, [...elsewhere, ...kept.map((other) => ({ pod: other, node }))]) === undefined
      const victims = Preemption.victims(pod, onNode, fits, budgets)
      return victims === undefined ? [] : [{ node, victims }]
    }), budgets)
    if (chosen === undefined) return yield* unschedulable(Scheduling.unschedulable(misfits))
    const node = KubeObject.meta(chosen.node).name ?? ""
    yield* Preemption.preempt(ctx, pod, node, chosen.victims)
    return yield* unschedulable(Scheduling.unschedulable(misfits, ""), node)
  })

const controllerStorage: Readonly<Record<string, string>> = { ReplicaSet: "replicasets.apps", StatefulSet: "statefulsets.apps", ReplicationController: "replicationcontrollers" }

// kube-scheduler's default spreading selects the pods of the pod's Services and of its controller
// (a ReplicaSet, StatefulSet or ReplicationController): their selectors together.
const spreadSelector = (store: Store.Store, pod: KubeObject.KubeObject): Readonly<Record<string, unknown>> | undefined => {
  const m = KubeObject.meta(pod)
  const namespace = m.namespace ?? ""
  const labels = m.labels ?? {}
  const matchLabels: Record<string, string> = {}
  const matchExpressions: Array<Readonly<Record<string, unknown>>> = []
  for (const service of store.list("services", namespace)) {
    const selector = record(record(service.spec).selector) as Record<string, string>
    if (Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels[key] === value)) Object.assign(matchLabels, selector)
  }
  const owner = (m.ownerReferences ?? []).find((ref) => ref.controller === true)
  const storage = owner === undefined ? undefined : controllerStorage[owner.kind]
  const controller = storage === undefined ? undefined : store.get(storage, namespace, owner!.name)
  if (controller !== undefined) {
    const selector = record(record(controller.spec).selector)
    if (storage === "replicationcontrollers") Object.assign(matchLabels, selector)
    else {
      Object.assign(matchLabels, record(selector.matchLabels))
      matchExpressions.push(...KubeObject.records(selector.matchExpressions))
    }
  }
  return Object.keys(matchLabels).length === 0 && matchExpressions.length === 0 ? undefined : { matchLabels, matchExpressions }
}

/** Marks the Pod `Unschedulable` with `message` (nominated to `nominee` after a preemption there) and records it. */
const markUnschedulable = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  pod: KubeObject.KubeObject,
  message: string,
  nominee?: string
): Effect.Effect<boolean, Status.ApiError> =>
  Effect.gen(function*() {
    const said = KubeObject.records(record(pod.status).conditions).find((c) => c.type === "PodScheduled")
    if (said?.status === "False" && said.message === message && nominee === undefined) return false
    yield* SimulatedController.writeStatus(ctx, key, (current) => ({
      ...record(current.status),
      ...(nominee === undefined ? {} : { nominatedNodeName: nominee }),
      conditions: [
        ...KubeObject.records(record(current.status).conditions).filter((c) => c.type !== "PodScheduled"),
        { type: "PodScheduled", status: "False", lastProbeTime: null, lastTransitionTime: KubeObject.timestamp(), reason: "Unschedulable", message }
      ]
    }), "kube-scheduler")
    yield* ControllerEvents.record(ctx.env, ctx.writeOptions, pod, "default-scheduler", { type: "Warning", reason: "FailedScheduling", message })
    return false
  })

/**
 * The kubelet's admission of a Pod bound to its node: one bound there by name, past the scheduler,
 * that the node has no room for beside the other pods bound there is rejected as the kubelet
 * rejects it (`Failed`, reason `OutOfcpu`, `OutOfmemory`, `OutOfpods`..., and its event). False when
 * it was rejected.
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pod: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const admitted = PodSimulation.admit(ctx, { storage: "pods", namespace: "default", name: "web" }, pod)
 */
export const admit = (ctx: SimulatedController.Context, key: SimulatedController.Key, pod: KubeObject.KubeObject): Effect.Effect<boolean, Status.ApiError> =>
  Effect.gen(function*() {
    const node = ctx.env.store.get("nodes", "", nodeName(pod))
    if (node === undefined) return true
    const uid = KubeObject.meta(pod).uid
    const others = ctx.env.store.list("pods", undefined).filter((other) =>
      nodeName(other) === nodeName(pod) && KubeObject.meta(other).uid !== uid && !PodRuns.done(other)
    )
    const [short] = ResourceFit.shortfalls(pod, node, others)
    if (short === undefined) return true
    const { message, reason } = ResourceFit.rejection(short)
    const now = KubeObject.timestamp()
    yield* SimulatedController.writeStatus(ctx, key, (current) => ({
      ...record(current.status),
      phase: "Failed",
      reason,
      message: `Pod was rejected: ${message}`,
      startTime: record(current.status).startTime ?? now
    }))
    yield* ControllerEvents.record(ctx.env, ctx.writeOptions, pod, ControllerEvents.kubelet(pod), { type: "Warning", reason, message })
    return false
  })

/**
 * The kubelet's end of a graceful deletion: the Pod's containers stopped (`Killing`), its status
 * ended (`Succeeded` for a Pod that restarts always, `Failed` for one that runs to completion), then
 * the Pod deleted with no grace period left (finalizers may still hold it).
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pod: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const finished = PodSimulation.terminate(ctx, { storage: "pods", namespace: "default", name: "web" }, pod)
 */
export const terminate = (ctx: SimulatedController.Context, key: SimulatedController.Key, pod: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  finish(ctx, pod, Effect.gen(function*() {
    for (const container of KubeObject.records(record(pod.spec).containers)) {
      yield* ControllerEvents.record(ctx.env, ctx.writeOptions, pod, ControllerEvents.kubelet(pod), {
        type: "Normal",
        reason: "Killing",
        message: `Stopping container ${String(container.name ?? "")}`,
        fieldPath: `spec.containers{${String(container.name ?? "")}}`
      })
    }
    // A server stopping on SIGTERM exits 0; a Job's work cut short fails.
    yield* SimulatedController.writeStatus(ctx, key, (current) => PodRuns.ended(current, KubeObject.timestamp(), record(current.spec).restartPolicy === "Always"))
  }))

// A Pod not ended yet is ended as `end` does it, then deleted with no grace period left.
const finish = (ctx: SimulatedController.Context, pod: KubeObject.KubeObject, end: Effect.Effect<void, Status.ApiError>) =>
  Effect.gen(function*() {
    const target = podTarget(ctx, pod)
    if (target === undefined) return
    const phase = record(pod.status).phase
    if (phase !== "Succeeded" && phase !== "Failed") yield* end
    yield* Rest.remove(ctx.env, target, {
      propagationPolicy: undefined,
      gracePeriodSeconds: 0,
      preconditions: { uid: KubeObject.meta(pod).uid ?? "" },
      dryRun: false
    }).pipe(Effect.asVoid, Effect.catchIf((error: Status.ApiError) => error.code === 404 || error.code === 409, () => Effect.void))
  })

/**
 * Whether the Pod is bound to a node that does not exist (the pod garbage collector's orphan).
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const store: import("./Store.ts").Store
 * PodSimulation.orphaned(store, { spec: { nodeName: "gone" } })
 */
export const orphaned = (store: Store.Store, pod: KubeObject.KubeObject): boolean =>
  nodeName(pod) !== "" && store.get("nodes", "", nodeName(pod)) === undefined

/**
 * The pod garbage collector's end of an orphan: `Failed` with the `DisruptionTarget` condition
 * (`DeletionByPodGC`), then deleted with no grace period.
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pod: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const collected = PodSimulation.collect(ctx, { storage: "pods", namespace: "default", name: "web" }, pod)
 */
export const collect = (ctx: SimulatedController.Context, key: SimulatedController.Key, pod: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  finish(ctx, pod, SimulatedController.writeStatus(ctx, key, (current) => ({
    ...PodRuns.disrupted(current, "DeletionByPodGC", "PodGC: node no longer exists", KubeObject.timestamp()),
    phase: "Failed"
  })))

/**
 * The pod garbage collector's look at a node that is not ready and tainted
 * `node.kubernetes.io/out-of-service` (an administrator's word that it is down for good): each pod
 * left `Terminating` on it is marked `Failed` and deleted with no grace period, so its controller
 * (a StatefulSet) can make it again elsewhere.
 *
 * @example
 * import * as PodSimulation from "./PodSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const node: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const released = PodSimulation.releaseOutOfService(ctx, node)
 */
export const releaseOutOfService = (ctx: SimulatedController.Context, node: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const outOfService = KubeObject.records(record(node.spec).taints).some((taint) => taint.key === "node.kubernetes.io/out-of-service")
    if (!outOfService || NodeLifecycle.ready(node)) return
    const name = KubeObject.meta(node).name
    for (const pod of ctx.env.store.list("pods", undefined)) {
      if (nodeName(pod) !== name || KubeObject.meta(pod).deletionTimestamp === undefined) continue
      const m = KubeObject.meta(pod)
      const key = { storage: "pods", namespace: m.namespace ?? "", name: m.name ?? "" }
      yield* finish(ctx, pod, SimulatedController.writeStatus(ctx, key, (current) => ({ ...record(current.status), phase: "Failed" }), "kube-controller-manager"))
    }
  })

