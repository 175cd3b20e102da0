/**
 * The server's `/metrics`, with kube-apiserver's stable metric names: `apiserver_request_total`
 * by verb (`LIST`, `WATCH`, `APPLY`, `CONNECT`... as kube reports them), dry run, group, version,
 * resource, subresource, scope, component and response code, and `apiserver_storage_objects` by
 * resource, `apiserver_longrunning_requests` (the watches open now) and `apiserver_watch_events_total`
 * by kind (the events sent to watchers), `apiserver_request_duration_seconds` (a watch's whole life,
 * as kube counts it, once it ends) and `apiserver_current_inflight_requests` by request kind (not
 * counting watches), `apiserver_request_sli_duration_seconds` (the same without the time its
 * admission webhooks took), `apiserver_response_sizes` of gets and lists, `apiserver_watch_events_sizes`
 * by kind and `apiserver_admission_webhook_admission_duration_seconds` by webhook, so a test can
 * count what an operator asks of the server, what it is sent and how long the server (and each
 * webhook) took. Each server keeps its own registry: servers in one process never mix their counts.
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

// kube-apiserver's SLI buckets: the request latency without its admission webhooks' time.
const sliLatencies = Metric.histogram("apiserver_request_sli_duration_seconds", {
  description: "[ALPHA] Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.",
  boundaries: [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60]
})

// kube-apiserver's buckets, 1 KB to 1 GB by tens.
const responseSizes = Metric.histogram("apiserver_response_sizes", {
  description: "[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
  boundaries: Array.from({ length: 7 }, (_, i) => 1000 * 10 ** i)
})

// kube-apiserver's buckets, 1 KiB to 128 KiB by twos.
const watchEventSizes = Metric.histogram("apiserver_watch_events_sizes", {
  description: "[ALPHA] Watch event size distribution in bytes",
  boundaries: Array.from({ length: 8 }, (_, i) => 1024 * 2 ** i)
})

const webhookDurations = Metric.histogram("apiserver_admission_webhook_admission_duration_seconds", {
  description: "[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
  boundaries: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25]
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

/** What else is known of an answered request. */
export interface Answered {
  /** The response body's size, when it was sent whole. */
  readonly bytes?: number | undefined
  /** The time its admission webhooks took, not the server's (kube's SLI leaves it out). */
  readonly webhookSeconds?: number | undefined
}

export interface RequestMetrics {
  /** One request answered, `seconds` after it came in (a watch's time is counted when it ends). */
  readonly record: (request: Request, seconds: number, answered?: Answered) => void
  /** A request that is not long-running came in: counted in flight until the returned function is called. */
  readonly started: (kind: "readOnly" | "mutating") => () => void
  /**
   * A watch opened: counted among the long-running requests until the returned function is called,
   * and its duration then.
   */
  readonly watchOpened: (watch: Watched) => () => void
  /** Events of `kind` sent to one watcher, each of the given size in bytes. */
  readonly eventsSent: (group: string, version: string, kind: string, sizes: ReadonlyArray<number>) => void
  /** One call of an admission webhook, which `rejected` the request (denied it, or failed it) or not. */
  readonly webhookCalled: (webhook: WebhookCall, seconds: number) => void
  /** The Prometheus text, `stored` giving each resource's object count (`deployments.apps`). */
  readonly text: (stored: ReadonlyArray<readonly [resource: string, count: () => number]>) => string
}

/** One admission webhook call, as its labels. */
export interface WebhookCall {
  readonly name: string
  readonly operation: string
  readonly type: "admit" | "validating"
  readonly rejected: boolean
}

/**
 * The admission webhooks' time of the request being served, added to by each phase that calls
 * them, and the metrics their calls are counted in: provided per request by the HTTP handler.
 */
export interface Admission {
  readonly metrics: RequestMetrics
  webhookSeconds: number
}

/**
 * The request's `Admission`, or undefined outside a request (a test calling the admission chain).
 *
 * @example
 * import { Effect } from "effect"
 * import * as RequestMetrics from "./RequestMetrics.ts"
 * const spent = Effect.map(RequestMetrics.CurrentAdmission, (admission) => admission?.webhookSeconds ?? 0)
 */
export const CurrentAdmission = Context.Reference<Admission | undefined>("@kubefx/apiserver/RequestMetrics/CurrentAdmission", {
  defaultValue: () => undefined
})

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
  const histogramOf = (metric: Metric.Metric<number, Metric.HistogramState>) => {
    const series = new Map<string, Metric.Metric<number, Metric.HistogramState>>()
    return (key: string, labels: () => Readonly<Record<string, string>>, value: number) => {
      let held = series.get(key)
      if (held === undefined) {
        held = Metric.withAttributes(metric, labels())
        series.set(key, held)
      }
      held.updateUnsafe(value, context)
    }
  }
  const latencySeries = histogramOf(latencies)
  const sliSeries = histogramOf(sliLatencies)
  const sizeSeries = histogramOf(responseSizes)
  const eventSizeSeries = histogramOf(watchEventSizes)
  const webhookSeries = histogramOf(webhookDurations)
  const keyOf = (r: Omit<Request, "code">) => `${r.verb}\0${r.dryRun}\0${r.group}\0${r.version}\0${r.resource}\0${r.subresource}\0${r.scope}`
  const observe = (r: Omit<Request, "code">, seconds: number) => latencySeries(keyOf(r), () => labelsOf(r), seconds)
  // The SLI and size histograms have no dry-run label.
  const withoutDryRun = (r: Omit<Request, "code">) => {
    const { dry_run: _, ...labels } = labelsOf(r)
    return labels
  }
  return {
    record: (r, seconds, answered = {}) => {
      const key = keyOf(r)
      requestSeries(`${key}\0${r.code}`, () => ({ code: String(r.code), ...labelsOf(r) })).value++
      if (r.verb === "WATCH") return
      observe(r, seconds)
      if (!isLongRunning(r)) sliSeries(key, () => withoutDryRun(r), Math.max(0, seconds - (answered.webhookSeconds ?? 0)))
      if ((r.verb === "GET" || r.verb === "LIST") && answered.bytes !== undefined) sizeSeries(key, () => withoutDryRun(r), answered.bytes)
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
    eventsSent: (group, version, kind, sizes) => {
      const key = `${group}\0${version}\0${kind}`
      const labels = () => ({ group, kind, version })
      eventSeries(key, labels).value += sizes.length
      for (const size of sizes) eventSizeSeries(key, labels, size)
    },
    webhookCalled: (call, seconds) =>
      webhookSeries(`${call.name}\0${call.operation}\0${call.type}\0${call.rejected}`, () => ({
        name: call.name,
        operation: call.operation,
        rejected: String(call.rejected),
        type: call.type
      }), seconds),
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

/**
 * kube-apiserver's long-running requests (watches, exec and its kin, logs, proxies): not counted in
 * flight, and not in the SLI, whose latency is a short request's.
 *
 * @example
 * import * as RequestMetrics from "./RequestMetrics.ts"
 * RequestMetrics.isLongRunning({ verb: "GET", subresource: "log" }) // true
 */
export const isLongRunning = (r: Pick<Request, "verb" | "subresource">): boolean =>
  r.verb === "WATCH" || r.verb === "CONNECT" || r.subresource === "log" || r.subresource === "proxy"
