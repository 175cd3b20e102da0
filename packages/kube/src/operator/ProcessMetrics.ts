/**
 * What the operator's process costs, in its metrics, under the names Prometheus clients give them
 * (`process_*` as Go's process collector, which controller-runtime serves; `nodejs_*` as
 * prom-client), so the dashboards and alerts written for operators read them: CPU seconds,
 * resident memory, start time, open and allowed file descriptors, V8's heap, and garbage
 * collection pauses by kind. Everything but the pauses is read when the metrics are scraped; no
 * timer runs for them.
 *
 * @since 0.1.0
 */
import { EngineMetrics } from "@kubefx/core"
import { Effect, Exit, Metric, Scope } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { constants, PerformanceObserver } from "node:perf_hooks"

/** `process_cpu_user_seconds_total`. */
export const cpuUser = Metric.counter("process_cpu_user_seconds_total", {
  description: "Total user CPU time spent in seconds.",
  incremental: true
})
/** `process_cpu_system_seconds_total`. */
export const cpuSystem = Metric.counter("process_cpu_system_seconds_total", {
  description: "Total system CPU time spent in seconds.",
  incremental: true
})
/** `process_cpu_seconds_total`: user and system. */
export const cpu = Metric.counter("process_cpu_seconds_total", {
  description: "Total user and system CPU time spent in seconds.",
  incremental: true
})
/** `process_start_time_seconds`. */
export const startTime = Metric.gauge("process_start_time_seconds", {
  description: "Start time of the process since unix epoch in seconds."
})
/** `process_resident_memory_bytes`. */
export const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident memory size in bytes." })
/** `process_open_fds` (Linux). */
export const openFds = Metric.gauge("process_open_fds", { description: "Number of open file descriptors." })
/** `process_max_fds` (Linux): the soft limit. */
export const maxFds = Metric.gauge("process_max_fds", { description: "Maximum number of open file descriptors." })
/** `nodejs_heap_size_total_bytes`. */
export const heapTotal = Metric.gauge("nodejs_heap_size_total_bytes", { description: "Process heap size from Node.js in bytes." })
/** `nodejs_heap_size_used_bytes`. */
export const heapUsed = Metric.gauge("nodejs_heap_size_used_bytes", { description: "Process heap size used from Node.js in bytes." })
/** `nodejs_external_memory_bytes`. */
export const externalMemory = Metric.gauge("nodejs_external_memory_bytes", {
  description: "Node.js external memory size in bytes."
})
/** prom-client's buckets for garbage collection pauses (seconds). */
export const gcBuckets: ReadonlyArray<number> = [0.001, 0.01, 0.1, 1, 2, 5]
/** `nodejs_gc_duration_seconds{kind}`: kind is minor, major, incremental or weakcb. */
export const gcDuration = Metric.histogram("nodejs_gc_duration_seconds", {
  description: "Garbage collection duration by kind, one of major, minor, incremental or weakcb.",
  boundaries: gcBuckets
})

const gcKinds: ReadonlyArray<readonly [number, string]> = [
  [constants.NODE_PERFORMANCE_GC_MINOR, "minor"],
  [constants.NODE_PERFORMANCE_GC_MAJOR, "major"],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"]
]

// The descriptor readdirSync opens to list the others is not one of the process's own.
const countOpenFds = (): number => readdirSync("/proc/self/fd").length - 1

const readMaxFds = (): number => {
  const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"))
  const soft = line?.split(/\s{2,}/)[1]
  return soft === undefined || soft === "unlimited" ? Number.POSITIVE_INFINITY : Number(soft)
}

const cpuSeconds = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

/** The process's cost so far, read now. */
export interface Reading {
  /** User and system CPU seconds since the process started. */
  readonly cpuSeconds: number
  readonly residentMemoryBytes: number
  readonly heapUsedBytes: number
  /** When the process started, in milliseconds since the epoch. */
  readonly startedAtMillis: number
}

/**
 * Reads the process's cost so far (what the Control Center shows beside the metrics).
 *
 * @example
 * import { ProcessMetrics } from "@kubefx/kube"
 * ProcessMetrics.read().residentMemoryBytes > 0 // true
 */
export const read = (): Reading => ({
  cpuSeconds: cpuSeconds(),
  residentMemoryBytes: process.memoryUsage.rss(),
  heapUsedBytes: process.memoryUsage().heapUsed,
  startedAtMillis: performance.timeOrigin
})

// Who observes the process in each registry, and the scope its series live in.
const observers = new WeakMap<Metric.MetricRegistry, { count: number; readonly scope: Scope.Closeable }>()

const register: Effect.Effect<void, never, Scope.Scope> = Effect.gen(function*() {
  const seconds = (micros: number) => micros / 1e6
  yield* EngineMetrics.observeCounter(cpuUser, {}, () => seconds(process.cpuUsage().user))
  yield* EngineMetrics.observeCounter(cpuSystem, {}, () => seconds(process.cpuUsage().system))
  yield* EngineMetrics.observeCounter(cpu, {}, cpuSeconds)
  const started = performance.timeOrigin / 1000
  yield* EngineMetrics.observeGauge(startTime, {}, () => started)
  yield* EngineMetrics.observeGauge(residentMemory, {}, () => process.memoryUsage.rss())
  yield* EngineMetrics.observeGauge(heapTotal, {}, () => process.memoryUsage().heapTotal)
  yield* EngineMetrics.observeGauge(heapUsed, {}, () => process.memoryUsage().heapUsed)
  yield* EngineMetrics.observeGauge(externalMemory, {}, () => process.memoryUsage().external)
  if (process.platform === "linux") {
    yield* EngineMetrics.observeGauge(openFds, {}, countOpenFds)
    yield* EngineMetrics.observeGauge(maxFds, {}, readMaxFds)
  }
  const recorders = new Map<number, EngineMetrics.Recorder>()
  for (const [kind, name] of gcKinds) {
    recorders.set(kind, yield* EngineMetrics.observeHistogram(gcDuration, gcBuckets, { kind: name }))
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const observer = new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          const detail = (entry as { readonly detail?: { readonly kind?: number } }).detail
          recorders.get(detail?.kind ?? -1)?.record(entry.duration / 1000)
        }
      })
      observer.observe({ entryTypes: ["gc"] })
      return observer
    }),
    (observer) => Effect.sync(() => observer.disconnect())
  )
})

/**
 * Exposes the process's metrics for as long as the scope is open. Operators in one process share
 * the series: they stay while any of them observes, and go with the last one.
 *
 * @example
 * import { Effect } from "effect"
 * import { PrometheusMetrics } from "effect/observability"
 * import { ProcessMetrics } from "@kubefx/kube"
 * const text = Effect.scoped(Effect.andThen(
 *   ProcessMetrics.observe,
 *   Effect.map(Effect.context<never>(), (context) => PrometheusMetrics.formatUnsafe(context))
 * ))
 */
export const observe: Effect.Effect<void, never, Scope.Scope> = Effect.gen(function*() {
  const registry = yield* Metric.MetricRegistry
  yield* Effect.acquireRelease(
    Effect.suspend(() => {
      const shared = observers.get(registry)
      if (shared !== undefined) {
        shared.count++
        return Effect.void
      }
      // The series live in a scope of their own, so the first operator to stop does not take them along.
      return Effect.flatMap(Scope.make(), (scope) =>
        Effect.provideService(register, Scope.Scope, scope).pipe(
          Effect.andThen(Effect.sync(() => observers.set(registry, { count: 1, scope })))
        ))
    }),
    () =>
      Effect.suspend(() => {
        const held = observers.get(registry)!
        if (--held.count > 0) return Effect.void
        observers.delete(registry)
        return Scope.close(held.scope, Exit.void)
      })
  )
})
