/**
 * A global token bucket for retries (controller-runtime's `BucketRateLimiter`): each retry takes a
 * token; tokens refill at `qps` up to `burst`. Combined with the per-key policy, a retry waits for the
 * longer of the two delays, so a mass failure cannot retry faster than `qps` overall.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Ref } from "effect"

export interface Options {
  /** Tokens added per second. */
  readonly qps: number
  /** Bucket size: how many retries may go at once. */
  readonly burst: number
}

/** controller-runtime's default: 10 retries per second, bursts of 100. */
export const controllerRuntime: Options = { qps: 10, burst: 100 }

export interface State {
  /** Tokens available; negative when reservations are waiting for refills. */
  readonly tokens: number
  /** When `tokens` was last brought up to date (ms). */
  readonly at: number
}

/**
 * Takes one token at `now`; returns how long the taker must wait (ms) and the new state. A wait
 * reserves a future token, so concurrent takers queue up one refill interval apart.
 *
 * @example
 * import { TokenBucket } from "@kubefx/core"
 * const full = TokenBucket.initial({ qps: 10, burst: 1 }, 0)
 * const [wait1, next] = TokenBucket.reserve({ qps: 10, burst: 1 }, full, 0) // 0
 * const [wait2] = TokenBucket.reserve({ qps: 10, burst: 1 }, next, 0) // 100
 */
export const reserve = (options: Options, state: State, now: number): readonly [number, State] => {
  const refilled = Math.min(options.burst, state.tokens + (Math.max(0, now - state.at) * options.qps) / 1000)
  const tokens = refilled - 1
  const wait = tokens >= 0 ? 0 : (-tokens * 1000) / options.qps
  return [wait, { tokens, at: Math.max(now, state.at) }]
}

/**
 * A full bucket at time `now`.
 *
 * @example
 * import { TokenBucket } from "@kubefx/core"
 * TokenBucket.initial(TokenBucket.controllerRuntime, 0).tokens // 100
 */
export const initial = (options: Options, now: number): State => ({ tokens: options.burst, at: now })

export interface TokenBucket {
  /** Takes a token; the delay to wait before using it. */
  readonly take: Effect.Effect<Duration.Duration>
}

/**
 * A bucket shared by everything that takes from it.
 *
 * @example
 * import { Effect } from "effect"
 * import { TokenBucket } from "@kubefx/core"
 * const program = Effect.gen(function*() {
 *   const bucket = yield* TokenBucket.make({ qps: 10, burst: 100 })
 *   return yield* bucket.take // 0 millis while tokens last
 * })
 */
export const make = (options: Options): Effect.Effect<TokenBucket> =>
  Effect.gen(function*() {
    const state = yield* Ref.make(initial(options, yield* Clock.currentTimeMillis))
    const take = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.modify(state, (current) => {
        const [wait, next] = reserve(options, current, now)
        return [Duration.millis(wait), next]
      }))
    return { take }
  })
