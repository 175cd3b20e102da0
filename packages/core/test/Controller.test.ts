import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Queue, Ref, Schedule, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Controller, ErrorAction, Failure, Outcome, ReconcileError, RetryInfo, RetryPolicy } from "@kubefx/core"
import { eventAndSettle, isolated, scripted } from "./harness.ts"

class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { message: Schema.String }) {
  readonly [ReconcileError.permanent] = true
}

const times = (runs: ReadonlyArray<{ readonly at: number }>) => runs.map((run) => run.at)
const attempts = (runs: ReadonlyArray<{ readonly attempt: number }>) => runs.map((run) => run.attempt)
const lastFlags = (runs: ReadonlyArray<{ readonly isLastAttempt: boolean }>) => runs.map((run) => run.isLastAttempt)

describe("Controller", () => {
  describe("R1 serial", () => {
    it.effect("events for a queued key merge into one run", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((key) => key === "a" ? { sleep: "1 second", then: "ok" } : "ok")
        yield* h.controller.enqueue("a")
        yield* Effect.yieldNow
        for (let i = 0; i < 5; i++) yield* h.controller.enqueue("b")
        yield* TestClock.adjust("1 second")
        yield* h.controller.awaitIdle
        assert.strictEqual(h.runsOf("b").length, 1)
        assert.strictEqual(h.runsOf("a").length, 1)
      })))

    it.effect("1,000 events while a key runs give exactly one follow-up run", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => ({ sleep: "1 second", then: "ok" }))
        yield* h.controller.enqueue("a")
        yield* Effect.yieldNow
        assert.strictEqual(h.runs.length, 1)
        for (let i = 0; i < 1000; i++) yield* h.controller.enqueue("a")
        yield* TestClock.adjust("10 seconds")
        yield* h.controller.awaitIdle
        assert.deepStrictEqual(times(h.runs), [0, 1000])
      })))

    it.effect("a key never runs concurrently with itself; different keys run in parallel up to concurrency", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => ({ sleep: "100 millis", then: "ok" }), { concurrency: 3 })
        for (let round = 0; round < 20; round++) {
          for (const key of ["a", "b", "c", "d", "e"]) yield* h.controller.enqueue(key)
          yield* TestClock.adjust("30 millis")
        }
        yield* TestClock.adjust("10 seconds")
        yield* h.controller.awaitIdle
        assert.strictEqual(h.maxActivePerKey(), 1)
        assert.strictEqual(h.maxActive(), 3)
        // Every key ran, and every event was covered by a run that started after it.
        for (const key of ["a", "b", "c", "d", "e"]) {
          assert.isAbove(h.runsOf(key).length, 1)
          assert.isAtLeast(h.runsOf(key).at(-1)!.at, 19 * 30)
        }
      })))
  })

  describe("R2 success", () => {
    it.effect("resets the retry state", () =>
      isolated(Effect.gen(function*() {
        const script = ["fail", "fail", "ok", "fail", "ok"] as const
        const h = yield* scripted((_, n) => script[n] ?? "ok", { retryPolicy: RetryPolicy.gradual })
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("5 seconds") // retries at 2 s (fails) and 5 s (succeeds)
        yield* TestClock.adjust("1 minute") // no retry after the success
        yield* eventAndSettle(h.controller, "a") // at 65 s: fails, a new streak at attempt 0
        yield* TestClock.adjust("2 seconds")
        assert.deepStrictEqual(times(h.runs), [0, 2000, 5000, 65000, 67000])
        assert.deepStrictEqual(attempts(h.runs), [0, 1, 2, 0, 1])
      })))

    it.effect("requeueAfter reconciles again after the delay, as a reschedule", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((_, n) => n < 2 ? { requeueAfter: "10 seconds" } : "ok")
        yield* eventAndSettle(h.controller, "a")
        const status = yield* h.controller.keyStatus("a")
        assert.deepStrictEqual(Option.getOrThrow(status).next, { at: 10_000, trigger: "reschedule" })
        yield* TestClock.adjust("1 minute")
        assert.deepStrictEqual(times(h.runs), [0, 10_000, 20_000])
        assert.deepStrictEqual(Option.getOrThrow(yield* h.controller.keyStatus("a")).last?.triggers, [{ _tag: "Reschedule" }])
      })))
  })

  describe("R3 supersede", () => {
    it.effect("an event cancels a pending reschedule and the run re-arms it", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => ({ requeueAfter: "10 seconds" }))
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("4 seconds")
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("9 seconds") // t=13 s: the old reschedule (t=10 s) must not have run
        assert.deepStrictEqual(times(h.runs), [0, 4000])
        yield* TestClock.adjust("1 second") // t=14 s: the re-armed one
        assert.deepStrictEqual(times(h.runs), [0, 4000, 14_000])
      })))
  })

  describe("R4 retry and R13 backoff", () => {
    it.effect("gradual retries at 2 s, 3 s, 4.5 s, 6.75 s, 10.125 s and then stops", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => "fail", { retryPolicy: RetryPolicy.gradual })
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(times(h.runs), [0, 2000, 5000, 9500, 16_250, 26_375])
        assert.deepStrictEqual(attempts(h.runs), [0, 1, 2, 3, 4, 5])
        assert.deepStrictEqual(lastFlags(h.runs), [false, false, false, false, false, true])
        const status = Option.getOrThrow(yield* h.controller.keyStatus("a"))
        assert.isTrue(status.exhausted)
        assert.isUndefined(status.next)
      })))

    it.effect("the default policy starts at 5 ms, doubles, caps at 1000 s and never gives up", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => "fail")
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("3 hours")
        const at = times(h.runs)
        const delays = at.slice(1).map((t, i) => t - at[i]!)
        assert.deepStrictEqual(delays.slice(0, 5), [5, 10, 20, 40, 80])
        assert.strictEqual(delays[17], 655_360)
        assert.deepStrictEqual(delays.slice(18), delays.slice(18).map(() => 1_000_000))
        assert.isAbove(delays.length, 25)
        assert.isFalse(h.runs.some((run) => run.isLastAttempt))
      })))

    it.effect("any Schedule is a policy, with the failure as its input", () =>
      isolated(Effect.gen(function*() {
        const policy = RetryPolicy.fromSchedule(
          Schedule.spaced("7 seconds").pipe(
            Schedule.while(({ input }: { readonly input: Controller.RunFailure<unknown> }) => input._tag !== "Defect")
          )
        )
        const h = yield* scripted((_, n) => n < 2 ? "fail" : "die", { retryPolicy: policy })
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(times(h.runs), [0, 7000, 14_000])
        assert.isTrue(Option.getOrThrow(yield* h.controller.keyStatus("a")).exhausted)
      })))

    it.effect("a global token bucket spaces out a mass retry", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((_, n) => n === 0 ? "fail" : "ok", {
          retryPolicy: RetryPolicy.exponential({ initial: "5 millis" }),
          rateLimit: { qps: 1, burst: 2 },
          concurrency: 4
        })
        for (const key of ["a", "b", "c", "d"]) yield* h.controller.enqueue(key)
        yield* h.controller.awaitIdle
        yield* TestClock.adjust("1 minute")
        const retries = h.runs.filter((run) => run.attempt === 1).map((run) => run.at).sort((x, y) => x - y)
        assert.deepStrictEqual(retries, [5, 5, 1000, 2000])
      })))
  })

  describe("R5 event during a pending retry", () => {
    it.effect("runs at once, is not counted, and the retry resumes from the same attempt", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => "fail", { retryPolicy: RetryPolicy.gradual })
        yield* eventAndSettle(h.controller, "a") // t=0, attempt 0; retry due at 2 s
        yield* TestClock.adjust("2 seconds") // attempt 1 fails; retry due at 5 s
        yield* TestClock.adjust("1 second")
        yield* eventAndSettle(h.controller, "a") // t=3 s: runs now, still attempt 1; retry again in 3 s
        yield* TestClock.adjust("2 seconds") // t=5 s: the superseded retry does not run
        assert.deepStrictEqual(times(h.runs), [0, 2000, 3000])
        yield* TestClock.adjust("1 second") // t=6 s: attempt 2; next in 4.5 s
        yield* TestClock.adjust("4500 millis")
        assert.deepStrictEqual(times(h.runs), [0, 2000, 3000, 6000, 10_500])
        assert.deepStrictEqual(attempts(h.runs), [0, 1, 1, 2, 3])
      })))

    it.effect("a success of the event run cancels the retry", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((_, n) => n === 0 ? "fail" : "ok", { retryPolicy: RetryPolicy.gradual })
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 second")
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(times(h.runs), [0, 1000])
      })))
  })

  describe("R6 exhausted", () => {
    it.effect("an event still reconciles with isLastAttempt, schedules no retry, and only a success resets", () =>
      isolated(Effect.gen(function*() {
        let succeed = false
        const h = yield* scripted(() => succeed ? "ok" : "fail", {
          retryPolicy: RetryPolicy.exponential({ initial: "1 second", maxAttempts: 2 })
        })
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(times(h.runs), [0, 1000, 3000])
        yield* eventAndSettle(h.controller, "a") // exhausted: runs, fails, no retry
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(h.runs.slice(3).map((run) => [run.attempt, run.isLastAttempt]), [[2, true]])
        succeed = true
        yield* eventAndSettle(h.controller, "a")
        succeed = false
        yield* eventAndSettle(h.controller, "a") // a fresh streak
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(h.runs.slice(5).map((run) => [run.attempt, run.isLastAttempt]), [[0, false], [1, false]])
      })))
  })

  describe("R7 retry info and R9 error handler", () => {
    it.effect("the error handler runs after every failed run with the run's retry info and failure", () =>
      isolated(Effect.gen(function*() {
        const seen = yield* Ref.make<Array<string>>([])
        const h = yield* scripted((_, n) => n < 2 ? "fail" : n === 2 ? "die" : "ok", {
          retryPolicy: RetryPolicy.gradual,
          onError: (key, failure, info) =>
            Ref.update(seen, (xs) => [...xs, `${key}:${failure._tag}:${info.attempt}:${info.isLastAttempt}`]).pipe(
              Effect.as(ErrorAction.retry)
            )
        })
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual(yield* Ref.get(seen), ["a:Transient:0:false", "a:Transient:1:false", "a:Defect:2:false"])
        assert.deepStrictEqual(attempts(h.runs), [0, 1, 2, 3])
      })))

    it.effect("RetryInfo outside a controller is the initial one", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* RetryInfo.RetryInfo, RetryInfo.initial)
      }))
  })

  describe("R8 permanent", () => {
    it.effect("a Permanent error schedules no retry; the next event reconciles", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((_, n) => n === 0 ? "permanent" : "ok")
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(h.runs.length, 1)
        yield* eventAndSettle(h.controller, "a")
        assert.strictEqual(h.runs.length, 2)
        const health = yield* h.controller.health
        assert.strictEqual(health.consecutiveFailures, 0)
      })))

    it.effect("an error handler answering noRetry schedules no retry, and the run's result says so", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => "fail", { onError: () => Effect.succeed(ErrorAction.noRetry) })
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(h.runs.length, 1)
        const status = Option.getOrThrow(yield* h.controller.keyStatus("a"))
        assert.deepStrictEqual(status.last?.result, { _tag: "Transient", message: "transient failure", noRetry: true })
        assert.isUndefined(status.next)
      })))

    it.effect("an error class of the user's marked permanent keeps its type and schedules no retry", () =>
      isolated(Effect.gen(function*() {
        const seen: Array<Failure.Failure<QuotaExceeded>> = []
        let runs = 0
        const controller = yield* Controller.make({
          name: "quota",
          reconcile: () => Effect.suspend(() => (runs++, Effect.fail(new QuotaExceeded({ message: "no quota left" })))),
          onError: (_, failure) => Effect.sync(() => (seen.push(failure as Failure.Failure<QuotaExceeded>), ErrorAction.retry))
        })
        yield* eventAndSettle(controller, "a")
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(runs, 1)
        assert.strictEqual(seen[0]?._tag, "Permanent")
        const error = seen[0]?._tag === "Permanent" ? seen[0].error : undefined
        assert.instanceOf(error, QuotaExceeded)
        assert.strictEqual(Option.getOrThrow(yield* controller.keyStatus("a")).last?.result._tag, "Permanent")
      })))
  })

  describe("defects", () => {
    it.effect("a defect in one key leaves 100 other keys reconciling, and is retried like a transient failure", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((key, n) => key === "bad" ? (n % 2 === 0 ? "die" : "throw") : "ok", {
          concurrency: 4,
          retryPolicy: RetryPolicy.exponential({ initial: "1 second", maxAttempts: 3 })
        })
        yield* h.controller.enqueue("bad")
        for (let i = 0; i < 100; i++) yield* h.controller.enqueue(`good-${i}`)
        yield* h.controller.awaitIdle
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(h.runs.filter((run) => run.key.startsWith("good-")).length, 100)
        assert.deepStrictEqual(times(h.runsOf("bad")), [0, 1000, 3000, 7000])
        const health = yield* h.controller.health
        assert.strictEqual(health.failed, 4)
        assert.strictEqual(health.total, 104)
        assert.strictEqual(Option.getOrThrow(yield* h.controller.keyStatus("bad")).last?.result._tag, "Defect")
      })))

    it.effect("a reconcile timeout interrupts a hanging run and counts a transient failure", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((_, n) => n === 0 ? "hang" : "ok", {
          timeout: "30 seconds",
          retryPolicy: RetryPolicy.exponential({ initial: "1 second" })
        })
        yield* h.controller.enqueue("a")
        yield* TestClock.adjust("1 minute")
        assert.deepStrictEqual(times(h.runs), [0, 31_000])
        const health = yield* h.controller.health
        assert.strictEqual(health.failed, 1)
        assert.strictEqual(health.lastError, "reconcile timed out after 30s")
      })))
  })

  describe("R11 health and R12 degraded", () => {
    it.effect("five failures in a row degrade the controller, run rollback with known-good state, and a success clears it", () =>
      isolated(Effect.gen(function*() {
        const rolledBack = yield* Ref.make<Array<ReadonlyArray<{ key: string; lastGood: string }>>>([])
        let failing = false
        const h = yield* scripted<string>(() => failing ? "fail" : "ok", {
          concurrency: 5,
          retryPolicy: RetryPolicy.none,
          snapshot: (key) => Effect.succeed(Option.some(`${key}@good`)),
          rollback: (keys) => Ref.update(rolledBack, (xs) => [...xs, keys])
        })
        for (const key of ["a", "b", "c"]) yield* eventAndSettle(h.controller, key)
        failing = true
        for (const key of ["a", "b", "c", "d"]) yield* eventAndSettle(h.controller, key)
        assert.isFalse((yield* h.controller.health).degraded)
        yield* eventAndSettle(h.controller, "a")
        yield* Effect.yieldNow
        const health = yield* h.controller.health
        assert.isTrue(health.degraded)
        assert.strictEqual(health.consecutiveFailures, 5)
        assert.strictEqual(health.total, 8)
        assert.strictEqual(health.failed, 5)
        assert.strictEqual(health.lastError, "transient failure")
        assert.strictEqual(yield* h.controller.status, "Degraded")
        const calls = yield* Ref.get(rolledBack)
        assert.strictEqual(calls.length, 1)
        assert.deepStrictEqual([...calls[0]!].sort((x, y) => x.key.localeCompare(y.key)), [
          { key: "a", lastGood: "a@good" },
          { key: "b", lastGood: "b@good" },
          { key: "c", lastGood: "c@good" }
        ])
        yield* eventAndSettle(h.controller, "b") // a sixth failure: still degraded, no second rollback
        assert.strictEqual((yield* Ref.get(rolledBack)).length, 1)
        failing = false
        yield* eventAndSettle(h.controller, "a")
        assert.isFalse((yield* h.controller.health).degraded)
        assert.strictEqual(yield* h.controller.status, "Healthy")
      })))

    it.effect("without a rollback to hand it to, the known-good state is never read", () =>
      isolated(Effect.gen(function*() {
        let snapshots = 0
        const h = yield* scripted<string>(() => "ok", {
          snapshot: (key) => Effect.sync(() => (snapshots++, Option.some(`${key}@good`)))
        })
        for (const key of ["a", "b", "a"]) yield* eventAndSettle(h.controller, key)
        assert.strictEqual(h.runs.length, 3)
        assert.strictEqual(snapshots, 0)
      })))

    it.effect("a dependent controller holds new reconciles while its dependency is degraded and resumes after", () =>
      isolated(Effect.gen(function*() {
        let failing = true
        const dependency = yield* scripted(() => failing ? "fail" : "ok", {
          name: "dependency",
          retryPolicy: RetryPolicy.none,
          degradeAfter: 2
        })
        const held: Array<[string, ReadonlyArray<string>]> = []
        const dependent = yield* scripted(() => "ok", {
          name: "dependent",
          dependsOn: [dependency.controller],
          onHeld: (key, waitingFor) => Effect.sync(() => held.push([key, waitingFor]))
        })
        yield* eventAndSettle(dependency.controller, "x")
        yield* eventAndSettle(dependency.controller, "x")
        assert.isTrue(dependency.controller.isDegraded())
        yield* dependent.controller.enqueue("y")
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(dependent.runs.length, 0)
        assert.strictEqual(yield* dependent.controller.status, "Pending")
        assert.deepStrictEqual(held, [["y", ["dependency"]]], "told who holds the key, once")
        failing = false
        yield* eventAndSettle(dependency.controller, "x")
        yield* dependent.controller.awaitIdle
        assert.strictEqual(dependent.runs.length, 1)
        const last = Option.getOrThrow(yield* dependent.controller.keyStatus("y")).last
        assert.strictEqual(last?.startedAt, 60_000, "its run starts past the dependency gate, not when it was taken")
        assert.deepStrictEqual((yield* dependent.controller.inspect).dependsOn, [{ name: "dependency", degraded: false }])
      })))
  })

  describe("R14 resync", () => {
    it.effect("every period enqueues each key, and resets the retry state of keys left alone for a whole period", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((key) => key === "stuck" ? "fail" : "ok", {
          retryPolicy: RetryPolicy.exponential({ initial: "1 second", maxAttempts: 1 }),
          resync: "10 minutes",
          keys: Effect.succeed(["fine", "stuck"])
        })
        yield* eventAndSettle(h.controller, "fine")
        yield* eventAndSettle(h.controller, "stuck")
        yield* TestClock.adjust("9 minutes")
        assert.deepStrictEqual(attempts(h.runsOf("stuck")), [0, 1])
        assert.isTrue(Option.getOrThrow(yield* h.controller.keyStatus("stuck")).exhausted)
        // At 10 min "stuck" last ran 9 min 59 s ago: still exhausted, the resync run is its last attempt.
        yield* TestClock.adjust("1 minute")
        assert.deepStrictEqual(h.runsOf("stuck").slice(2).map((run) => [run.at, run.attempt, run.isLastAttempt]), [
          [600_000, 1, true]
        ])
        // At 20 min it has been left alone for a whole period: the streak restarts from zero.
        yield* TestClock.adjust("10 minutes")
        yield* TestClock.adjust("5 seconds")
        assert.deepStrictEqual(h.runsOf("stuck").slice(3).map((run) => [run.at, run.attempt]), [
          [1_200_000, 0],
          [1_201_000, 1]
        ])
        assert.deepStrictEqual(times(h.runsOf("fine")), [0, 600_000, 1_200_000])
        assert.deepStrictEqual(Option.getOrThrow(yield* h.controller.keyStatus("fine")).last?.triggers, [{ _tag: "Resync" }])
      })))

    it.effect("without keys, a resync enqueues every key the controller has seen and not forgotten", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => "ok", { resync: "10 minutes" })
        yield* eventAndSettle(h.controller, "a")
        yield* eventAndSettle(h.controller, "b")
        yield* eventAndSettle(h.controller, "gone")
        yield* h.controller.forget("gone")
        yield* TestClock.adjust("10 minutes")
        assert.deepStrictEqual([times(h.runsOf("a")), times(h.runsOf("b")), times(h.runsOf("gone"))], [[0, 600_000], [0, 600_000], [0]])
      })))
  })

  describe("R17 forget", () => {
    it.effect("forgetting a key drops its state and pending timer", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => "fail", { retryPolicy: RetryPolicy.gradual })
        yield* eventAndSettle(h.controller, "a")
        yield* h.controller.forget("a")
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(h.runs.length, 1)
        assert.isTrue(Option.isNone(yield* h.controller.keyStatus("a")))
      })))
  })

  describe("sources, reports and shutdown", () => {
    it.effect("consumes a source stream of enqueue and forget events", () =>
      isolated(Effect.gen(function*() {
        const events = yield* Queue.unbounded<Controller.Event>()
        const h = yield* scripted(() => ({ requeueAfter: "1 minute" }), { source: Stream.fromQueue(events) })
        yield* Queue.offerAll(events, [Controller.enqueue("a"), Controller.enqueue("b")])
        yield* Effect.yieldNow
        yield* h.controller.awaitIdle
        yield* Queue.offer(events, Controller.forget("b"))
        yield* Effect.yieldNow
        yield* TestClock.adjust("90 seconds")
        assert.deepStrictEqual(h.runs.map((run) => `${run.key}@${run.at}`).sort(), ["a@0", "a@60000", "b@0"])
      })))

    it.effect("consumes several sources, each as its events come, one never waiting on another", () =>
      isolated(Effect.gen(function*() {
        const first = yield* Queue.unbounded<Controller.Event>()
        const second = yield* Queue.unbounded<Controller.Event>()
        const h = yield* scripted(() => "ok", { source: [Stream.fromQueue(first), Stream.fromQueue(second)] })
        yield* Queue.offer(second, Controller.enqueue("b"))
        yield* Effect.yieldNow
        yield* h.controller.awaitIdle
        assert.deepStrictEqual(h.runs.map((run) => run.key), ["b"])
        yield* Queue.offerAll(first, [Controller.enqueue("a"), Controller.enqueue("c")])
        yield* Queue.offer(second, Controller.forget("b"))
        yield* Effect.yieldNow
        yield* h.controller.awaitIdle
        assert.deepStrictEqual(h.runs.map((run) => run.key).sort(), ["a", "b", "c"])
        assert.isTrue(Option.isNone(yield* h.controller.keyStatus("b")))
      })))

    it.effect("forgetting a queued key drops its run", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted(() => ({ sleep: "1 second", then: "ok" }))
        yield* h.controller.enqueue("a")
        yield* Effect.yieldNow
        yield* h.controller.enqueue("b")
        yield* h.controller.forget("b")
        yield* TestClock.adjust("1 minute")
        yield* h.controller.awaitIdle
        assert.deepStrictEqual(h.runs.map((run) => run.key), ["a"])
      })))

    it.effect("publishes a report per run with its outcome and the timer it left", () =>
      isolated(Effect.gen(function*() {
        const h = yield* scripted((_, n) => n === 0 ? "fail" : { requeueAfter: "5 seconds" }, {
          retryPolicy: RetryPolicy.gradual
        })
        const collected = yield* h.controller.reports.pipe(Stream.take(2), Stream.runCollect, Effect.forkChild)
        yield* Effect.yieldNow
        yield* eventAndSettle(h.controller, "a")
        yield* TestClock.adjust("2 seconds")
        const reports = yield* Fiber.join(collected)
        assert.deepStrictEqual(reports.map((r) => [r.result._tag, r.attempt, r.next]), [
          ["Transient", 0, { at: 2000, trigger: "retry" }],
          ["RequeueAfter", 1, { at: 7000, trigger: "reschedule" }]
        ])
      })))

    it.effect("shutdown with a drain timeout lets a running reconcile finish", () =>
      isolated(Effect.gen(function*() {
        const finished = yield* Ref.make(false)
        const controller = yield* Controller.make({
          name: "draining",
          reconcile: () => Effect.sleep("2 seconds").pipe(Effect.andThen(Ref.set(finished, true)), Effect.as(Outcome.done))
        })
        yield* controller.enqueue("a")
        yield* Effect.yieldNow
        const stopping = yield* Effect.forkChild(controller.shutdown({ drainTimeout: "10 seconds" }))
        yield* TestClock.adjust("3 seconds")
        yield* Fiber.join(stopping)
        assert.isTrue(yield* Ref.get(finished))
        yield* controller.enqueue("b") // no longer accepted
        yield* TestClock.adjust("1 minute")
        assert.strictEqual((yield* controller.health).total, 1)
      })))

    it.effect("shutdown past its drain timeout interrupts the running reconcile", () =>
      isolated(Effect.gen(function*() {
        const interrupted = yield* Ref.make(false)
        const controller = yield* Controller.make({
          name: "interrupting",
          reconcile: () => Effect.never.pipe(Effect.onInterrupt(() => Ref.set(interrupted, true)))
        })
        yield* controller.enqueue("a")
        yield* Effect.yieldNow
        const stopping = yield* Effect.forkChild(controller.shutdown({ drainTimeout: Duration.seconds(5) }))
        yield* TestClock.adjust("6 seconds")
        yield* Fiber.join(stopping)
        assert.isTrue(yield* Ref.get(interrupted))
      })))
  })
})
