/**
 * What `npm run bench` reports: the JSON contract (snake_case, as written to `--json FILE`), a few
 * extra fields that explain the figures, and the markdown table it prints, each goal beside its figure.
 */
import type * as ApiServerBench from "./ApiServerBench.ts"
import type * as Engine from "./Engine.ts"

export interface PerContestant {
  readonly limit: number
  readonly kubefx: number
  /** Absent when the peers did not run (`--fleet N`). */
  readonly naive_informer?: number | undefined
  readonly dot_i?: number | undefined
}

/** A ratio measured several times in one run. */
export interface Spread {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly runs: ReadonlyArray<number>
}

/** One latency run's quantiles (ms): from the edit's request, its commit, and its arrival at the operator. */
export interface Timings {
  readonly p50_ms: number
  readonly p99_ms: number
  readonly max_ms: number
  /** The same samples timed from the edit's commit in the server's store. */
  readonly commit_p50_ms: number
  readonly commit_p99_ms: number
  readonly commit_max_ms: number
  /** The same samples timed from the edit's first bytes reaching the operator's HTTP client: kubefx's own part. */
  readonly arrival_p50_ms: number
  readonly arrival_p99_ms: number
  readonly arrival_max_ms: number
  /** Samples whose arrival the child did not see (left out of the arrival figures). */
  readonly arrivals_missed: number
}

export interface Report {
  /** Where the figures come from: a busy machine moves them. */
  readonly machine: {
    readonly cores: number
    readonly cpu: string
    readonly node: string
    /** 1, 5 and 15 minute load averages. */
    readonly load_average_at_start: ReadonlyArray<number>
    readonly load_average_at_end: ReadonlyArray<number>
  }
  readonly engine: Engine.Figures
  readonly fleet: {
    readonly objects: number
    readonly concurrency: number
    readonly limit_s: number
    readonly kubefx_s: number
    /** The peers run at the default size only: absent with `--fleet N`. */
    readonly naive_informer_s?: number | undefined
    readonly dot_i_s?: number | undefined
    /** kubefx's time over the limit's, per pair of runs (goal: at most 1.15). */
    readonly kubefx_vs_limit: Spread
    /**
     * The same for the fleet's second half only (from the N/2-th Widget done to the N-th, by the
     * server's store), per pair: the pace past the start, the sync and the first runs in cold code.
     */
    readonly kubefx_second_half_vs_limit: Spread
    /** kubefx's CPU seconds over the raw writer's, per pair of runs (goal: at most 2). */
    readonly kubefx_cpu_vs_limit: Spread
    /**
     * The same, kubefx's CPU counted from its caches' sync, as the limit's is counted from its list:
     * the writes' share of the ratio, without the list and cache of every Widget.
     */
    readonly kubefx_cpu_after_sync_vs_limit: Spread
    /**
     * kubefx's CPU seconds over the raw writer's in the fleet's second half only (from the work on
     * Widget N/2 + 1 to the end), per pair: the ratio past the sync and the first runs in cold code.
     */
    readonly kubefx_cpu_second_half_vs_limit: Spread
    /** kubefx's CPU seconds until its caches had synced (median of the kubefx runs). */
    readonly kubefx_sync_cpu_s: number
    readonly kubefx_requests_per_object: number
    /** Requests per Widget of a resync of the converged fleet (goal: 0). */
    readonly kubefx_resync_requests_per_object: number
    /** The operator's CPU per Widget for that resync, in microseconds (median of the kubefx runs). */
    readonly kubefx_resync_cpu_us_per_object: number
    /** Status writes per Widget: each Widget's runs state status once, with Ready (goal: 1). */
    readonly kubefx_status_requests_per_object: number
    /** Reconciler runs per Widget (the owned ConfigMap's event runs it again, with nothing to write). */
    readonly kubefx_reconciles_per_object: number
    readonly kubefx_peak_rss_mb: number
    /** Handler runs of the client-node loop that failed and were tried again. */
    readonly naive_informer_retries?: number | undefined
    /** CPU seconds of the operator process while the fleet converged, per contestant. */
    readonly cpu_s: PerContestant
    /** CPU seconds of the API server's process meanwhile, per contestant. */
    readonly server_cpu_s: PerContestant
  }
  readonly latency: Timings & {
    readonly cached_objects: number
    readonly samples: number
  }
  readonly memory: {
    readonly cached_objects: number
    /** Steady state, managedFields stripped (the Informer default). */
    readonly bytes_per_object: number
    readonly bytes_per_object_with_managed_fields: number
    /** Steady state, the Widgets read as their metadata alone (`Resource.metadataOnly`). */
    readonly bytes_per_object_metadata_only: number
    /** Right after the sync, managedFields stripped. */
    readonly bytes_per_object_at_sync: number
  }
  readonly scale: {
    readonly objects: number
    readonly sync_s: number
    /** The caches filled alone before anything reconciles, from paginated lists and from streaming lists (medians of 3). */
    readonly fill_list_s: number
    readonly fill_streaming_s: number
    readonly fill_list_peak_rss_mb: number
    readonly fill_streaming_peak_rss_mb: number
    readonly converge_s: number
    readonly heap_bytes_per_object: number
    readonly rss_bytes_per_object: number
  } & Timings
  readonly apiserver: ApiServerBench.Figures
  readonly sharding: {
    /** Widgets per throughput run. */
    readonly objects: number
    /** Controller concurrency of each replica. */
    readonly concurrency: number
    /** What each reconcile waits (an `Effect.sleep`, the simulated external call) before its status write. */
    readonly io_wait_ms: number
    /** Member and sharder Lease timings of the handover's replicas (the throughput's: 10 s, 5 s, 200 ms). */
    readonly lease_duration_ms: number
    readonly renew_deadline_ms: number
    readonly retry_period_ms: number
    /** Widgets Ready per second from `Go` (every Widget labelled and cached by its owner), median of the runs. */
    readonly replicas_1_objects_s: number
    readonly replicas_2_objects_s: number
    readonly replicas_4_objects_s: number
    /** CPU the replicas and the API server used in the timed window, over its length: cores busy, median. */
    readonly replicas_1_cores: number
    readonly replicas_2_cores: number
    readonly replicas_4_cores: number
    /** throughput_N / (N x throughput_1), per repeat of the three runs (goal: at least 0.9). */
    readonly scaling_2: Spread
    readonly scaling_4: Spread
    /** The median 4-replica run, per replica: its share of the Widgets, and the seconds from `Go` to its last reconcile. */
    readonly replicas_4_shares: ReadonlyArray<number>
    readonly replicas_4_busy_s: ReadonlyArray<number>
    /** Seconds from the replicas' start to every Widget labelled and cached (not timed in the throughput), median. */
    readonly replicas_4_ready_s: number
    readonly handover_replicas: number
    readonly handover_objects: number
    /** Widgets the killed replica owned (the median run's). */
    readonly handover_killed_keys: number
    /** From the SIGKILL to every Widget it owned labelled with a survivor. */
    readonly handover_relabel_s: Spread
    /** From the SIGKILL to every Widget it owned Ready from a survivor's reconcile (goal: about the Lease duration plus one poll). */
    readonly handover_s: Spread
  }
}

/** The fields of the contract, by section: what the bench package's test checks. */
export const contract = {
  engine: [
    "keys",
    "kubefx_ops_s",
    "bare_queue_ops_s",
    "ratio_median",
    "ratio_min",
    "ratio_max",
    "untraced_ops_s",
    "untraced_ratio_median",
    "floor_ops_s",
    "floor_ratio_median",
    "merge_events",
    "merge_runs",
    "merge_ops_s",
    "workqueue_round_keys",
    "workqueue_rounds_ns_per_op",
    "workqueue_ns_per_op"
  ],
  fleet: [
    "objects",
    "limit_s",
    "kubefx_s",
    "naive_informer_s",
    "dot_i_s",
    "kubefx_requests_per_object",
    "kubefx_resync_requests_per_object",
    "kubefx_resync_cpu_us_per_object",
    "kubefx_status_requests_per_object",
    "kubefx_reconciles_per_object",
    "kubefx_peak_rss_mb"
  ],
  latency: ["cached_objects", "p50_ms", "p99_ms", "commit_p50_ms", "commit_p99_ms", "arrival_p50_ms", "arrival_p99_ms", "arrivals_missed"],
  memory: ["cached_objects", "bytes_per_object", "bytes_per_object_metadata_only"],
  scale: ["objects", "sync_s", "fill_list_s", "fill_streaming_s", "fill_list_peak_rss_mb", "fill_streaming_peak_rss_mb", "converge_s", "heap_bytes_per_object", "rss_bytes_per_object", "p50_ms", "p99_ms", "commit_p50_ms", "commit_p99_ms", "arrival_p50_ms", "arrival_p99_ms", "arrivals_missed"],
  apiserver: ["objects", "creates_s", "applies_s", "watch_events_s", "rss_mb_at_10k", "rss_bytes_per_object"],
  sharding: [
    "objects",
    "concurrency",
    "io_wait_ms",
    "lease_duration_ms",
    "retry_period_ms",
    "replicas_1_objects_s",
    "replicas_2_objects_s",
    "replicas_4_objects_s",
    "replicas_1_cores",
    "replicas_4_cores",
    "replicas_4_ready_s",
    "handover_objects",
    "handover_killed_keys"
  ]
} as const

const int = (n: number) => Math.round(n).toLocaleString("en-US")
const fixed = (n: number, digits: number) => n.toFixed(digits)
const times = (n: number, base: number) => `${fixed(n / base, 2)}x`
const ratio = (x: Spread, digits = 2) => `${fixed(x.median, digits)}x (${fixed(x.min, digits)}-${fixed(x.max, digits)})`
const percent = (n: number) => `${fixed(n * 100, 0)}%`
// A latency run's samples: the event's arrival at the operator to the reconcile's start (what the
// goal counts), then the same samples from the edit's commit in the API server and from its request.
const latencyRow = (label: string, t: Timings, goalMs: number): [string, string, string] => [
  label,
  `p50 ${fixed(t.arrival_p50_ms, 1)} ms, p99 ${fixed(t.arrival_p99_ms, 1)} ms`,
  `max ${fixed(t.arrival_max_ms, 1)} ms (goal: p99 under ${goalMs} ms)` +
  (t.arrivals_missed === 0 ? "" : `, ${int(t.arrivals_missed)} arrivals not seen`) +
  `; from the edit's commit in the API server: p50 ${fixed(t.commit_p50_ms, 1)} ms, p99 ${fixed(t.commit_p99_ms, 1)} ms; ` +
  `from its request: p50 ${fixed(t.p50_ms, 1)} ms, p99 ${fixed(t.p99_ms, 1)} ms, max ${fixed(t.max_ms, 1)} ms`
]
const cpu = (fleet: Report["fleet"], contestant: keyof PerContestant) =>
  `${fixed(fleet.cpu_s[contestant] ?? NaN, 1)} CPU s (server ${fixed(fleet.server_cpu_s[contestant] ?? NaN, 1)})`

/**
 * The markdown table of a report, with each goal of the issue beside its figure.
 *
 * @example
 * import * as Report from "./Report.ts"
 * declare const report: Report.Report
 * console.log(Report.table(report))
 */
export const table = (report: Report): string => {
  const { apiserver, engine, fleet, latency, machine, memory, scale, sharding } = report
  const rows: Array<readonly [string, string, string]> = [
    [`engine: no-op reconciles, ${int(engine.keys)} keys (median of 3)`, `${int(engine.kubefx_ops_s)} /s`, `${percent(engine.ratio_median)} of the bare queue (${percent(engine.ratio_min)}-${percent(engine.ratio_max)}; goal: at least 50%)`],
    [`engine: bare Effect \`Queue\` worker loop, same work`, `${int(engine.bare_queue_ops_s)} /s`, ""],
    [`engine: no-op reconciles with spans off (\`References.TracerEnabled\` false)`, `${int(engine.untraced_ops_s)} /s`, `${percent(engine.untraced_ratio_median)} of the bare queue`],
    [`engine: that loop with what each run needs from Effect (gate, interruptible run, span, context)`, `${int(engine.floor_ops_s)} /s`, `${percent(engine.floor_ratio_median)} of the bare queue: the most the engine can reach`],
    [`engine: ${int(engine.merge_events)} events over 10,000 keys`, `${int(engine.merge_ops_s)} events/s`, `merged into ${int(engine.merge_runs)} runs`],
    [`engine: work queue add, take, done, rounds of ${int(engine.workqueue_round_keys)} keys (controller-runtime's benchmark)`, `${fixed(engine.workqueue_rounds_ns_per_op, 0)} ns per operation`, "goal: at most 1,000 ns"],
    [`engine: work queue add, take, done, ${int(engine.keys)} keys in one round`, `${fixed(engine.workqueue_ns_per_op, 0)} ns per operation`, ""],
    ...fleetRows(fleet),
    latencyRow(`latency: a spec update's watch event at the operator to its reconcile's start, ${int(latency.cached_objects)} cached, ${int(latency.samples)} samples`, latency, 5),
    [`memory: heap per cached Widget, ${int(memory.cached_objects)} cached`, `${int(memory.bytes_per_object)} B`, `${int(memory.bytes_per_object_with_managed_fields)} B with managedFields kept; ${int(memory.bytes_per_object_at_sync)} B right after the sync (goal: at most 1,024 B)`],
    [`memory: the same Widgets cached as their metadata alone (\`Resource.metadataOnly\`)`, `${int(memory.bytes_per_object_metadata_only)} B`, ""],
    ...scaleRows(scale),
    [`apiserver: creates (${int(apiserver.objects)} objects)`, `${int(apiserver.creates_s)} /s`, ""],
    [`apiserver: server-side applies`, `${int(apiserver.applies_s)} /s`, ""],
    [`apiserver: watch events delivered (10 watchers)`, `${int(apiserver.watch_events_s)} /s`, ""],
    [`apiserver: RSS with ${int(apiserver.objects)} ConfigMaps stored`, `${int(apiserver.rss_mb_at_10k)} MiB`, `${int(apiserver.rss_bytes_per_object)} B per stored ConfigMap, the cost of ${int(apiserver.objects)} more on the warm server (median of 3 rounds; goal: at most 3,072 B)`]
  ]
  return markdown(machine, [...rows, ...shardingRows(sharding)])
}

// The peers, when they ran.
const peerRows = (fleet: Report["fleet"]): ReadonlyArray<readonly [string, string, string]> =>
  fleet.naive_informer_s === undefined || fleet.dot_i_s === undefined ? [] : [
    [`fleet: client-node \`makeInformer\` + handler per event`, `${fixed(fleet.naive_informer_s, 2)} s`, `${times(fleet.naive_informer_s, fleet.kubefx_s)} kubefx; ${cpu(fleet, "naive_informer")}; ${int(fleet.naive_informer_retries ?? 0)} failed handler runs retried`],
    [`fleet: \`@dot-i/k8s-operator\``, `${fixed(fleet.dot_i_s, 2)} s`, `${times(fleet.dot_i_s, fleet.kubefx_s)} kubefx; ${cpu(fleet, "dot_i")}`]
  ]

const fleetRows = (fleet: Report["fleet"]): ReadonlyArray<readonly [string, string, string]> => [
  [`fleet: limit, the same ${int(2 * fleet.objects)} writes sent raw (concurrency ${fleet.concurrency}; median of ${fleet.kubefx_vs_limit.runs.length})`, `${fixed(fleet.limit_s, 2)} s`, cpu(fleet, "limit")],
  [`fleet: kubefx, ${int(fleet.objects)} Widgets to Ready (concurrency ${fleet.concurrency}; median of ${fleet.kubefx_vs_limit.runs.length})`, `${fixed(fleet.kubefx_s, 2)} s`, `${ratio(fleet.kubefx_vs_limit)} the limit (goal: at most 1.15x); ${cpu(fleet, "kubefx")}`],
  [
    `fleet: the same, in the fleet's second half (from the ${int(Math.ceil(fleet.objects / 2))}th Widget done to the last)`,
    ratio(fleet.kubefx_second_half_vs_limit),
    "past the start, the sync and the first runs in cold code"
  ],
  [`fleet: kubefx CPU seconds over the raw writer's`, ratio(fleet.kubefx_cpu_vs_limit, 1), "goal: at most 2x"],
  [
    `fleet: the same, kubefx's CPU counted from its caches' sync (the limit lists before its clock)`,
    ratio(fleet.kubefx_cpu_after_sync_vs_limit, 1),
    `the sync: ${fixed(fleet.kubefx_sync_cpu_s, 2)} CPU s of kubefx's`
  ],
  [
    `fleet: the same, in the fleet's second half (Widgets ${int(fleet.objects / 2 + 1)}-${int(fleet.objects)})`,
    ratio(fleet.kubefx_cpu_second_half_vs_limit, 1),
    "past the sync and the first runs in cold code"
  ],
  ...peerRows(fleet),
  [`fleet: kubefx API requests per Widget after the initial list, to converge`, fixed(fleet.kubefx_requests_per_object, 2), "goal: at most 2.0"],
  [`fleet: kubefx API requests per Widget for a resync of the converged fleet`, fixed(fleet.kubefx_resync_requests_per_object, 2), `goal: 0; ${int(fleet.kubefx_resync_cpu_us_per_object)} us of the operator's CPU per Widget`],
  [`fleet: kubefx status writes per Widget (its status, Ready and observedGeneration together)`, fixed(fleet.kubefx_status_requests_per_object, 2), `goal: 1; over ${fixed(fleet.kubefx_reconciles_per_object, 2)} reconciles per Widget`],
  [`fleet: kubefx peak RSS`, `${int(fleet.kubefx_peak_rss_mb)} MB`, ""]
]

const shardingRows = (sharding: Report["sharding"]): ReadonlyArray<readonly [string, string, string]> => {
  const seconds = (x: Spread) => `${fixed(x.median, 2)} s (${fixed(x.min, 2)}-${fixed(x.max, 2)})`
  const runs = sharding.scaling_2.runs.length
  const timed = `concurrency ${sharding.concurrency} each, a ${fixed(sharding.io_wait_ms, 0)} ms sleep then the status write per reconcile; median of ${runs}`
  const shares = sharding.replicas_4_shares
  const cores = (n: number) => `CPU ${fixed(n, 2)} cores busy (replicas and API server)`
  return [
    [`sharding: 1 replica, ${int(sharding.objects)} Widgets to Ready, from all labelled and cached (${timed})`, `${int(sharding.replicas_1_objects_s)} /s`, `ceiling ${int(sharding.concurrency * 1000 / sharding.io_wait_ms)} /s per replica; ${cores(sharding.replicas_1_cores)}`],
    [`sharding: 2 replicas, the same`, `${int(sharding.replicas_2_objects_s)} /s`, `${ratio(sharding.scaling_2)} of 2 x 1 replica (goal: at least 0.9x); ${cores(sharding.replicas_2_cores)}`],
    [`sharding: 4 replicas, the same`, `${int(sharding.replicas_4_objects_s)} /s`, `${ratio(sharding.scaling_4)} of 4 x 1 replica (goal: at least 0.9x); ${cores(sharding.replicas_4_cores)}; shares ${percent(Math.min(...shares))}-${percent(Math.max(...shares))}, replicas busy ${fixed(Math.min(...sharding.replicas_4_busy_s), 2)}-${fixed(Math.max(...sharding.replicas_4_busy_s), 2)} s`],
    [`sharding: SIGKILL 1 of ${sharding.handover_replicas} converged replicas (${int(sharding.handover_objects)} Widgets, ${int(sharding.handover_killed_keys)} its own), to its Widgets relabelled to survivors`, seconds(sharding.handover_relabel_s), `Leases ${fixed(sharding.lease_duration_ms / 1000, 0)} s, renew deadline ${fixed(sharding.renew_deadline_ms / 1000, 0)} s, the sharder polls the member Leases every ${int(sharding.retry_period_ms)} ms`],
    [`sharding: the same, to each of them Ready from a survivor's reconcile`, seconds(sharding.handover_s), `goal: about the Lease duration plus one poll, ${fixed((sharding.lease_duration_ms + sharding.retry_period_ms) / 1000, 1)} s`]
  ]
}

const markdown = (machine: Report["machine"], rows: ReadonlyArray<readonly [string, string, string]>): string => {
  const load = (xs: ReadonlyArray<number>) => xs.map((x) => fixed(x, 2)).join(", ")
  return [
    `Machine: ${machine.cores} cores of ${machine.cpu}, Node ${machine.node}; load average ${load(machine.load_average_at_start)} at the start, ${load(machine.load_average_at_end)} at the end (1, 5, 15 minutes).`,
    "",
    "| scenario | figure | beside it |",
    "|---|---|---|",
    ...rows.map(([scenario, figure, note]) => `| ${scenario} | ${figure} | ${note} |`)
  ].join("\n")
}

/**
 * The markdown table of the sharding scenario alone (`--only sharding`).
 *
 * @example
 * import * as Report from "./Report.ts"
 * declare const report: Pick<Report.Report, "machine" | "sharding">
 * console.log(Report.shardingTable(report))
 */
export const shardingTable = (report: Pick<Report, "machine" | "sharding">): string => markdown(report.machine, shardingRows(report.sharding))

const scaleRows = (scale: Report["scale"]): Array<readonly [string, string, string]> => [
  [`scale: ${int(scale.objects)} Widgets, list and sync (with their ConfigMaps)`, `${fixed(scale.sync_s, 1)} s`, ""],
  [
    `scale: the ${int(scale.objects)} Widgets cached alone, before any reconcile, from pages of lists, then from streaming lists (\`initialList: "streaming"\`; medians of 3)`,
    `${fixed(scale.fill_list_s, 1)} s, then ${fixed(scale.fill_streaming_s, 1)} s`,
    `peak RSS ${int(scale.fill_list_peak_rss_mb)} MB, then ${int(scale.fill_streaming_peak_rss_mb)} MB`
  ],
  [`scale: ${int(scale.objects)} Widgets to Ready`, `${fixed(scale.converge_s, 1)} s`, ""],
  [`scale: heap and RSS per cached object (Widgets and ConfigMaps), converged`, `${int(scale.heap_bytes_per_object)} B heap`, `${int(scale.rss_bytes_per_object)} B RSS`],
  latencyRow(`scale: a spec update's watch event at the operator to its reconcile's start, ${int(scale.objects)} Widgets cached`, scale, 10)
]

/**
 * The markdown table of the scale scenario alone (`--only scale`).
 *
 * @example
 * import * as Report from "./Report.ts"
 * declare const report: Pick<Report.Report, "machine" | "scale">
 * console.log(Report.scaleTable(report))
 */
export const scaleTable = (report: Pick<Report, "machine" | "scale">): string => markdown(report.machine, scaleRows(report.scale))

/**
 * The markdown table of the fleet scenario alone (`--only fleet`).
 *
 * @example
 * import * as Report from "./Report.ts"
 * declare const report: Pick<Report.Report, "machine" | "fleet">
 * console.log(Report.fleetTable(report))
 */
export const fleetTable = (report: Pick<Report, "machine" | "fleet">): string => markdown(report.machine, fleetRows(report.fleet))
