/**
 * Releasing a key (a sharded replica handing it to another) and admitting it back: nothing of a
 * released key runs or queues, a running reconcile ends first (or is cut off after the drain
 * timeout), and the retry state does not survive.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Trigger } from "@kubefx/core"
import { isolated, scripted } from "./harness.ts"

describe("Controller release and admit", () => {
  it.effect("a released key drops its pending retry, ignores events and resyncs, and starts afresh once admitted", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((key, n) => key === "a" && n === 0 ? "fail" : "ok")
      yield* h.controller.enqueue("a")
      yield* h.controller.awaitIdle
      assert.isDefined((yield* h.controller.keyStatus("a")).pipe((o) => o._tag === "Some" ? o.value.next : undefined))
      yield* h.controller.release("a")
      assert.isTrue(h.controller.isReleased("a"))
      assert.strictEqual((yield* h.controller.inspect).released, 1)
      yield* h.controller.enqueue("a")
      yield* h.controller.enqueue("a", Trigger.resync)
      yield* TestClock.adjust("10 minutes")
      yield* h.controller.awaitIdle
      assert.strictEqual(h.runsOf("a").length, 1)
      assert.strictEqual((yield* h.controller.keyStatus("a"))._tag, "None")
      yield* h.controller.admit("a")
      assert.isFalse(h.controller.isReleased("a"))
      yield* h.controller.enqueue("a")
      yield* h.controller.awaitIdle
      assert.deepStrictEqual(h.runsOf("a").map((run) => run.attempt), [0, 0])
    })))

  it.effect("whether a key is released is decided when an enqueue runs: one made before the admit it follows runs the key", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted(() => "ok")
      yield* h.controller.release("a")
      // As a drain withdrawn: the admit and the enqueue after it are made together, the key still released.
      const readmit = Effect.andThen(h.controller.admit("a"), h.controller.enqueue("a", Trigger.event("withdrawn")))
      yield* readmit
      yield* h.controller.awaitIdle
      assert.strictEqual(h.runsOf("a").length, 1)
      // And the other way round: made while admitted, run once released, it queues nothing.
      const whileAdmitted = h.controller.enqueue("a")
      yield* h.controller.release("a")
      yield* whileAdmitted
      yield* h.controller.awaitIdle
      assert.strictEqual(h.runsOf("a").length, 1)
    })))

  it.effect("releasing a running key waits for its reconcile to end, and nothing of it runs afterwards", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((_, n) => n === 0 ? { sleep: "10 seconds", then: { requeueAfter: "1 second" } } : "ok")
      yield* h.controller.enqueue("a")
      yield* Effect.yieldNow
      // an event during the run owes a follow-up run, which the release cancels too
      yield* h.controller.enqueue("a")
      const release = yield* h.controller.release("a").pipe(Effect.forkChild({ startImmediately: true }))
      yield* TestClock.adjust("9 seconds")
      assert.isUndefined(release.pollUnsafe())
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(release)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(h.runs.length, 1)
      assert.strictEqual((yield* h.controller.inspect).queueDepth, 0)
    })))

  it.effect("after the drain timeout a running reconcile is interrupted, and its worker goes on with other keys", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((key) => key === "a" ? "hang" : "ok", { concurrency: 1 })
      yield* h.controller.enqueue("a")
      yield* Effect.yieldNow
      const release = yield* h.controller.release("a", { drainTimeout: "5 seconds" }).pipe(
        Effect.forkChild({ startImmediately: true })
      )
      yield* TestClock.adjust("4 seconds")
      assert.isUndefined(release.pollUnsafe())
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(release)
      assert.strictEqual((yield* h.controller.inspect).workersBusy, 0)
      yield* h.controller.enqueue("b")
      yield* h.controller.awaitIdle
      assert.deepStrictEqual(h.runs.map((run) => run.key), ["a", "b"])
      assert.strictEqual(h.maxActivePerKey(), 1)
    })))
})
