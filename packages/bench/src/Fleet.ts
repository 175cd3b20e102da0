/**
 * The fleet scenario: N Widgets from operator start to all `Ready=True` with the current
 * `observedGeneration`, for each contestant on a fresh server of its own. The clock starts when the
 * child says it starts its operator (modules loaded, nothing listed yet) and stops when the
 * server's store holds the N-th done Widget.
 */
import { Duration, Effect, Fiber } from "effect"
import * as BenchServer from "./BenchServer.ts"
import * as Child from "./Child.ts"

/** What a fleet child gets. */
export interface Input {
  readonly url: string
  readonly token: string
  readonly kubeconfigPath: string
  readonly objects: number
  /** Writes in flight at once, for kubefx (workers) and the limit (connections). */
  readonly concurrency: number
}

/** What a fleet child reports when stopped. */
export interface Report {
  readonly peakRssMb: number
  /**
   * CPU seconds the child used from its start signal until its part of the fleet is done (kubefx:
   * its caches hold the fleet's last writes and nothing runs; the others: until stopped).
   */
  readonly cpuSeconds: number
  /**
   * CPU seconds of `cpuSeconds` spent before the operator's caches had synced and its workers
   * started (kubefx only): listing, decoding and caching every Widget, which the limit does before
   * its clock starts.
   */
  readonly syncCpuSeconds?: number | undefined
  /**
   * CPU seconds of `cpuSeconds` from the start of the work on the fleet's second half (the limit:
   * the writes of Widget N/2 + 1; kubefx: its run N/2 + 1, one run per Widget) to their end: the
   * fleet past the sync and its first runs in cold code (the limit and kubefx only).
   */
  readonly secondHalfCpuSeconds?: number | undefined
  /** API requests after the operator's caches synced (kubefx only). */
  readonly requestsAfterSync?: number | undefined
  /** Those requests by method, with watches apart from other GETs. */
  readonly requestsByVerb?: Readonly<Record<string, number>> | undefined
  /** Status writes (PATCH of `/status`) after the start signal (kubefx only). */
  readonly statusRequests?: number | undefined
  /** Requests a resync of the converged fleet sent (kubefx only; goal 0). */
  readonly resyncRequests?: number | undefined
  /** CPU seconds that resync used (kubefx only). */
  readonly resyncCpuSeconds?: number | undefined
  /** Reconciler runs (kubefx only). */
  readonly reconciles?: number | undefined
  /** Reconciles that failed and were tried again (the client-node loop). */
  readonly failures?: number | undefined
}

export interface Result extends Report {
  readonly seconds: number
  /**
   * Seconds from the N/2-th Widget done to the N-th, by the server's store: the pace past the start,
   * the list and the first runs in cold code.
   */
  readonly secondHalfSeconds: number
  /** CPU seconds the API server's process used while the fleet converged. */
  readonly serverCpuSeconds: number
}

/** The contestants, each a child script in children/. */
export const contestants = {
  limit: "children/FleetLimit.ts",
  kubefx: "children/FleetKubefx.ts",
  naiveInformer: "children/FleetInformer.ts",
  dotI: "children/FleetDotI.ts"
} as const
export type Contestant = keyof typeof contestants

/**
 * Runs one contestant on a fresh, seeded server and times it.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Fleet from "./Fleet.ts"
 * const kubefx = Effect.runPromise(Fleet.run("kubefx", { objects: 1000, concurrency: 16 }))
 */
export const run = (contestant: Contestant, options: { readonly objects: number; readonly concurrency: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const bench = yield* BenchServer.make
    yield* Effect.promise(() => BenchServer.seed(bench, options.objects))
    const input: Input = {
      url: bench.server.url,
      token: bench.server.token,
      kubeconfigPath: bench.kubeconfigPath,
      ...options
    }
    const child = yield* Child.spawn(new URL(contestants[contestant], import.meta.url), input)
    const start = yield* child.started
    const serverCpu = process.cpuUsage()
    const halfDone = yield* bench.awaitReady(Math.ceil(options.objects / 2)).pipe(
      Effect.andThen(Effect.sync(() => performance.now())),
      Effect.forkScoped
    )
    // A contestant that dies ends the wait; one that stalls ends it at the deadline.
    yield* Effect.raceFirst(
      bench.awaitReady(options.objects),
      Effect.flatMap(child.result, () => Effect.fail(new Error(`${contestant} stopped before the fleet was ready`)))
    ).pipe(
      Effect.timeoutOrElse({
        duration: Duration.seconds(60 + options.objects / 50),
        orElse: () => Effect.fail(new Error(`${contestant}: ${bench.readyCount()} of ${options.objects} ready at the deadline`))
      })
    )
    const doneAt = performance.now()
    const seconds = (doneAt - start) / 1000
    const secondHalfSeconds = (doneAt - (yield* Fiber.join(halfDone))) / 1000
    const serverUsage = process.cpuUsage(serverCpu)
    const serverCpuSeconds = (serverUsage.user + serverUsage.system) / 1e6
    const report = (yield* child.stop) as Report
    return { seconds, secondHalfSeconds, serverCpuSeconds, ...report } satisfies Result
  }))
