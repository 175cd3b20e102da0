/**
 * The latency scenario: one spec update to the start of the reconcile it causes, with N Widgets
 * cached by a kubefx controller (the child `children/Latency.ts`), sampled one edit at a time;
 * timed from the edit's request, from its commit in the server's store (the moment a watch can
 * first deliver it, so without the API server's handling of the request before it), and from its
 * arrival at the operator's HTTP client (kubefx's own part: decoding, informer, queue, worker).
 */
import { Deferred, Effect, type Scope } from "effect"
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

/** Quantiles of one way of timing the samples, in milliseconds. */
export interface Quantiles {
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
}

/** When a counted sample's reconcile started (ms of the machine's monotonic clock), by its edit (the Widget and its message). */
export interface Start {
  readonly edit: string
  readonly at: number
}

/** What the sampling reports: from each edit's request and from its arrival, and when each reconcile started. */
export interface Report extends Quantiles {
  /** From the edit's first bytes reaching the operator's HTTP client (`Arrivals`) to the reconcile's start. */
  readonly fromArrival: Quantiles
  /** Samples whose arrival was not seen (none when the child observes its watches). */
  readonly arrivalsMissed: number
  readonly starts: ReadonlyArray<Start>
}

/** The figures of a run: from the request, from the commit, and from the arrival at the operator. */
export interface Result extends Quantiles {
  readonly fromCommit: Quantiles
  readonly fromArrival: Quantiles
  readonly arrivalsMissed: number
}

// Milliseconds of the machine's monotonic clock, which the harness and its children read alike, so a
// commit in one and a reconcile's start in the other compare. (`performance.timeOrigin` is each
// process's own reading of the wall clock at its start: two processes' differ by a fraction of a
// millisecond, as much as the fastest samples take.)
export const clockMillis = (): number => Number(process.hrtime.bigint()) / 1e6

/** The resource the samples edit, as its watch requests name it. */
export const watchedPlural = Workload.Widget.plural

// One edit: the Widget and the message it sets.
const editKey = (name: string, message: string): string => `${name} ${message}`

const quantiles = (values: ReadonlyArray<number>): Quantiles => ({
  p50Ms: quantile(values, 0.5),
  p99Ms: quantile(values, 0.99),
  maxMs: Math.max(...values)
})

/**
 * In the harness: when each Widget spec (message) first landed in the server's store, by edit,
 * for as long as the scope lasts.
 *
 * @example
 * const committed = yield* Latency.commits(bench)
 */
export const commits = (bench: BenchServer.BenchServer): Effect.Effect<ReadonlyMap<string, number>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const committed = new Map<string, number>()
    const unsubscribe = bench.server.store.subscribe((event) => {
      if (event.type !== "MODIFIED" || event.object.kind !== Workload.Widget.kind) return
      const widget = event.object as Workload.WidgetLike
      const edit = editKey(widget.metadata?.name ?? "", widget.spec?.message ?? "")
      if (!committed.has(edit)) committed.set(edit, clockMillis())
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    return committed
  })

/**
 * The samples timed from their edit's commit to their reconcile's start.
 *
 * @example
 * import * as Latency from "./Latency.ts"
 * Latency.fromCommit(new Map([["w-1 a", 10]]), [{ edit: "w-1 a", at: 12.5 }]).p99Ms // 2.5
 */
export const fromCommit = (committed: ReadonlyMap<string, number>, starts: ReadonlyArray<Start>): Quantiles =>
  quantiles(starts.flatMap((start) => {
    const at = committed.get(start.edit)
    return at === undefined ? [] : [start.at - at]
  }))

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
 * The edit each pending sample waits for, by Widget name: a reconcile seeing it completes `started`;
 * the child's watch observer stamps `arrivedAt`.
 */
export type Waiting = Map<string, { readonly message: string; readonly started: Deferred.Deferred<number>; arrivedAt: number | undefined }>

/**
 * For a reconciler: completes the pending sample of this Widget when the run sees its edit.
 *
 * @example
 * const reconcile = (widget) => Effect.sync(() => Latency.seen(waiting, widget.metadata.name, widget.spec.message))
 */
export const seen = (waiting: Waiting, name: string | undefined, message: string): void => {
  const sample = waiting.get(name ?? "")
  if (sample !== undefined && sample.message === message) Deferred.doneUnsafe(sample.started, Effect.succeed(clockMillis()))
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
  const fromArrival: Array<number> = []
  let arrivalsMissed = 0
  const starts: Array<Start> = []
  for (let i = 0; i < options.warmup + options.samples; i++) {
    const name = Workload.widgetName((i * 7919) % options.objects)
    const message = `edit ${i}`
    const started = Deferred.makeUnsafe<number>()
    const pending = { message, started, arrivedAt: undefined as number | undefined }
    options.waiting.set(name, pending)
    const sent = clockMillis()
    yield* Effect.promise(() =>
      options.raw.ok("PATCH", `${Workload.apiPath}/namespaces/${Workload.namespace}/widgets/${name}`, { spec: { message } }, Raw.mergePatch)
    )
    const at = yield* Deferred.await(started)
    options.waiting.delete(name)
    if (i >= options.warmup) {
      latencies.push(at - sent)
      if (pending.arrivedAt === undefined) arrivalsMissed++
      else fromArrival.push(at - pending.arrivedAt)
      starts.push({ edit: editKey(name, message), at })
    }
    yield* options.awaitIdle
  }
  return { ...quantiles(latencies), fromArrival: quantiles(fromArrival), arrivalsMissed, starts } satisfies Report
})

/**
 * Seeds `objects` reconciled Widgets on a fresh server and samples the latency.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Latency from "./Latency.ts"
 * const result = Effect.runPromise(Latency.run({ objects: 10_000, samples: 200 }))
 */
export const run = (options: { readonly objects: number; readonly samples: number }): Effect.Effect<Result, unknown> =>
  Effect.scoped(Effect.gen(function*() {
    const bench = yield* BenchServer.make
    yield* Effect.promise(() => BenchServer.seed(bench, options.objects, { reconciled: true }))
    const committed = yield* commits(bench)
    const input: Input = {
      url: bench.server.url,
      token: bench.server.token,
      kubeconfigPath: bench.kubeconfigPath,
      warmup: 20,
      ...options
    }
    const child = yield* Child.spawn(new URL("children/Latency.ts", import.meta.url), input)
    const { starts, ...fromRequest } = (yield* child.result) as Report
    return { ...fromRequest, fromCommit: fromCommit(committed, starts) }
  }))
