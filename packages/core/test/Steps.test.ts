import { assert, describe, expectTypeOf, it } from "@effect/vitest"
import { Outcome, ReconcileError, Steps } from "@kubefx/core"
import { Cause, Context, Duration, Effect, Exit, Fiber, Ref, Schedule, Schema } from "effect"
import { TestClock } from "effect/testing"

class DatabaseDown extends Schema.TaggedError<DatabaseDown>()("DatabaseDown", { message: Schema.String }) {}
class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { message: Schema.String }) {}
class Database extends Context.Service<Database, { readonly ping: Effect.Effect<void> }>()("test/Database") {}
class Cache extends Context.Service<Cache, { readonly flush: Effect.Effect<void> }>()("test/Cache") {}

const errorsOf = <E>(exit: Exit.Exit<unknown, E>): ReadonlyArray<E> =>
  Exit.isFailure(exit) ? exit.cause.reasons.filter(Cause.isFailReason).map((reason) => reason.error) : []

describe("Steps", () => {
  it.effect("all merges outcomes: done only when every step is done, else the earliest requeue", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Steps.all([Effect.void, Effect.succeed(Outcome.done)]), Outcome.done)
      const merged = yield* Steps.all([
        Effect.succeed(Outcome.requeueAfter("1 minute")),
        Effect.void,
        Effect.succeed(Outcome.requeueAfter("5 seconds"))
      ])
      assert.deepStrictEqual(merged, Outcome.requeueAfter("5 seconds"))
    }))

  it.effect("all runs every step even when some fail, and keeps every error in step order", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make<Array<string>>([])
      const step = (name: string, fail?: string) =>
        Ref.update(ran, (xs) => [...xs, name]).pipe(
          Effect.andThen(fail === undefined ? Effect.void : Effect.fail(new DatabaseDown({ message: fail })))
        )
      const exit = yield* Effect.exit(Steps.all([step("a", "first"), step("b"), step("c", "second")]))
      assert.deepStrictEqual(yield* Ref.get(ran), ["a", "b", "c"])
      assert.deepStrictEqual(errorsOf(exit).map((e) => e.message), ["first", "second"])
    }))

  it.effect("all with concurrency runs the steps side by side", () =>
    Effect.gen(function*() {
      const slow = (ms: number) => Effect.sleep(Duration.millis(ms)).pipe(Effect.as(Outcome.requeueAfter(Duration.millis(ms))))
      const fiber = yield* Steps.all([slow(300), slow(200), slow(100)], { concurrency: "unbounded" }).pipe(Effect.forkChild)
      yield* TestClock.adjust("300 millis")
      assert.deepStrictEqual(yield* Fiber.join(fiber), Outcome.requeueAfter("100 millis"))

      const sequential = yield* Steps.all([slow(300), slow(200)]).pipe(Effect.forkChild)
      yield* TestClock.adjust("300 millis")
      assert.isUndefined(sequential.pollUnsafe())
      yield* TestClock.adjust("200 millis")
      assert.deepStrictEqual(yield* Fiber.join(sequential), Outcome.requeueAfter("200 millis"))
    }))

  it.effect("retry follows the step's own schedule and gives up with the last error", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make<Array<number>>([])
      const failing = Effect.gen(function*() {
        const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        yield* Ref.update(attempts, (xs) => [...xs, now])
        return yield* new ReconcileError.Transient({ message: `attempt at ${now}` })
      })
      const fiber = yield* failing.pipe(
        Steps.retry(Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 2 }))),
        Effect.flip,
        Effect.forkChild
      )
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* Fiber.join(fiber)).message, "attempt at 2000")
      assert.deepStrictEqual(yield* Ref.get(attempts), [0, 1000, 2000])
    }))

  it.effect("retry never retries a permanent error, and `while` narrows which errors it retries", () =>
    Effect.gen(function*() {
      const count = yield* Ref.make(0)
      const permanent = Ref.update(count, (n) => n + 1).pipe(
        Effect.andThen(Effect.fail(new ReconcileError.Permanent({ message: "bad spec" })))
      )
      yield* Effect.flip(Steps.retry(permanent, Schedule.recurs(5)))
      assert.strictEqual(yield* Ref.get(count), 1)

      const quota = Ref.update(count, (n) => n + 1).pipe(
        Effect.andThen(Effect.fail<DatabaseDown | QuotaExceeded>(new QuotaExceeded({ message: "no" })))
      )
      yield* Effect.flip(Steps.retry(quota, Schedule.recurs(5), { while: (e) => e._tag === "DatabaseDown" }))
      assert.strictEqual(yield* Ref.get(count), 2)
    }))

  it.effect("retry returns the first success", () =>
    Effect.gen(function*() {
      const count = yield* Ref.make(0)
      const flaky = Ref.updateAndGet(count, (n) => n + 1).pipe(
        Effect.flatMap((n) => n < 3 ? Effect.fail(new DatabaseDown({ message: "down" })) : Effect.succeed(Outcome.done))
      )
      const fiber = yield* Steps.retry(flaky, Schedule.exponential("100 millis")).pipe(Effect.forkChild)
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(fiber), Outcome.done)
      assert.strictEqual(yield* Ref.get(count), 3)
    }))

  it.effect("timeout interrupts a slow step and fails with StepTimeout naming it", () =>
    Effect.gen(function*() {
      const interrupted = yield* Ref.make(false)
      const slow = Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
      const fiber = yield* slow.pipe(Steps.timeout("database", "5 seconds"), Effect.flip, Effect.forkChild)
      yield* TestClock.adjust("4 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "StepTimeout")
      assert.strictEqual(error.message, "step database timed out after 5s")
      assert.isTrue(yield* Ref.get(interrupted))
      assert.deepStrictEqual(yield* Steps.timeout(Effect.succeed(Outcome.done), "fast", "1 second"), Outcome.done)
    }))

  it.effect("a step under timeout and retry retries each timed-out attempt", () =>
    Effect.gen(function*() {
      const count = yield* Ref.make(0)
      const hangsTwice = Ref.updateAndGet(count, (n) => n + 1).pipe(
        Effect.flatMap((n) => n <= 2 ? Effect.never : Effect.succeed(Outcome.requeueAfter("1 minute")))
      )
      const fiber = yield* hangsTwice.pipe(
        Steps.timeout("slow", "1 second"),
        Steps.retry(Schedule.spaced("1 second")),
        Effect.forkChild
      )
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(yield* Fiber.join(fiber), Outcome.requeueAfter("1 minute"))
      assert.strictEqual(yield* Ref.get(count), 3)
    }))

  it("types: all's errors and requirements are the union of its steps'", () => {
    const a: Effect.Effect<Outcome.Outcome, DatabaseDown, Database> = Effect.succeed(Outcome.done)
    const b: Effect.Effect<void, QuotaExceeded, Cache> = Effect.void
    const c: Effect.Effect<Outcome.Outcome> = Effect.succeed(Outcome.done)
    const merged = Steps.all([a, b, c])
    expectTypeOf(merged).toEqualTypeOf<Effect.Effect<Outcome.Outcome, DatabaseDown | QuotaExceeded, Database | Cache>>()
    const bounded = a.pipe(Steps.timeout("a", "1 second"), Steps.retry(Schedule.recurs(2)))
    expectTypeOf(bounded).toEqualTypeOf<Effect.Effect<Outcome.Outcome, DatabaseDown | Steps.StepTimeout, Database>>()
  })
})
