/**
 * Where a run stands in its failure streak, readable inside a reconcile and in the error handler:
 * `attempt` is 0 on the first run of a streak and counts retry runs only (a run an event triggered
 * while a retry was pending does not count); `isLastAttempt` says no retry will follow a failure.
 *
 * @since 0.1.0
 */
import { Context } from "effect"

export interface RetryInfo {
  readonly attempt: number
  readonly isLastAttempt: boolean
}

/**
 * The current run's retry info, provided by the controller to each reconcile.
 *
 * @example
 * import { Effect } from "effect"
 * import { Outcome, RetryInfo } from "@kubefx/core"
 * const reconcile = (_key: string) =>
 *   Effect.gen(function*() {
 *     const { attempt, isLastAttempt } = yield* RetryInfo.RetryInfo
 *     if (isLastAttempt) yield* Effect.logWarning(`giving up after ${attempt} retries`)
 *     return Outcome.done
 *   })
 */
export const RetryInfo = Context.Reference<RetryInfo>("@kubefx/core/RetryInfo", {
  defaultValue: () => initial
})

/**
 * The retry info of a first run.
 *
 * @example
 * import { RetryInfo } from "@kubefx/core"
 * RetryInfo.initial.attempt // 0
 */
export const initial: RetryInfo = { attempt: 0, isLastAttempt: false }
