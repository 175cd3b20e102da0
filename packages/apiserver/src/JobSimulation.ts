/**
 * The workload simulator's Job controller, as kube-controller-manager's runs it: a Job's Pods made
 * from its template up to its parallelism, the finished ones counted (and let go of the tracking
 * finalizer; one deleted before it finished counts as failed), failed ones replaced until the
 * backoff limit (a failure its `podFailurePolicy` ignores not counted), the Job ended (`Complete`,
 * by its completions or its `successPolicy`, or `Failed` by its pod failure policy, past its
 * backoff limit or its `activeDeadlineSeconds`: the criterion stated at once, its active pods
 * deleted and counted, the end itself once none of its pods is terminating),
 * suspended and resumed, with the controller's events. The arithmetic is {@link JobRuns}'.
 */
import { Duration, Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as JobRuns from "./JobRuns.ts"
import * as PodFailurePolicy from "./PodFailurePolicy.ts"
import * as PodRuns from "./PodRuns.ts"
import * as Rest from "./Rest.ts"
import * as Rollouts from "./Rollouts.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const count = KubeObject.number
const component = "job-controller"

const phase = (pod: KubeObject.KubeObject) => record(pod.status).phase
const tracked = (pod: KubeObject.KubeObject) => (KubeObject.meta(pod).finalizers ?? []).includes(JobRuns.trackingFinalizer)
const ready = (pod: KubeObject.KubeObject) => phase(pod) === "Running" && Rollouts.podAvailable(pod, 0, 0)

/**
 * Whether a pod being deleted is still held by a Job's tracking finalizer, which the Job controller
 * removes.
 *
 * @example
 * import * as JobSimulation from "./JobSimulation.ts"
 * JobSimulation.heldWhileDeleted({ metadata: { deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: ["batch.kubernetes.io/job-tracking"] } }) // true
 */
export const heldWhileDeleted = (pod: KubeObject.KubeObject): boolean =>
  KubeObject.meta(pod).deletionTimestamp !== undefined && tracked(pod)

/**
 * Lets go of a pod the Job counted (or no longer wants): its tracking finalizer removed.
 *
 * @example
 * import * as JobSimulation from "./JobSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pod: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const released = JobSimulation.release(ctx, pod)
 */
export const release = (ctx: SimulatedController.Context, pod: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  tracked(pod)
    ? SimulatedController.writeObject(ctx, "pods", pod, (current) =>
      KubeObject.withMeta(current, { finalizers: (KubeObject.meta(current).finalizers ?? []).filter((f) => f !== JobRuns.trackingFinalizer) }))
    : Effect.void

/**
 * With `backoffLimitPerIndex`, how often each index failed (each pod carries its index's failures
 * before it; a failure the pod failure policy ignores is not one), and the indexes that failed for
 * good: more often than the limit, or by a `FailIndex` rule. Both empty for any other Job.
 *
 * @example
 * import * as JobSimulation from "./JobSimulation.ts"
 * const job = { spec: { completionMode: "Indexed", completions: 2, backoffLimitPerIndex: 0 } }
 * const failed = { metadata: { annotations: { "batch.kubernetes.io/job-completion-index": "1" } }, status: { phase: "Failed" } }
 * JobSimulation.indexFailures(job, [failed]).failedIndexes // Set {1}
 */
export const indexFailures = (
  job: KubeObject.KubeObject,
  pods: ReadonlyArray<KubeObject.KubeObject>
): { readonly failedIndexes: ReadonlySet<number>; readonly failures: ReadonlyMap<number, number> } => {
  const failedIndexes = JobRuns.parseIndexes(record(job.status).failedIndexes)
  const failures = new Map<number, number>()
  const limit = record(job.spec).backoffLimitPerIndex
  if (typeof limit !== "number" || record(job.spec).completionMode !== "Indexed") return { failedIndexes, failures }
  for (const pod of pods) {
    const index = JobRuns.indexOf(pod)
    if (index === undefined) continue
    const before = Number(KubeObject.meta(pod).annotations?.[JobRuns.failureCountAnnotation] ?? 0) || 0
    const decision = phase(pod) === "Failed" ? PodFailurePolicy.decide(job, pod) : undefined
    const failed = phase(pod) === "Failed" && decision?.action !== "Ignore"
    const after = before + (failed ? 1 : 0)
    failures.set(index, Math.max(failures.get(index) ?? 0, after))
    if (decision?.action === "FailIndex" || after > limit) failedIndexes.add(index)
  }
  return { failedIndexes, failures }
}

/**
 * kube-controller-manager's Job controller, one look at a Job: the pods that finished counted, the
 * Job ended when its completions succeeded or its failures passed the backoff limit (its active pods
 * deleted), suspended (its pods deleted) or resumed, missing pods made, and its status written.
 *
 * @example
 * import * as JobSimulation from "./JobSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const backup: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = JobSimulation.job(ctx, { storage: "jobs.batch", namespace: "default", name: "backup" }, backup)
 */
export const job = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  job: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const { env } = ctx
    const pods = env.registry.byStorage("pods")[0]
    if (KubeObject.meta(job).deletionTimestamp !== undefined || pods === undefined) return
    const event = (recorded: ControllerEvents.Event) => ControllerEvents.record(env, ctx.writeOptions, job, component, recorded)
    // Its pods, those being deleted among them; `own` the others.
    const all = SimulatedController.controlled(env, "pods", key.namespace, job, true)
    const deleting = (p: KubeObject.KubeObject) => KubeObject.meta(p).deletionTimestamp !== undefined
    const own = all.filter((p) => !deleting(p))
    // A pod deleted as its Job ends stays tracked, so that it is counted once it is terminating.
    const remove = (pod: KubeObject.KubeObject, tracking = false) =>
      Effect.gen(function*() {
        if (!tracking) yield* release(ctx, pod)
        const removed = yield* Effect.result(Rest.remove(env, { resource: pods, namespace: key.namespace, name: KubeObject.meta(pod).name ?? "" }, {
          propagationPolicy: undefined,
          preconditions: undefined,
          dryRun: false
        }))
        if (removed._tag === "Success") yield* event({ type: "Normal", reason: "SuccessfulDelete", message: `Deleted pod: ${KubeObject.meta(pod).name ?? ""}` })
      })
    const now = KubeObject.timestamp()
    const stage = JobRuns.stage(job)
    if (stage === "finished") {
      // What ended with the Job: its pods let go, the active ones deleted.
      for (const pod of own) yield* PodRuns.done(pod) ? release(ctx, pod) : remove(pod)
      return
    }
    if (stage !== "ending" && record(job.spec).suspend === true) {
      for (const pod of own.filter((p) => !PodRuns.done(p))) yield* remove(pod)
      if (stage === "suspended") return
      yield* SimulatedController.writeStatus(ctx, key, (current) => JobRuns.suspended(current, now))
      return yield* event({ type: "Normal", reason: "Suspended", message: "Job suspended" })
    }

    // The pods that finished since the last look are counted, then let go; a pod deleted before it
    // finished counts as failed (once terminal, with podReplacementPolicy: Failed).
    const status = record(job.status)
    const onlyFailed = record(job.spec).podReplacementPolicy === "Failed"
    const counting = all.filter((p) => tracked(p) && (PodRuns.done(p) || (deleting(p) && !onlyFailed)))
    const completed = JobRuns.parseIndexes(status.completedIndexes)
    for (const pod of counting) {
      const index = JobRuns.indexOf(pod)
      if (phase(pod) === "Succeeded" && index !== undefined) completed.add(index)
    }
    const active = own.filter((p) => !PodRuns.done(p))
    // Pods being deleted are terminating until their kubelet is done with them.
    const terminating = all.filter((p) => deleting(p) && !PodRuns.done(p)).length
    const succeededNow = counting.filter((p) => phase(p) === "Succeeded").length
    // The pod failure policy may fail the Job for a failed pod, or leave its failure uncounted.
    const decisions = counting.filter((p) => phase(p) === "Failed").map((p) => PodFailurePolicy.decide(job, p))
    const ignored = decisions.filter((d) => d?.action === "Ignore").length
    const failJob = decisions.find((d) => d?.action === "FailJob")?.message
    const { failedIndexes, failures } = indexFailures(job, all)
    const tally = (activeCount: number): JobRuns.Tally => ({
      active: activeCount,
      ready: active.filter(ready).length,
      terminating,
      succeeded: count(status.succeeded) + succeededNow,
      failed: count(status.failed) + counting.length - succeededNow - ignored,
      completed,
      restarts: active.reduce((sum, pod) => sum + PodRuns.restarts(pod), 0),
      failJob,
      failedIndexes
    })
    const ending = stage === "ending" ? undefined : JobRuns.ending(job, tally(active.length), Date.now())
    if (stage === "ending" || ending !== undefined) {
      // Its end decided, the Job's active pods are deleted, and the end itself waits for every pod
      // of it to have terminated.
      for (const pod of active) yield* remove(pod, true)
      const left = { ...tally(0), terminating: terminating + active.length }
      const decide = (current: KubeObject.KubeObject) => ending === undefined ? JobRuns.ended(current, now, left) : JobRuns.finished(current, now, ending, left)
      yield* SimulatedController.writeStatus(ctx, key, decide)
      for (const pod of counting) yield* release(ctx, pod)
      const decided = { ...job, status: decide(job) }
      if (JobRuns.stage(decided) !== "finished") return
      const { success, reason, message } = JobRuns.criterion(decided)!
      return yield* event(success ? { type: "Normal", reason: "Completed", message: "Job completed" } : { type: "Warning", reason, message })
    }

    const resumed = stage !== "running" && KubeObject.records(status.conditions).some((c) => c.type === "Suspended" && c.status === "True")
    let made = 0
    const activeIndexes = new Set(active.map(JobRuns.indexOf).filter((i): i is number => i !== undefined))
    // `podReplacementPolicy: Failed` waits for terminating pods to be gone before replacing them.
    const occupied = active.length + (record(job.spec).podReplacementPolicy === "Failed" ? terminating : 0)
    for (const index of JobRuns.toCreate(job, tally(occupied), activeIndexes)) {
      const next = JobRuns.podFor(job, index, index === undefined ? 0 : failures.get(index) ?? 0)
      const created = yield* Effect.result(Rest.create(env, pods, key.namespace, next, ctx.writeOptions))
      if (created._tag === "Failure") {
        yield* event({ type: "Warning", reason: "FailedCreate", message: `Error creating: ${created.failure.message}` })
        break
      }
      made++
      yield* event({ type: "Normal", reason: "SuccessfulCreate", message: `Created pod: ${KubeObject.meta(created.success.object).name ?? ""}` })
    }
    yield* SimulatedController.writeStatus(ctx, key, (current) => JobRuns.running(current, now, tally(active.length + made)))
    for (const pod of counting) yield* release(ctx, pod)
    if (resumed) yield* event({ type: "Normal", reason: "Resumed", message: "Job resumed" })
    // Looked at again when its active deadline passes, counted from the start time just written.
    const due = JobRuns.deadline({ ...job, status: JobRuns.running(job, now, tally(active.length + made)) })
    if (due !== undefined) yield* ctx.again(key, Duration.millis(Math.max(0, due - Date.now()) + 10))
  })
