/**
 * kube-scheduler's preemption, for a pod no node has room for: on a node where removing pods of
 * lower priority would let it in, the fewest of them that must go (every lower one taken off, then
 * each put back, the most important first, while the pod still fits) are marked
 * `DisruptionTarget` (`PreemptionByScheduler`), told `Preempted` and deleted gracefully (those a
 * PodDisruptionBudget protects kept where others will do), and the
 * pod is nominated to the node (`status.nominatedNodeName`), which pods of no higher priority then
 * leave to it. A pod with `preemptionPolicy: Never` preempts none, and a pod waits for the pods it
 * preempted to go before it preempts again.
 */
import { Effect } from "effect"
import * as Disruptions from "./Disruptions.ts"
import * as PodEviction from "./PodEviction.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

/**
 * A pod's priority, as the Priority admission plugin set it (0 when unset).
 *
 * @example
 * import * as Preemption from "./Preemption.ts"
 * Preemption.priorityOf({ spec: { priority: 1000 } }) // 1000
 */
export const priorityOf = (pod: KubeObject.KubeObject): number => Number(record(pod.spec).priority ?? 0)

const terminating = (pod: KubeObject.KubeObject) => KubeObject.meta(pod).deletionTimestamp !== undefined

/**
 * Why the pod may not preempt, as kube-scheduler says it after `preemption:`, or undefined when it
 * may: its policy is `Never`, or pods it preempted (lower ones on its nominated node, being
 * deleted) have not gone yet. `onNominated` are the pods on its nominated node.
 *
 * @example
 * import * as Preemption from "./Preemption.ts"
 * Preemption.ineligible({ spec: { preemptionPolicy: "Never" } }, []) // "not eligible due to preemptionPolicy=Never"
 */
export const ineligible = (pod: KubeObject.KubeObject, onNominated: ReadonlyArray<KubeObject.KubeObject>): string | undefined => {
  if (record(pod.spec).preemptionPolicy === "Never") return "not eligible due to preemptionPolicy=Never"
  const mine = priorityOf(pod)
  return onNominated.some((other) => terminating(other) && priorityOf(other) < mine)
    ? "not eligible due to a terminating pod on the nominated node"
    : undefined
}

// kube's MoreImportantPod: the higher priority, then the one that started first.
const moreImportant = (a: KubeObject.KubeObject, b: KubeObject.KubeObject) =>
  priorityOf(b) - priorityOf(a) ||
  String(record(a.status).startTime ?? "").localeCompare(String(record(b.status).startTime ?? ""))

/**
 * Of `pods` (the most important first), those whose eviction would take a PodDisruptionBudget of
 * `budgets` below what it allows, counting the evictions before them, as kube-scheduler counts
 * them (a budget with an empty selector, or a pod it already counts as disrupted, is left out).
 *
 * @example
 * import * as Preemption from "./Preemption.ts"
 * const pod = (name: string) => ({ metadata: { name, namespace: "db", labels: { app: "db" } } })
 * const budget = { metadata: { namespace: "db" }, spec: { selector: { matchLabels: { app: "db" } } }, status: { disruptionsAllowed: 1 } }
 * [...Preemption.breaking([pod("a"), pod("b")], [budget])].map((p) => p.metadata.name) // ["b"]
 */
export const breaking = (
  pods: ReadonlyArray<KubeObject.KubeObject>,
  budgets: ReadonlyArray<KubeObject.KubeObject>
): ReadonlySet<KubeObject.KubeObject> => {
  const allowed = new Map(budgets.map((budget) => [budget, Number(record(budget.status).disruptionsAllowed ?? 0)]))
  const out = new Set<KubeObject.KubeObject>()
  for (const pod of pods) {
    const m = KubeObject.meta(pod)
    for (const budget of budgets) {
      // Unlike an eviction, preemption leaves out a budget whose selector is empty.
      const selector = record(record(budget.spec).selector)
      const empty = Object.keys(record(selector.matchLabels)).length === 0 && KubeObject.records(selector.matchExpressions).length === 0
      if (KubeObject.meta(budget).namespace !== m.namespace || empty || !Disruptions.selects(budget, pod)) continue
      if (record(record(budget.status).disruptedPods)[m.name ?? ""] !== undefined) continue
      const left = allowed.get(budget)! - 1
      allowed.set(budget, left)
      if (left < 0) out.add(pod)
    }
  }
  return out
}

/**
 * The pods on a node that must go for `pod` to fit there, or undefined when no removal of pods of
 * lower priority would do. `fits` says whether the pod fits beside the pods it is given; `budgets`
 * are the PodDisruptionBudgets, whose pods are the first kept where the pod fits without them.
 *
 * @example
 * import * as Preemption from "./Preemption.ts"
 * const pod = (name: string, priority: number) => ({ metadata: { name }, spec: { priority } })
 * // Room for one pod: the lower of the two goes.
 * Preemption.victims(pod("new", 100), [pod("low", 0), pod("high", 1000)], (on) => on.length < 2)?.map((p) => p.metadata.name) // ["low"]
 */
export const victims = (
  pod: KubeObject.KubeObject,
  onNode: ReadonlyArray<KubeObject.KubeObject>,
  fits: (onNode: ReadonlyArray<KubeObject.KubeObject>) => boolean,
  budgets: ReadonlyArray<KubeObject.KubeObject> = []
): ReadonlyArray<KubeObject.KubeObject> | undefined => {
  const mine = priorityOf(pod)
  const lower = onNode.filter((other) => priorityOf(other) < mine && !terminating(other))
  let kept = onNode.filter((other) => !lower.includes(other))
  if (lower.length === 0 || !fits(kept)) return undefined
  const out: Array<KubeObject.KubeObject> = []
  const ordered = [...lower].sort(moreImportant)
  const broken = breaking(ordered, budgets)
  // Those a budget protects are put back first, so the others go before them where either will do.
  for (const candidate of [...ordered.filter((p) => broken.has(p)), ...ordered.filter((p) => !broken.has(p))]) {
    const trial = [...kept, candidate]
    if (fits(trial)) kept = trial
    else out.push(candidate)
  }
  return out
}

/**
 * Of the nodes' victims, the node kube-scheduler picks: the fewest budgets broken, then the lowest
 * highest victim priority, then the fewest victims.
 *
 * @example
 * import * as Preemption from "./Preemption.ts"
 * Preemption.pick([{ node: "a", victims: [{ spec: { priority: 5 } }] }, { node: "b", victims: [{ spec: { priority: 1 } }] }])?.node // "b"
 */
export const pick = <N>(
  candidates: ReadonlyArray<{ readonly node: N; readonly victims: ReadonlyArray<KubeObject.KubeObject> }>,
  budgets: ReadonlyArray<KubeObject.KubeObject> = []
) => {
  const highest = (victims: ReadonlyArray<KubeObject.KubeObject>) => Math.max(...victims.map(priorityOf))
  const broken = (victims: ReadonlyArray<KubeObject.KubeObject>) => breaking([...victims].sort(moreImportant), budgets).size
  return [...candidates].sort((a, b) =>
    broken(a.victims) - broken(b.victims) || highest(a.victims) - highest(b.victims) || a.victims.length - b.victims.length
  )[0]
}

/**
 * Preempts `victims` on `node` for `pod`: each marked `DisruptionTarget`, told `Preempted` with
 * the preemptor's uid, and deleted with its grace period; pods of lower priority nominated to the
 * node lose their nomination there, as kube-scheduler takes it from them, and are scheduled again.
 *
 * @example
 * import * as Preemption from "./Preemption.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * const done = Preemption.preempt(ctx, { metadata: { uid: "u" }, spec: {} }, "kubefx-node", [])
 */
export const preempt = (
  ctx: SimulatedController.Context,
  pod: KubeObject.KubeObject,
  node: string,
  victims: ReadonlyArray<KubeObject.KubeObject>
): Effect.Effect<void, Status.ApiError> => {
  const scheduler = String(record(pod.spec).schedulerName ?? "default-scheduler")
  const mine = priorityOf(pod)
  const displaced = ctx.env.store.list("pods", undefined).filter((other) =>
    record(other.status).nominatedNodeName === node && String(record(other.spec).nodeName ?? "") === "" && priorityOf(other) < mine
  )
  return Effect.gen(function*() {
    yield* Effect.forEach(victims, (victim) =>
      PodEviction.evict(
        ctx,
        victim,
        { reason: "PreemptionByScheduler", message: `${scheduler}: preempting to accommodate a higher priority pod` },
        "default-scheduler",
        { type: "Normal", reason: "Preempted", message: `Preempted by pod ${KubeObject.meta(pod).uid ?? ""} on node ${node}` }
      ), { discard: true })
    yield* Effect.forEach(displaced, (other) => {
      const m = KubeObject.meta(other)
      return SimulatedController.writeStatus(ctx, { storage: "pods", namespace: m.namespace ?? "", name: m.name ?? "" }, (current) => {
        const { nominatedNodeName: _, ...status } = record(current.status)
        return status
      }).pipe(Effect.catchIf((error: Status.ApiError) => error.code === 404 || error.code === 409, () => Effect.void))
    }, { discard: true })
  })
}
