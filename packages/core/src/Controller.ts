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
  Duration,
  Effect,
  Exit,
  Fiber,
  Latch,
  Option,
  PubSub,
  References,
  Schedule,
  Scope,
  Semaphore,
  Stream
} from "effect"
import * as EngineMetrics from "./EngineMetrics.ts"
import type * as ErrorAction from "./ErrorAction.ts"
import * as Failure from "./Failure.ts"
import * as Health from "./Health.ts"
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
  /** Events to consume for as long as the controller runs. */
  readonly source?: Stream.Stream<Event, never, R> | undefined
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
  /** Every `period`, enqueue every key `keys` returns (R14). */
  readonly resync?: {
    readonly period: Duration.Input
    readonly keys: Effect.Effect<Iterable<string>, never, R>
  } | undefined
  /** Consecutive failures that make the controller degraded; default 5. */
  readonly degradeAfter?: number | undefined
  /** The known-good state of a key, read after each success and handed to `rollback`. */
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
  /** Run each reconcile, with its error handling, in a `kubefx.reconcile` tracing span. */
  readonly tracing?: boolean | undefined
}

/** How a run ended. */
export type RunResult =
  | { readonly _tag: "Done" }
  | { readonly _tag: "RequeueAfter"; readonly afterMillis: number }
  | {
    readonly _tag: "Transient" | "Permanent" | "Defect"
    readonly message: string
    /** The error handler answered `ErrorAction.noRetry`: no retry until the next event. */
    readonly noRetry?: true
  }
  /** Stopped by `hold` or `shutdown`; the key was queued again. */
  | { readonly _tag: "Interrupted" }

/** One finished run, as published on `reports`. */
export interface RunReport {
  readonly controller: string
  readonly key: string
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  readonly attempt: number
  readonly isLastAttempt: boolean
  readonly startedAt: number
  readonly durationMillis: number
  readonly result: RunResult
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
   * Stops taking events. With `drainTimeout`, queued and running reconciles may finish for that
   * long; whatever is left is interrupted.
   */
  readonly shutdown: (options?: { readonly drainTimeout?: Duration.Input | undefined }) => Effect.Effect<void>
}

interface KeyState<S> {
  attempt: number
  step: RetryPolicy.Stepper<unknown> | undefined
  pendingRetry: Duration.Duration | undefined
  exhausted: boolean
  lastRunAt: number | undefined
  last: KeyStatus["last"]
  lastGood: Option.Option<S>
}

const newKeyState = <S>(): KeyState<S> => ({
  attempt: 0,
  step: undefined,
  pendingRetry: undefined,
  exhausted: false,
  lastRunAt: undefined,
  last: undefined,
  lastGood: Option.none()
})

const resetRetry = <S>(state: KeyState<S>): void => {
  state.attempt = 0
  state.step = undefined
  state.pendingRetry = undefined
  state.exhausted = false
}

const messageLimit = 1024

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
    const name = options.name
    const concurrency = Math.max(1, options.concurrency ?? 1)
    const policy: RetryPolicy.RetryPolicy<RunFailure<E>> = options.retryPolicy ?? RetryPolicy.default
    const degradeAfter = options.degradeAfter ?? 5
    const dependsOn = options.dependsOn ?? []
    const timeout = options.timeout === undefined ? undefined : Duration.fromInputUnsafe(options.timeout)
    const clock = yield* Clock.Clock
    const scope = yield* Scope.Scope

    const queue = yield* WorkQueue.make(name)
    const bucket = options.rateLimit === undefined ? undefined : yield* TokenBucket.make(options.rateLimit)
    const healthy = yield* Latch.make(true)
    const gate = yield* Latch.make(options.held !== true)
    const restarting = yield* Semaphore.make(1)
    const reports = yield* PubSub.sliding<RunReport>(1024)
    const states = new Map<string, KeyState<S>>()
    // Runs past their dependency gate, by key: what `hold` lets finish.
    const runs = new Map<string, { readonly state: KeyState<S>; readonly info: RetryInfo.RetryInfo; readonly startedAt: number }>()
    const quiet = yield* Latch.make(true)
    let health = Health.initial
    let started = false
    let held = options.held === true
    let waitingOnDependencies = 0

    const counts: Counts = {
      success: 0,
      requeueAfter: 0,
      error: 0,
      terminal: 0,
      panics: 0,
      retries: 0,
      triggers: { event: 0, related: 0, retry: 0, reschedule: 0, resync: 0 }
    }
    const reconcileTime = yield* observeMetrics(name, counts, {
      concurrency,
      activeWorkers: () => queue.running(),
      degraded: () => health.degraded
    })

    const stateOf = (key: string): KeyState<S> => {
      let state = states.get(key)
      if (state === undefined) {
        state = newKeyState()
        states.set(key, state)
      }
      return state
    }

    const enterDegraded = Effect.gen(function*() {
      healthy.closeUnsafe()
      yield* Effect.logError(`controller ${name} is degraded after ${health.consecutiveFailures} consecutive failures`)
      const rollback = options.rollback
      if (rollback === undefined) return
      const failing: Array<{ key: string; lastGood: S }> = []
      for (const [key, state] of states) {
        if (isFailure(state.last?.result) && Option.isSome(state.lastGood)) {
          failing.push({ key, lastGood: state.lastGood.value })
        }
      }
      yield* rollback(failing).pipe(
        Effect.catchCause((cause) => Effect.logError(`rollback of controller ${name} failed`, cause)),
        Effect.forkIn(scope)
      )
    })

    const reconcileOnce = (key: string): Effect.Effect<Outcome.Outcome, E | ReconcileError.Timeout, R> => {
      // Suspended so that a reconciler throwing before it returns an Effect is a defect, not a crash.
      const run = Effect.suspend(() => options.reconcile(key))
      return timeout === undefined ? run : Effect.timeoutOrElse(run, {
        duration: timeout,
        orElse: () => Effect.fail(new ReconcileError.Timeout({ after: timeout }))
      })
    }

    // One context update per run carries the retry info and the log annotations, for the
    // reconcile and for the failure handling after it.
    const withRunContext = <A>(run: Effect.Effect<A, never, R>, key: string, info: RetryInfo.RetryInfo) =>
      Effect.updateContext(run, (current: Context.Context<R>) =>
        Context.add(
          Context.add(current, RetryInfo.RetryInfo, info),
          References.CurrentLogAnnotations,
          { ...Context.get(current, References.CurrentLogAnnotations), controller: name, key, attempt: info.attempt }
        ))

    // The span fails with the reconcile's failure, so tracing backends mark the run as an error.
    const traced = (
      run: Effect.Effect<Exit.Exit<Outcome.Outcome, E | ReconcileError.Timeout>, never, R>,
      item: WorkQueue.Item,
      info: RetryInfo.RetryInfo
    ): Effect.Effect<void, never, R> =>
      Effect.asVoid(Effect.exit(Effect.withSpan(Effect.flatten(run), "kubefx.reconcile", {
        attributes: {
          "kubefx.controller": name,
          "kubefx.key": item.key,
          "kubefx.attempt": info.attempt,
          "kubefx.trigger": Trigger.label(item.triggers[0]!)
        }
      })))

    const onFailure = Effect.fnUntraced(function*(
      key: string,
      state: KeyState<S>,
      failure: RunFailure<E>,
      info: RetryInfo.RetryInfo,
      countedAsRetry: boolean,
      now: number
    ) {
      const message = Failure.message(failure)
      const wasDegraded = health.degraded
      health = Health.failed(health, Failure.truncate(message, messageLimit), now, degradeAfter)
      counts.error++
      if (failure._tag === "Defect") {
        counts.panics++
        yield* Effect.logError(`reconcile of ${key} died`, failure.cause)
      } else {
        if (failure._tag === "Permanent") counts.terminal++
        yield* Effect.logError(`reconcile of ${key} failed: ${message}`)
      }
      if (health.degraded && !wasDegraded) yield* enterDegraded

      const action = options.onError === undefined
        ? { retry: true }
        : yield* options.onError(key, failure, info).pipe(
          Effect.catchCause((cause) =>
            Effect.logError(`error handler of controller ${name} failed for ${key}`, cause).pipe(
              Effect.as({ retry: true })
            )
          )
        )
      if (failure._tag === "Permanent" || !action.retry) {
        state.pendingRetry = undefined
        return { delay: undefined, noRetry: failure._tag !== "Permanent" }
      }
      if (state.exhausted) return { delay: undefined, noRetry: false }
      if (!countedAsRetry && state.pendingRetry !== undefined) {
        // R5: an event ran while a retry was pending; the retry resumes at the same attempt.
        return { delay: state.pendingRetry, noRetry: false }
      }
      state.step ??= (yield* RetryPolicy.start(policy)) as RetryPolicy.Stepper<unknown>
      const delay = yield* state.step(now, failure)
      if (Option.isNone(delay)) {
        state.exhausted = true
        state.pendingRetry = undefined
        return { delay: undefined, noRetry: false }
      }
      const wait = bucket === undefined ? delay.value : Duration.max(delay.value, yield* bucket.take)
      state.pendingRetry = wait
      counts.retries++
      return { delay: wait, noRetry: false }
    })

    const process = (item: WorkQueue.Item): Effect.Effect<void, never, R> => {
      const key = item.key
      const state = stateOf(key)
      const countedAsRetry = Trigger.isRetry(item.triggers) && state.pendingRetry !== undefined
      if (countedAsRetry) {
        state.attempt++
        state.pendingRetry = undefined
      }
      const info: RetryInfo.RetryInfo = {
        attempt: state.attempt,
        isLastAttempt: state.exhausted || RetryPolicy.isLastAttempt(policy, state.attempt)
      }
      counts.triggers[Trigger.label(item.triggers[0]!)]++
      const startedAt = clock.currentTimeMillisUnsafe()
      state.lastRunAt = startedAt
      if (runs.size === 0) quiet.closeUnsafe()
      runs.set(key, { state, info, startedAt })
      if (options.tracing !== true) {
        return withRunContext(
          Effect.flatMap(Effect.exit(reconcileOnce(key)), (exit) => settle(item, state, info, countedAsRetry, startedAt, exit)),
          key,
          info
        )
      }
      const run = Effect.flatMap(Effect.exit(reconcileOnce(key)), (exit) =>
        Effect.as(settle(item, state, info, countedAsRetry, startedAt, exit), exit))
      return withRunContext(traced(run, item, info), key, info)
    }

    const settle = (
      item: WorkQueue.Item,
      state: KeyState<S>,
      info: RetryInfo.RetryInfo,
      countedAsRetry: boolean,
      startedAt: number,
      exit: Exit.Exit<Outcome.Outcome, E | ReconcileError.Timeout>
    ): Effect.Effect<void, never, R> => {
      const key = item.key
      const now = clock.currentTimeMillisUnsafe()
      reconcileTime.record((now - startedAt) / 1000)
      const run = { item, state, info, startedAt, now }
      if (Exit.isFailure(exit)) {
        const failure = Failure.fromCause(exit.cause)
        const message = Failure.truncate(Failure.message(failure), messageLimit)
        return Effect.flatMap(
          onFailure(key, state, failure, info, countedAsRetry, now),
          ({ delay, noRetry }) =>
            finish(
              run,
              noRetry ? { _tag: failure._tag, message, noRetry: true } : { _tag: failure._tag, message },
              delay === undefined ? undefined : { after: delay, trigger: Trigger.retry }
            )
        )
      }
      resetRetry(state)
      const wasDegraded = health.degraded
      health = Health.succeeded(health, now)
      let result = doneResult
      let followUp: WorkQueue.FollowUp | undefined
      if (exit.value._tag === "RequeueAfter") {
        counts.requeueAfter++
        result = { _tag: "RequeueAfter", afterMillis: Duration.toMillis(exit.value.after) }
        followUp = { after: exit.value.after, trigger: Trigger.reschedule }
      } else {
        counts.success++
      }
      if (!wasDegraded && options.snapshot === undefined) return finish(run, result, followUp)
      return Effect.andThen(afterSuccess(key, state, wasDegraded), finish(run, result, followUp))
    }

    const afterSuccess = Effect.fnUntraced(function*(key: string, state: KeyState<S>, wasDegraded: boolean) {
      if (wasDegraded) {
        healthy.openUnsafe()
        yield* Effect.logInfo(`controller ${name} recovered`)
      }
      if (options.snapshot !== undefined) {
        state.lastGood = yield* options.snapshot(key).pipe(Effect.catchCause(() => Effect.succeed(state.lastGood)))
      }
    })

    const finish = (
      run: {
        readonly item: WorkQueue.Item
        readonly state: KeyState<S>
        readonly info: RetryInfo.RetryInfo
        readonly startedAt: number
        readonly now: number
      },
      result: RunResult,
      followUp: WorkQueue.FollowUp | undefined
    ): Effect.Effect<void> =>
      // Uninterruptible, so a run that reaches its end is never also requeued as interrupted.
      Effect.uninterruptible(Effect.suspend(() => {
        const { item, state, info, startedAt, now } = run
        endRun(item.key)
        // A key forgotten while it ran keeps no timer.
        const current = states.get(item.key) === state
        const timer = current ? followUp : undefined
        const last = {
          triggers: item.triggers,
          attempt: info.attempt,
          isLastAttempt: info.isLastAttempt,
          startedAt,
          durationMillis: now - startedAt,
          result
        }
        if (current) state.last = last
        const next = timer === undefined
          ? undefined
          : { at: now + Duration.toMillis(timer.after), trigger: timer.trigger._tag === "Retry" ? "retry" as const : "reschedule" as const }
        PubSub.publishUnsafe(reports, { controller: name, key: item.key, ...last, next, exhausted: state.exhausted })
        return queue.done(item.key, timer)
      }))

    const endRun = (key: string) => {
      if (runs.delete(key) && runs.size === 0) quiet.openUnsafe()
    }

    // A run stopped by `hold` (or a worker stopped while it waited on a dependency) is queued again.
    const interrupted = (item: WorkQueue.Item): Effect.Effect<void> =>
      Effect.sync(() => {
        if (!queue.requeue(item)) return
        const run = runs.get(item.key)
        if (run === undefined) return
        endRun(item.key)
        const { state } = run
        PubSub.publishUnsafe(reports, {
          controller: name,
          key: item.key,
          triggers: item.triggers,
          attempt: run.info.attempt,
          isLastAttempt: run.info.isLastAttempt,
          startedAt: run.startedAt,
          durationMillis: clock.currentTimeMillisUnsafe() - run.startedAt,
          result: interruptedResult,
          next: undefined,
          exhausted: state.exhausted
        })
      })

    const awaitDependencies = (key: string): Effect.Effect<void, never, R> =>
      Effect.suspend(() => {
        const degraded = dependsOn.filter((dependency) => dependency.isDegraded()).map((dependency) => dependency.name)
        if (degraded.length === 0) return Effect.void
        waitingOnDependencies++
        const tell = options.onHeld === undefined
          ? Effect.void
          : options.onHeld(key, degraded).pipe(Effect.catchCause((cause) => Effect.logWarning(`onHeld failed for ${key}`, cause)))
        return Effect.andThen(tell, Effect.forEach(dependsOn, (dependency) => dependency.awaitHealthy, { discard: true })).pipe(
          Effect.ensuring(Effect.sync(() => waitingOnDependencies--))
        )
      })

    // A run starts (its clock, its attempt) only once the gate let it through.
    const gated = (item: WorkQueue.Item): Effect.Effect<void, never, R> =>
      dependsOn.length === 0 ? process(item) : Effect.andThen(awaitDependencies(item.key), Effect.suspend(() => process(item)))

    // Taking a key and handing it on are uninterruptible, so an interrupted worker never loses a
    // key: it is either still queued or requeued by `interrupted`.
    const worker = Effect.forever(Effect.andThen(
      gate.await,
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(queue.take), (item) =>
          held
            ? Effect.sync(() => queue.requeue(item))
            : restore(gated(item)).pipe(Effect.onInterrupt(() => interrupted(item)))
        )
      )
    ))

    const forgetKey = (key: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        states.delete(key)
        return queue.remove(key)
      })

    const enqueueKey = (key: string, trigger: Trigger.Trigger = Trigger.event()) => queue.add(key, trigger)

    // Workers restarted by `hold` run with the context the controller was made in.
    const workerWithContext = Effect.provideContext(worker, yield* Effect.context<R>())
    let workers: Array<Fiber.Fiber<unknown>> = []
    const startWorkers = Effect.gen(function*() {
      workers = []
      for (let i = 0; i < concurrency; i++) workers.push(yield* Effect.forkIn(workerWithContext, scope))
    })
    yield* startWorkers
    const fibers: Array<Fiber.Fiber<unknown>> = []
    if (options.source !== undefined) {
      fibers.push(
        yield* Stream.runForEach(options.source, (event) =>
          event._tag === "Enqueue" ? enqueueKey(event.key, event.trigger) : forgetKey(event.key)).pipe(
            Effect.forkIn(scope)
          )
      )
    }
    if (options.resync !== undefined) {
      const resync = options.resync
      const period = Duration.fromInputUnsafe(resync.period)
      const periodMillis = Duration.toMillis(period)
      const once = Effect.gen(function*() {
        const keys = yield* resync.keys
        const now = clock.currentTimeMillisUnsafe()
        for (const key of keys) {
          const state = states.get(key)
          // R14: a key left alone for a whole period starts its retries from zero again.
          if (state?.lastRunAt !== undefined && now - state.lastRunAt >= periodMillis) resetRetry(state)
          yield* queue.add(key, Trigger.resync)
        }
      })
      fibers.push(yield* Effect.forkIn(Effect.repeat(Effect.delay(once, period), Schedule.forever), scope))
    }
    started = true

    const keyStatus = (key: string, state: KeyState<S>): KeyStatus => {
      const dueAt = queue.dueAt(key)
      return {
        key,
        attempt: state.attempt,
        exhausted: state.exhausted,
        next: dueAt === undefined
          ? undefined
          : { at: dueAt, trigger: state.pendingRetry === undefined ? "reschedule" : "retry" },
        last: state.last
      }
    }

    const currentStatus = () => Health.status(health, { started, held: held || waitingOnDependencies > 0 })

    const hold = (holdOptions?: { readonly drainTimeout?: Duration.Input | undefined }) =>
      Effect.gen(function*() {
        held = true
        gate.closeUnsafe()
        const drainTimeout = holdOptions?.drainTimeout
        // Only runs that got past their dependency gate may finish; keys still waiting go back at once.
        if (drainTimeout !== undefined && runs.size > 0) yield* Effect.timeoutOption(quiet.await, drainTimeout)
        // Replacing the workers interrupts what still runs; one replacement at a time, so two
        // overlapping holds never leave two sets of workers.
        yield* restarting.withPermits(1)(Effect.suspend(() =>
          !held || queue.running() === 0
            ? Effect.void
            : Effect.andThen(Fiber.interruptAll(workers), startWorkers)
        ))
      })

    const shutdown = (shutdownOptions?: { readonly drainTimeout?: Duration.Input | undefined }) =>
      Effect.gen(function*() {
        const drainTimeout = shutdownOptions?.drainTimeout
        if (drainTimeout !== undefined) {
          yield* Effect.timeoutOption(queue.shutdown("drain"), drainTimeout)
        }
        yield* queue.shutdown("interrupt")
        yield* restarting.withPermits(1)(Fiber.interruptAll([...workers, ...fibers]))
        started = false
      })

    return {
      name,
      enqueue: enqueueKey,
      forget: forgetKey,
      health: Effect.sync(() => health),
      status: Effect.sync(currentStatus),
      isDegraded: () => health.degraded,
      awaitHealthy: healthy.await,
      keyStatus: (key) =>
        Effect.sync(() => {
          const state = states.get(key)
          return state === undefined ? Option.none() : Option.some(keyStatus(key, state))
        }),
      inspect: Effect.sync(() => ({
        name,
        status: currentStatus(),
        health,
        concurrency,
        queueDepth: queue.depth(),
        workersBusy: queue.running(),
        held,
        dependsOn: dependsOn.map((dependency) => ({ name: dependency.name, degraded: dependency.isDegraded() })),
        keys: Array.from(states, ([key, state]) => keyStatus(key, state))
      })),
      reports: Stream.fromPubSub(reports),
      awaitIdle: queue.awaitIdle,
      hold,
      resume: Effect.sync(() => {
        held = false
        gate.openUnsafe()
      }),
      isHeld: () => held,
      shutdown
    } satisfies Controller
  })

const doneResult: RunResult = { _tag: "Done" }
const interruptedResult: RunResult = { _tag: "Interrupted" }

const isFailure = (result: RunResult | undefined): boolean =>
  result !== undefined && (result._tag === "Transient" || result._tag === "Permanent" || result._tag === "Defect")

interface Counts {
  success: number
  requeueAfter: number
  error: number
  terminal: number
  panics: number
  retries: number
  triggers: Record<ReturnType<typeof Trigger.label>, number>
}

const observeMetrics = (controller: string, counts: Counts, read: {
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
    yield* EngineMetrics.observeCounter(EngineMetrics.retries, { name: controller }, () => counts.retries)
    for (const trigger of Object.keys(counts.triggers) as Array<keyof Counts["triggers"]>) {
      yield* EngineMetrics.observeCounter(EngineMetrics.triggers, { controller, trigger }, () => counts.triggers[trigger])
    }
    yield* EngineMetrics.observeGauge(EngineMetrics.activeWorkers, attributes, read.activeWorkers)
    yield* EngineMetrics.observeGauge(EngineMetrics.maxConcurrentReconciles, attributes, () => read.concurrency)
    yield* EngineMetrics.observeGauge(EngineMetrics.degraded, attributes, () => read.degraded() ? 1 : 0)
    return yield* EngineMetrics.observeHistogram(EngineMetrics.reconcileTime, EngineMetrics.reconcileBuckets, attributes)
  })
