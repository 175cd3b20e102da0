/**
 * Engine benchmark, no I/O: no-op reconciles per second through a kubefx controller, beside a bare
 * Effect `Queue` worker loop doing the same number of no-op jobs at the same concurrency in the same
 * process; and 1M events over 10k keys, which the work queue merges.
 *
 *   npx node packages/core/bench/engine.ts [--quick] [--json FILE]
 */
import { writeFileSync } from "node:fs"
import { Deferred, Effect, Metric, Queue, References } from "effect"
import { Controller, Outcome } from "@kubefx/core"

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const jsonIndex = args.indexOf("--json")
const jsonFile = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined

const keys = quick ? 20_000 : 100_000
const concurrency = 16
const mergeEvents = quick ? 200_000 : 1_000_000
const mergeKeys = 10_000

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9
const keyNames = Array.from({ length: Math.max(keys, mergeKeys) }, (_, i) => `default/object-${i}`)

const bareQueue = Effect.scoped(Effect.gen(function*() {
  const queue = yield* Queue.unbounded<string>()
  const finished = yield* Deferred.make<void>()
  let processed = 0
  const worker = Effect.forever(
    Effect.flatMap(Queue.take(queue), () =>
      Effect.suspend(() => ++processed === keys ? Deferred.succeed(finished, undefined) : Effect.void))
  )
  const start = process.hrtime.bigint()
  for (let i = 0; i < keys; i++) Queue.offerUnsafe(queue, keyNames[i]!)
  for (let i = 0; i < concurrency; i++) yield* Effect.forkScoped(worker)
  yield* Deferred.await(finished)
  return keys / seconds(start)
}))

const controllerRun = Effect.scoped(Effect.gen(function*() {
  let runs = 0
  const controller = yield* Controller.make({
    name: "bench",
    concurrency,
    reconcile: () => Effect.sync(() => (runs++, Outcome.done))
  })
  const start = process.hrtime.bigint()
  for (let i = 0; i < keys; i++) yield* controller.enqueue(keyNames[i]!)
  yield* controller.awaitIdle
  if (runs !== keys) throw new Error(`expected ${keys} runs, saw ${runs}`)
  return keys / seconds(start)
}))

const merging = Effect.scoped(Effect.gen(function*() {
  let runs = 0
  const controller = yield* Controller.make({
    name: "bench-merge",
    concurrency,
    reconcile: () => Effect.sync(() => (runs++, Outcome.done))
  })
  const start = process.hrtime.bigint()
  for (let i = 0; i < mergeEvents; i++) {
    yield* controller.enqueue(keyNames[i % mergeKeys]!)
    // Let workers in now and then, as events arriving from a watch would.
    if (i % 1000 === 999) yield* Effect.yieldNow
  }
  yield* controller.awaitIdle
  return { runs, opsPerSecond: mergeEvents / seconds(start) }
}))

const program = Effect.gen(function*() {
  // Warm up the JIT on both paths before measuring.
  yield* bareQueue
  yield* controllerRun
  const bare = yield* bareQueue
  const kubefx = yield* controllerRun
  const merge = yield* merging
  return {
    keys,
    kubefx_ops_s: Math.round(kubefx),
    bare_queue_ops_s: Math.round(bare),
    merge_events: mergeEvents,
    merge_runs: merge.runs,
    merge_ops_s: Math.round(merge.opsPerSecond)
  }
}).pipe(
  Effect.provideService(References.MinimumLogLevel, "None"),
  Effect.provideService(Metric.MetricRegistry, new Map())
)

const result = await Effect.runPromise(program)
const ratio = (result.kubefx_ops_s / result.bare_queue_ops_s * 100).toFixed(0)
console.log(`| scenario | figure |
|---|---|
| no-op reconciles, ${keys} keys, concurrency ${concurrency} | ${result.kubefx_ops_s.toLocaleString("en")} /s |
| bare Effect Queue worker loop, same work | ${result.bare_queue_ops_s.toLocaleString("en")} /s |
| kubefx / bare queue | ${ratio}% |
| ${mergeEvents.toLocaleString("en")} events over ${mergeKeys.toLocaleString("en")} keys | ${result.merge_ops_s.toLocaleString("en")} events/s, ${result.merge_runs.toLocaleString("en")} runs |`)
if (jsonFile !== undefined) writeFileSync(jsonFile, JSON.stringify({ engine: result }, null, 2) + "\n")
