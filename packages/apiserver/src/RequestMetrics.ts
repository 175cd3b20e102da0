/**
 * The server's `/metrics`, with kube-apiserver's stable metric names: `apiserver_request_total`
 * by verb (`LIST`, `WATCH`, `APPLY`, `CONNECT`... as kube reports them), dry run, group, version,
 * resource, subresource, scope, component and response code, and `apiserver_storage_objects` by
 * resource, `apiserver_longrunning_requests` (the watches open now) and `apiserver_watch_events_total`
 * by kind (the events sent to watchers), `apiserver_request_duration_seconds` (a watch's whole life,
 * as kube counts it, once it ends) and `apiserver_current_inflight_requests` by request kind (not
 * counting watches), so a test can count what an operator asks of the server, what it is sent and
 * how long the server took. Each server keeps its own registry: servers in one process never mix
 * their counts.
 */
import { Context, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"

const requests = Metric.counter("apiserver_request_total", {
  description: "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
  incremental: true
})

const storedObjects = Metric.gauge("apiserver_storage_objects", {
  description: "[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1."
})

const longRunning = Metric.gauge("apiserver_longrunning_requests", {
  description: "[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way."
})

const watchEvents = Metric.counter("apiserver_watch_events_total", {
  description: "[ALPHA] Number of events sent in watch clients",
  incremental: true
})

// kube-apiserver's buckets for the request latency: its SLO's and the regressions' both.
const latencies = Metric.histogram("apiserver_request_duration_seconds", {
  description: "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
  boundaries: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]
})

// The number now, where kube-apiserver reports the most of the last second.
const inflight = Metric.gauge("apiserver_current_inflight_requests", {
  description: "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second."
})

/** What a watch is of: the labels of its long-running request. */
export interface Watched {
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly scope: "namespace" | "cluster"
}

/** One answered request, as its labels. */
export interface Request {
  readonly verb: string
  readonly dryRun: boolean
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly subresource: string
  /** `resource` (one object), `namespace`, `cluster`, or "" for a path that is no resource's. */
  readonly scope: "resource" | "namespace" | "cluster" | ""
  readonly code: number
}

export interface RequestMetrics {
  /** One request answered, `seconds` after it came in (a watch's time is counted when it ends). */
  readonly record: (request: Request, seconds: number) => void
  /** A request that is not long-running came in: counted in flight until the returned function is called. */
  readonly started: (kind: "readOnly" | "mutating") => () => void
  /**
   * A watch opened: counted among the long-running requests until the returned function is called,
   * and its duration then.
   */
  readonly watchOpened: (watch: Watched) => () => void
  /** `count` events of `kind` sent to one watcher. */
  readonly eventsSent: (group: string, version: string, kind: string, count: number) => void
  /** The Prometheus text, `stored` giving each resource's object count (`deployments.apps`). */
  readonly text: (stored: ReadonlyArray<readonly [resource: string, count: () => number]>) => string
}

const labelsOf = (r: Omit<Request, "code">) => ({
  component: "apiserver",
  dry_run: r.dryRun ? "All" : "",
  group: r.group,
  resource: r.resource,
  scope: r.scope,
  subresource: r.subresource,
  verb: r.verb,
  version: r.version
})

/**
 * Metrics of one server.
 *
 * @example
 * import * as RequestMetrics from "./RequestMetrics.ts"
 * const metrics = RequestMetrics.make()
 * metrics.record({ verb: "LIST", dryRun: false, group: "", version: "v1", resource: "pods", subresource: "", scope: "namespace", code: 200 }, 0.002)
 * metrics.text([]).includes('verb="LIST"') // true
 */
export const make = (): RequestMetrics => {
  const context = Context.make(Metric.MetricRegistry, new Map())
  const gauges = new Set<string>()
  // Series are registered once and read when scraped: no registry lookup per request.
  const register = <State>(metric: Metric.Metric<never, State>, attributes: Readonly<Record<string, string>>, get: () => State) =>
    Metric.registerUnsafe(Metric.withAttributes(metric, attributes), context, { get, update: () => {}, modify: () => {} })
  // One value per label set of a counter or gauge, registered with its labels the first time.
  const seriesOf = <State>(metric: Metric.Metric<never, State>, read: (value: { value: number }) => State) => {
    const values = new Map<string, { value: number }>()
    return (key: string, labels: () => Readonly<Record<string, string>>): { value: number } => {
      let held = values.get(key)
      if (held === undefined) {
        const value = { value: 0 }
        held = value
        values.set(key, value)
        register(metric, labels(), () => read(value))
      }
      return held
    }
  }
  const counted = (value: { value: number }) => ({ count: value.value, incremental: true })
  const requestSeries = seriesOf(requests, counted)
  const watchSeries = seriesOf(longRunning, (value) => ({ value: value.value }))
  const eventSeries = seriesOf(watchEvents, counted)
  const inflightSeries = seriesOf(inflight, (value) => ({ value: value.value }))
  // Effect's own histogram per label set, made once: an observation is one registry look-up.
  const latencySeries = new Map<string, Metric.Metric<number, Metric.HistogramState>>()
  const observe = (r: Omit<Request, "code">, seconds: number) => {
    const key = `${r.verb}\0${r.dryRun}\0${r.group}\0${r.version}\0${r.resource}\0${r.subresource}\0${r.scope}`
    let series = latencySeries.get(key)
    if (series === undefined) {
      series = Metric.withAttributes(latencies, labelsOf(r))
      latencySeries.set(key, series)
    }
    series.updateUnsafe(seconds, context)
  }
  return {
    record: (r, seconds) => {
      requestSeries(`${r.verb}\0${r.dryRun}\0${r.group}\0${r.version}\0${r.resource}\0${r.subresource}\0${r.scope}\0${r.code}`, () => ({
        code: String(r.code),
        ...labelsOf(r)
      })).value++
      if (r.verb !== "WATCH") observe(r, seconds)
    },
    started: (kind) => {
      const current = inflightSeries(kind, () => ({ request_kind: kind }))
      current.value++
      return () => current.value--
    },
    watchOpened: (w) => {
      const openedAt = performance.now()
      const open = watchSeries(`${w.group}\0${w.version}\0${w.resource}\0${w.scope}`, () => ({
        component: "apiserver",
        group: w.group,
        resource: w.resource,
        scope: w.scope,
        subresource: "",
        verb: "WATCH",
        version: w.version
      }))
      open.value++
      let closed = false
      return () => {
        if (closed) return
        closed = true
        open.value--
        observe({ verb: "WATCH", dryRun: false, subresource: "", ...w }, (performance.now() - openedAt) / 1000)
      }
    },
    eventsSent: (group, version, kind, count) => {
      eventSeries(`${group}\0${version}\0${kind}`, () => ({ group, kind, version })).value += count
    },
    text: (stored) => {
      for (const [resource, count] of stored) {
        if (gauges.has(resource)) continue
        gauges.add(resource)
        register(storedObjects, { resource }, () => ({ value: count() }))
      }
      return PrometheusMetrics.formatUnsafe(context)
    }
  }
}
