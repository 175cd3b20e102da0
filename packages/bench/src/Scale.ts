/**
 * The scale scenario: a kubefx controller (the widgets example's reconciler) starting on N Widgets
 * (100,000 in a full run) that nothing has reconciled yet: how long its list and sync take, how long
 * the fleet takes to converge, the heap and RSS it holds per cached object once converged, and the
 * spec-edit-to-reconcile latency with all of them cached (`children/Scale.ts`).
 */
import { Duration, Effect } from "effect"
import * as BenchServer from "./BenchServer.ts"
import * as Child from "./Child.ts"
import type * as ScaleSync from "./children/ScaleSync.ts"
import * as Latency from "./Latency.ts"

/** What the scale child gets. */
export interface Input {
  readonly kubeconfigPath: string
  readonly url: string
  readonly token: string
  readonly objects: number
  readonly samples: number
  readonly concurrency: number
}

/** What it reports: its own figures, and its latency samples as the latency child reports them. */
export interface Report extends Latency.Report {
  /** From the controller's start to its caches synced (Widgets and ConfigMaps listed and decoded). */
  readonly syncSeconds: number
  /** Heap after a full collection, per cached object (Widgets and their ConfigMaps), converged. */
  readonly heapBytesPerObject: number
  /** The process's RSS per cached object, converged. */
  readonly rssBytesPerObject: number
}

/** The caches filled alone, three times each way, alternately: each way's runs. */
export interface Fill {
  readonly list: ReadonlyArray<ScaleSync.Report>
  readonly streaming: ReadonlyArray<ScaleSync.Report>
}

export interface Result extends Omit<Report, "starts"> {
  readonly objects: number
  readonly fill: Fill
  /** From the controller's start to the N-th Widget done. */
  readonly convergeSeconds: number
  /** The latency samples timed from their edit's commit in the server's store. */
  readonly fromCommit: Latency.Quantiles
}

/**
 * Seeds `objects` Widgets, runs the child until they are all done, then lets it sample the latency.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Scale from "./Scale.ts"
 * const result = Effect.runPromise(Scale.run({ objects: 100_000, samples: 200, concurrency: 16 }))
 */
export const run = (options: { readonly objects: number; readonly samples: number; readonly concurrency: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const bench = yield* BenchServer.make
    yield* Effect.promise(() => BenchServer.seed(bench, options.objects))
    const fill = yield* fillBoth(bench.kubeconfigPath, options.objects)
    const committed = yield* Latency.commits(bench)
    const input: Input = { kubeconfigPath: bench.kubeconfigPath, url: bench.server.url, token: bench.server.token, ...options }
    const child = yield* Child.spawn(new URL("children/Scale.ts", import.meta.url), input, { nodeOptions: ["--expose-gc"] })
    const start = yield* child.started
    yield* bench.awaitReady(options.objects).pipe(
      Effect.timeoutOrElse({
        duration: Duration.seconds(120 + options.objects / 50),
        orElse: () => Effect.fail(new Error(`scale: ${bench.readyCount()} of ${options.objects} ready at the deadline`))
      })
    )
    const convergeSeconds = (performance.now() - start) / 1000
    const { starts, ...report } = (yield* child.stop) as Report
    return { objects: options.objects, fill, convergeSeconds, ...report, fromCommit: Latency.fromCommit(committed, starts) } satisfies Result
  }))

// Before anything reconciles (so with no ConfigMap yet): the Widgets and ConfigMaps cached from
// paginated lists, then from streaming lists, alternately, three times.
const fillBoth = (kubeconfigPath: string, expected: number) =>
  Effect.gen(function*() {
    const runs: Record<"list" | "streaming", Array<ScaleSync.Report>> = { list: [], streaming: [] }
    for (let i = 0; i < 3; i++) {
      for (const initialList of ["list", "streaming"] as const) {
        const report = (yield* Effect.scoped(Effect.flatMap(
          Child.spawn(new URL("children/ScaleSync.ts", import.meta.url), { kubeconfigPath, initialList } satisfies ScaleSync.Input),
          (child) => child.result
        ))) as ScaleSync.Report
        if (report.cached < expected) return yield* Effect.fail(new Error(`scale sync (${initialList}): ${report.cached} of ${expected} cached`))
        runs[initialList].push(report)
      }
    }
    return runs satisfies Fill
  })
