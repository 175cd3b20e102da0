/**
 * `npm run bench -- [--quick] [--only fleet|sharding|scale] [--fleet N] [--pairs N] [--sharding-concurrency N] [--json FILE]`: every scenario in one process tree, each against an
 * embedded API server of its own, printed as a markdown table (progress on stderr). The ratios
 * (engine against a bare queue, fleet against the raw writes) are measured three times each, side
 * by side, and reported as median and spread, with the machine's load average at start and end.
 *
 * - full: 10,000 objects for fleet, latency and memory, 100,000 for scale, 1,000 latency samples
 *   in each of latency and scale (the p99 is the tenth-slowest); the engine and apiserver
 *   benches in full; sharding with 1,200 Widgets per 2 of concurrency over 1, 2 and 4 replicas
 *   (three times each) and three kills of one of 3 replicas converged on 300.
 * - `--quick`: 1,000 for the fleet, 2,000 cached, 5,000 for scale, the other benches with `--quick`;
 *   sharding with 400 Widgets per 2 of concurrency and kills among 150.
 * - `--smoke`: tiny sizes (100 / 300 cached, 50 latency samples, sharding 40 Widgets once and one
 *   kill among 30, with 5 s Leases), only for the package's own test, which checks the JSON, not
 *   the figures.
 * - `--only fleet`, `--only sharding`, `--only scale`: that scenario alone (its JSON has the machine section and
 *   the scenario's), a few minutes instead of about twelve.
 * - `--fleet N`: the fleet's Widgets (default 10,000; 1,000 with `--quick`), to see how its ratios
 *   move with the fleet's size. The two peers then do not run: they are compared at the default
 *   size (the client-node loop runs out of sockets and does not converge at 20,000).
 * - `--pairs N` (default 3): the limit and kubefx side by side N times; on a shared machine their
 *   pairs spread widely, and more pairs make the medians steadier.
 * - `--sharding-concurrency N` (default 2): each sharded replica's controller concurrency. At 2,
 *   four replicas and the API server use about 1.2 of this machine's 2 cores, so the replicas
 *   scale as I/O-bound work does; at 8 they saturate both cores, and what scales is the CPU.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import * as ApiServerBench from "./ApiServerBench.ts"
import * as Engine from "./Engine.ts"
import * as Fleet from "./Fleet.ts"
import * as Latency from "./Latency.ts"
import * as Memory from "./Memory.ts"
import * as Report from "./Report.ts"
import * as Scale from "./Scale.ts"
import * as Sharding from "./Sharding.ts"

const args = process.argv.slice(2)
const valueOf = (flag: string) => args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined
const jsonFile = valueOf("--json")
const size = args.includes("--smoke") ? "smoke" : args.includes("--quick") ? "quick" : "full"
const only = valueOf("--only")
if (only !== undefined && only !== "fleet" && only !== "sharding" && only !== "scale") {
  console.error(`--only takes fleet, sharding or scale, not ${only}`)
  process.exit(2)
}
const fleetObjects = valueOf("--fleet")
if (fleetObjects !== undefined && !(Number.isInteger(Number(fleetObjects)) && Number(fleetObjects) >= 2)) {
  console.error(`--fleet takes a whole number of Widgets, at least 2, not ${fleetObjects}`)
  process.exit(2)
}
// Each replica of the sharding scenario reconciles this many Widgets at once; one replica is bound
// by its 50 ms waits (2 / 50 ms = 40 /s), so N replicas should reconcile N times as many.
const shardingConcurrency = Number(valueOf("--sharding-concurrency") ?? 2)
if (!Number.isInteger(shardingConcurrency) || shardingConcurrency < 1) {
  console.error(`--sharding-concurrency takes a whole number of at least 1, not ${valueOf("--sharding-concurrency")}`)
  process.exit(2)
}
const defaults = {
  full: { fleet: 10_000, cached: 10_000, scale: 100_000, samples: 1_000, sharding: 1_200, handover: 300, shardingRepeats: 3 },
  quick: { fleet: 1_000, cached: 2_000, scale: 5_000, samples: 200, sharding: 400, handover: 150, shardingRepeats: 3 },
  smoke: { fleet: 100, cached: 300, scale: 300, samples: 50, sharding: 40, handover: 30, shardingRepeats: 1 }
}[size]
const sizes = fleetObjects === undefined ? defaults : { ...defaults, fleet: Number(fleetObjects) }
const quick = size !== "full"
const concurrency = 16
// Each ratio is measured this many times in the run, side by side, and reported as median and spread.
const repeats = 3
const fleetPairs = Number(valueOf("--pairs") ?? repeats)
if (!Number.isInteger(fleetPairs) || fleetPairs < 1) {
  console.error(`--pairs takes a whole number of at least 1, not ${valueOf("--pairs")}`)
  process.exit(2)
}

// One latency run's samples, timed from the request, the commit and the arrival.
const timings = (run: Latency.Result | Scale.Result): Report.Timings => ({
  p50_ms: run.p50Ms,
  p99_ms: run.p99Ms,
  max_ms: run.maxMs,
  commit_p50_ms: run.fromCommit.p50Ms,
  commit_p99_ms: run.fromCommit.p99Ms,
  commit_max_ms: run.fromCommit.maxMs,
  arrival_p50_ms: run.fromArrival.p50Ms,
  arrival_p99_ms: run.fromArrival.p99Ms,
  arrival_max_ms: run.fromArrival.maxMs,
  arrivals_missed: run.arrivalsMissed
})

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const spread = (xs: ReadonlyArray<number>): Report.Spread => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), runs: xs })

const step = <A, E>(label: string, effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const started = performance.now()
    process.stderr.write(`bench: ${label}...`)
    const result = yield* effect
    process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    return result
  })

const fleetRun = (contestant: Fleet.Contestant, objects = sizes.fleet) =>
  step(`fleet ${contestant} (${objects})`, Fleet.run(contestant, { objects, concurrency }))

// The limit and kubefx side by side (three times unless --pairs says), then the two peers once.
const fleet = Effect.gen(function*() {
  // The API server runs in this process: warm its write paths up first, so the first contestant
  // does not pay for the JIT.
  yield* fleetRun("limit", Math.min(500, sizes.fleet))
  const pairs: Array<{ readonly limit: Fleet.Result; readonly kubefx: Fleet.Result }> = []
  for (let i = 0; i < fleetPairs; i++) pairs.push({ limit: yield* fleetRun("limit"), kubefx: yield* fleetRun("kubefx") })
  const limit = pairs.map((pair) => pair.limit)
  const kubefx = pairs.map((pair) => pair.kubefx)
  // The median kubefx run speaks for the figures beside the ratio.
  const typical = [...kubefx].sort((a, b) => a.seconds - b.seconds)[Math.floor(kubefx.length / 2)]!
  const naive = fleetObjects === undefined ? yield* fleetRun("naiveInformer") : undefined
  const dotI = fleetObjects === undefined ? yield* fleetRun("dotI") : undefined
  const figures: Report.Report["fleet"] = {
    objects: sizes.fleet,
    concurrency,
    limit_s: median(limit.map((run) => run.seconds)),
    kubefx_s: median(kubefx.map((run) => run.seconds)),
    naive_informer_s: naive?.seconds,
    dot_i_s: dotI?.seconds,
    kubefx_vs_limit: spread(pairs.map((pair) => pair.kubefx.seconds / pair.limit.seconds)),
    kubefx_second_half_vs_limit: spread(pairs.map((pair) => pair.kubefx.secondHalfSeconds / pair.limit.secondHalfSeconds)),
    kubefx_cpu_vs_limit: spread(pairs.map((pair) => pair.kubefx.cpuSeconds / pair.limit.cpuSeconds)),
    kubefx_cpu_after_sync_vs_limit: spread(
      pairs.map((pair) => (pair.kubefx.cpuSeconds - (pair.kubefx.syncCpuSeconds ?? NaN)) / pair.limit.cpuSeconds)
    ),
    kubefx_cpu_second_half_vs_limit: spread(
      pairs.map((pair) => (pair.kubefx.secondHalfCpuSeconds ?? NaN) / (pair.limit.secondHalfCpuSeconds ?? NaN))
    ),
    kubefx_sync_cpu_s: median(kubefx.map((run) => run.syncCpuSeconds ?? NaN)),
    kubefx_requests_per_object: (typical.requestsAfterSync ?? NaN) / sizes.fleet,
    kubefx_resync_requests_per_object: (typical.resyncRequests ?? NaN) / sizes.fleet,
    kubefx_resync_cpu_us_per_object: median(kubefx.map((run) => run.resyncCpuSeconds ?? NaN)) * 1e6 / sizes.fleet,
    kubefx_status_requests_per_object: (typical.statusRequests ?? NaN) / sizes.fleet,
    kubefx_reconciles_per_object: (typical.reconciles ?? NaN) / sizes.fleet,
    kubefx_peak_rss_mb: typical.peakRssMb,
    naive_informer_retries: naive === undefined ? undefined : naive.failures ?? 0,
    cpu_s: {
      limit: median(limit.map((run) => run.cpuSeconds)),
      kubefx: median(kubefx.map((run) => run.cpuSeconds)),
      naive_informer: naive?.cpuSeconds,
      dot_i: dotI?.cpuSeconds
    },
    server_cpu_s: {
      limit: median(limit.map((run) => run.serverCpuSeconds)),
      kubefx: median(kubefx.map((run) => run.serverCpuSeconds)),
      naive_informer: naive?.serverCpuSeconds,
      dot_i: dotI?.serverCpuSeconds
    }
  }
  return figures
})

const handoverReplicas = 3
const handoverTimings = size === "smoke" ? Sharding.smokeHandoverTimings : Sharding.handoverTimings
// Widgets per throughput run, in proportion to the concurrency: the same seconds of work at any.
const shardingObjects = Math.max(1, Math.round(sizes.sharding * shardingConcurrency / 2))
const shardingRun = (replicas: number) =>
  step(
    `sharding ${replicas} replica${replicas === 1 ? "" : "s"} (${shardingObjects})`,
    Sharding.throughput({ replicas, objects: shardingObjects, concurrency: shardingConcurrency })
  )

const sharding = Effect.gen(function*() {
  // 1, 2 and 4 replicas side by side, so each ratio compares runs made under the same load.
  const repeats: Array<{ readonly one: Sharding.Run; readonly two: Sharding.Run; readonly four: Sharding.Run }> = []
  for (let i = 0; i < sizes.shardingRepeats; i++) repeats.push({ one: yield* shardingRun(1), two: yield* shardingRun(2), four: yield* shardingRun(4) })
  const handovers: Array<Sharding.HandoverRun> = []
  for (let i = 0; i < sizes.shardingRepeats; i++) {
    handovers.push(
      yield* step(
        `sharding handover (${handoverReplicas} replicas, ${sizes.handover})`,
        Sharding.handover({ replicas: handoverReplicas, objects: sizes.handover, concurrency: shardingConcurrency, timings: handoverTimings })
      )
    )
  }
  const rate = (runs: ReadonlyArray<Sharding.Run>) => median(runs.map((run) => run.objectsPerSecond))
  // The median 4-replica run speaks for the per-replica figures.
  const four = repeats.map((repeat) => repeat.four)
  const typical = [...four].sort((a, b) => a.seconds - b.seconds)[Math.floor(four.length / 2)]!
  const typicalHandover = [...handovers].sort((a, b) => a.seconds - b.seconds)[Math.floor(handovers.length / 2)]!
  const figures: Report.Report["sharding"] = {
    objects: shardingObjects,
    concurrency: shardingConcurrency,
    io_wait_ms: Sharding.ioWaitMs,
    lease_duration_ms: handoverTimings.leaseDurationMs,
    renew_deadline_ms: handoverTimings.renewDeadlineMs,
    retry_period_ms: handoverTimings.retryPeriodMs,
    replicas_1_objects_s: rate(repeats.map((repeat) => repeat.one)),
    replicas_2_objects_s: rate(repeats.map((repeat) => repeat.two)),
    replicas_4_objects_s: rate(four),
    replicas_1_cores: median(repeats.map((repeat) => repeat.one.cores)),
    replicas_2_cores: median(repeats.map((repeat) => repeat.two.cores)),
    replicas_4_cores: median(four.map((run) => run.cores)),
    scaling_2: spread(repeats.map((repeat) => repeat.two.objectsPerSecond / (2 * repeat.one.objectsPerSecond))),
    scaling_4: spread(repeats.map((repeat) => repeat.four.objectsPerSecond / (4 * repeat.one.objectsPerSecond))),
    replicas_4_shares: typical.perReplica.map((replica) => replica.keysAtGo / typical.objects),
    replicas_4_busy_s: typical.perReplica.map((replica) => replica.busySeconds),
    replicas_4_ready_s: median(four.map((run) => run.readySeconds)),
    handover_replicas: handoverReplicas,
    handover_objects: sizes.handover,
    handover_killed_keys: typicalHandover.killedKeys,
    handover_relabel_s: spread(handovers.map((run) => run.relabelSeconds)),
    handover_s: spread(handovers.map((run) => run.seconds))
  }
  return figures
})

const machine = (loadAtStart: ReadonlyArray<number>): Report.Report["machine"] => ({
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? "unknown",
  node: process.version,
  load_average_at_start: loadAtStart,
  load_average_at_end: loadavg()
})

const scaleFigures = Effect.map(
  step(`scale (${sizes.scale})`, Scale.run({ objects: sizes.scale, samples: sizes.samples, concurrency })),
  (scale): Report.Report["scale"] => ({
    objects: scale.objects,
    sync_s: scale.syncSeconds,
    fill_list_s: median(scale.fill.list.map((run) => run.syncSeconds)),
    fill_streaming_s: median(scale.fill.streaming.map((run) => run.syncSeconds)),
    fill_list_peak_rss_mb: median(scale.fill.list.map((run) => run.peakRssMb)),
    fill_streaming_peak_rss_mb: median(scale.fill.streaming.map((run) => run.peakRssMb)),
    converge_s: scale.convergeSeconds,
    heap_bytes_per_object: scale.heapBytesPerObject,
    rss_bytes_per_object: scale.rssBytesPerObject,
    ...timings(scale)
  })
)

const program = Effect.gen(function*() {
  const loadAtStart = loadavg()
  const engine = yield* step("engine", Engine.run({ quick }))
  const fleetFigures = yield* fleet
  const latency = yield* step(`latency (${sizes.cached} cached)`, Latency.run({ objects: sizes.cached, samples: sizes.samples }))
  const memory = yield* step(`memory (${sizes.cached} cached)`, Memory.run({ objects: sizes.cached }))
  const scale = yield* scaleFigures
  const apiserver = yield* step("apiserver", ApiServerBench.run({ quick }))
  const shardingFigures = yield* sharding
  const report: Report.Report = {
    machine: machine(loadAtStart),
    engine,
    fleet: fleetFigures,
    latency: {
      cached_objects: sizes.cached,
      samples: sizes.samples,
      ...timings(latency)
    },
    memory: {
      cached_objects: memory.stripped.cachedObjects,
      bytes_per_object: memory.stripped.bytesPerObject,
      bytes_per_object_with_managed_fields: memory.kept.bytesPerObject,
      bytes_per_object_metadata_only: memory.metadata.bytesPerObject,
      bytes_per_object_at_sync: memory.stripped.bytesPerObjectAtSync
    },
    scale,
    apiserver,
    sharding: shardingFigures
  }
  return report
})

// One scenario alone: its own table and JSON sections.
const fleetOnly = Effect.gen(function*() {
  const loadAtStart = loadavg()
  const figures = yield* fleet
  return { machine: machine(loadAtStart), fleet: figures }
})

const shardingOnly = Effect.gen(function*() {
  const loadAtStart = loadavg()
  const figures = yield* sharding
  return { machine: machine(loadAtStart), sharding: figures }
})

const scaleOnly = Effect.gen(function*() {
  const loadAtStart = loadavg()
  const figures = yield* scaleFigures
  return { machine: machine(loadAtStart), scale: figures }
})

// Each run prints its table and writes its JSON. Under `runMain`, SIGINT or SIGTERM interrupts the
// run: every scope closes, so the children it forked are killed and its API servers stopped.
const output = <A>(report: A, table: (report: A) => string) =>
  Effect.sync(() => {
    console.log(table(report))
    if (jsonFile !== undefined) writeFileSync(jsonFile, JSON.stringify(report, null, 2) + "\n")
  })

NodeRuntime.runMain(
  only === "fleet"
    ? Effect.flatMap(fleetOnly, (report) => output(report, Report.fleetTable))
    : only === "sharding"
    ? Effect.flatMap(shardingOnly, (report) => output(report, Report.shardingTable))
    : only === "scale"
    ? Effect.flatMap(scaleOnly, (report) => output(report, Report.scaleTable))
    : Effect.flatMap(program, (report) => output(report, Report.table))
)
