/**
 * What `npm run bench` reports: the JSON contract of issue 7/9 (snake_case, as written to
 * `--json FILE`), a few extra fields that explain the figures, and the markdown table it prints.
 */
import type * as ApiServerBench from "./ApiServerBench.ts"
import type * as Engine from "./Engine.ts"

export interface PerContestant {
  readonly limit: number
  readonly kubefx: number
  readonly naive_informer: number
  readonly dot_i: number
}

export interface Report {
  readonly engine: Engine.Figures
  readonly fleet: {
    readonly objects: number
    readonly concurrency: number
    readonly limit_s: number
    readonly kubefx_s: number
    readonly naive_informer_s: number
    readonly dot_i_s: number
    readonly kubefx_requests_per_object: number
    /** Status writes per Widget: each Widget's runs state status once, with Ready (goal: 1). */
    readonly kubefx_status_requests_per_object: number
    /** Reconciler runs per Widget (the owned ConfigMap's event runs it again, with nothing to write). */
    readonly kubefx_reconciles_per_object: number
    readonly kubefx_peak_rss_mb: number
    /** Handler runs of the client-node loop that failed and were tried again. */
    readonly naive_informer_retries: number
    /** CPU seconds of the operator process while the fleet converged, per contestant. */
    readonly cpu_s: PerContestant
    /** CPU seconds of the API server's process meanwhile, per contestant. */
    readonly server_cpu_s: PerContestant
  }
  readonly latency: {
    readonly cached_objects: number
    readonly samples: number
    readonly p50_ms: number
    readonly p99_ms: number
    readonly max_ms: number
  }
  readonly memory: {
    readonly cached_objects: number
    /** Steady state, managedFields stripped (the Informer default). */
    readonly bytes_per_object: number
    readonly bytes_per_object_with_managed_fields: number
    /** Right after the sync, managedFields stripped. */
    readonly bytes_per_object_at_sync: number
  }
  readonly apiserver: ApiServerBench.Figures
}

/** The fields of the contract, by section: what the bench package's test checks. */
export const contract = {
  engine: ["keys", "kubefx_ops_s", "bare_queue_ops_s", "merge_events", "merge_runs", "merge_ops_s"],
  fleet: [
    "objects",
    "limit_s",
    "kubefx_s",
    "naive_informer_s",
    "dot_i_s",
    "kubefx_requests_per_object",
    "kubefx_status_requests_per_object",
    "kubefx_reconciles_per_object",
    "kubefx_peak_rss_mb"
  ],
  latency: ["cached_objects", "p50_ms", "p99_ms"],
  memory: ["cached_objects", "bytes_per_object"],
  apiserver: ["objects", "creates_s", "applies_s", "watch_events_s", "rss_mb_at_10k"]
} as const

const int = (n: number) => Math.round(n).toLocaleString("en-US")
const fixed = (n: number, digits: number) => n.toFixed(digits)
const times = (n: number, base: number) => `${fixed(n / base, 2)}x`
const cpu = (fleet: Report["fleet"], contestant: keyof PerContestant) =>
  `${fixed(fleet.cpu_s[contestant], 1)} CPU s (server ${fixed(fleet.server_cpu_s[contestant], 1)})`

/**
 * The markdown table of a report, with each goal of the issue beside its figure.
 *
 * @example
 * import * as Report from "./Report.ts"
 * declare const report: Report.Report
 * console.log(Report.table(report))
 */
export const table = (report: Report): string => {
  const { apiserver, engine, fleet, latency, memory } = report
  const rows: Array<readonly [string, string, string]> = [
    [`engine: no-op reconciles, ${int(engine.keys)} keys`, `${int(engine.kubefx_ops_s)} /s`, `${fixed(engine.kubefx_ops_s / engine.bare_queue_ops_s * 100, 0)}% of the bare queue (goal: at least 30%)`],
    [`engine: bare Effect \`Queue\` worker loop, same work`, `${int(engine.bare_queue_ops_s)} /s`, ""],
    [`engine: ${int(engine.merge_events)} events over 10,000 keys`, `${int(engine.merge_ops_s)} events/s`, `merged into ${int(engine.merge_runs)} runs`],
    [`fleet: limit, the same ${int(2 * fleet.objects)} writes sent raw (concurrency ${fleet.concurrency})`, `${fixed(fleet.limit_s, 2)} s`, cpu(fleet, "limit")],
    [`fleet: kubefx, ${int(fleet.objects)} Widgets to Ready (concurrency ${fleet.concurrency})`, `${fixed(fleet.kubefx_s, 2)} s`, `${times(fleet.kubefx_s, fleet.limit_s)} the limit (goal: at most 1.3x); ${cpu(fleet, "kubefx")}`],
    [`fleet: client-node \`makeInformer\` + handler per event`, `${fixed(fleet.naive_informer_s, 2)} s`, `${times(fleet.naive_informer_s, fleet.kubefx_s)} kubefx; ${cpu(fleet, "naive_informer")}; ${int(fleet.naive_informer_retries)} failed handler runs retried`],
    [`fleet: \`@dot-i/k8s-operator\``, `${fixed(fleet.dot_i_s, 2)} s`, `${times(fleet.dot_i_s, fleet.kubefx_s)} kubefx; ${cpu(fleet, "dot_i")}`],
    [`fleet: kubefx API requests per Widget after the initial list`, fixed(fleet.kubefx_requests_per_object, 2), "goal: at most 3"],
    [`fleet: kubefx status writes per Widget (its status, Ready and observedGeneration together)`, fixed(fleet.kubefx_status_requests_per_object, 2), `goal: 1; over ${fixed(fleet.kubefx_reconciles_per_object, 2)} reconciles per Widget`],
    [`fleet: kubefx peak RSS`, `${int(fleet.kubefx_peak_rss_mb)} MB`, ""],
    [`latency: spec update to reconcile start, ${int(latency.cached_objects)} cached, ${latency.samples} samples`, `p50 ${fixed(latency.p50_ms, 1)} ms, p99 ${fixed(latency.p99_ms, 1)} ms`, `max ${fixed(latency.max_ms, 1)} ms (goal: p99 under 20 ms)`],
    [`memory: heap per cached Widget, ${int(memory.cached_objects)} cached`, `${int(memory.bytes_per_object)} B`, `${int(memory.bytes_per_object_with_managed_fields)} B with managedFields kept; ${int(memory.bytes_per_object_at_sync)} B right after the sync`],
    [`apiserver: creates (${int(apiserver.objects)} objects)`, `${int(apiserver.creates_s)} /s`, ""],
    [`apiserver: server-side applies`, `${int(apiserver.applies_s)} /s`, ""],
    [`apiserver: watch events delivered (10 watchers)`, `${int(apiserver.watch_events_s)} /s`, ""],
    [`apiserver: RSS with ${int(apiserver.objects)} objects stored`, `${int(apiserver.rss_mb_at_10k)} MiB`, ""]
  ]
  return [
    "| scenario | figure | beside it |",
    "|---|---|---|",
    ...rows.map(([scenario, figure, note]) => `| ${scenario} | ${figure} | ${note} |`)
  ].join("\n")
}
