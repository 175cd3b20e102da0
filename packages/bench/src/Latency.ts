/**
 * The latency scenario: one spec update to the start of the reconcile it causes, with N Widgets
 * cached by a kubefx controller (the child `children/Latency.ts`), sampled one edit at a time.
 */
import { Effect } from "effect"
import * as BenchServer from "./BenchServer.ts"
import * as Child from "./Child.ts"

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
