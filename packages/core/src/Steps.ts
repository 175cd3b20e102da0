/**
 * Combinators for the hand-written parts of a reconciler. A step is an Effect that ends in an
 * `Outcome` (or nothing, meaning done). `all` runs several steps to the end, even when some fail,
 * and merges what they say: the earliest requeue wins, and any failure fails the whole with every
 * error kept in the cause. `retry` gives one step its own schedule, without touching the
 * controller's retry policy; `timeout` bounds one step in time.
 *
 * @since 0.1.0
 */
import { Cause, Duration, Effect, Exit, Function, Schedule, Schema } from "effect"
import * as Outcome from "./Outcome.ts"
import * as ReconcileError from "./ReconcileError.ts"

/** One step of a reconcile: done when it returns nothing. */
export type Step<E = never, R = never> = Effect.Effect<Outcome.Outcome | void, E, R>

/**
 * A step ran longer than its own timeout. Transient: the controller's retry policy applies.
 *
 * @example
 * import { Duration } from "effect"
 * import { Steps } from "@kubefx/core"
 * new Steps.StepTimeout({ step: "database", after: Duration.seconds(5) }).message // "step database timed out after 5s"
 */
export class StepTimeout extends Schema.TaggedError<StepTimeout>()("StepTimeout", {
  step: Schema.String,
  after: Schema.Duration
}) {
  override get message(): string {
    return `step ${this.step} timed out after ${Duration.format(this.after)}`
  }
}

/**
 * A step's result as an `Outcome` (`void` is done).
 *
 * @example
 * import { Outcome, Steps } from "@kubefx/core"
 * Steps.outcome(undefined) // Outcome.done
 */
export const outcome = (result: Outcome.Outcome | void): Outcome.Outcome => result ?? Outcome.done

/**
 * Runs every step (in order by default, or `concurrency` at a time), each to its end even when
 * others fail. Succeeds with the merged outcome (`Outcome.combine`: the earliest requeue) when all
 * succeed; otherwise fails with a cause holding every failure, in step order.
 *
 * @example
 * import { Effect } from "effect"
 * import { Outcome, Steps } from "@kubefx/core"
 * const reconcile = Steps.all([
 *   Effect.succeed(Outcome.requeueAfter("1 minute")),
 *   Effect.succeed(Outcome.requeueAfter("5 seconds")),
 *   Effect.void
 * ]) // succeeds with requeueAfter 5 seconds
 */
export const all = <const Steps extends ReadonlyArray<Step<any, any>>>(
  steps: Steps,
  options?: { readonly concurrency?: number | "unbounded" | undefined }
): Effect.Effect<Outcome.Outcome, Effect.Error<Steps[number]>, Effect.Services<Steps[number]>> =>
  Effect.forEach(steps, (step) => Effect.exit(step), { concurrency: options?.concurrency ?? 1 }).pipe(
    Effect.flatMap((exits) => merge(exits as ReadonlyArray<Exit.Exit<Outcome.Outcome | void, Effect.Error<Steps[number]>>>))
  ) as Effect.Effect<Outcome.Outcome, Effect.Error<Steps[number]>, Effect.Services<Steps[number]>>

/**
 * Merges the exits of several steps: the combined outcome if all succeeded, otherwise a failure
 * whose cause holds every failed step's cause.
 *
 * @example
 * import { Exit } from "effect"
 * import { Outcome, Steps } from "@kubefx/core"
 * const merged = Steps.merge([Exit.succeed(Outcome.done), Exit.fail("a"), Exit.fail("b")]) // fails with "a" and "b"
 */
export const merge = <E>(exits: Iterable<Exit.Exit<Outcome.Outcome | void, E>>): Effect.Effect<Outcome.Outcome, E> => {
  const outcomes: Array<Outcome.Outcome> = []
  let failure: Cause.Cause<E> | undefined
  for (const exit of exits) {
    if (Exit.isSuccess(exit)) outcomes.push(outcome(exit.value))
    else failure = failure === undefined ? exit.cause : Cause.combine(failure, exit.cause)
  }
  return failure === undefined ? Effect.succeed(Outcome.combine(outcomes)) : Effect.failCause(failure)
}

/**
 * Retries a step on its own schedule (its input is the step's error). A `ReconcileError.Permanent`
 * is never retried; `while` narrows further. When the schedule ends, the last error is the step's
 * and the controller's retry policy takes over.
 *
 * @example
 * import { Effect, Schedule } from "effect"
 * import { Outcome, ReconcileError, Steps } from "@kubefx/core"
 * const flaky = Effect.fail(new ReconcileError.Transient({ message: "not yet" }))
 * const step = flaky.pipe(Steps.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo({ times: 3 }))))
 */
export const retry: {
  <E, X, RS>(
    schedule: Schedule.Schedule<X, NoInfer<E>, never, RS>,
    options?: { readonly while?: ((error: E) => boolean) | undefined }
  ): <A, R>(step: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | RS>
  <A, E, R, X, RS>(
    step: Effect.Effect<A, E, R>,
    schedule: Schedule.Schedule<X, NoInfer<E>, never, RS>,
    options?: { readonly while?: ((error: E) => boolean) | undefined }
  ): Effect.Effect<A, E, R | RS>
} = Function.dual(
  (args) => Effect.isEffect(args[0]),
  <A, E, R, X, RS>(
    step: Effect.Effect<A, E, R>,
    schedule: Schedule.Schedule<X, NoInfer<E>, never, RS>,
    options?: { readonly while?: ((error: E) => boolean) | undefined }
  ): Effect.Effect<A, E, R | RS> =>
    Effect.retry(step, {
      schedule,
      while: (error: E) => !ReconcileError.isPermanent(error) && (options?.while?.(error) ?? true)
    })
)

/**
 * Fails a step with `StepTimeout` (transient) when it runs longer than `after`; the step is
 * interrupted.
 *
 * @example
 * import { Effect } from "effect"
 * import { Steps } from "@kubefx/core"
 * const step = Effect.never.pipe(Steps.timeout("database", "5 seconds"))
 */
export const timeout: {
  (name: string, after: Duration.Input): <A, E, R>(step: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StepTimeout, R>
  <A, E, R>(step: Effect.Effect<A, E, R>, name: string, after: Duration.Input): Effect.Effect<A, E | StepTimeout, R>
} = Function.dual(
  3,
  <A, E, R>(step: Effect.Effect<A, E, R>, name: string, after: Duration.Input): Effect.Effect<A, E | StepTimeout, R> => {
    const duration = Duration.fromInputUnsafe(after)
    return Effect.timeoutOrElse(step, {
      duration,
      orElse: () => Effect.fail(new StepTimeout({ step: name, after: duration }))
    })
  }
)
