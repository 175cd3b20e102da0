/**
 * `npm run bench -- [--quick] [--json FILE]`: every scenario of issue 7/9 in one process tree, each
 * against an embedded API server of its own, printed as a markdown table (progress on stderr).
 *
 * - full: 10,000 objects for fleet, latency and memory; the engine and apiserver benches in full.
 * - `--quick`: 1,000 for the fleet and 2,000 cached, the other benches with `--quick`.
 * - `--smoke`: tiny sizes (100 / 300 cached, 50 latency samples), only for the package's own test,
 *   which checks the JSON, not the figures.
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import * as ApiServerBench from "./ApiServerBench.ts"
import * as Engine from "./Engine.ts"
import * as Fleet from "./Fleet.ts"
import * as Latency from "./Latency.ts"
import * as Memory from "./Memory.ts"
import * as Report from "./Report.ts"

const args = process.argv.slice(2)
const jsonIndex = args.indexOf("--json")
const jsonFile = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined
const size = args.includes("--smoke") ? "smoke" : args.includes("--quick") ? "quick" : "full"
const sizes = {
  full: { fleet: 10_000, cached: 10_000, samples: 200 },
  quick: { fleet: 1_000, cached: 2_000, samples: 200 },
  smoke: { fleet: 100, cached: 300, samples: 50 }
}[size]
const quick = size !== "full"
const concurrency = 16

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
  const engine = yield* step("engine", Engine.run({ quick }))
  // The API server runs in this process: warm its write paths up first, so the first contestant
  // does not pay for the JIT.
  yield* fleetRun("limit", Math.min(500, sizes.fleet))
  const limit = yield* fleetRun("limit")
  const kubefx = yield* fleetRun("kubefx")
  const naive = yield* fleetRun("naiveInformer")
  const dotI = yield* fleetRun("dotI")
  const latency = yield* step(`latency (${sizes.cached} cached)`, Latency.run({ objects: sizes.cached, samples: sizes.samples }))
  const memory = yield* step(`memory (${sizes.cached} cached)`, Memory.run({ objects: sizes.cached }))
  const apiserver = yield* step("apiserver", ApiServerBench.run({ quick }))
  const report: Report.Report = {
    engine,
    fleet: {
      objects: sizes.fleet,
      concurrency,
      limit_s: limit.seconds,
      kubefx_s: kubefx.seconds,
      naive_informer_s: naive.seconds,
      dot_i_s: dotI.seconds,
      kubefx_requests_per_object: (kubefx.requestsAfterSync ?? NaN) / sizes.fleet,
      kubefx_status_requests_per_object: (kubefx.statusRequests ?? NaN) / sizes.fleet,
      kubefx_reconciles_per_object: (kubefx.reconciles ?? NaN) / sizes.fleet,
      kubefx_peak_rss_mb: kubefx.peakRssMb,
      naive_informer_retries: naive.failures ?? 0,
      cpu_s: { limit: limit.cpuSeconds, kubefx: kubefx.cpuSeconds, naive_informer: naive.cpuSeconds, dot_i: dotI.cpuSeconds },
      server_cpu_s: {
        limit: limit.serverCpuSeconds,
        kubefx: kubefx.serverCpuSeconds,
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
