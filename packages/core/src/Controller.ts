/**
 * A controller turns key events into serial, retried, rescheduled reconciles:
 * a work queue, `concurrency` workers, the retry policy stepped per failure streak, per-key timers
 * that an event supersedes, an error handler, periodic resync, health with a degraded state and a
 * rollback hook, and a gate that holds reconciles while a controller it depends on is degraded.
 *
 * Keys are opaque strings; `@kubefx/kube` maps objects to keys ("namespace/name").
 *
 * @since 0.1.0
 */
import {
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  Latch,
  MutableRef,
  Option,
  PubSub,
  Ref,
  References,
  Schedule,
  Scope,
  Semaphore,
  Stream,
  Tracer
} from "effect"
import * as EngineMetrics from "./EngineMetrics.ts"
import type * as ErrorAction from "./ErrorAction.ts"
import * as Failure from "./Failure.ts"
import * as Health from "./Health.ts"
import * as KeyState from "./KeyState.ts"
import type * as Outcome from "./Outcome.ts"
import * as ReconcileError from "./ReconcileError.ts"
import * as RetryInfo from "./RetryInfo.ts"
import * as RetryPolicy from "./RetryPolicy.ts"
import * as TokenBucket from "./TokenBucket.ts"
import * as Trigger from "./Trigger.ts"
import * as WorkQueue from "./WorkQueue.ts"

/** What a source tells a controller: reconcile a key, or forget everything about it (it is gone). */
export type Event =
  | { readonly _tag: "Enqueue"; readonly key: string; readonly trigger: Trigger.Trigger }
  | { readonly _tag: "Forget"; readonly key: string }

/**
 * Reconcile `key` because of `trigger`.
 *
 * @example
 * import { Stream } from "effect"
 * import { Controller, Trigger } from "@kubefx/core"
 * const source = Stream.make(Controller.enqueue("default/web"), Controller.enqueue("default/db", Trigger.resync))
 */
export const enqueue = (key: string, trigger: Trigger.Trigger = Trigger.event()): Event => ({
  _tag: "Enqueue",
  key,
  trigger
})

/**
 * Drop the key's retry state and pending timer (R17: the object was deleted).
 *
 * @example
 * import { Controller } from "@kubefx/core"
 * Controller.forget("default/web")
 */
export const forget = (key: string): Event => ({ _tag: "Forget", key })

/** A failed run as the error handler and the retry policy see it. */
export type RunFailure<E> = Failure.Failure<E | ReconcileError.Timeout>

export interface Options<E, R, S = never> {
  /** Names the controller in logs, metrics and health. */
  readonly name: string
  readonly reconcile: (key: string) => Effect.Effect<Outcome.Outcome, E, R>
  /**
   * Events to consume for as long as the controller runs. Several sources are each read by a fiber
   * of their own straight into the queue, with no merged stream between them and the queue.
   */
  readonly source?: Stream.Stream<Event, never, R> | ReadonlyArray<Stream.Stream<Event, never, R>> | undefined
  /** Keys reconciled in parallel; default 1. */
  readonly concurrency?: number | undefined
  /** Default `RetryPolicy.default`. Its schedule's input is the failure. */
  readonly retryPolicy?: RetryPolicy.RetryPolicy<RunFailure<E>> | undefined
  /** A global token bucket every retry also waits for (the longer delay wins). */
  readonly rateLimit?: TokenBucket.Options | undefined
  /** Runs after every failed run (R9); may write status and answer `ErrorAction.noRetry`. */
  readonly onError?:
    | ((key: string, failure: RunFailure<E>, info: RetryInfo.RetryInfo) => Effect.Effect<ErrorAction.ErrorAction, never, R>)
    | undefined
  /** Every period, reconcile every key again (R14). */
  readonly resync?: Duration.Input | undefined
  /** The keys a resync enqueues; default every key the controller has seen and not forgotten. */
  readonly keys?: Effect.Effect<Iterable<string>, never, R> | undefined
  /** Consecutive failures that make the controller degraded; default 5. */
  readonly degradeAfter?: number | undefined
  /**
   * The known-good state of a key, read after each success and handed to `rollback`; with no
   * `rollback` it is never read.
   */
  readonly snapshot?: ((key: string) => Effect.Effect<Option.Option<S>, never, R>) | undefined
  /** Runs when the controller becomes degraded, with the last known-good state of each failing key. */
  readonly rollback?: ((failing: ReadonlyArray<{ readonly key: string; readonly lastGood: S }>) => Effect.Effect<void, never, R>) | undefined
  /** Controllers that must not be degraded for this one to start a reconcile. */
  readonly dependsOn?: ReadonlyArray<Controller> | undefined
  /**
   * Runs when a key's run has to wait for degraded `dependsOn` controllers (named), before it waits:
   * where a controller tells users why the object is not reconciled.
   */
  readonly onHeld?: ((key: string, waitingFor: ReadonlyArray<string>) => Effect.Effect<void, never, R>) | undefined
  /** Interrupts a run after this long and records a transient `ReconcileError.Timeout`. */
  readonly timeout?: Duration.Input | undefined
  /** Start held: events queue up and nothing reconciles until `resume` (a replica that does not lead). */
  readonly held?: boolean | undefined
}

/** How a run ended. */
export type RunResult = KeyState.RunResult

/** One finished run, as published on `reports`: the key's last run, with what it left behind. */
export interface RunReport extends KeyState.LastRun {
  readonly controller: string
  readonly key: string
  /** The timer the run left, if any. */
  readonly next: { readonly at: number; readonly trigger: "retry" | "reschedule" } | undefined
  readonly exhausted: boolean
}

/** What the controller holds for one key. */
export interface KeyStatus {
  readonly key: string
  /** Retries so far in the current failure streak. */
  readonly attempt: number
  readonly exhausted: boolean
  readonly next: { readonly at: number; readonly trigger: "retry" | "reschedule" } | undefined
  readonly last: Omit<RunReport, "controller" | "key" | "next" | "exhausted"> | undefined
  /** When the run in progress was taken from the queue; undefined while none is. */
  readonly runningSince: number | undefined
  /** When the key was queued for its next run; undefined unless it waits in the queue. */
  readonly queuedSince: number | undefined
}

export interface Inspection {
  readonly name: string
  readonly status: Health.Status
  readonly health: Health.Health
  readonly concurrency: number
  readonly queueDepth: number
  readonly workersBusy: number
  /** Held by `hold`: not reconciling until `resume`. */
  readonly held: boolean
  /** Keys given up by `release` and not admitted again. */
  readonly released: number
  readonly dependsOn: ReadonlyArray<{ readonly name: string; readonly degraded: boolean }>
  readonly keys: ReadonlyArray<KeyStatus>
}

export interface Controller {
  readonly name: string
  /** Reconcile the key (an event: supersedes its pending retry or reschedule). */
  readonly enqueue: (key: string, trigger?: Trigger.Trigger) => Effect.Effect<void>
  /** Drops the key's state and timer. */
  readonly forget: (key: string) => Effect.Effect<void>
  readonly health: Effect.Effect<Health.Health>
  readonly status: Effect.Effect<Health.Status>
  readonly isDegraded: () => boolean
  /** Waits until the controller is not degraded. */
  readonly awaitHealthy: Effect.Effect<void>
  /** The state of one key, if the controller holds any. */
  readonly keyStatus: (key: string) => Effect.Effect<Option.Option<KeyStatus>>
  /** Everything the dashboard shows. */
  readonly inspect: Effect.Effect<Inspection>
  /** Every finished run, from the moment of subscription (slow subscribers lose the oldest). */
  readonly reports: Stream.Stream<RunReport>
  /** Waits until nothing is queued or running (pending timers aside). */
  readonly awaitIdle: Effect.Effect<void>
  /**
   * Stops starting reconciles; events keep queueing. Running reconciles may finish for
   * `drainTimeout` (default: not at all); the rest are interrupted and their keys queued again.
   * Completes once nothing runs.
   */
  readonly hold: (options?: { readonly drainTimeout?: Duration.Input | undefined }) => Effect.Effect<void>
  /** Reconciles again after `hold`, or after starting `held`. */
  readonly resume: Effect.Effect<void>
  readonly isHeld: () => boolean
  /**
   * Gives the key up (a sharded replica handing it to another): no run of it starts here until
   * `admit`, events for it are ignored, its pending retry or reschedule and its retry state are
   * dropped. A running reconcile may finish for `drainTimeout` (default: as long as it takes); then
   * it is interrupted. Completes once the key runs nowhere in this controller.
   */
  readonly release: (key: string, options?: { readonly drainTimeout?: Duration.Input | undefined }) => Effect.Effect<void>
  /** Takes a released key back: events reconcile it again (admitting does not enqueue it). */
  readonly admit: (key: string) => Effect.Effect<void>
  /** Whether the key is released. */
  readonly isReleased: (key: string) => boolean
  /**
   * Stops taking events. With `drainTimeout`, queued and running reconciles may finish for that
   * long; whatever is left is interrupted.
   */
  readonly shutdown: (options?: { readonly drainTimeout?: Duration.Input | undefined }) => Effect.Effect<void>
}

const messageLimit = 1024

/** What a running controller is made of; every piece of state is in the queue's table or a Ref. */
interface Engine<E, R, S> {
  readonly options: Options<E, R, S>
  readonly name: string
  readonly concurrency: number
  readonly policy: RetryPolicy.RetryPolicy<RunFailure<E>>
  readonly dependsOn: ReadonlyArray<Controller>
  readonly timeout: Duration.Duration | undefined
  /** `options.snapshot` when a `rollback` will read what it keeps. */
  readonly snapshot: Options<E, R, S>["snapshot"]
  readonly clock: Clock.Clock
  /** `References.TracerEnabled` where the controller was made: whether runs are spans. */
  readonly tracing: boolean
  readonly scope: Scope.Scope
  readonly queue: WorkQueue.WorkQueue<S>
  readonly bucket: TokenBucket.TokenBucket | undefined
  readonly reports: PubSub.PubSub<RunReport>
  /** Streams reading `reports`: with none, a finished run builds no report. */
  readonly subscribers: Ref.Ref<number>
  readonly health: Ref.Ref<Health.Health>
  /** Open while healthy. */
  readonly healthy: Latch.Latch
  /** Open unless held. */
  readonly gate: Latch.Latch
  readonly held: Ref.Ref<boolean>
  readonly started: Ref.Ref<boolean>
  readonly waitingOnDependencies: Ref.Ref<number>
  readonly reconcileTime: EngineMetrics.Recorder
  /** Keys given up by `release`: nothing of theirs runs or queues here. */
  readonly released: Set<string>
  /** Released keys whose run was still going, with what their release waits on. */
  readonly releasing: Map<string, Deferred.Deferred<void>>
}

/**
 * Starts a controller in the current scope; closing the scope stops it.
 *
 * @example
 * import { Effect, Stream } from "effect"
 * import { Controller, Outcome, RetryPolicy } from "@kubefx/core"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const controller = yield* Controller.make({
 *     name: "greeter",
 *     reconcile: (key) => Effect.log(`hello ${key}`).pipe(Effect.as(Outcome.requeueAfter("1 minute"))),
 *     source: Stream.make(Controller.enqueue("default/world")),
 *     retryPolicy: RetryPolicy.gradual,
 *     concurrency: 4
 *   })
 *   yield* controller.awaitIdle
 * }))
 */
export const make = <E, R, S = never>(
  options: Options<E, R, S>
): Effect.Effect<Controller, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    const engine = yield* makeEngine(options)
    const workers = yield* Workers.make(engine)
    const consumers = yield* consume(engine)
    yield* Ref.set(engine.started, true)
    return view(engine, workers, consumers)
  })

const makeEngine = Effect.fnUntraced(function*<E, R, S>(options: Options<E, R, S>) {
  const name = options.name
  const concurrency = Math.max(1, options.concurrency ?? 1)
  const reports = yield* PubSub.sliding<RunReport>(1024)
  const subscribers = yield* Ref.make(0)
  // Keys given up by `release`: nothing of theirs queues here (read as each add runs).
  const released = new Set<string>()
  const queue = yield* WorkQueue.make<S>(name, {
    refuses: (key) => released.size > 0 && released.has(key),
    finished: (key, { exhausted, next, run }) => {
      if (Ref.getUnsafe(subscribers) === 0) return
      PubSub.publishUnsafe(reports, { controller: name, key, ...run, next: next && nextTimer(next), exhausted })
    }
  })
  const health = yield* Ref.make(Health.initial)
  const engine: Engine<E, R, S> = {
    options,
    name,
    concurrency,
    policy: options.retryPolicy ?? RetryPolicy.default,
    dependsOn: options.dependsOn ?? [],
    timeout: options.timeout === undefined ? undefined : Duration.fromInputUnsafe(options.timeout),
    // A success with a snapshot to take goes the long way (an effect and a transition more).
    snapshot: options.rollback === undefined ? undefined : options.snapshot,
    clock: yield* Clock.Clock,
    tracing: yield* References.TracerEnabled,
    scope: yield* Scope.Scope,
    queue,
    bucket: options.rateLimit === undefined ? undefined : yield* TokenBucket.make(options.rateLimit),
    reports,
    subscribers,
    health,
    healthy: yield* Latch.make(true),
    gate: yield* Latch.make(options.held !== true),
    held: yield* Ref.make(options.held === true),
    started: yield* Ref.make(false),
    waitingOnDependencies: yield* Ref.make(0),
    reconcileTime: yield* observeMetrics(name, queue.table.counts, {
      concurrency,
      activeWorkers: () => queue.running(),
      degraded: () => Ref.getUnsafe(health).degraded
    }),
    released,
    releasing: new Map()
  }
  return engine
})

const nextTimer = (timer: KeyState.Timer): NonNullable<RunReport["next"]> => ({
  at: timer.at,
  trigger: timer.trigger._tag === "Retry" ? "retry" : "reschedule"
})

/** One run of a key: its reconcile, then what its outcome does to the key and the controller. */
const Run = {
  // The run's own bookkeeping is synchronous (no timer starts with a run), so a run costs the
  // reconcile, its span and its context, and little else. Failures end here: the span records
  // them, the key's state and the health count them, and the worker goes on.
  process: <E, R, S>(engine: Engine<E, R, S>, item: WorkQueue.Item<S>): Effect.Effect<unknown, never, R> =>
    Effect.suspend(() => {
      // Started as it was taken, unless it waited on its dependencies: one clock read fewer per run.
      const [{ state }] = engine.queue.applyTaken(item, {
        _tag: "Start",
        now: engine.dependsOn.length === 0 ? item.takenAt : engine.clock.currentTimeMillisUnsafe(),
        maxAttempts: engine.policy.maxAttempts
      })
      const started = state!.run!.started!
      const settled = Effect.matchCauseEffect(reconcileOnce(engine, item.key), {
        onSuccess: (outcome) => succeeded(engine, item, started.at, outcome),
        onFailure: (cause) =>
          Effect.andThen(
            failed(engine, item.key, Failure.fromCause(cause), started.attempt, settledAt(engine, started.at)),
            Effect.failCause(cause)
          )
      })
      return Effect.exit(traced(engine, settled, item, started.attempt))
    })
}

const reconcileOnce = <E, R, S>(engine: Engine<E, R, S>, key: string): Effect.Effect<Outcome.Outcome, E | ReconcileError.Timeout, R> => {
  // Suspended so that a reconciler throwing before it returns an Effect is a defect, not a crash.
  const run = Effect.suspend(() => engine.options.reconcile(key))
  const timeout = engine.timeout
  return timeout === undefined ? run : Effect.timeoutOrElse(run, {
    duration: timeout,
    orElse: () => Effect.fail(new ReconcileError.Timeout({ after: timeout }))
  })
}

// Every run is a span; it fails with the reconcile's failure, so tracing backends mark the run as
// an error. One context update carries the span, the retry info and the log annotations, for the
// reconcile and for the failure handling after it. With tracing off (`References.TracerEnabled`
// false where the controller was made) a run has no span at all: Effect would still make a no-op
// one, at most of a span's cost, for nothing.
const traced = <E, R, S>(
  engine: Engine<E, R, S>,
  run: Effect.Effect<void, E | ReconcileError.Timeout, R>,
  item: WorkQueue.Item<S>,
  info: RetryInfo.RetryInfo
): Effect.Effect<void, E | ReconcileError.Timeout, R> => {
  const annotated = (span: Tracer.Span | undefined) =>
    Effect.updateContext(run, (current: Context.Context<R>) =>
      Context.add(
        Context.add(span === undefined ? current : Context.add(current, Tracer.ParentSpan, span), RetryInfo.RetryInfo, info),
        References.CurrentLogAnnotations,
        { ...Context.get(current, References.CurrentLogAnnotations), controller: engine.name, key: item.key, attempt: info.attempt }
      ))
  if (!engine.tracing) return annotated(undefined)
  return Effect.useSpan("kubefx.reconcile", {
    attributes: {
      "kubefx.controller": engine.name,
      "kubefx.key": item.key,
      "kubefx.attempt": info.attempt,
      "kubefx.trigger": Trigger.label(Trigger.reason(item.triggers))
    }
  }, annotated)
}

// The end of a run: its time recorded, answered with the time it ended.
const settledAt = <E, R, S>(engine: Engine<E, R, S>, startedAt: number): number => {
  const now = engine.clock.currentTimeMillisUnsafe()
  engine.reconcileTime.record((now - startedAt) / 1000)
  return now
}

const succeeded = <E, R, S>(
  engine: Engine<E, R, S>,
  item: WorkQueue.Item<S>,
  startedAt: number,
  outcome: Outcome.Outcome
): Effect.Effect<void, never, R> => {
  const now = settledAt(engine, startedAt)
  const wasDegraded = Ref.getUnsafe(engine.health).degraded
  const health = Health.succeeded(Ref.getUnsafe(engine.health), now)
  const requeueAfter = outcome._tag === "RequeueAfter" ? outcome.after : undefined
  const input: KeyState.Input<S> = { _tag: "Succeeded", now, requeueAfter }
  if (wasDegraded || engine.snapshot !== undefined) {
    const end = Effect.uninterruptible(Effect.asVoid(engine.queue.apply(item.key, input)))
    return Effect.andThen(Ref.set(engine.health, health), Effect.andThen(afterSuccess(engine, item.key, wasDegraded), end))
  }
  // The common end of a run is synchronous: this runs as the reconcile's success is handled.
  MutableRef.set(engine.health.ref, health)
  const timer = engine.queue.applyTaken(item, input)[1]
  return timer === undefined ? Effect.void : Effect.uninterruptible(timer)
}

const afterSuccess = Effect.fnUntraced(function*<E, R, S>(engine: Engine<E, R, S>, key: string, wasDegraded: boolean) {
  if (wasDegraded) {
    engine.healthy.openUnsafe()
    yield* Effect.logInfo(`controller ${engine.name} recovered`)
  }
  const snapshot = engine.snapshot
  if (snapshot === undefined) return
  const kept = engine.queue.state(key)?.lastGood ?? Option.none()
  const lastGood = yield* snapshot(key).pipe(Effect.catchCause(() => Effect.succeed(kept)))
  yield* engine.queue.apply(key, { _tag: "Snapshot", lastGood })
})

// R9: the error handler runs after every failed run; its answer and the key's state decide the
// retry, stepping the policy only when the rules ask for a new delay.
const failed = Effect.fnUntraced(function*<E, R, S>(
  engine: Engine<E, R, S>,
  key: string,
  failure: RunFailure<E>,
  info: RetryInfo.RetryInfo,
  now: number
) {
  const message = Failure.message(failure)
  const before = Ref.getUnsafe(engine.health)
  const health = yield* Ref.updateAndGet(engine.health, (h) => Health.failed(h, Failure.truncate(message, messageLimit), now, engine.options.degradeAfter ?? 5))
  if (failure._tag === "Defect") yield* Effect.logError(`reconcile of ${key} died`, failure.cause)
  else yield* Effect.logError(`reconcile of ${key} failed: ${message}`)
  if (health.degraded && !before.degraded) yield* enterDegraded(engine, key)
  const onError = engine.options.onError
  const action = onError === undefined ? { retry: true } : yield* onError(key, failure, info).pipe(
    Effect.catchCause((cause) =>
      Effect.logError(`error handler of controller ${engine.name} failed for ${key}`, cause).pipe(Effect.as({ retry: true }))
    )
  )
  const input: KeyState.Input<S> = {
    _tag: "Failed",
    now,
    kind: failure._tag,
    message: Failure.truncate(message, messageLimit),
    retry: action.retry,
    timedOut: failure._tag === "Transient" && failure.error instanceof ReconcileError.Timeout
  }
  yield* Effect.uninterruptible(Effect.flatMap(engine.queue.apply(key, input), ({ commands }) => stepRetry(engine, key, failure, now, commands)))
})

const stepRetry = Effect.fnUntraced(function*<E, R, S>(
  engine: Engine<E, R, S>,
  key: string,
  failure: RunFailure<E>,
  now: number,
  commands: ReadonlyArray<KeyState.Command>
) {
  const command = commands.find((c) => c._tag === "StepRetry")
  if (command === undefined) return
  const stepper = command.stepper ?? (yield* RetryPolicy.start(engine.policy)) as RetryPolicy.Stepper<unknown>
  const delay = yield* stepper(now, failure)
  const wait = Option.isNone(delay) || engine.bucket === undefined ? delay : Option.some(Duration.max(delay.value, yield* engine.bucket.take))
  yield* engine.queue.apply(key, { _tag: "Stepped", stepper, delay: Option.getOrUndefined(wait) })
})

// R12: the rollback hook gets the last known-good state of every key whose last run failed.
const enterDegraded = Effect.fnUntraced(function*<E, R, S>(engine: Engine<E, R, S>, failingKey: string) {
  engine.healthy.closeUnsafe()
  yield* Effect.logError(`controller ${engine.name} is degraded after ${Ref.getUnsafe(engine.health).consecutiveFailures} consecutive failures`)
  const rollback = engine.options.rollback
  if (rollback === undefined) return
  const failing: Array<{ key: string; lastGood: S }> = []
  for (const [key, state] of engine.queue.states()) {
    if ((key === failingKey || KeyState.lastFailed(state)) && Option.isSome(state.lastGood)) {
      failing.push({ key, lastGood: state.lastGood.value })
    }
  }
  yield* rollback(failing).pipe(
    Effect.catchCause((cause) => Effect.logError(`rollback of controller ${engine.name} failed`, cause)),
    Effect.forkIn(engine.scope)
  )
})

// R12: a run starts (its clock, its attempt) only once every dependency is healthy.
const awaitDependencies = <E, R, S>(engine: Engine<E, R, S>, key: string): Effect.Effect<void, never, R> =>
  Effect.suspend(() => {
    const degraded = engine.dependsOn.filter((dependency) => dependency.isDegraded()).map((dependency) => dependency.name)
    if (degraded.length === 0) return Effect.void
    const onHeld = engine.options.onHeld
    const tell = onHeld === undefined
      ? Effect.void
      : onHeld(key, degraded).pipe(Effect.catchCause((cause) => Effect.logWarning(`onHeld failed for ${key}`, cause)))
    return Effect.andThen(
      Ref.update(engine.waitingOnDependencies, (n) => n + 1),
      Effect.andThen(tell, Effect.forEach(engine.dependsOn, (dependency) => dependency.awaitHealthy, { discard: true }))
    ).pipe(Effect.ensuring(Ref.update(engine.waitingOnDependencies, (n) => n - 1)))
  })

/** The worker fibers: `concurrency` loops taking keys, replaced as a set by `hold`, one by one by `cut`. */
const Workers = {
  make: Effect.fnUntraced(function*<E, R, S>(engine: Engine<E, R, S>) {
    const { gate, held, queue, released } = engine
    const gated = (item: WorkQueue.Item<S>): Effect.Effect<unknown, never, R> =>
      engine.dependsOn.length === 0
        ? Run.process(engine, item)
        : Effect.andThen(awaitDependencies(engine, item.key), Effect.suspend(() => Run.process(engine, item)))
    // The key each worker is running, so that `cut` finds the one fiber to interrupt.
    const current: Array<string | undefined> = Array.from({ length: engine.concurrency })
    // An interrupted run's key is queued again; then a release waiting on the key is told.
    const ended = (index: number, item: WorkQueue.Item<S>, exit: Exit.Exit<unknown>) =>
      Effect.sync(() => {
        if (Exit.hasInterrupts(exit)) queue.requeue(item)
        current[index] = undefined
        const waiting = engine.releasing.get(item.key)
        if (waiting !== undefined) {
          engine.releasing.delete(item.key)
          Deferred.doneUnsafe(waiting, Exit.void)
        }
      })
    // A released key taken (queued again by an interrupted run) leaves without running.
    const skip = (key: string) => Effect.andThen(queue.remove(key), queue.done(key))
    // Only the wait is interruptible; taking a key and handing it on are one uninterruptible step,
    // so an interrupted worker never loses a key: it is either still queued or put back by
    // `requeue`. (Interrupted after a take inside an interruptible region, as at a scheduler
    // yield, the key would stay running, or its entry queued without a signal, for ever.)
    const worker = (index: number) => {
      const next = Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(queue.ready), () => {
          const item = queue.takeUnsafe()
          if (item === undefined) return Effect.void
          if (Ref.getUnsafe(held)) return Effect.sync(() => queue.requeue(item))
          if (released.size > 0 && released.has(item.key)) return skip(item.key)
          current[index] = item.key
          return Effect.onExit(restore(gated(item)), (exit) => ended(index, item, exit))
        })
      )
      // The gate is open unless held: waiting on it only when it is closed saves a suspension per run.
      const gatedNext = Effect.andThen(gate.await, next)
      return Effect.forever(Effect.suspend(() => gate.isOpen() ? next : gatedNext))
    }
    // Workers restarted by `hold` or `cut` run with the context the controller was made in.
    const context = yield* Effect.context<R>()
    const fork = (index: number) => Effect.forkIn(Effect.provideContext(worker(index), context), engine.scope)
    const fibers: Array<Fiber.Fiber<unknown>> = []
    const restarting = yield* Semaphore.make(1)
    const start = Effect.forEach(current, (_, index) => Effect.map(fork(index), (fiber) => (fibers[index] = fiber)), { discard: true })
    yield* start
    // One replacement at a time, so two overlapping holds never leave two sets of workers.
    const replace = restarting.withPermits(1)(Effect.suspend(() =>
      !Ref.getUnsafe(held) || queue.running() === 0 ? Effect.void : Effect.andThen(Fiber.interruptAll(fibers), start)
    ))
    // Interrupts the run of `key`, if a worker still runs it, and puts a fresh worker in its place.
    const cut = (key: string) =>
      restarting.withPermits(1)(Effect.suspend(() => {
        const index = current.indexOf(key)
        return index < 0 ? Effect.void : Effect.andThen(
          Fiber.interrupt(fibers[index]!),
          Effect.map(fork(index), (fiber) => (fibers[index] = fiber))
        )
      }))
    const stop = restarting.withPermits(1)(Effect.suspend(() => Fiber.interruptAll(fibers)))
    return { replace, cut, stop }
  })
}

type Workers = Effect.Success<ReturnType<typeof Workers.make>>

// The source stream and the periodic resync, forked for as long as the controller's scope.
const consume = Effect.fnUntraced(function*<E, R, S>(engine: Engine<E, R, S>) {
  const { options, queue, clock } = engine
  const fibers: Array<Fiber.Fiber<unknown>> = []
  const sources: ReadonlyArray<Stream.Stream<Event, never, R>> = options.source === undefined
    ? []
    : Stream.isStream(options.source) ? [options.source] : options.source
  const handle = (event: Event) => event._tag === "Enqueue" ? queue.add(event.key, event.trigger) : queue.remove(event.key)
  for (const source of sources) {
    fibers.push(yield* Effect.forkIn(Stream.runForEach(source, handle), engine.scope))
  }
  if (options.resync === undefined) return fibers
  const period = Duration.fromInputUnsafe(options.resync)
  const periodMillis = Duration.toMillis(period)
  const known = options.keys ?? Effect.sync(() =>
    Array.from(queue.states()).filter(([, state]) => !state.forgotten).map(([key]) => key))
  // R14: every key again each period; one left alone for a whole period starts its retries afresh.
  const once = Effect.flatMap(known, (keys) =>
    Effect.forEach(keys, (key) =>
      engine.released.has(key)
        ? Effect.void
        : queue.apply(key, { _tag: "Resync", now: clock.currentTimeMillisUnsafe(), periodMillis }), { discard: true }))
  fibers.push(yield* Effect.forkIn(Effect.repeat(Effect.delay(once, period), Schedule.forever), engine.scope))
  return fibers
})

const keyStatus = <S>(key: string, state: KeyState.KeyState<S>): KeyStatus => ({
  key,
  attempt: state.attempt,
  exhausted: state.exhausted,
  next: state.timer === undefined ? undefined : nextTimer(state.timer),
  last: state.last,
  runningSince: state.run?.takenAt,
  queuedSince: state.phase === "Queued" ? state.queuedAt : undefined
})

const view = <E, R, S>(
  engine: Engine<E, R, S>,
  workers: Workers,
  consumers: ReadonlyArray<Fiber.Fiber<unknown>>
): Controller => {
  const { queue, name } = engine
  const currentStatus = () =>
    Health.status(Ref.getUnsafe(engine.health), {
      started: Ref.getUnsafe(engine.started),
      held: Ref.getUnsafe(engine.held) || Ref.getUnsafe(engine.waitingOnDependencies) > 0
    })
  const known = (key: string) => {
    const state = queue.state(key)
    return state === undefined || !KeyState.isKnown(state) ? Option.none() : Option.some(keyStatus(key, state))
  }
  const hold = (options?: { readonly drainTimeout?: Duration.Input | undefined }) =>
    Effect.gen(function*() {
      yield* Ref.set(engine.held, true)
      engine.gate.closeUnsafe()
      // Only runs past their dependency gate may finish; keys still waiting go back at once.
      if (options?.drainTimeout !== undefined && queue.table.started > 0) {
        yield* Effect.timeoutOption(queue.awaitNoneStarted, options.drainTimeout)
      }
      // Replacing the workers interrupts what still runs.
      yield* workers.replace
    })
  const release = (key: string, options?: { readonly drainTimeout?: Duration.Input | undefined }) =>
    Effect.gen(function*() {
      engine.released.add(key)
      const running = queue.state(key)?.phase === "Running"
      let ended = engine.releasing.get(key)
      if (running && ended === undefined) {
        ended = Deferred.makeUnsafe<void>()
        engine.releasing.set(key, ended)
      }
      // R17's forget: the queued run, the timer and the retry state go; a running run leaves nothing.
      yield* queue.remove(key)
      if (ended === undefined) return
      if (options?.drainTimeout === undefined) return yield* Deferred.await(ended)
      const finished = yield* Effect.timeoutOption(Deferred.await(ended), options.drainTimeout)
      if (Option.isSome(finished)) return
      yield* workers.cut(key)
      yield* Deferred.await(ended)
    })
  const shutdown = (options?: { readonly drainTimeout?: Duration.Input | undefined }) =>
    Effect.gen(function*() {
      if (options?.drainTimeout !== undefined) yield* Effect.timeoutOption(queue.shutdown("drain"), options.drainTimeout)
      yield* queue.shutdown("interrupt")
      yield* workers.stop
      yield* Fiber.interruptAll(consumers)
      yield* Ref.set(engine.started, false)
    })
  return {
    name,
    // The queue refuses a released key as the add runs, not as it is made: an enqueue made before an
    // `admit` it runs after (a drain withdrawn) must not be lost.
    enqueue: (key, trigger = Trigger.event()) => queue.add(key, trigger),
    forget: queue.remove,
    health: Ref.get(engine.health),
    status: Effect.sync(currentStatus),
    isDegraded: () => Ref.getUnsafe(engine.health).degraded,
    awaitHealthy: engine.healthy.await,
    keyStatus: (key) => Effect.sync(() => known(key)),
    inspect: Effect.sync(() => ({
      name,
      status: currentStatus(),
      health: Ref.getUnsafe(engine.health),
      concurrency: engine.concurrency,
      queueDepth: queue.depth(),
      workersBusy: queue.running(),
      held: Ref.getUnsafe(engine.held),
      released: engine.released.size,
      dependsOn: engine.dependsOn.map((dependency) => ({ name: dependency.name, degraded: dependency.isDegraded() })),
      keys: Array.from(queue.states()).flatMap(([key, state]) => KeyState.isKnown(state) ? [keyStatus(key, state)] : [])
    })),
    reports: Stream.unwrap(Effect.as(
      Effect.acquireRelease(Ref.update(engine.subscribers, (n) => n + 1), () => Ref.update(engine.subscribers, (n) => n - 1)),
      Stream.fromPubSub(engine.reports)
    )),
    awaitIdle: queue.awaitIdle,
    hold,
    resume: Effect.andThen(Ref.set(engine.held, false), Effect.sync(() => engine.gate.openUnsafe())),
    isHeld: () => Ref.getUnsafe(engine.held),
    release,
    admit: (key) => Effect.sync(() => engine.released.delete(key)),
    isReleased: (key) => engine.released.has(key),
    shutdown
  }
}

const observeMetrics = (controller: string, counts: KeyState.Counts, read: {
  readonly concurrency: number
  readonly activeWorkers: () => number
  readonly degraded: () => boolean
}) =>
  Effect.gen(function*() {
    const attributes = { controller }
    const total = (result: string, get: () => number) =>
      EngineMetrics.observeCounter(EngineMetrics.reconcileTotal, { controller, result }, get)
    yield* total("success", () => counts.success)
    yield* total("error", () => counts.error)
    yield* total("requeue_after", () => counts.requeueAfter)
    yield* EngineMetrics.observeCounter(EngineMetrics.reconcileErrors, attributes, () => counts.error)
    yield* EngineMetrics.observeCounter(EngineMetrics.terminalReconcileErrors, attributes, () => counts.terminal)
    yield* EngineMetrics.observeCounter(EngineMetrics.reconcilePanics, attributes, () => counts.panics)
    yield* EngineMetrics.observeCounter(EngineMetrics.reconcileTimeouts, attributes, () => counts.timeouts)
    yield* EngineMetrics.observeCounter(EngineMetrics.retries, { name: controller }, () => counts.retries)
    for (const trigger of Object.keys(counts.triggers) as Array<keyof KeyState.Counts["triggers"]>) {
      yield* EngineMetrics.observeCounter(EngineMetrics.triggers, { controller, trigger }, () => counts.triggers[trigger])
    }
    yield* EngineMetrics.observeGauge(EngineMetrics.activeWorkers, attributes, read.activeWorkers)
    yield* EngineMetrics.observeGauge(EngineMetrics.maxConcurrentReconciles, attributes, () => read.concurrency)
    yield* EngineMetrics.observeGauge(EngineMetrics.degraded, attributes, () => read.degraded() ? 1 : 0)
    return yield* EngineMetrics.observeHistogram(EngineMetrics.reconcileTime, EngineMetrics.reconcileBuckets, attributes)
  })
