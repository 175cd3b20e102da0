/**
 * `npm run bench -- [--quick] [--json FILE]`: every scenario in one process tree, each against an
 * embedded API server of its own, printed as a markdown table (progress on stderr). The ratios
 * (engine against a bare queue, fleet against the raw writes) are measured three times each, side
 * by side, and reported as median and spread, with the machine's load average at start and end.
 *
 * - full: 10,000 objects for fleet, latency and memory, 100,000 for scale; the engine and apiserver
 *   benches in full.
 * - `--quick`: 1,000 for the fleet, 2,000 cached, 5,000 for scale, the other benches with `--quick`.
 * - `--smoke`: tiny sizes (100 / 300 cached, 50 latency samples), only for the package's own test,
 *   which checks the JSON, not the figures.
 */
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

const args = process.argv.slice(2)
const jsonIndex = args.indexOf("--json")
const jsonFile = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined
const size = args.includes("--smoke") ? "smoke" : args.includes("--quick") ? "quick" : "full"
const sizes = {
  full: { fleet: 10_000, cached: 10_000, scale: 100_000, samples: 200 },
  quick: { fleet: 1_000, cached: 2_000, scale: 5_000, samples: 200 },
  smoke: { fleet: 100, cached: 300, scale: 300, samples: 50 }
}[size]
const quick = size !== "full"
const concurrency = 16
// Each ratio is measured this many times in the run, side by side, and reported as median and spread.
const repeats = 3

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
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

const program = Effect.gen(function*() {
  const loadAtStart = loadavg()
  const engine = yield* step("engine", Engine.run({ quick }))
  // The API server runs in this process: warm its write paths up first, so the first contestant
  // does not pay for the JIT.
  yield* fleetRun("limit", Math.min(500, sizes.fleet))
  const pairs: Array<{ readonly limit: Fleet.Result; readonly kubefx: Fleet.Result }> = []
  for (let i = 0; i < repeats; i++) pairs.push({ limit: yield* fleetRun("limit"), kubefx: yield* fleetRun("kubefx") })
  const limit = pairs.map((pair) => pair.limit)
  const kubefx = pairs.map((pair) => pair.kubefx)
  // The median kubefx run speaks for the figures beside the ratio.
  const typical = [...kubefx].sort((a, b) => a.seconds - b.seconds)[Math.floor(kubefx.length / 2)]!
  const naive = yield* fleetRun("naiveInformer")
  const dotI = yield* fleetRun("dotI")
  const latency = yield* step(`latency (${sizes.cached} cached)`, Latency.run({ objects: sizes.cached, samples: sizes.samples }))
  const memory = yield* step(`memory (${sizes.cached} cached)`, Memory.run({ objects: sizes.cached }))
  const scale = yield* step(`scale (${sizes.scale})`, Scale.run({ objects: sizes.scale, samples: sizes.samples, concurrency }))
  const apiserver = yield* step("apiserver", ApiServerBench.run({ quick }))
  const report: Report.Report = {
    machine: {
      cores: availableParallelism(),
      cpu: cpus()[0]?.model ?? "unknown",
      node: process.version,
      load_average_at_start: loadAtStart,
      load_average_at_end: loadavg()
    },
    engine,
    fleet: {
      objects: sizes.fleet,
      concurrency,
      limit_s: median(limit.map((run) => run.seconds)),
      kubefx_s: median(kubefx.map((run) => run.seconds)),
      naive_informer_s: naive.seconds,
      dot_i_s: dotI.seconds,
      kubefx_vs_limit: spread(pairs.map((pair) => pair.kubefx.seconds / pair.limit.seconds)),
      kubefx_cpu_vs_limit: spread(pairs.map((pair) => pair.kubefx.cpuSeconds / pair.limit.cpuSeconds)),
      kubefx_requests_per_object: (typical.requestsAfterSync ?? NaN) / sizes.fleet,
      kubefx_resync_requests_per_object: (typical.resyncRequests ?? NaN) / sizes.fleet,
      kubefx_status_requests_per_object: (typical.statusRequests ?? NaN) / sizes.fleet,
      kubefx_reconciles_per_object: (typical.reconciles ?? NaN) / sizes.fleet,
      kubefx_peak_rss_mb: typical.peakRssMb,
      naive_informer_retries: naive.failures ?? 0,
      cpu_s: {
        limit: median(limit.map((run) => run.cpuSeconds)),
        kubefx: median(kubefx.map((run) => run.cpuSeconds)),
        naive_informer: naive.cpuSeconds,
        dot_i: dotI.cpuSeconds
      },
      server_cpu_s: {
        limit: median(limit.map((run) => run.serverCpuSeconds)),
        kubefx: median(kubefx.map((run) => run.serverCpuSeconds)),
        naive_informer: naive.serverCpuSeconds,
        dot_i: dotI.serverCpuSeconds
      }
    },
    latency: {
      cached_objects: sizes.cached,
      samples: sizes.samples,
      p50_ms: latency.p50Ms,
      p99_ms: latency.p99Ms,
      max_ms: latency.maxMs
    },
    memory: {
      cached_objects: memory.stripped.cachedObjects,
      bytes_per_object: memory.stripped.bytesPerObject,
      bytes_per_object_with_managed_fields: memory.kept.bytesPerObject,
      bytes_per_object_at_sync: memory.stripped.bytesPerObjectAtSync
    },
    scale: {
      objects: scale.objects,
      sync_s: scale.syncSeconds,
      converge_s: scale.convergeSeconds,
      heap_bytes_per_object: scale.heapBytesPerObject,
      rss_bytes_per_object: scale.rssBytesPerObject,
      p50_ms: scale.p50Ms,
      p99_ms: scale.p99Ms,
      max_ms: scale.maxMs
    },
    apiserver
  }
  return report
})

const report = await Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exit(1)
})
console.log(Report.table(report))
if (jsonFile !== undefined) writeFileSync(jsonFile, JSON.stringify(report, null, 2) + "\n")
