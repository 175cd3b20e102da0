/**
 * The sharding scenario: a sharded operator (`children/Sharded.ts`) run as N replicas, each a child
 * process with one controller of Widgets at a fixed concurrency, whose reconciles are I/O-bound: each
 * waits 50 ms on a simulated external call (an `Effect.sleep`, not a request) and then states
 * `Ready`. One replica then reconciles at most concurrency / 50 ms Widgets per second, and N
 * replicas should reconcile N times as many.
 *
 * - throughput: the Widgets are created, then the replicas start; each holds its member Lease, the
 *   replica elected to run the sharder labels each Widget with its owner, and every reconcile
 *   waits at a gate. The clock starts when every Widget carries the owner the ring names over all
 *   the replicas (nothing left to move), each replica caches its share, and the harness says `Go`
 *   to each; it stops at the N-th Widget Ready.
 * - handover: replicas converged on the Widgets, then one that does not run the sharder is
 *   SIGKILLed; the clock runs from the kill until every Widget it owned is labelled with a
 *   survivor, and until each is Ready again from a survivor's reconcile (the Ready message names
 *   the replica). Its keys can move only once its member Lease expired, seen by the sharder's
 *   polls: about the Lease duration plus one poll period.
 *
 * The handover runs with short timings: 3 s member and sharder Leases, 2 s renew deadline, 200 ms
 * retry period (the sharder polls the member Leases that often). With 2 s Leases and a 1 s renew
 * deadline, a replica on this busy 2-core machine lost its Lease before the kill in 5 of 9 tries
 *. The throughput runs keep the 200 ms polls but 10 s Leases and a 5 s
 * renew deadline: four replicas starting together, each listing every Widget, delayed renewals past
 * 1 s; the Leases play no part in the timed reconciles. Drains time out after 1 s in both.
 */
import { Shards } from "@kubefx/core"
import { Builtins, Handover, Membership } from "@kubefx/kube"
import { Data, Deferred, Duration, Effect, Schedule } from "effect"
import * as BenchServer from "./BenchServer.ts"
import * as Child from "./Child.ts"
import * as Workload from "./Workload.ts"

/** The operator's name: its Leases are `<name>-sharder` and `<name>-member-<identity>`. */
export const operatorName = "widgets-sharded"

/** Lease timings, in milliseconds. */
export interface Timings {
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
  readonly drainTimeoutMs: number
}

/** What the handover's replicas run with: how soon a killed replica's keys move. */
export const handoverTimings: Timings = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 200, drainTimeoutMs: 1000 }

/**
 * What the handover's replicas run with at `--smoke`, which `npm test` runs beside other tests on
 * busy cores: a stall of more than 2 s would cost a replica its Lease there, and the smoke checks
 * no figure.
 */
export const smokeHandoverTimings: Timings = { leaseDurationMs: 5000, renewDeadlineMs: 4000, retryPeriodMs: 200, drainTimeoutMs: 1000 }

/** What the throughput's replicas run with. */
export const throughputTimings: Timings = { leaseDurationMs: 10_000, renewDeadlineMs: 5000, retryPeriodMs: 200, drainTimeoutMs: 1000 }

/** What each reconcile waits on its simulated external call. */
export const ioWaitMs = 50

/** What a replica gets. */
export interface Input extends Timings {
  readonly kubeconfigPath: string
  readonly operatorName: string
  /** Its shard identity, `replica-<i>`. */
  readonly identity: string
  /** The message of the Ready condition its reconciles state: names the replica. */
  readonly readyMessage: string
  readonly concurrency: number
  readonly ioWaitMs: number
}

/** What a replica reports when stopped. */
export interface Report {
  readonly identity: string
  /** The Widgets its controller cached when told to go: its share. */
  readonly keysAtGo: number
  /** The Widgets it cached when stopped. */
  readonly keys: number
  readonly reconciles: number
  /** From `Go` to the end of its last reconcile. */
  readonly busySeconds: number
  /** CPU seconds from `Go` until stopped. */
  readonly cpuSeconds: number
  readonly peakRssMb: number
}

/** One throughput run. */
export interface Run {
  readonly replicas: number
  readonly objects: number
  /** From every replica started (member Lease held) to every Widget labelled with its owner and cached by it. */
  readonly readySeconds: number
  /** From `Go` to the N-th Widget Ready. */
  readonly seconds: number
  readonly objectsPerSecond: number
  /** CPU seconds of the API server's process (the harness) meanwhile. */
  readonly serverCpuSeconds: number
  /** The replicas' and the server's CPU seconds over `seconds`: cores busy. */
  readonly cores: number
  readonly perReplica: ReadonlyArray<Report>
}

/** One handover run. */
export interface HandoverRun {
  readonly replicas: number
  readonly objects: number
  /** The Widgets the killed replica owned. */
  readonly killedKeys: number
  /** From the SIGKILL to every one of them labelled with a survivor. */
  readonly relabelSeconds: number
  /** From the SIGKILL to every one of them Ready from a survivor's reconcile. */
  readonly seconds: number
}

/**
 * The Ready message of a replica's reconciles.
 *
 * @example
 * import * as Sharding from "./Sharding.ts"
 * Sharding.readyMessage("replica-1") // "reconciled by replica-1"
 */
export const readyMessage = (identity: string): string => `reconciled by ${identity}`

/** Where a Widget stands on the server. */
interface Placed {
  readonly owner: string | undefined
  /** A drain asked or acknowledged. */
  readonly moving: boolean
  /** `Ready=True` for its current generation. */
  readonly ready: boolean
  /** The replica whose reconcile stated Ready. */
  readonly by: string | undefined
}

interface Tracker {
  readonly get: (name: string) => Placed | undefined
  /** The holder of a Lease in the Widgets' namespace. */
  readonly holder: (lease: string) => string | undefined
  /** Completes with the moment (`performance.now()`) `done` first held for every named Widget. */
  readonly awaitAll: (names: ReadonlyArray<string>, done: (placed: Placed, name: string) => boolean) => Effect.Effect<number>
}

// A Widget or a Lease, as the store's events carry them.
interface Stored {
  readonly kind?: string | undefined
  readonly metadata?: {
    readonly name?: string | undefined
    readonly labels?: Readonly<Record<string, string>> | undefined
    readonly annotations?: Readonly<Record<string, string>> | undefined
  } | undefined
  readonly spec?: { readonly holderIdentity?: string | undefined } | undefined
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly message?: string | undefined }> | undefined } | undefined
}

const placedOf = (widget: Stored): Placed => {
  const annotations = widget.metadata?.annotations ?? {}
  const ready = widget.status?.conditions?.find((condition) => condition.type === "Ready")
  const prefix = readyMessage("")
  return {
    owner: widget.metadata?.labels?.[Handover.shardLabel],
    moving: annotations[Handover.drainAnnotation] !== undefined || annotations[Handover.drainedAnnotation] !== undefined,
    ready: Workload.isReady(widget as Workload.WidgetLike),
    by: ready?.message?.startsWith(prefix) === true ? ready.message.slice(prefix.length) : undefined
  }
}

// The Widgets and Leases as the server's store holds them, kept from its events (no requests).
const track = (bench: BenchServer.BenchServer) =>
  Effect.gen(function*() {
    const widgets = new Map<string, Placed>()
    const leases = new Map<string, string>()
    const waiters = new Set<{ readonly pending: Set<string>; readonly done: (placed: Placed, name: string) => boolean; readonly at: Deferred.Deferred<number> }>()
    const unsubscribe = bench.server.store.subscribe((event) => {
      const object = event.object as Stored
      const name = object.metadata?.name ?? ""
      if (object.kind === "Lease") {
        if (event.type === "DELETED") leases.delete(name)
        else leases.set(name, object.spec?.holderIdentity ?? "")
        return
      }
      if (object.kind !== Workload.Widget.kind) return
      if (event.type === "DELETED") return void widgets.delete(name)
      const placed = placedOf(object)
      widgets.set(name, placed)
      for (const waiter of waiters) {
        if (!waiter.pending.has(name) || !waiter.done(placed, name)) continue
        waiter.pending.delete(name)
        if (waiter.pending.size > 0) continue
        waiters.delete(waiter)
        Deferred.doneUnsafe(waiter.at, Effect.succeed(performance.now()))
      }
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    const tracker: Tracker = {
      get: (name) => widgets.get(name),
      holder: (lease) => leases.get(lease),
      awaitAll: (names, done) =>
        Effect.suspend(() => {
          const pending = new Set(names.filter((name) => {
            const placed = widgets.get(name)
            return placed === undefined || !done(placed, name)
          }))
          if (pending.size === 0) return Effect.succeed(performance.now())
          const at = Deferred.makeUnsafe<number>()
          waiters.add({ pending, done, at })
          return Deferred.await(at)
        })
    }
    return tracker
  })

// Fails as soon as one of the children exits; never succeeds while they run.
const watchdog = (children: ReadonlyArray<Child.Running>) =>
  Effect.flatMap(
    Effect.forEach(children, (child) => child.result, { concurrency: "unbounded", discard: true }),
    () => Effect.fail(new Error("a replica stopped before the Widgets were ready"))
  )

// `effect`, failed as soon as one of `children` exits, or after `seconds` with `what` as the message.
const guarded = (children: ReadonlyArray<Child.Running>, seconds: number, what: () => string) =>
<A>(effect: Effect.Effect<A, Error>): Effect.Effect<A, Error> =>
  effect.pipe(
    Effect.raceFirst(watchdog(children)),
    Effect.timeoutOrElse({ duration: Duration.seconds(seconds), orElse: () => Effect.fail(new Error(what())) })
  )

// Completes once `condition` holds, looked at every 10 ms.
const holds = (condition: () => boolean): Effect.Effect<void> =>
  Effect.asVoid(Effect.repeat(Effect.sync(condition), { schedule: Schedule.spaced("10 millis"), until: (ok) => ok }))

// Every Widget Ready, once the replicas were told to go.
const allReady = (bench: BenchServer.BenchServer, children: ReadonlyArray<Child.Running>, objects: number, scenario: string) =>
  bench.awaitReady(objects).pipe(
    guarded(children, 60 + objects / 50, () => `${scenario}: ${bench.readyCount()} of ${objects} ready at the deadline`)
  )

const leases = `/apis/coordination.k8s.io/v1/namespaces/${Workload.namespace}/leases`

/**
 * Seeds `objects` Widgets on a fresh server, then starts `replicas` replicas and waits until the
 * sharder labelled each Widget with the owner the ring names over all of them, and each replica
 * caches its share; every reconcile waits at its gate meanwhile. The harness holds the sharder
 * Lease until every replica holds its member Lease (and one poll more), so the sharder assigns each
 * key once: started earlier, it gives the later replicas' keys to the first ones, then moves them. The Widgets exist first: created
 * while the replicas run, their creates (32 in flight) and the sharder's first labels together
 * delayed a replica's Lease renewals past a 1 s renew deadline.
 */
const ready = (options: {
  readonly replicas: number
  readonly objects: number
  readonly concurrency: number
  readonly timings: Timings
  /** Start the replicas one after another (each once the previous one holds its member Lease). */
  readonly stagger?: boolean | undefined
}) =>
  Effect.gen(function*() {
    const bench = yield* BenchServer.make
    const tracker = yield* track(bench)
    yield* Effect.promise(() => BenchServer.seed(bench, options.objects))
    const sharderLease = `${operatorName}-sharder`
    yield* Effect.promise(() =>
      bench.raw.ok("POST", leases, {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: sharderLease, namespace: Workload.namespace },
        spec: {
          holderIdentity: "bench-harness",
          leaseDurationSeconds: 3600,
          acquireTime: Builtins.formatMicroTime(Date.now()),
          renewTime: Builtins.formatMicroTime(Date.now()),
          leaseTransitions: 0
        }
      })
    )
    const identities = Array.from({ length: options.replicas }, (_, i) => `replica-${i + 1}`)
    const children = yield* Effect.forEach(identities, (identity) =>
      Child.spawn(new URL("children/Sharded.ts", import.meta.url), {
        kubeconfigPath: bench.kubeconfigPath,
        operatorName,
        identity,
        readyMessage: readyMessage(identity),
        concurrency: options.concurrency,
        ioWaitMs,
        ...options.timings
      } satisfies Input).pipe(Effect.tap((child) => options.stagger === true ? child.started : Effect.void)))
    yield* Effect.forEach(children, (child) => child.started, { concurrency: "unbounded", discard: true })
    const starting = performance.now()
    const members = identities.map((identity) => Membership.leaseName(operatorName, identity))
    yield* holds(() => members.every((lease) => tracker.holder(lease) !== undefined)).pipe(
      guarded(children, 30, () => "the replicas' member Leases are not all held")
    )
    yield* Effect.sleep(Duration.millis(2 * options.timings.retryPeriodMs))
    yield* Effect.promise(() => bench.raw.ok("DELETE", `${leases}/${sharderLease}`))
    const names = Array.from({ length: options.objects }, (_, i) => Workload.widgetName(i))
    const ring = Shards.ring(identities)
    const owners = new Map(names.map((name) => [name, Shards.owner(ring, `${Workload.namespace}/${name}`)]))
    yield* tracker.awaitAll(names, (placed, name) => placed.owner === owners.get(name) && !placed.moving).pipe(
      guarded(children, 30 + options.objects / 100, () => "the Widgets are not all labelled with their owners")
    )
    // And each replica caches its share (its watch delivered the labels).
    const shares = identities.map((identity) => names.filter((name) => owners.get(name) === identity).length)
    yield* holds(() => children.every((child, i) => child.progress() === shares[i])).pipe(
      guarded(children, 30, () => `the replicas cache ${children.map((child) => String(child.progress())).join(", ")} of ${shares.join(", ")} Widgets`)
    )
    return { bench, tracker, children, identities, names, readySeconds: (performance.now() - starting) / 1000 }
  })

/**
 * Times `replicas` replicas reconciling `objects` Widgets from `Go` to the last Ready.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Sharding from "./Sharding.ts"
 * const run = Effect.runPromise(Sharding.throughput({ replicas: 2, objects: 2000, concurrency: 8 }))
 */
export const throughput = (options: { readonly replicas: number; readonly objects: number; readonly concurrency: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const { bench, children, readySeconds } = yield* ready({ ...options, timings: throughputTimings })
    const start = performance.now()
    const serverCpu = process.cpuUsage()
    yield* Effect.forEach(children, (child) => child.go, { discard: true })
    yield* allReady(bench, children, options.objects, "sharding")
    const seconds = (performance.now() - start) / 1000
    const serverUsage = process.cpuUsage(serverCpu)
    const perReplica = (yield* Effect.forEach(children, (child) => child.stop, { concurrency: "unbounded" })) as ReadonlyArray<Report>
    const serverCpuSeconds = (serverUsage.user + serverUsage.system) / 1e6
    return {
      replicas: options.replicas,
      objects: options.objects,
      readySeconds,
      seconds,
      objectsPerSecond: options.objects / seconds,
      serverCpuSeconds,
      cores: (serverCpuSeconds + perReplica.reduce((sum, replica) => sum + replica.cpuSeconds, 0)) / seconds,
      perReplica
    } satisfies Run
  }))

/** A handover run that failed before the kill (a replica stopped on the way): it is tried again. */
class SetupFailed extends Data.TaggedError("SetupFailed")<{ readonly message: string }> {}

const handoverOnce = (options: { readonly replicas: number; readonly objects: number; readonly concurrency: number; readonly timings: Timings }) =>
  Effect.scoped(Effect.gen(function*() {
    const { children, identities, names, tracker } = yield* Effect.gen(function*() {
      const started = yield* ready({ ...options, stagger: true })
      yield* Effect.forEach(started.children, (child) => child.go, { discard: true })
      yield* allReady(started.bench, started.children, options.objects, "handover")
      return started
    }).pipe(Effect.mapError((error) => new SetupFailed({ message: error.message })))
    const sharder = tracker.holder(`${operatorName}-sharder`)
    const victim = [...identities].reverse().find((identity) => identity !== sharder)!
    const survivors = identities.filter((identity) => identity !== victim)
    const owned = names.filter((name) => tracker.get(name)?.owner === victim)
    const killedAt = performance.now()
    yield* children[identities.indexOf(victim)]!.kill
    const onSurvivor = (placed: Placed) => placed.owner !== undefined && survivors.includes(placed.owner) && !placed.moving
    const [relabelled, reconciled] = yield* Effect.all([
      tracker.awaitAll(owned, onSurvivor),
      tracker.awaitAll(owned, (placed) => onSurvivor(placed) && placed.ready && placed.by === placed.owner)
    ], { concurrency: "unbounded" }).pipe(
      guarded(children.filter((_, i) => identities[i] !== victim), 30 + options.objects / 50, () => `handover: the keys of ${victim} did not all move`)
    )
    yield* Effect.forEach(children.filter((_, i) => identities[i] !== victim), (child) => child.stop, { concurrency: "unbounded", discard: true })
    return {
      replicas: options.replicas,
      objects: options.objects,
      killedKeys: owned.length,
      relabelSeconds: (relabelled - killedAt) / 1000,
      seconds: (reconciled - killedAt) / 1000
    } satisfies HandoverRun
  }))

/**
 * Converges `replicas` replicas (started one after another) on `objects` Widgets, SIGKILLs one
 * that does not run the sharder, and times the handover of its keys. With short Leases, a replica on
 * a busy machine can lose its Lease before the kill: such a run is
 * started again, at most twice, and says so on stderr; a failure after the kill fails it.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Sharding from "./Sharding.ts"
 * const run = Effect.runPromise(Sharding.handover({ replicas: 3, objects: 300, concurrency: 8, timings: Sharding.handoverTimings }))
 */
export const handover = (
  options: { readonly replicas: number; readonly objects: number; readonly concurrency: number; readonly timings: Timings }
): Effect.Effect<HandoverRun, Error> =>
  handoverOnce(options).pipe(
    Effect.tapError((error) =>
      error instanceof SetupFailed
        ? Effect.sync(() => process.stderr.write(`\nbench: handover setup failed (${error.message}); starting it again\n`))
        : Effect.void
    ),
    Effect.retry({ times: 2, while: (error) => error instanceof SetupFailed }),
    Effect.mapError((error) => error instanceof SetupFailed ? new Error(`handover setup failed three times: ${error.message}`) : error)
  )
