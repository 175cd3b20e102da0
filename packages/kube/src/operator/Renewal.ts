/**
 * The renewal loop a Lease holder runs, shared by leader election and shard membership: renew every
 * retry period, retry a failed renewal until the renew deadline (counted from the start of the last
 * successful renewal), and return once that deadline passed without one.
 *
 * Internal to the operator: not exported from `@kubefx/kube`.
 *
 * @since 0.1.0
 */
import { Duration, Effect } from "effect"
import type * as LeaderElection from "./LeaderElection.ts"

export interface Renewer {
  readonly now: () => number
  /** When the last successful renewal started. */
  readonly renewedAt: () => number
  /** One renewal, given up by `deadline`; true when it succeeded. */
  readonly attempt: (start: number, deadline: number) => Effect.Effect<boolean>
  readonly renewed: (start: number) => void
}

/**
 * Renews until a renewal misses the deadline, then returns.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Renewal from "./Renewal.ts"
 * let renewedAt = 0
 * const loop = Renewal.untilMissed({ leaseDuration: 15000, renewDeadline: 10000, retryPeriod: 2000 }, {
 *   now: () => Date.now(),
 *   renewedAt: () => renewedAt,
 *   attempt: () => Effect.succeed(true),
 *   renewed: (start) => { renewedAt = start }
 * })
 */
export const untilMissed = (times: LeaderElection.Timings, renewer: Renewer): Effect.Effect<void> =>
  Effect.gen(function*() {
    while (true) {
      yield* Effect.sleep(Duration.millis(times.retryPeriod))
      let renewed = false
      while (!renewed) {
        const start = renewer.now()
        const deadline = renewer.renewedAt() + times.renewDeadline
        if (start >= deadline) return
        renewed = yield* renewer.attempt(start, deadline)
        if (renewed) renewer.renewed(start)
        else yield* Effect.sleep(Duration.millis(Math.max(0, Math.min(times.retryPeriod, deadline - renewer.now()))))
      }
    }
  })
