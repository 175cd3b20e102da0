import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Metric } from "effect"
import { TestClock } from "effect/testing"
import { EngineMetrics, Trigger, WorkQueue } from "@kubefx/core"
import { isolated } from "./harness.ts"

const takeKey = (queue: WorkQueue.WorkQueue) => Effect.map(queue.take, (item) => item.key)

describe("WorkQueue", () => {
  it.effect("adds of a queued key merge, keeping the first trigger of each kind", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("merge")
      yield* queue.add("a", Trigger.event("first"))
      yield* queue.add("b", Trigger.event())
      yield* queue.add("a", Trigger.related("ConfigMap x"))
      yield* queue.add("a", Trigger.event("second"))
      assert.strictEqual(queue.depth(), 2)
      yield* TestClock.adjust("3 seconds")
      const { key, triggers, queuedAt, takenAt } = yield* queue.take
      assert.deepStrictEqual({ key, triggers, queuedAt, takenAt }, {
        key: "a",
        triggers: [Trigger.event("first"), Trigger.related("ConfigMap x")],
        queuedAt: 0,
        takenAt: 3_000
      })
      assert.strictEqual(yield* takeKey(queue), "b")
    })))

  it.effect("adds of a key it refuses are dropped, decided as each add runs", () =>
    isolated(Effect.gen(function*() {
      const refused = new Set(["a"])
      const queue = yield* WorkQueue.make("refuses", { refuses: (key) => refused.has(key) })
      const madeWhileRefused = queue.add("a", Trigger.event())
      yield* queue.add("a", Trigger.event())
      assert.strictEqual(queue.depth(), 0)
      refused.delete("a")
      yield* madeWhileRefused
      assert.strictEqual(yield* takeKey(queue), "a")
    })))

  it.effect("an add while the key runs gives exactly one follow-up after done", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("dirty")
      yield* queue.add("a", Trigger.event())
      yield* queue.take
      for (let i = 0; i < 10; i++) yield* queue.add("a", Trigger.event())
      assert.strictEqual(queue.depth(), 0) // not handed to another worker while it runs
      yield* queue.done("a")
      assert.strictEqual(queue.depth(), 1)
      yield* queue.take
      yield* queue.done("a")
      assert.strictEqual(queue.depth(), 0)
      assert.strictEqual(queue.running(), 0)
    })))

  it.effect("an immediate add supersedes the key's delayed add", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("delayed")
      yield* queue.addAfter("a", { after: Duration.seconds(10), trigger: Trigger.reschedule })
      assert.strictEqual(queue.dueAt("a"), 10_000)
      yield* TestClock.adjust("5 seconds")
      yield* queue.add("a", Trigger.event())
      assert.isUndefined(queue.dueAt("a"))
      yield* queue.take
      yield* queue.done("a")
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(queue.depth(), 0)
    })))

  it.effect("a delayed add replaces the previous one and fires once", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("replace")
      yield* queue.addAfter("a", { after: Duration.seconds(10), trigger: Trigger.reschedule })
      yield* queue.addAfter("a", { after: Duration.seconds(20), trigger: Trigger.retry })
      yield* TestClock.adjust("15 seconds")
      assert.strictEqual(queue.depth(), 0)
      yield* TestClock.adjust("5 seconds")
      const item = yield* queue.take
      assert.deepStrictEqual(item.triggers, [Trigger.retry])
      assert.strictEqual(item.queuedAt, 20_000)
    })))

  it.effect("done of a dirty key requeues at once and drops the follow-up timer", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("dirty-follow-up")
      yield* queue.add("a", Trigger.event())
      yield* queue.take
      yield* queue.add("a", Trigger.event())
      yield* queue.done("a", { after: Duration.seconds(5), trigger: Trigger.retry })
      assert.isUndefined(queue.dueAt("a"))
      assert.strictEqual(yield* takeKey(queue), "a")
      yield* queue.done("a", { after: Duration.seconds(5), trigger: Trigger.retry })
      assert.strictEqual(queue.dueAt("a"), 5000)
    })))

  it.effect("remove drops a queued run and the delayed add", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("remove")
      yield* queue.add("a", Trigger.event())
      yield* queue.add("b", Trigger.event())
      yield* queue.addAfter("c", { after: Duration.seconds(1), trigger: Trigger.retry })
      yield* queue.remove("a")
      yield* queue.remove("c")
      assert.strictEqual(queue.depth(), 1)
      assert.strictEqual(yield* takeKey(queue), "b")
      yield* queue.add("a", Trigger.event()) // a removed key can come back
      assert.strictEqual(yield* takeKey(queue), "a")
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(queue.depth(), 0)
    })))

  it.effect("a key dropped and added again runs once, and a finished run's item steps the key's new state", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("slots")
      yield* queue.add("a", Trigger.event())
      yield* queue.remove("a")
      yield* queue.add("a", Trigger.event())
      // The first add's entry is left behind in the ready queue; only the second one runs.
      const first = yield* queue.take
      assert.strictEqual(first.key, "a")
      assert.strictEqual(queue.running(), 1)
      yield* queue.done("a")
      assert.strictEqual(queue.depth(), 0)
      assert.isUndefined(queue.state("a"))
      // The finished run's item no longer holds the key's place: applying through it reaches the
      // state the key has now.
      yield* queue.add("a", Trigger.event())
      queue.applyTaken(first, { _tag: "Forget" })
      assert.isUndefined(queue.state("a"))
      assert.strictEqual(queue.depth(), 0)
      const taker = yield* Effect.forkChild(queue.take)
      yield* Effect.yieldNow
      assert.isUndefined(taker.pollUnsafe())
    })))

  it.effect("ready waits for a key without taking it: a waiter interrupted once woken leaves the key for takeUnsafe", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("ready")
      assert.isUndefined(queue.takeUnsafe())
      const waiter = yield* Effect.forkChild(queue.ready, { startImmediately: true })
      yield* queue.add("a", Trigger.event())
      // Woken by the add, interrupted before it could run on: nothing was taken.
      yield* Fiber.interrupt(waiter)
      assert.deepStrictEqual([queue.depth(), queue.running()], [1, 0])
      yield* queue.ready
      assert.strictEqual(queue.takeUnsafe()?.key, "a")
      assert.deepStrictEqual([queue.depth(), queue.running()], [0, 1])
      assert.isUndefined(queue.takeUnsafe())
      // A key forgotten after it was offered leaves an entry that takeUnsafe passes over.
      yield* queue.add("b", Trigger.event())
      yield* queue.remove("b")
      yield* queue.add("c", Trigger.event())
      assert.strictEqual(queue.takeUnsafe()?.key, "c")
      assert.isUndefined(queue.takeUnsafe())
    })))

  it.effect("awaitIdle waits for queued and running keys", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("idle")
      yield* queue.add("a", Trigger.event())
      const idle = yield* Effect.forkChild(queue.awaitIdle)
      yield* Effect.yieldNow
      assert.isUndefined(idle.pollUnsafe())
      yield* queue.take
      yield* Effect.yieldNow
      assert.isUndefined(idle.pollUnsafe())
      yield* queue.done("a")
      yield* Fiber.join(idle)
    })))

  it.effect("shutdown drain waits for running keys, then interrupts waiting takers and ignores adds", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("drain")
      yield* queue.add("a", Trigger.event())
      yield* queue.take
      const stopping = yield* Effect.forkChild(queue.shutdown("drain"))
      const taker = yield* Effect.forkChild(queue.take)
      yield* Effect.yieldNow
      assert.isUndefined(stopping.pollUnsafe())
      yield* queue.done("a")
      yield* Fiber.join(stopping)
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(taker)))
      yield* queue.add("b", Trigger.event())
      assert.strictEqual(queue.depth(), 0)
    })))

  it.effect("counts adds, depth and queue latency under client-go's metric names", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("metered")
      yield* queue.add("a", Trigger.event())
      yield* queue.add("a", Trigger.event())
      yield* queue.add("b", Trigger.event())
      const depth = yield* Metric.value(Metric.withAttributes(EngineMetrics.depth, { name: "metered" }))
      const adds = yield* Metric.value(Metric.withAttributes(EngineMetrics.adds, { name: "metered" }))
      assert.strictEqual(depth.value, 2)
      assert.strictEqual(adds.count, 2)
      yield* TestClock.adjust("250 millis")
      yield* queue.take
      const latency = yield* Metric.value(Metric.withAttributes(EngineMetrics.queueDuration, { name: "metered" }))
      assert.strictEqual(latency.count, 1)
      assert.strictEqual(latency.sum, 0.25)
    })))
})
