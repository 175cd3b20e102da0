import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Metric } from "effect"
import { TestClock } from "effect/testing"
import { EngineMetrics, Trigger, WorkQueue } from "@kubefx/core"
import { isolated, scripted } from "./harness.ts"

const takeKey = (queue: WorkQueue.WorkQueue) =>
  Effect.map(queue.take, (item) => item.key).pipe(Effect.tap((key) => queue.done(key)))

describe("priority", () => {
  it.effect("fresh changes go before resyncs, requeue-afters, retries and bulk re-enqueues; first in, first out within each", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("lanes")
      yield* queue.addAfter("due", { after: Duration.millis(1), trigger: Trigger.reschedule })
      yield* TestClock.adjust("1 millis")
      yield* queue.add("resynced", Trigger.resync)
      yield* queue.add("listed", Trigger.listed)
      yield* queue.add("changed", Trigger.event())
      yield* queue.add("served", { _tag: "Related", source: "ConfigMap now served", bulk: true })
      yield* queue.add("owned", Trigger.related("ConfigMap default/a"))
      yield* queue.add("retried", Trigger.retry)
      const order: Array<string> = []
      for (let i = 0; i < 7; i++) order.push(yield* takeKey(queue))
      assert.deepStrictEqual(order, ["changed", "owned", "due", "resynced", "listed", "served", "retried"])
      assert.strictEqual(queue.depth(), 0)
    })))

  it.effect("a fresh change to a key queued at low priority moves it ahead, once", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("promote")
      yield* queue.add("a", Trigger.resync)
      yield* queue.add("b", Trigger.listed)
      yield* queue.add("b", Trigger.event("updated"))
      assert.strictEqual(queue.depth(), 2)
      const first = yield* queue.take
      assert.strictEqual(first.key, "b")
      // the fresh event replaced the listed one: the run reports why it is fresh
      assert.deepStrictEqual(first.triggers, [Trigger.event("updated")])
      yield* queue.done("b")
      assert.strictEqual(yield* takeKey(queue), "a")
      // b's low entry was left behind and is skipped: the next take waits for c
      yield* queue.add("c", Trigger.resync)
      assert.strictEqual(yield* takeKey(queue), "c")
      assert.strictEqual(queue.depth(), 0)
    })))

  it.effect("a run merged from a resync and a fresh event counts under the event in the trigger metric", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted(() => "ok", { name: "reasons", held: true })
      yield* h.controller.enqueue("a", Trigger.resync)
      yield* h.controller.enqueue("a", Trigger.event("updated"))
      yield* h.controller.enqueue("b", Trigger.resync)
      yield* h.controller.resume
      yield* h.controller.awaitIdle
      const count = (trigger: string) =>
        Effect.map(Metric.value(Metric.withAttributes(EngineMetrics.triggers, { controller: "reasons", trigger })), (state) => state.count)
      assert.deepStrictEqual([yield* count("event"), yield* count("resync")], [1, 1])
    })))

  it.effect("a 10,000-key resync does not delay a fresh event's reconcile beyond one run slot", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted(() => ({ sleep: "10 millis", then: "ok" }), { concurrency: 2 })
      for (let i = 0; i < 10_000; i++) yield* h.controller.enqueue(`resync-${i}`, Trigger.resync)
      yield* TestClock.adjust("1 second") // 200 resync runs done, 9,800 still queued
      assert.strictEqual(h.runs.length, 202)
      yield* TestClock.adjust("3 millis") // mid-run: both workers busy
      yield* h.controller.enqueue("fresh")
      yield* TestClock.adjust("7 millis")
      const fresh = h.runsOf("fresh")
      assert.strictEqual(fresh.length, 1)
      assert.strictEqual(fresh[0]!.at, 1010) // the first slot that freed up after the event
      // every later slot goes back to the resync
      yield* TestClock.adjust("100 seconds")
      yield* h.controller.awaitIdle
      assert.strictEqual(h.runs.length, 10_001)
    })))
})
