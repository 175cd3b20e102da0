import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { TestClock } from "effect/testing"
import { EngineMetrics, RetryPolicy } from "@kubefx/core"
import { eventAndSettle, isolated, scripted, type Step } from "./harness.ts"

const counter = (metric: Metric.Counter<number>, attributes: Record<string, string>) =>
  Effect.map(Metric.value(Metric.withAttributes(metric, attributes)), (state) => state.count)

describe("EngineMetrics", () => {
  it.effect("a run cut off by the controller's timeout counts in controller_runtime_reconcile_timeouts_total, as an error", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((key, n) => key === "slow" && n < 2 ? "hang" : key === "failing" && n === 0 ? "fail" : "ok", {
        name: "timed",
        timeout: "30 seconds",
        retryPolicy: RetryPolicy.exponential({ initial: "1 second" })
      })
      yield* h.controller.enqueue("slow")
      yield* h.controller.enqueue("failing")
      yield* TestClock.adjust("2 minutes")
      const controller = { controller: "timed" }
      assert.strictEqual(yield* counter(EngineMetrics.reconcileTimeouts, controller), 2)
      assert.strictEqual(yield* counter(EngineMetrics.reconcileErrors, controller), 3)
      const text = yield* PrometheusMetrics.format()
      assert.include(text, 'controller_runtime_reconcile_timeouts_total{controller="timed"} 2')
    })))

  it.effect("counts reconciles by result, errors, panics, terminal errors, retries and triggers", () =>
    isolated(Effect.gen(function*() {
      const scripts: Record<string, ReadonlyArray<Step>> = {
        a: ["fail", "fail", "ok"],
        b: ["die", "ok"],
        c: ["permanent"],
        d: [{ requeueAfter: "1 hour" }]
      }
      const h = yield* scripted((key, n) => scripts[key]![n] ?? "ok", {
        name: "metered",
        retryPolicy: RetryPolicy.exponential({ initial: "1 second" }),
        concurrency: 2
      })
      for (const key of Object.keys(scripts)) yield* eventAndSettle(h.controller, key)
      yield* TestClock.adjust("10 seconds")
      const controller = { controller: "metered" }
      assert.strictEqual(yield* counter(EngineMetrics.reconcileTotal, { ...controller, result: "success" }), 2)
      assert.strictEqual(yield* counter(EngineMetrics.reconcileTotal, { ...controller, result: "error" }), 4)
      assert.strictEqual(yield* counter(EngineMetrics.reconcileTotal, { ...controller, result: "requeue_after" }), 1)
      assert.strictEqual(yield* counter(EngineMetrics.reconcileErrors, controller), 4)
      assert.strictEqual(yield* counter(EngineMetrics.reconcilePanics, controller), 1)
      assert.strictEqual(yield* counter(EngineMetrics.terminalReconcileErrors, controller), 1)
      assert.strictEqual(yield* counter(EngineMetrics.retries, { name: "metered" }), 3)
      assert.strictEqual(yield* counter(EngineMetrics.triggers, { ...controller, trigger: "event" }), 4)
      assert.strictEqual(yield* counter(EngineMetrics.triggers, { ...controller, trigger: "retry" }), 3)
      const time = yield* Metric.value(Metric.withAttributes(EngineMetrics.reconcileTime, controller))
      assert.strictEqual(time.count, 7)

      const text = yield* PrometheusMetrics.format()
      assert.include(text, 'controller_runtime_reconcile_total{controller="metered",result="error"} 4')
      assert.include(text, 'controller_runtime_reconcile_errors_total{controller="metered"} 4')
      assert.include(text, 'workqueue_retries_total{name="metered"} 3')
      assert.match(text, /controller_runtime_reconcile_time_seconds_bucket\{controller="metered",le="0.005"\} 7/)
      assert.include(text, 'kubefx_controller_degraded{controller="metered"} 0')
    })))

  it.effect("reports the degraded state as a gauge", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted(() => "fail", { name: "sinking", retryPolicy: RetryPolicy.none, degradeAfter: 2 })
      yield* eventAndSettle(h.controller, "a")
      yield* eventAndSettle(h.controller, "a")
      const degraded = yield* Metric.value(Metric.withAttributes(EngineMetrics.degraded, { controller: "sinking" }))
      assert.strictEqual(degraded.value, 1)
    })))

  it.effect("shows runs still going in workqueue_unfinished_work_seconds and workqueue_longest_running_processor_seconds", () =>
    isolated(Effect.gen(function*() {
      const h = yield* scripted((_, n) => n === 0 ? "hang" : "ok", {
        name: "stuck",
        concurrency: 2,
        timeout: "30 seconds",
        retryPolicy: RetryPolicy.none
      })
      const gauges = Effect.all([
        Effect.map(Metric.value(Metric.withAttributes(EngineMetrics.unfinishedWork, { name: "stuck" })), (g) => g.value),
        Effect.map(Metric.value(Metric.withAttributes(EngineMetrics.longestRunning, { name: "stuck" })), (g) => g.value)
      ])
      assert.deepStrictEqual(yield* gauges, [0, 0])
      yield* h.controller.enqueue("a")
      yield* TestClock.adjust("10 seconds")
      yield* h.controller.enqueue("b")
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual(yield* gauges, [15 + 5, 15])
      assert.include(yield* PrometheusMetrics.format(), 'workqueue_longest_running_processor_seconds{name="stuck"} 15')
      // Both runs are cut off by the timeout: nothing is running any more.
      yield* TestClock.adjust("30 seconds")
      assert.deepStrictEqual(yield* gauges, [0, 0])
    })))
})
