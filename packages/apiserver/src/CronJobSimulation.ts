/**
 * The workload simulator's CronJob controller, as kube-controller-manager's runs it: a Job made at
 * each schedule time (`<name>-<minutes since the epoch>`) unless the concurrency policy forbids it
 * (or replaces the running one), finished Jobs kept to the history limits, the status's active Jobs
 * and last schedule and success times, and the controller's events. The arithmetic is
 * {@link CronJobs}'.
 */
import { Duration, Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as CronJobs from "./CronJobs.ts"
import * as Rest from "./Rest.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const count = KubeObject.number
const component = "cronjob-controller"
const nameOf = (object: KubeObject.KubeObject) => KubeObject.meta(object).name ?? ""

/**
 * kube-controller-manager's CronJob controller, one look at a CronJob: its finished Jobs seen and
 * kept to the history limits, the Job of the latest schedule time due made (or not, as the
 * concurrency policy says), the status written, and a look again at the next schedule time.
 *
 * @example
 * import * as CronJobSimulation from "./CronJobSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const nightly: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = CronJobSimulation.cronJob(ctx, { storage: "cronjobs.batch", namespace: "default", name: "nightly" }, nightly)
 */
export const cronJob = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  cronJob: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const { env } = ctx
    const jobs = env.registry.byStorage("jobs.batch")[0]
    if (KubeObject.meta(cronJob).deletionTimestamp !== undefined || jobs === undefined) return
    const event = (recorded: ControllerEvents.Event) => ControllerEvents.record(env, ctx.writeOptions, cronJob, component, recorded)
    const spec = record(cronJob.spec)
    const status = record(cronJob.status)
    const removeJob = (job: KubeObject.KubeObject) =>
      Effect.gen(function*() {
        const removed = yield* Effect.result(Rest.remove(env, { resource: jobs, namespace: key.namespace, name: nameOf(job) }, {
          propagationPolicy: "Background",
          preconditions: undefined,
          dryRun: false
        }))
        if (removed._tag === "Success") yield* event({ type: "Normal", reason: "SuccessfulDelete", message: `Deleted job ${nameOf(job)}` })
      })

    // Its Jobs: those that ended are seen once, and kept to the history limits, oldest gone first.
    let own = SimulatedController.controlled(env, "jobs.batch", key.namespace, cronJob)
    const wasActive = new Set(KubeObject.records(status.active).map((ref) => ref.uid))
    let lastSuccess = typeof status.lastSuccessfulTime === "string" ? status.lastSuccessfulTime : undefined
    for (const job of own) {
      const end = CronJobs.ended(job)
      if (end === undefined) continue
      if (wasActive.has(KubeObject.meta(job).uid)) {
        yield* event({ type: "Normal", reason: "SawCompletedJob", message: `Saw completed job: ${nameOf(job)}, condition: ${end.type}` })
      }
      if (end.type === "Complete" && (lastSuccess === undefined || end.at > lastSuccess)) lastSuccess = end.at
    }
    for (const [type, limit] of [["Complete", count(spec.successfulJobsHistoryLimit, 3)], ["Failed", count(spec.failedJobsHistoryLimit, 1)]] as const) {
      // Oldest first, by start time (kube's byJobStartTime), then name.
      const started = (job: KubeObject.KubeObject) => String(record(job.status).startTime ?? "")
      const ended = own.filter((job) => CronJobs.ended(job)?.type === type)
        .sort((a, b) => started(a).localeCompare(started(b)) || nameOf(a).localeCompare(nameOf(b)))
      for (const job of ended.slice(0, Math.max(0, ended.length - limit))) yield* removeJob(job)
    }
    own = SimulatedController.controlled(env, "jobs.batch", key.namespace, cronJob)
    let active = own.filter((job) => CronJobs.ended(job) === undefined)

    // The latest schedule time due, unless suspended.
    const now = Date.now()
    const scheduled = spec.suspend === true ? undefined : CronJobs.due(cronJob, now)
    let lastSchedule = typeof status.lastScheduleTime === "string" ? status.lastScheduleTime : undefined
    if (scheduled !== undefined) {
      const policy = spec.concurrencyPolicy ?? "Allow"
      if (policy === "Forbid" && active.length > 0) {
        yield* event({ type: "Normal", reason: "JobAlreadyActive", message: "Not starting job because prior execution is running and concurrency policy is Forbid" })
      } else {
        if (policy === "Replace") {
          for (const job of active) yield* removeJob(job)
          active = []
        }
        const body = CronJobs.jobFor(cronJob, scheduled)
        const made = yield* Effect.result(Rest.create(env, jobs, key.namespace, body, ctx.writeOptions))
        // A Job of that name already there (two times due in one minute) is left, the time not counted, as kube leaves it.
        if (made._tag === "Success") {
          active = [...active, made.success.object]
          lastSchedule = KubeObject.timestamp(new Date(scheduled))
          yield* event({ type: "Normal", reason: "SuccessfulCreate", message: `Created job ${nameOf(body)}` })
        } else if (made.failure.code !== 409) {
          yield* event({ type: "Warning", reason: "FailedCreate", message: `Error creating job: ${made.failure.message}` })
        }
      }
    }

    yield* SimulatedController.writeStatus(ctx, key, (current) => {
      const { active: _, lastScheduleTime: __, lastSuccessfulTime: ___, ...rest } = record(current.status)
      return {
        ...rest,
        ...(active.length > 0 ? { active: active.map(CronJobs.reference) } : {}),
        ...(lastSchedule === undefined ? {} : { lastScheduleTime: lastSchedule }),
        ...(lastSuccess === undefined ? {} : { lastSuccessfulTime: lastSuccess })
      }
    })
    const upcoming = spec.suspend === true ? undefined : CronJobs.nextAfter(cronJob, now)
    if (upcoming !== undefined) yield* ctx.again(key, Duration.millis(Math.max(0, upcoming - Date.now()) + 100))
  })
