/**
 * The engine's metrics, under controller-runtime's names so existing dashboards and alerts work,
 * plus kubefx's own (`kubefx_*`).
 *
 * @since 0.1.0
 */
import { Metric } from "effect"

// controller-runtime's buckets for reconcile time (seconds).
const reconcileBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60
]
// client-go's workqueue buckets: 10ns to 1000s, x10.
const queueBuckets = Metric.exponentialBoundaries({ start: 1e-8, factor: 10, count: 12 })

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
/** `kubefx_controller_degraded{controller}`: 1 while degraded. */
export const degraded = Metric.gauge("kubefx_controller_degraded", {
  description: "Whether the controller is degraded (1) after consecutive failures"
})
/** `kubefx_reconcile_triggers_total{controller,trigger}`: why runs ran. */
export const triggers = Metric.counter("kubefx_reconcile_triggers_total", {
  description: "Reconciles by what triggered them: event, related, retry, reschedule, resync",
  incremental: true
})
