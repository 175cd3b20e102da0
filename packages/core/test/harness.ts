import { Clock, Duration, Effect, Metric, References, Scope } from "effect"
import { Controller, Outcome, ReconcileError, RetryInfo } from "@kubefx/core"

/** What one scripted run does. */
export type Step =
  | "ok"
  | "fail"
  | "permanent"
  | "die"
  | "throw"
  | { readonly requeueAfter: Duration.Input }
  | { readonly sleep: Duration.Input; readonly then: Step }
  | "hang"

/** One observed run. */
export interface Run {
  readonly key: string
  readonly at: number
  readonly attempt: number
  readonly isLastAttempt: boolean
}

export class Boom extends Error {}

/**
 * A controller whose reconciler follows a script per key: the n-th run of a key does `script(key, n)`.
 * Every run is recorded with its virtual start time and retry info.
 */
export const scripted = <S = never>(
  script: (key: string, n: number) => Step,
  options: Omit<Controller.Options<unknown, never, S>, "reconcile" | "name"> & { readonly name?: string } = {}
) =>
  Effect.gen(function*() {
    const runs: Array<Run> = []
    const counts = new Map<string, number>()
    const active = new Map<string, number>()
    let maxActivePerKey = 0
    let maxActive = 0
    let activeTotal = 0
    const perform = (step: Step): Effect.Effect<Outcome.Outcome, unknown> => {
      if (step === "ok") return Effect.succeed(Outcome.done)
      if (step === "fail") return Effect.fail(new ReconcileError.Transient({ message: "transient failure" }))
      if (step === "permanent") return Effect.fail(new ReconcileError.Permanent({ message: "permanent failure" }))
      if (step === "die") return Effect.die(new Boom("defect"))
      if (step === "throw") {
        return Effect.sync(() => {
          throw new Boom("thrown")
        })
      }
      if (step === "hang") return Effect.never
      if ("requeueAfter" in step) return Effect.succeed(Outcome.requeueAfter(step.requeueAfter))
      return Effect.sleep(step.sleep).pipe(Effect.andThen(perform(step.then)))
    }
    const reconcile = (key: string) =>
      Effect.gen(function*() {
        const info = yield* RetryInfo.RetryInfo
        const n = counts.get(key) ?? 0
        counts.set(key, n + 1)
        runs.push({ key, at: yield* Clock.currentTimeMillis, attempt: info.attempt, isLastAttempt: info.isLastAttempt })
        const now = (active.get(key) ?? 0) + 1
        active.set(key, now)
        activeTotal++
        maxActivePerKey = Math.max(maxActivePerKey, now)
        maxActive = Math.max(maxActive, activeTotal)
        return yield* perform(script(key, n)).pipe(
          Effect.ensuring(Effect.sync(() => {
            active.set(key, active.get(key)! - 1)
            activeTotal--
          }))
        )
      })
    const controller = yield* Controller.make({ name: options.name ?? "test", ...options, reconcile })
    return {
      controller,
      runs,
      runsOf: (key: string) => runs.filter((run) => run.key === key),
      maxActivePerKey: () => maxActivePerKey,
      maxActive: () => maxActive
    }
  })

/** Enqueue and let every worker settle. */
export const eventAndSettle = (controller: Controller.Controller, key: string) =>
  controller.enqueue(key).pipe(Effect.andThen(controller.awaitIdle))

/** Quiet logs and a metric registry of the test's own. */
export const isolated = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(References.MinimumLogLevel, "None"),
    Effect.provideService(Metric.MetricRegistry, new Map())
  )

export type Scoped<A> = Effect.Effect<A, never, Scope.Scope>
