/**
 * The engine's metrics, under controller-runtime's names so existing dashboards and alerts work,
 * plus kubefx's own (`kubefx_*`).
 *
 * @since 0.1.0
 */
import { type Context, Effect, Metric, type Scope } from "effect"

/** controller-runtime's buckets for reconcile time (seconds). */
export const reconcileBuckets: ReadonlyArray<number> = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60
]
/** client-go's workqueue buckets: 10 ns to 1000 s, x10. */
export const queueBuckets: ReadonlyArray<number> = Metric.exponentialBoundaries({ start: 1e-8, factor: 10, count: 12 })

/** `controller_runtime_reconcile_total{controller,result}`; result is success, error, requeue_after. */
export const reconcileTotal = Metric.counter("controller_runtime_reconcile_total", {
  description: "Total number of reconciliations per controller",
  incremental: true
})
/** `controller_runtime_reconcile_errors_total{controller}`. */
export const reconcileErrors = Metric.counter("controller_runtime_reconcile_errors_total", {
  description: "Total number of reconciliation errors per controller",
  incremental: true
})
/** `controller_runtime_terminal_reconcile_errors_total{controller}`: permanent errors. */
export const terminalReconcileErrors = Metric.counter("controller_runtime_terminal_reconcile_errors_total", {
  description: "Total number of terminal reconciliation errors per controller",
  incremental: true
})
/** `controller_runtime_reconcile_panics_total{controller}`: defects. */
export const reconcilePanics = Metric.counter("controller_runtime_reconcile_panics_total", {
  description: "Total number of reconciliation panics per controller",
  incremental: true
})
/** `controller_runtime_reconcile_timeouts_total{controller}`: runs cut off by the controller's `timeout`. */
export const reconcileTimeouts = Metric.counter("controller_runtime_reconcile_timeouts_total", {
  description: "Total number of reconciliation timeouts per controller",
  incremental: true
})
/** `controller_runtime_reconcile_time_seconds{controller}`. */
export const reconcileTime = Metric.histogram("controller_runtime_reconcile_time_seconds", {
  description: "Length of time per reconciliation per controller",
  boundaries: reconcileBuckets
})
/** `controller_runtime_active_workers{controller}`. */
export const activeWorkers = Metric.gauge("controller_runtime_active_workers", {
  description: "Number of currently used workers per controller"
})
/** `controller_runtime_max_concurrent_reconciles{controller}`. */
export const maxConcurrentReconciles = Metric.gauge("controller_runtime_max_concurrent_reconciles", {
  description: "Maximum number of concurrent reconciles per controller"
})
/** `workqueue_depth{name}`. */
export const depth = Metric.gauge("workqueue_depth", { description: "Current depth of workqueue" })
/** `workqueue_adds_total{name}`. */
export const adds = Metric.counter("workqueue_adds_total", {
  description: "Total number of adds handled by workqueue",
  incremental: true
})
/** `workqueue_retries_total{name}`. */
export const retries = Metric.counter("workqueue_retries_total", {
  description: "Total number of retries handled by workqueue",
  incremental: true
})
/** `workqueue_queue_duration_seconds{name}`: time from add to processing. */
export const queueDuration = Metric.histogram("workqueue_queue_duration_seconds", {
  description: "How long in seconds an item stays in workqueue before being requested",
  boundaries: queueBuckets
})
/** `workqueue_work_duration_seconds{name}`: time processing an item. */
export const workDuration = Metric.histogram("workqueue_work_duration_seconds", {
  description: "How long in seconds processing an item from workqueue takes",
  boundaries: queueBuckets
})
/** `workqueue_unfinished_work_seconds{name}`: the time the runs still going have taken so far. */
export const unfinishedWork = Metric.gauge("workqueue_unfinished_work_seconds", {
  description:
    "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."
})
/** `workqueue_longest_running_processor_seconds{name}`: the oldest run still going, so far. */
export const longestRunning = Metric.gauge("workqueue_longest_running_processor_seconds", {
  description: "How many seconds has the longest running processor for workqueue been running."
})
/** `kubefx_controller_degraded{controller}`: 1 while degraded. */
export const degraded = Metric.gauge("kubefx_controller_degraded", {
  description: "Whether the controller is degraded (1) after consecutive failures"
})
/** `kubefx_reconcile_triggers_total{controller,trigger}`: why runs ran. */
export const triggers = Metric.counter("kubefx_reconcile_triggers_total", {
  description: "Reconciles by what triggered them: event, related, retry, reschedule, resync",
  incremental: true
})

// The engine keeps its counts in plain variables on the hot path and registers series that
// exporters read at snapshot time, instead of looking a series up in the registry on every update.

type Attributes = Readonly<Record<string, string>>

const registerIn = <State>(
  context: Context.Context<never>,
  metric: Metric.Metric<never, State>,
  attributes: Attributes,
  get: () => State
): { readonly remove: () => void } =>
  Metric.registerUnsafe(Metric.withAttributes(metric, attributes), context, { get, update: () => {}, modify: () => {} })

const register = <State>(
  metric: Metric.Metric<never, State>,
  attributes: Attributes,
  get: () => State
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.contextWith((context) => {
    const registration = registerIn(context, metric, attributes, get)
    return Effect.addFinalizer(() => Effect.sync(registration.remove))
  })

/**
 * Exposes a counter whose value the caller keeps in the metric registry of `context`, until the
 * returned `remove`: for series that appear outside an Effect (one per status code an HTTP
 * client meets, say), where `observeCounter` cannot be yielded.
 *
 * @example
 * import { Context, Metric } from "effect"
 * import { EngineMetrics } from "@kubefx/core"
 * let adds = 0
 * const { remove } = EngineMetrics.observeCounterUnsafe(Context.empty(), EngineMetrics.adds, { name: "q" }, () => adds)
 * remove()
 */
export const observeCounterUnsafe = (
  context: Context.Context<never>,
  metric: Metric.Counter<number>,
  attributes: Attributes,
  read: () => number
): { readonly remove: () => void } => registerIn(context, metric, attributes, () => ({ count: read(), incremental: true }))

/**
 * Exposes a counter whose value the caller keeps, for as long as the scope is open.
 *
 * @example
 * import { Effect } from "effect"
 * import { EngineMetrics } from "@kubefx/core"
 * let adds = 0
 * const program = Effect.scoped(EngineMetrics.observeCounter(EngineMetrics.adds, { name: "q" }, () => adds))
 */
export const observeCounter = (
  metric: Metric.Counter<number>,
  attributes: Attributes,
  read: () => number
): Effect.Effect<void, never, Scope.Scope> =>
  register(metric, attributes, () => ({ count: read(), incremental: true }))

/**
 * Exposes a gauge read from the caller's state, for as long as the scope is open.
 *
 * @example
 * import { Effect } from "effect"
 * import { EngineMetrics } from "@kubefx/core"
 * const pending: Array<string> = []
 * const program = Effect.scoped(EngineMetrics.observeGauge(EngineMetrics.depth, { name: "q" }, () => pending.length))
 */
export const observeGauge = (
  metric: Metric.Gauge<number>,
  attributes: Attributes,
  read: () => number
): Effect.Effect<void, never, Scope.Scope> => register(metric, attributes, () => ({ value: read() }))

/** Records observations into a histogram series kept by the caller. */
export interface Recorder {
  readonly record: (value: number) => void
}

/**
 * Exposes a histogram with the given bucket boundaries, recorded without registry lookups.
 *
 * @example
 * import { Effect } from "effect"
 * import { EngineMetrics } from "@kubefx/core"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const time = yield* EngineMetrics.observeHistogram(EngineMetrics.reconcileTime, EngineMetrics.reconcileBuckets, { controller: "c" })
 *   time.record(0.012)
 * }))
 */
export const observeHistogram = (
  metric: Metric.Histogram<number>,
  boundaries: ReadonlyArray<number>,
  attributes: Attributes
): Effect.Effect<Recorder, never, Scope.Scope> => {
  const bounds = boundaries.filter(Number.isFinite)
  const counts = new Array<number>(bounds.length + 1).fill(0)
  let count = 0
  let sum = 0
  let min = Number.MAX_VALUE
  let max = -Number.MAX_VALUE
  const record = (value: number) => {
    let low = 0
    let high = bounds.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (value <= bounds[mid]!) high = mid
      else low = mid + 1
    }
    counts[low]!++
    count++
    sum += value
    if (value < min) min = value
    if (value > max) max = value
  }
  const get = (): Metric.HistogramState => {
    let cumulated = 0
    const buckets = bounds.map((boundary, i): [number, number] => [boundary, cumulated += counts[i]!])
    return { buckets: [...buckets, [Number.POSITIVE_INFINITY, count]], count, min, max, sum }
  }
  return Effect.as(register(metric, attributes, get), { record })
}
