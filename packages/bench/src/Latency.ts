/**
 * The latency scenario: one spec update to the start of the reconcile it causes, with N Widgets
 * cached by a kubefx controller (the child `children/Latency.ts`), sampled one edit at a time.
 */
import { Deferred, Effect } from "effect"
import * as BenchServer from "./BenchServer.ts"
import * as Child from "./Child.ts"
import * as Raw from "./Raw.ts"
import * as Workload from "./Workload.ts"

/** What the latency child gets. */
export interface Input {
  readonly url: string
  readonly token: string
  readonly kubeconfigPath: string
  readonly objects: number
  readonly samples: number
  /** Edits made first and not counted (JIT warm-up). */
  readonly warmup: number
}

/** What it reports, in milliseconds. */
export interface Report {
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

/**
 * The value at quantile `q` (0..1) of `values`, by the nearest-rank method.
 *
 * @example
 * import * as Latency from "./Latency.ts"
 * Latency.quantile([1, 2, 3, 4], 0.5) // 2
 */
export const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN
}

/** The edit each pending sample waits for, by Widget name: a reconcile seeing it completes `started`. */
export type Waiting = Map<string, { readonly message: string; readonly started: Deferred.Deferred<number> }>

/**
 * For a reconciler: completes the pending sample of this Widget when the run sees its edit.
 *
 * @example
 * const reconcile = (widget) => Effect.sync(() => Latency.seen(waiting, widget.metadata.name, widget.spec.message))
 */
export const seen = (waiting: Waiting, name: string | undefined, message: string): void => {
  const sample = waiting.get(name ?? "")
  if (sample !== undefined && sample.message === message) Deferred.doneUnsafe(sample.started, Effect.succeed(performance.now()))
}

/**
 * One spec edit at a time (a raw merge patch), spread over the fleet, each Widget at most once,
 * timed from just before the edit is sent to the start of the reconcile that sees it; the first
 * `warmup` edits are not counted, and each waits for the controller to be idle again (its Ready
 * write landed) before the next, so samples do not overlap.
 *
 * @example
 * const report = yield* Latency.sample({ raw, waiting, objects: 10_000, warmup: 20, samples: 200, awaitIdle: controller.awaitIdle })
 */
export const sample = Effect.fnUntraced(function*(options: {
  readonly raw: Raw.Raw
  readonly waiting: Waiting
  readonly objects: number
  readonly warmup: number
  readonly samples: number
  readonly awaitIdle: Effect.Effect<void>
}) {
  const latencies: Array<number> = []
  for (let i = 0; i < options.warmup + options.samples; i++) {
    const name = Workload.widgetName((i * 7919) % options.objects)
    const message = `edit ${i}`
    const started = Deferred.makeUnsafe<number>()
    options.waiting.set(name, { message, started })
    const sent = performance.now()
    yield* Effect.promise(() =>
      options.raw.ok("PATCH", `${Workload.apiPath}/namespaces/${Workload.namespace}/widgets/${name}`, { spec: { message } }, Raw.mergePatch)
    )
    const at = yield* Deferred.await(started)
    options.waiting.delete(name)
    if (i >= options.warmup) latencies.push(at - sent)
    yield* options.awaitIdle
  }
  return { p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), maxMs: Math.max(...latencies) } satisfies Report
})

/**
 * Seeds `objects` reconciled Widgets on a fresh server and samples the latency.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Latency from "./Latency.ts"
 * const report = Effect.runPromise(Latency.run({ objects: 10_000, samples: 200 }))
 */
export const run = (options: { readonly objects: number; readonly samples: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const bench = yield* BenchServer.make
    yield* Effect.promise(() => BenchServer.seed(bench, options.objects, { reconciled: true }))
    const input: Input = {
      url: bench.server.url,
      token: bench.server.token,
      kubeconfigPath: bench.kubeconfigPath,
      warmup: 20,
      ...options
    }
    const child = yield* Child.spawn(new URL("children/Latency.ts", import.meta.url), input)
    return (yield* child.result) as Report
  }))
