/**
 * When to retry a failed reconcile: any `Schedule` over the error, stepped once per counted failure of
 * a key's failure streak. When the schedule ends, the key is exhausted: no retry until an event, and
 * only a success starts a new streak.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Option, Pull, Schedule } from "effect"

export interface RetryPolicy<in E = unknown> {
  /** Delay before each retry; the schedule ending means no more retries. */
  readonly schedule: Schedule.Schedule<unknown, E>
  /**
   * How many retries the schedule allows, when known, so a run can tell it is the last attempt
   * before the schedule ends (`RetryInfo.isLastAttempt`). Unknown for arbitrary schedules.
   */
  readonly maxAttempts: number | undefined
}

/**
 * A policy from any schedule. The schedule's input is the error of the failed run, so it can stop
 * retrying on some errors (`Schedule.while`).
 *
 * @example
 * import { Schedule } from "effect"
 * import { RetryPolicy } from "@kubefx/core"
 * const policy = RetryPolicy.fromSchedule(Schedule.spaced("10 seconds").pipe(Schedule.upTo({ times: 3 })), {
 *   maxAttempts: 3
 * })
 */
export const fromSchedule = <E = unknown>(
  schedule: Schedule.Schedule<unknown, E>,
  options?: { readonly maxAttempts?: number | undefined }
): RetryPolicy<E> => ({ schedule, maxAttempts: options?.maxAttempts })

export interface ExponentialOptions {
  /** Delay before the first retry. */
  readonly initial: Duration.Input
  /** Growth per retry; default 2. */
  readonly factor?: number | undefined
  /** Cap on any single delay. */
  readonly max?: Duration.Input | undefined
  /** Retries allowed after the first failure; unlimited when absent. */
  readonly maxAttempts?: number | undefined
  /** Scale each delay by a random factor in [0.8, 1.2), drawn from `Random`. */
  readonly jitter?: boolean | undefined
}

/**
 * Exponential backoff: `initial * factor^(n-1)` before retry n, capped at `max`, at most
 * `maxAttempts` retries.
 *
 * @example
 * import { RetryPolicy } from "@kubefx/core"
 * const policy = RetryPolicy.exponential({ initial: "100 millis", factor: 2, max: "10 seconds", maxAttempts: 6 })
 */
export const exponential = (options: ExponentialOptions): RetryPolicy => {
  let schedule: Schedule.Schedule<unknown> = Schedule.exponential(options.initial, options.factor ?? 2)
  if (options.max !== undefined) {
    const cap = Duration.fromInputUnsafe(options.max)
    schedule = Schedule.modifyDelay(schedule, ({ duration }) => Effect.succeed(Duration.min(duration, cap)))
  }
  if (options.maxAttempts !== undefined) {
    schedule = Schedule.upTo(schedule, { times: options.maxAttempts })
  }
  if (options.jitter === true) {
    schedule = Schedule.jittered(schedule)
  }
  return { schedule, maxAttempts: options.maxAttempts }
}

/** The workqueue default of controller-runtime: 5 ms, doubling, capped at 1000 s, never giving up. */
const workqueueDefault: RetryPolicy = exponential({ initial: "5 millis", factor: 2, max: "1000 seconds" })

export {
  /**
   * The default policy (controller-runtime's workqueue default): exponential from 5 ms, doubling,
   * capped at 1000 s, never giving up.
   *
   * @example
   * import { RetryPolicy } from "@kubefx/core"
   * const policy = RetryPolicy.default
   */
  workqueueDefault as default
}

/**
 * JOSDK's GenericRetry: 2 s, x1.5, 5 retries (2 s, 3 s, 4.5 s, 6.75 s, 10.125 s), then exhausted.
 *
 * @example
 * import { RetryPolicy } from "@kubefx/core"
 * RetryPolicy.gradual.maxAttempts // 5
 */
export const gradual: RetryPolicy = exponential({ initial: "2 seconds", factor: 1.5, maxAttempts: 5 })

/**
 * Never retry: every failure waits for the next event.
 *
 * @example
 * import { RetryPolicy } from "@kubefx/core"
 * RetryPolicy.none.maxAttempts // 0
 */
export const none: RetryPolicy = fromSchedule(Schedule.recurs(0), { maxAttempts: 0 })

/**
 * The policy's state for one failure streak: given the time and the error of a counted failure,
 * the delay before the next retry, or none when the policy is exhausted.
 */
export type Stepper<E> = (now: number, error: E) => Effect.Effect<Option.Option<Duration.Duration>>

/**
 * Starts a failure streak.
 *
 * @example
 * import { Effect } from "effect"
 * import { RetryPolicy } from "@kubefx/core"
 * const delays = Effect.gen(function*() {
 *   const step = yield* RetryPolicy.start(RetryPolicy.gradual)
 *   return [yield* step(0, "boom"), yield* step(2000, "boom")] // Some(2s), Some(3s)
 * })
 */
export const start = <E>(policy: RetryPolicy<E>): Effect.Effect<Stepper<E>> =>
  Effect.map(Schedule.toStep(policy.schedule), (step) => (now: number, error: E) =>
    step(now, error).pipe(
      Effect.map(([, delay]) => Option.some(delay)),
      Pull.catchDone(() => Effect.succeedNone)
    ))

/**
 * Whether a run at this attempt is the last one the policy allows, as far as the policy knows it.
 *
 * @example
 * import { RetryPolicy } from "@kubefx/core"
 * RetryPolicy.isLastAttempt(RetryPolicy.gradual, 5) // true
 */
export const isLastAttempt = <E>(policy: RetryPolicy<E>, attempt: number): boolean =>
  policy.maxAttempts !== undefined && attempt >= policy.maxAttempts
