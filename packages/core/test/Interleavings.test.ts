import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Controller, Outcome, ReconcileError, RetryPolicy } from "@kubefx/core"
import { isolated } from "./harness.ts"

// A small seeded generator (mulberry32), so a failing interleaving can be replayed by its seed.
const generator = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (n: number) => Math.floor(next() * n), pick: <A>(xs: ReadonlyArray<A>) => xs[Math.floor(next() * xs.length)]! }
}

type Behaviour = "ok" | "fail" | "permanent" | "requeue" | "die"
const behaviours: ReadonlyArray<Behaviour> = ["ok", "fail", "permanent", "requeue", "die"]
const keys = ["a", "b", "c"]

const interleaving = (seed: number) =>
  isolated(Effect.gen(function*() {
    const random = generator(seed)
    let seq = 0
    const behaviour = new Map<string, Behaviour>(keys.map((key) => [key, "ok"]))
    const events: Array<{ key: string; seq: number }> = []
    const runs: Array<{ key: string; start: number; end: number }> = []
    const controller = yield* Controller.make({
      name: `interleaving-${seed}`,
      concurrency: 2,
      retryPolicy: RetryPolicy.exponential({ initial: "20 millis", max: "200 millis", maxAttempts: 4 }),
      reconcile: (key) =>
        Effect.gen(function*() {
          const run = { key, start: ++seq, end: Infinity }
          runs.push(run)
          const act = behaviour.get(key)!
          yield* Effect.sleep(`${random.int(4) * 10} millis`)
          run.end = ++seq
          switch (act) {
            case "ok":
              return Outcome.done
            case "requeue":
              return Outcome.requeueAfter("70 millis")
            case "fail":
              return yield* new ReconcileError.Transient({ message: "no" })
            case "permanent":
              return yield* new ReconcileError.Permanent({ message: "never" })
            case "die":
              return yield* Effect.die("boom")
          }
        })
    })
    for (let op = 0; op < 150; op++) {
      const roll = random.next()
      if (roll < 0.4) {
        const key = random.pick(keys)
        events.push({ key, seq: ++seq })
        yield* controller.enqueue(key)
      } else if (roll < 0.6) {
        behaviour.set(random.pick(keys), random.pick(behaviours))
      } else {
        yield* TestClock.adjust(`${random.int(50)} millis`)
      }
    }
    // Long enough for every retry streak to end; "requeue" keys keep running, which is fine.
    yield* TestClock.adjust("5 seconds")

    // Never two runs of one key at once.
    for (const key of keys) {
      const own = runs.filter((run) => run.key === key)
      for (let i = 1; i < own.length; i++) {
        assert.isAbove(own[i]!.start, own[i - 1]!.end, `seed ${seed}: ${key} ran concurrently with itself`)
      }
    }
    // Never a run lost after an event: each event is followed by a run of its key that started later.
    for (const event of events) {
      assert.isTrue(
        runs.some((run) => run.key === event.key && run.start > event.seq),
        `seed ${seed}: event #${event.seq} for ${event.key} was never reconciled`
      )
    }
    return runs.length
  }))

describe("random interleavings of events, failures and clock advances", () => {
  it.effect("keep every key serial and never lose an event", () =>
    Effect.gen(function*() {
      let total = 0
      for (let seed = 1; seed <= 40; seed++) total += yield* Effect.scoped(interleaving(seed))
      assert.isAbove(total, 40 * 50)
    }))

  it.effect("never retry after a success or a permanent failure", () =>
    isolated(Effect.gen(function*() {
      for (let seed = 100; seed < 120; seed++) {
        const random = generator(seed)
        const results = new Map<string, Array<string>>()
        const violations: Array<string> = []
        const controller = yield* Controller.make({
          name: `retries-${seed}`,
          retryPolicy: RetryPolicy.exponential({ initial: "10 millis", maxAttempts: 3 }),
          reconcile: (): Effect.Effect<Outcome.Outcome, ReconcileError.Transient | ReconcileError.Permanent> => {
            const act = random.pick(behaviours)
            return act === "ok"
              ? Effect.succeed(Outcome.done)
              : act === "requeue"
              ? Effect.succeed(Outcome.requeueAfter("50 millis"))
              : act === "permanent"
              ? Effect.fail(new ReconcileError.Permanent({ message: "never" }))
              : Effect.fail(new ReconcileError.Transient({ message: "no" }))
          }
        })
        const collector = yield* controller.reports.pipe(
          Stream.runForEach((report) =>
            Effect.sync(() => {
              const previous = results.get(report.key) ?? []
              const after = previous.at(-1)
              if (report.triggers.some((trigger) => trigger._tag === "Retry") && after !== "Transient") {
                violations.push(`seed ${seed}: ${report.key} retried after ${after}`)
              }
              results.set(report.key, [...previous, report.result._tag])
            })
          ),
          Effect.forkChild
        )
        yield* Effect.yieldNow
        for (let op = 0; op < 60; op++) {
          if (random.next() < 0.5) yield* controller.enqueue(random.pick(keys))
          else yield* TestClock.adjust(`${random.int(40)} millis`)
        }
        yield* TestClock.adjust("2 seconds")
        yield* Effect.yieldNow
        yield* Fiber.interrupt(collector)
        yield* controller.shutdown()
        assert.deepStrictEqual(violations, [])
        assert.isAbove([...results.values()].flat().length, 20)
      }
    })))
})
