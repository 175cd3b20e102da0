/**
 * Engine benchmark, no I/O: no-op reconciles per second through a kubefx controller, beside a bare
 * Effect `Queue` worker loop doing the same number of no-op jobs at the same concurrency in the same
 * process, three times, with the median and spread of the ratio; the same loop with what each run
 * needs from Effect (its floor), and each part of that floor alone; 1M events over 10k keys, which the work queue merges; and the work
 * queue's own add, take and done per operation, in rounds of 1,000 keys and with every key at once.
 *
 *   npx node packages/core/bench/engine.ts [--quick] [--json FILE]
 */
import { writeFileSync } from "node:fs"
import { Context, Deferred, Effect, Latch, Metric, Queue, References, Tracer } from "effect"
import { Controller, Outcome, RetryInfo, Trigger, WorkQueue } from "@kubefx/core"

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const jsonIndex = args.indexOf("--json")
const jsonFile = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined

const keys = quick ? 20_000 : 100_000
const concurrency = 16
const mergeEvents = quick ? 200_000 : 1_000_000
const mergeKeys = 10_000
const repeats = 3

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9
const keyNames = Array.from({ length: Math.max(keys, mergeKeys) }, (_, i) => `default/object-${i}`)

// `job` wraps each job's no-op, given its key: the bare loop runs it as it is.
const workerLoop = (job: (key: string, noOp: Effect.Effect<void>) => Effect.Effect<unknown>) =>
  Effect.scoped(Effect.gen(function*() {
    const queue = yield* Queue.unbounded<string>()
    const finished = yield* Deferred.make<void>()
    let processed = 0
    const noOp = Effect.suspend(() => ++processed === keys ? Deferred.succeed(finished, undefined) : Effect.void)
    const worker = Effect.forever(Effect.flatMap(Queue.take(queue), (key) => job(key, noOp)))
    const start = process.hrtime.bigint()
    for (let i = 0; i < keys; i++) Queue.offerUnsafe(queue, keyNames[i]!)
    for (let i = 0; i < concurrency; i++) yield* Effect.forkScoped(worker)
    yield* Deferred.await(finished)
    return keys / seconds(start)
  }))

const bareQueue = workerLoop((_, noOp) => noOp)

// What every run takes from Effect, with no per-key state: a gate a hold closes, an interruptible
// run in an uninterruptible worker (so a taken key is never lost), the run's span, and one context
// with the span, the retry info and the log annotations. The engine cannot be cheaper than this.
const gate = Latch.makeUnsafe(true)
const effectFloor = workerLoop((key, noOp) =>
  Effect.andThen(
    gate.await,
    Effect.uninterruptibleMask((restore) =>
      Effect.onExit(
        restore(Effect.exit(Effect.useSpan("kubefx.reconcile", { attributes: { "kubefx.key": key } }, (span) =>
          Effect.updateContext(noOp, (context: Context.Context<never>) =>
            Context.add(
              Context.add(Context.add(context, Tracer.ParentSpan, span), RetryInfo.RetryInfo, RetryInfo.initial),
              References.CurrentLogAnnotations,
              { ...Context.get(context, References.CurrentLogAnnotations), key }
            ))))),
        () => Effect.void
      )
    )
  )
)

// The floor's parts, each alone around the no-op: what each costs a run over the bare loop.
const spanOf = (key: string, noOp: Effect.Effect<void>) =>
  Effect.useSpan("kubefx.reconcile", { attributes: { "kubefx.key": key } }, () => noOp)
const withContext = (key: string, noOp: Effect.Effect<void>) =>
  Effect.updateContext(noOp, (context: Context.Context<never>) =>
    Context.add(
      Context.add(context, RetryInfo.RetryInfo, RetryInfo.initial),
      References.CurrentLogAnnotations,
      { ...Context.get(context, References.CurrentLogAnnotations), key }
    ))
const floorParts: ReadonlyArray<readonly [string, Effect.Effect<number>]> = [
  ["the gate", workerLoop((_, noOp) => Effect.andThen(gate.await, noOp))],
  ["the interruptible run and its exit", workerLoop((_, noOp) =>
    Effect.uninterruptibleMask((restore) => Effect.onExit(restore(Effect.exit(noOp)), () => Effect.void)))],
  ["the span", workerLoop(spanOf)],
  ["the context update", workerLoop(withContext)],
  ["the span and the context update together", workerLoop((key, noOp) =>
    Effect.useSpan("kubefx.reconcile", { attributes: { "kubefx.key": key } }, (span) =>
      Effect.updateContext(withContext(key, noOp), (context: Context.Context<never>) => Context.add(context, Tracer.ParentSpan, span))))]
]

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

// Adds, takes and dones on a bare work queue, in the same process: its cost per operation, `roundKeys`
// keys added, then each taken and done, `keys / roundKeys` times. Rounds of 1,000 keys are
// controller-runtime's priority queue benchmark (`BenchmarkAddGetDone`), the figure the goal
// quotes; all the keys in one round is the same work with a working set a hundred times larger.
const workQueueRound = 1000
const workQueueOps = (roundKeys: number) => Effect.scoped(Effect.gen(function*() {
  const queue = yield* WorkQueue.make("bench-ops")
  const rounds = Math.max(1, Math.round(keys / roundKeys))
  const start = process.hrtime.bigint()
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < roundKeys; i++) yield* queue.add(keyNames[i]!, Trigger.event())
    for (let i = 0; i < roundKeys; i++) yield* queue.done((yield* queue.take).key)
  }
  return seconds(start) * 1e9 / (3 * rounds * roundKeys)
}))

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const program = Effect.gen(function*() {
  // Warm up the JIT on both paths before measuring.
  yield* bareQueue
  yield* controllerRun
  yield* workQueueOps(workQueueRound)
  yield* workQueueOps(keys)
  // Each ratio is measured three times, the bare loop and the engine side by side each time, so a
  // busy moment of a shared machine moves one pair, not the figure.
  yield* effectFloor
  const pairs: Array<{ readonly bare: number; readonly floor: number; readonly kubefx: number; readonly untraced: number }> = []
  for (let i = 0; i < repeats; i++) {
    pairs.push({
      bare: yield* bareQueue,
      floor: yield* effectFloor,
      kubefx: yield* controllerRun,
      untraced: yield* Effect.provideService(controllerRun, References.TracerEnabled, false)
    })
  }
  const ratios = pairs.map((pair) => pair.kubefx / pair.bare)
  const floorRatios = pairs.map((pair) => pair.floor / pair.bare)
  const merge = yield* merging
  const inRounds: Array<number> = []
  const allAtOnce: Array<number> = []
  for (let i = 0; i < repeats; i++) {
    inRounds.push(yield* workQueueOps(workQueueRound))
    allAtOnce.push(yield* workQueueOps(keys))
  }
  // Last, so that the figures above are measured as they were before these rows existed.
  const parts: Array<readonly [string, number]> = []
  for (const [name, loop] of floorParts) {
    const overBare: Array<number> = []
    for (let i = 0; i < repeats; i++) {
      const bare = yield* bareQueue
      overBare.push(1e9 / (yield* loop) - 1e9 / bare)
    }
    parts.push([name, median(overBare)])
  }
  return {
    keys,
    kubefx_ops_s: Math.round(median(pairs.map((pair) => pair.kubefx))),
    bare_queue_ops_s: Math.round(median(pairs.map((pair) => pair.bare))),
    ratio_median: median(ratios),
    ratio_min: Math.min(...ratios),
    ratio_max: Math.max(...ratios),
    untraced_ops_s: Math.round(median(pairs.map((pair) => pair.untraced))),
    untraced_ratio_median: median(pairs.map((pair) => pair.untraced / pair.bare)),
    floor_ops_s: Math.round(median(pairs.map((pair) => pair.floor))),
    floor_ratio_median: median(floorRatios),
    merge_events: mergeEvents,
    merge_runs: merge.runs,
    merge_ops_s: Math.round(merge.opsPerSecond),
    workqueue_round_keys: workQueueRound,
    workqueue_rounds_ns_per_op: median(inRounds),
    workqueue_ns_per_op: median(allAtOnce),
    parts
  }
}).pipe(
  Effect.provideService(References.MinimumLogLevel, "None"),
  Effect.provideService(Metric.MetricRegistry, new Map())
)

const result = await Effect.runPromise(program)
const percent = (ratio: number) => `${(ratio * 100).toFixed(0)}%`
console.log(`| scenario | figure |
|---|---|
| no-op reconciles, ${keys} keys, concurrency ${concurrency} (median of ${repeats}) | ${result.kubefx_ops_s.toLocaleString("en")} /s |
| bare Effect Queue worker loop, same work | ${result.bare_queue_ops_s.toLocaleString("en")} /s |
| kubefx / bare queue, median (spread) | ${percent(result.ratio_median)} (${percent(result.ratio_min)}-${percent(result.ratio_max)}) |
| no-op reconciles with spans off (\`References.TracerEnabled\` false), same runs | ${result.untraced_ops_s.toLocaleString("en")} /s, ${percent(result.untraced_ratio_median)} of the bare queue |
| the loop with what each run needs from Effect (gate, interruptible run, span, context) | ${result.floor_ops_s.toLocaleString("en")} /s, ${percent(result.floor_ratio_median)} of the bare queue |
| ${mergeEvents.toLocaleString("en")} events over ${mergeKeys.toLocaleString("en")} keys | ${result.merge_ops_s.toLocaleString("en")} events/s, ${result.merge_runs.toLocaleString("en")} runs |
| work queue add, take, done, rounds of ${workQueueRound.toLocaleString("en")} keys | ${result.workqueue_rounds_ns_per_op.toFixed(0)} ns per operation |
| work queue add, take, done, ${keys.toLocaleString("en")} keys in one round | ${result.workqueue_ns_per_op.toFixed(0)} ns per operation |`)
const bareRun = 1e9 / result.bare_queue_ops_s
console.log(`
What the floor is made of: each part alone around the no-op job, its cost over the bare loop's ${bareRun.toFixed(0)} ns a job (median of ${repeats}).
At half the bare queue's rate a run would have ${(2 * bareRun).toFixed(0)} ns for everything, the work queue's add, take and done
(${(3 * result.workqueue_rounds_ns_per_op).toFixed(0)} ns together) and these parts among it.

| part | ns per run |
|---|---|
${result.parts.map(([name, ns]) => `| ${name} | ${ns.toFixed(0)} |`).join("\n")}`)
const { parts: _parts, ...figures } = result
if (jsonFile !== undefined) writeFileSync(jsonFile, JSON.stringify({ engine: figures }, null, 2) + "\n")
