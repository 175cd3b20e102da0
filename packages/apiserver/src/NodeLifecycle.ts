/**
 * kube-controller-manager's node lifecycle and taint eviction controllers: the taints a node's
 * conditions call for (Ready `False` is `node.kubernetes.io/not-ready`, `Unknown`
 * is `node.kubernetes.io/unreachable`, each `NoSchedule` and `NoExecute`; memory, disk and PID
 * pressure and an unavailable network `NoSchedule`; a cordoned node
 * `node.kubernetes.io/unschedulable`), and what becomes of a pod on a node with `NoExecute` taints:
 * it stays when it tolerates them all for ever, goes at once when one is not tolerated, and goes
 * after the shortest `tolerationSeconds` of the tolerations that match otherwise; the pods of a node
 * that is not ready are marked not ready.
 */
import { Duration, Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as PodEviction from "./PodEviction.ts"
import * as PodRuns from "./PodRuns.ts"
import * as Scheduling from "./Scheduling.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
type Taint = Readonly<Record<string, unknown>>

const prefix = "node.kubernetes.io/"
const managed = new Set(["not-ready", "unreachable", "memory-pressure", "disk-pressure", "pid-pressure", "network-unavailable", "unschedulable"].map((k) => prefix + k))

// A condition's status, as the kubelet (or a test) reported it.
const condition = (node: KubeObject.KubeObject, type: string): unknown =>
  KubeObject.records(record(node.status).conditions).find((c) => c.type === type)?.status

const wanted = (node: KubeObject.KubeObject): ReadonlyArray<{ readonly key: string; readonly effect: string }> => {
  const out: Array<{ key: string; effect: string }> = []
  const ready = condition(node, "Ready")
  const down = ready === "False" ? "not-ready" : ready === "Unknown" ? "unreachable" : undefined
  if (down !== undefined) out.push({ key: prefix + down, effect: "NoSchedule" }, { key: prefix + down, effect: "NoExecute" })
  for (const [type, key] of [["MemoryPressure", "memory-pressure"], ["DiskPressure", "disk-pressure"], ["PIDPressure", "pid-pressure"], ["NetworkUnavailable", "network-unavailable"]]) {
    if (condition(node, type!) === "True") out.push({ key: prefix + key, effect: "NoSchedule" })
  }
  if (record(node.spec).unschedulable === true) out.push({ key: prefix + "unschedulable", effect: "NoSchedule" })
  return out
}

/**
 * The node's taints once the node lifecycle controller has looked (the ones it does not manage
 * kept first, as they were; a `NoExecute` one added now gets `timeAdded`), or undefined when they
 * are already so.
 *
 * @example
 * import * as NodeLifecycle from "./NodeLifecycle.ts"
 * NodeLifecycle.taints({ spec: {}, status: { conditions: [{ type: "Ready", status: "Unknown" }] } }, "2026-01-01T00:00:00Z")
 * // [{ key: "node.kubernetes.io/unreachable", effect: "NoSchedule" },
 * //  { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: "2026-01-01T00:00:00Z" }]
 */
export const taints = (node: KubeObject.KubeObject, now: string): ReadonlyArray<Taint> | undefined => {
  const current = KubeObject.records(record(node.spec).taints)
  const same = (a: Taint, b: { readonly key: string; readonly effect: string }) => a.key === b.key && a.effect === b.effect
  const kept = current.filter((taint) => !managed.has(String(taint.key)))
  const lifecycle = wanted(node).map((want) =>
    current.find((taint) => same(taint, want)) ?? { ...want, ...(want.effect === "NoExecute" ? { timeAdded: now } : {}) })
  const next = [...kept, ...lifecycle]
  const unchanged = next.length === current.length && next.every((taint, i) => taint === current[i])
  return unchanged ? undefined : next
}

/** What the taint eviction controller does with a pod: nothing, evict it now, or evict it after `seconds`. */
export type Verdict =
  | { readonly _tag: "Stay" }
  | { readonly _tag: "Evict" }
  | { readonly _tag: "After"; readonly seconds: number }

/**
 * The taint eviction controller's verdict on a pod on `node`: each `NoExecute` taint must be
 * tolerated (the first toleration that tolerates it counts); then the shortest `tolerationSeconds`
 * among those (0 or less is now), or for ever when none has one.
 *
 * @example
 * import * as NodeLifecycle from "./NodeLifecycle.ts"
 * const node = { spec: { taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoExecute" }] } }
 * NodeLifecycle.verdict({ spec: { tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }] } }, node)
 * // { _tag: "After", seconds: 300 }
 */
export const verdict = (pod: KubeObject.KubeObject, node: KubeObject.KubeObject): Verdict => {
  const noExecute = KubeObject.records(record(node.spec).taints).filter((taint) => taint.effect === "NoExecute")
  if (noExecute.length === 0) return { _tag: "Stay" }
  const tolerations = KubeObject.records(record(pod.spec).tolerations)
  const used: Array<Taint> = []
  for (const taint of noExecute) {
    const toleration = tolerations.find((t) => Scheduling.tolerates(t, taint))
    if (toleration === undefined) return { _tag: "Evict" }
    used.push(toleration)
  }
  const seconds = used.flatMap((t) => typeof t.tolerationSeconds === "number" ? [t.tolerationSeconds] : [])
  if (seconds.length === 0) return { _tag: "Stay" }
  const shortest = Math.min(...seconds)
  return shortest <= 0 ? { _tag: "Evict" } : { _tag: "After", seconds: shortest }
}

/**
 * Whether the node has a `NoExecute` taint, for which its pods' changes are the taint eviction
 * controller's to look at.
 *
 * @example
 * import * as NodeLifecycle from "./NodeLifecycle.ts"
 * NodeLifecycle.evicting({ spec: { taints: [{ key: "a", effect: "NoExecute" }] } }) // true
 */
export const evicting = (node: KubeObject.KubeObject): boolean =>
  KubeObject.records(record(node.spec).taints).some((taint) => taint.effect === "NoExecute")

/**
 * Whether the node is ready: its `Ready` condition is true, or it has none (a Node a test
 * registers without a status).
 *
 * @example
 * import * as NodeLifecycle from "./NodeLifecycle.ts"
 * NodeLifecycle.ready({ status: { conditions: [{ type: "Ready", status: "Unknown" }] } }) // false
 */
export const ready = (node: KubeObject.KubeObject): boolean => {
  const status = condition(node, "Ready")
  return status === undefined || status === "True"
}

/**
 * The controllers' look at a node: its taints written as its conditions call for (the write brings
 * the node back here); then, while it is not ready, its pods marked not ready (`NodeNotReady`); and
 * each pod that does not tolerate its `NoExecute` taints evicted now, or once its toleration ran
 * out, counted from when it was first seen waiting (`waiting`, by node and uid, kept across looks),
 * the node looked at again then.
 *
 * @example
 * import * as NodeLifecycle from "./NodeLifecycle.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const node: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = NodeLifecycle.node(ctx, { storage: "nodes", namespace: "", name: "worker-1" }, node, new Map())
 */
export const node = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  node: KubeObject.KubeObject,
  waiting: Map<string, number>
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const wanted = taints(node, KubeObject.timestamp())
    if (wanted !== undefined) return yield* ctx.update(key, undefined, (current) => ({ ...current, spec: { ...record(current.spec), taints: wanted } }))
    const now = Date.now()
    const down = !ready(node)
    const seen = new Set<string>()
    let next: number | undefined
    for (const pod of ctx.env.store.list("pods", undefined)) {
      if (record(pod.spec).nodeName !== key.name || PodRuns.done(pod)) continue
      const m = KubeObject.meta(pod)
      if (down && KubeObject.records(record(pod.status).conditions).some((c) => c.type === "Ready" && c.status === "True")) {
        const podKey = { storage: "pods", namespace: m.namespace ?? "", name: m.name ?? "" }
        yield* SimulatedController.writeStatus(ctx, podKey, (current) => PodRuns.nodeNotReady(current, KubeObject.timestamp()), "kube-controller-manager")
        yield* ControllerEvents.record(ctx.env, ctx.writeOptions, pod, "node-controller", { type: "Warning", reason: "NodeNotReady", message: "Node is not ready" })
      }
      if (m.deletionTimestamp !== undefined) continue
      const found = verdict(pod, node)
      if (found._tag === "Stay") continue
      const id = `${key.name}/${m.uid ?? ""}`
      const since = waiting.get(id) ?? now
      const at = found._tag === "Evict" ? now : since + found.seconds * 1000
      if (at > now) {
        seen.add(id)
        waiting.set(id, since)
        next = Math.min(next ?? at, at)
        continue
      }
      yield* PodEviction.evict(
        ctx,
        pod,
        { reason: "DeletionByTaintManager", message: "Taint manager: deleting due to NoExecute taint" },
        "taint-eviction-controller",
        { type: "Normal", reason: "TaintManagerEviction", message: `Marking for deletion Pod ${m.namespace ?? ""}/${m.name ?? ""}` }
      )
    }
    // Waits of this node's pods that ended, went or now tolerate it for ever are over.
    for (const id of waiting.keys()) if (id.startsWith(`${key.name}/`) && !seen.has(id)) waiting.delete(id)
    if (next !== undefined) yield* ctx.again(key, Duration.millis(next - now))
  })
