/**
 * Holding a controller (a replica that does not lead, or one shutting down) and resuming it, the
 * work-queue operations behind it, and the tracing span per run.
 */
import { assert, describe, it } from "@effect/vitest"
import { Controller, Outcome, ReconcileError, Trigger, WorkQueue } from "@kubefx/core"
import { Effect, Exit, Fiber, Option, Ref, References, Stream, Tracer } from "effect"
import { TestClock } from "effect/testing"
import { isolated, scripted } from "./harness.ts"

const collectReports = (controller: Controller.Controller, n: number) =>
  controller.reports.pipe(Stream.take(n), Stream.runCollect, Effect.forkChild({ startImmediately: true }))

describe("Controller hold and resume", () => {
  it.effect("a controller started held queues events, reconciles nothing and is Pending until resumed", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted(() => "ok", { held: true, concurrency: 2 })
      for (const key of ["a", "b", "c"]) yield* h.controller.enqueue(key)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(h.runs.length, 0)
      assert.strictEqual(yield* h.controller.status, "Pending")
      const inspection = yield* h.controller.inspect
      assert.isTrue(inspection.held)
      assert.strictEqual(inspection.queueDepth, 3)
      yield* h.controller.resume
      yield* h.controller.awaitIdle
      assert.deepStrictEqual(h.runs.map((run) => run.key).sort(), ["a", "b", "c"])
      assert.strictEqual(yield* h.controller.status, "Healthy")
      assert.isFalse(h.controller.isHeld())
    })))

  it.effect("hold interrupts a running reconcile, queues its key again, and does not count it as a failure", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((_, n) => n === 0 ? "hang" : "ok")
      const reports = yield* collectReports(h.controller, 2)
      yield* h.controller.enqueue("a")
      yield* Effect.yieldNow
      assert.strictEqual(h.runs.length, 1)
      yield* h.controller.hold()
      assert.strictEqual((yield* h.controller.inspect).workersBusy, 0)
      assert.strictEqual((yield* h.controller.inspect).queueDepth, 1)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(h.runs.length, 1)
      yield* h.controller.resume
      yield* h.controller.awaitIdle
      assert.strictEqual(h.runs.length, 2)
      const health = yield* h.controller.health
      assert.strictEqual(health.failed, 0)
      assert.strictEqual(health.total, 1)
      const [first, second] = yield* Fiber.join(reports)
      assert.strictEqual(first!.result._tag, "Interrupted")
      assert.strictEqual(first!.next, undefined)
      assert.strictEqual(second!.result._tag, "Done")
    })))

  it.effect("a key's status says since when it runs, or since when it waits in the queue", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((_, n) => n === 0 ? "hang" : "ok", { held: true })
      yield* h.controller.enqueue("a")
      // Known once it ran: queued and never run yet, there is nothing to report.
      assert.isTrue(Option.isNone(yield* h.controller.keyStatus("a")))
      yield* TestClock.adjust("2 seconds")
      yield* h.controller.resume
      yield* Effect.yieldNow
      const running = Option.getOrThrow(yield* h.controller.keyStatus("a"))
      assert.deepStrictEqual([running.runningSince, running.queuedSince], [2000, undefined])
      yield* TestClock.adjust("3 seconds")
      yield* h.controller.hold()
      // Put back by the hold, waiting since it was first queued.
      const queued = Option.getOrThrow(yield* h.controller.keyStatus("a"))
      assert.deepStrictEqual([queued.runningSince, queued.queuedSince], [undefined, 0])
      yield* h.controller.resume
      yield* h.controller.awaitIdle
      const done = Option.getOrThrow(yield* h.controller.keyStatus("a"))
      assert.deepStrictEqual([done.runningSince, done.queuedSince], [undefined, undefined])
    })))

  it.effect("hold with a drain timeout lets a running reconcile finish and starts no queued one", () =>
    isolated(Effect.gen(function*() {
      const finished = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.make({
        name: "draining-hold",
        reconcile: (key) =>
          Effect.sleep("2 seconds").pipe(Effect.andThen(Ref.update(finished, (xs) => [...xs, key])), Effect.as(Outcome.done))
      })
      yield* controller.enqueue("a")
      yield* Effect.yieldNow
      yield* controller.enqueue("b")
      const holding = yield* Effect.forkChild(controller.hold({ drainTimeout: "10 seconds" }), { startImmediately: true })
      yield* TestClock.adjust("3 seconds")
      yield* Fiber.join(holding)
      assert.deepStrictEqual(yield* Ref.get(finished), ["a"])
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(yield* Ref.get(finished), ["a"])
      yield* controller.resume
      yield* TestClock.adjust("3 seconds")
      yield* controller.awaitIdle
      assert.deepStrictEqual(yield* Ref.get(finished), ["a", "b"])
    })))

  it.effect("a shorter hold cuts a longer one's drain short, and the controller keeps its concurrency", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((key, n) => key <= "b" && n === 0 ? "hang" : { sleep: "100 millis", then: "ok" }, {
        concurrency: 2
      })
      for (const key of ["a", "b"]) yield* h.controller.enqueue(key)
      yield* Effect.yieldNow
      const long = yield* Effect.forkChild(h.controller.hold({ drainTimeout: "1 hour" }), { startImmediately: true })
      yield* TestClock.adjust("1 second")
      assert.isUndefined(long.pollUnsafe())
      const short = yield* Effect.forkChild(h.controller.hold({ drainTimeout: "1 second" }), { startImmediately: true })
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(short)
      yield* Fiber.join(long)
      assert.strictEqual((yield* h.controller.inspect).workersBusy, 0)
      yield* h.controller.resume
      for (const key of ["c", "d", "e", "f"]) yield* h.controller.enqueue(key)
      yield* TestClock.adjust("10 seconds")
      yield* h.controller.awaitIdle
      assert.strictEqual(h.maxActive(), 2)
      assert.deepStrictEqual(h.runs.map((run) => run.key).sort(), ["a", "a", "b", "b", "c", "d", "e", "f"])
    })))

  it.effect("a worker waiting on a degraded dependency gives its key back at once when held, whatever the drain timeout", () =>
    isolated(Effect.gen(function*() {
      const dependency = yield* scripted(() => "fail", { name: "dependency", degradeAfter: 1 })
      const dependent = yield* scripted(() => "ok", { name: "dependent", dependsOn: [dependency.controller] })
      yield* dependency.controller.enqueue("x")
      yield* Effect.yieldNow
      assert.isTrue(dependency.controller.isDegraded())
      yield* dependent.controller.enqueue("y")
      yield* Effect.yieldNow
      assert.strictEqual((yield* dependent.controller.inspect).workersBusy, 1)
      yield* dependent.controller.hold({ drainTimeout: "1 hour" })
      const inspection = yield* dependent.controller.inspect
      assert.strictEqual(inspection.workersBusy, 0)
      assert.strictEqual(inspection.queueDepth, 1)
      assert.strictEqual(dependent.runs.length, 0)
    })))
})

describe("WorkQueue requeue", () => {
  it.effect("holds that interrupt the workers wherever they are, at every scheduler yield, lose no key", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted(() => "ok", { concurrency: 2 })
      const keys = ["a", "b", "c", "d", "e", "f"]
      for (let round = 0; round < 120; round++) {
        for (const key of keys) yield* h.controller.enqueue(key)
        // A different point of the workers' take-and-run cycle each round.
        for (let i = 0; i < round % 31; i++) yield* Effect.yieldNow
        yield* h.controller.hold()
        yield* h.controller.resume
      }
      const idle = yield* Effect.forkChild(h.controller.awaitIdle, { startImmediately: true })
      for (let i = 0; i < 1000 && idle.pollUnsafe() === undefined; i++) yield* Effect.yieldNow
      const inspection = yield* h.controller.inspect
      // A key taken where the worker could still be interrupted stayed running, or queued without
      // the signal a worker waits on, for ever.
      assert.deepStrictEqual([inspection.queueDepth, inspection.workersBusy], [0, 0])
      assert.isDefined(idle.pollUnsafe())
    }).pipe(Effect.provideService(References.MaxOpsBeforeYield, 3))))

  it.effect("puts a taken key back with its triggers and those of events since; not once done", () =>
    isolated(Effect.gen(function*() {
      const queue = yield* WorkQueue.make("requeue")
      yield* queue.add("a", Trigger.retry)
      const item = yield* queue.take
      yield* queue.add("a", Trigger.event("meanwhile"))
      assert.isTrue(queue.requeue(item))
      assert.strictEqual(queue.running(), 0)
      assert.strictEqual(queue.depth(), 1)
      const again = yield* queue.take
      assert.deepStrictEqual(again.triggers, [Trigger.retry, Trigger.event("meanwhile")])
      yield* queue.done("a")
      assert.isFalse(queue.requeue(again))
      assert.strictEqual(queue.depth(), 0)
    })))
})

describe("Controller tracing", () => {
  it.effect("each run is a kubefx.reconcile span with the controller, key, attempt and trigger, failing with the run", () =>
    isolated(Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const controller = yield* Controller.make({
        name: "traced",
        reconcile: (key) =>
          Effect.flatMap(Effect.currentSpan, (span) => {
            spans.push(span)
            return key === "bad" ? Effect.fail(new ReconcileError.Permanent({ message: "no" })) : Effect.succeed(Outcome.done)
          })
      })
      yield* controller.enqueue("good")
      yield* controller.enqueue("bad", Trigger.related("ConfigMap x"))
      yield* controller.awaitIdle
      // The span ends just after the run reports idle.
      for (let i = 0; i < 10 && spans.some((span) => span.status._tag !== "Ended"); i++) yield* Effect.yieldNow
      assert.deepStrictEqual(spans.map((span) => [span.name, Object.fromEntries(span.attributes)]), [
        ["kubefx.reconcile", { "kubefx.controller": "traced", "kubefx.key": "good", "kubefx.attempt": 0, "kubefx.trigger": "event" }],
        ["kubefx.reconcile", { "kubefx.controller": "traced", "kubefx.key": "bad", "kubefx.attempt": 0, "kubefx.trigger": "related" }]
      ])
      const [good, bad] = spans
      assert.isTrue(good!.status._tag === "Ended" && Exit.isSuccess(good!.status.exit))
      assert.isTrue(bad!.status._tag === "Ended" && Exit.isFailure(bad!.status.exit))
    })))

  it.effect("References.TracerEnabled false: a run has no span at all, not even a no-op one", () =>
    isolated(Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const controller = yield* Controller.make({
        name: "untraced",
        reconcile: () =>
          Effect.map(Effect.currentSpan.pipe(Effect.option), (span) => {
            if (span._tag === "Some") spans.push(span.value)
            return Outcome.done
          })
      })
      yield* controller.enqueue("a")
      yield* controller.awaitIdle
      assert.deepStrictEqual(spans, [])
    }).pipe(Effect.withTracerEnabled(false))))
})
