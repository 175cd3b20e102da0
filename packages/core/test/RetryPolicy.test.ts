import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option, Random, Schedule } from "effect"
import { RetryPolicy, TokenBucket } from "@kubefx/core"

const delays = <E>(policy: RetryPolicy.RetryPolicy<E>, error: E, max = 30) =>
  Effect.gen(function*() {
    const step = yield* RetryPolicy.start(policy)
    const out: Array<number> = []
    let now = 0
    for (let i = 0; i < max; i++) {
      const delay = yield* step(now, error)
      if (Option.isNone(delay)) break
      out.push(Duration.toMillis(delay.value))
      now += Duration.toMillis(delay.value)
    }
    return out
  })

describe("RetryPolicy", () => {
  it.effect("gradual is JOSDK's GenericRetry: 2 s x1.5, five retries", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* delays(RetryPolicy.gradual, "x"), [2000, 3000, 4500, 6750, 10125])
      assert.isFalse(RetryPolicy.isLastAttempt(RetryPolicy.gradual, 4))
      assert.isTrue(RetryPolicy.isLastAttempt(RetryPolicy.gradual, 5))
    }))

  it.effect("default is controller-runtime's: 5 ms doubling, capped at 1000 s, unlimited", () =>
    Effect.gen(function*() {
      const sequence = yield* delays(RetryPolicy.default, "x", 30)
      assert.strictEqual(sequence.length, 30)
      assert.deepStrictEqual(sequence.slice(0, 4), [5, 10, 20, 40])
      assert.strictEqual(sequence[17], 655_360)
      assert.isTrue(sequence.slice(18).every((d) => d === 1_000_000))
      assert.isFalse(RetryPolicy.isLastAttempt(RetryPolicy.default, 1_000_000))
    }))

  it.effect("none never retries", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* delays(RetryPolicy.none, "x"), [])
      assert.isTrue(RetryPolicy.isLastAttempt(RetryPolicy.none, 0))
    }))

  it.effect("jitter keeps every delay within [0.8, 1.2) of the plain one, reproducibly with a seed", () =>
    Effect.gen(function*() {
      const policy = RetryPolicy.exponential({ initial: "100 millis", maxAttempts: 8, jitter: true })
      const first = yield* delays(policy, "x").pipe(Random.withSeed("kubefx"))
      const second = yield* delays(policy, "x").pipe(Random.withSeed("kubefx"))
      assert.deepStrictEqual(first, second)
      first.forEach((delay, i) => {
        const plain = 100 * 2 ** i
        assert.isAtLeast(delay, plain * 0.8)
        assert.isBelow(delay, plain * 1.2)
      })
    }))

  it.effect("a schedule can decide from the error", () =>
    Effect.gen(function*() {
      const policy = RetryPolicy.fromSchedule(
        Schedule.spaced("1 second").pipe(Schedule.while(({ input }: { readonly input: number }) => input < 500))
      )
      assert.deepStrictEqual(yield* delays(policy, 503, 3), [])
      assert.deepStrictEqual(yield* delays(policy, 409, 3), [1000, 1000, 1000])
    }))
})

describe("TokenBucket", () => {
  const options = { qps: 10, burst: 3 }

  it("lets a burst through, then spaces takers one refill apart", () => {
    let state = TokenBucket.initial(options, 0)
    const waits: Array<number> = []
    for (let i = 0; i < 6; i++) {
      const [wait, next] = TokenBucket.reserve(options, state, 0)
      waits.push(Math.round(wait))
      state = next
    }
    assert.deepStrictEqual(waits, [0, 0, 0, 100, 200, 300])
  })

  it("refills over time up to the burst size", () => {
    let state = TokenBucket.initial(options, 0)
    for (let i = 0; i < 3; i++) state = TokenBucket.reserve(options, state, 0)[1]
    const [wait, next] = TokenBucket.reserve(options, state, 150)
    assert.strictEqual(wait, 0)
    assert.closeTo(next.tokens, 0.5, 1e-9)
    const [, afterLongPause] = TokenBucket.reserve(options, next, 60_000)
    assert.strictEqual(afterLongPause.tokens, options.burst - 1)
  })
})
