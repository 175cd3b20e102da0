/**
 * A keyed work queue with client-go's guarantees: a key is queued at most once (adds merge), never
 * processed by two workers at once (an add while it runs marks it dirty and gives exactly one
 * follow-up run), and delayed adds per key that an immediate add supersedes ("at the latest").
 * Like controller-runtime's priority queue, fresh changes (`Trigger.priority` "high") are handed out
 * before resyncs, requeue-afters, retries and bulk re-enqueues; first in, first out within each.
 *
 * The queue owns every key's state (`KeyState`) and interprets its transitions: it hands queued keys
 * to workers, runs each key's timer as a fiber, and reports finished runs. A controller feeds it
 * what its runs did through `apply`.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, FiberMap, Latch, MutableList, Queue, Ref, Scope } from "effect"
import * as EngineMetrics from "./EngineMetrics.ts"
import * as KeyState from "./KeyState.ts"
import * as Trigger from "./Trigger.ts"

/** A key handed to a worker, with why it was queued. */
export interface Item {
  readonly key: string
  /** The triggers merged into this run, first of each kind. */
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  /** When the key was queued (ms). */
  readonly queuedAt: number
}

/** A delayed add to run after `after`, unless an immediate add comes first. */
export interface FollowUp {
  readonly after: Duration.Duration
  readonly trigger: Trigger.Trigger
}

export interface WorkQueue<S = unknown> {
  /** Queues the key now, merging with a queued run, or marking a running key dirty. Supersedes a delayed add. */
  readonly add: (key: string, trigger: Trigger.Trigger) => Effect.Effect<void>
  /** Queues the key after a delay, replacing the key's pending delayed add. */
  readonly addAfter: (key: string, followUp: FollowUp) => Effect.Effect<void>
  /** Drops everything pending for the key: its queued run, a follow-up of its running one, its delayed add. */
  readonly remove: (key: string) => Effect.Effect<void>
  /** When the key's delayed add is due (ms), if it has one. */
  readonly dueAt: (key: string) => number | undefined
  /** Waits for the next key and marks it running. Interrupted once the queue is shut down. */
  readonly take: Effect.Effect<Item>
  /**
   * Ends a key's run. A dirty key is queued again at once (which supersedes `followUp`); otherwise
   * `followUp`, when given, becomes the key's delayed add, and any other delayed add is dropped.
   */
  readonly done: (key: string, followUp?: FollowUp) => Effect.Effect<void>
  /** Keys queued and not yet taken. */
  readonly depth: () => number
  /** Keys being processed. */
  readonly running: () => number
  /** Waits until nothing is queued or running (delayed adds may still be pending). */
  readonly awaitIdle: Effect.Effect<void>
  /**
   * Puts a taken key back, for a run that was interrupted before `done`: it is queued again with
   * the triggers it was taken with (merged with any that came while it ran). False once `done` ran.
   */
  readonly requeue: (item: Item) => boolean
  /**
   * Stops accepting adds. "drain" first lets everything queued or running finish; "interrupt" does
   * not wait. Then pending delayed adds are dropped and waiting takers are interrupted.
   */
  readonly shutdown: (mode: "drain" | "interrupt") => Effect.Effect<void>
  /** Applies a transition to the key and runs its commands, except `StepRetry`, which is the caller's. */
  readonly apply: (key: string, input: KeyState.Input<S>) => Effect.Effect<KeyState.Transition<S>>
  /**
   * `apply` at once, for the engine's hot path: the transition, and the timer change still to run
   * (then the latches), or undefined when there is none and everything is done.
   */
  readonly applyUnsafe: (key: string, input: KeyState.Input<S>) => readonly [KeyState.Transition<S>, Effect.Effect<void> | undefined]
  /** Every key's state; written only through the queue's operations. */
  readonly table: Omit<KeyState.Table<S>, "keys"> & { readonly keys: ReadonlyMap<string, KeyState.KeyState<S>> }
  /** Waits until no run is past its dependency gate (`Start` without an end). */
  readonly awaitNoneStarted: Effect.Effect<void>
}

export interface Options {
  /** Called with every finished run (`Finished` command). */
  readonly finished?: ((key: string, finished: Extract<KeyState.Command, { _tag: "Finished" }>) => void) | undefined
}

/**
 * A queue whose delayed adds live in the current scope. `name` labels its metrics.
 *
 * @example
 * import { Effect } from "effect"
 * import { Trigger, WorkQueue } from "@kubefx/core"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const queue = yield* WorkQueue.make("widgets")
 *   yield* queue.add("default/a", Trigger.event())
 *   yield* queue.add("default/a", Trigger.event()) // merged
 *   const item = yield* queue.take
 *   yield* queue.done(item.key)
 *   return queue.depth() // 0
 * }))
 */
export const make = <S = unknown>(name: string, options: Options = {}): Effect.Effect<WorkQueue<S>, never, Scope.Scope> =>
  Effect.map(interpreter<S>(name, options), (i) => {
    const now = () => i.clock.currentTimeMillisUnsafe()
    const timerAfter = (followUp: FollowUp): KeyState.Timer => ({ at: now() + Duration.toMillis(followUp.after), trigger: followUp.trigger })
    // Inputs are built when the effect runs, so they carry the time it ran at.
    return {
      add: (key, trigger) =>
        Effect.suspend(() => Ref.getUnsafe(i.accepting) ? applyNow(i, key, { _tag: "Add", trigger, now: now() }) : Effect.void),
      addAfter: (key, followUp) =>
        Effect.suspend(() =>
          Ref.getUnsafe(i.accepting) ? applyNow(i, key, { _tag: "Delay", timer: timerAfter(followUp) }) : Effect.void
        ),
      remove: (key) => Effect.suspend(() => applyNow(i, key, { _tag: "Forget" })),
      dueAt: (key) => i.table.keys.get(key)?.timer?.at,
      take: take(i),
      done: (key, followUp) =>
        Effect.suspend(() => applyNow(i, key, { _tag: "Done", now: now(), timer: followUp && timerAfter(followUp) })),
      depth: () => i.table.queued,
      running: () => i.table.running,
      awaitIdle: i.idle.await,
      requeue: (item) => {
        if (i.table.keys.get(item.key)?.phase !== "Running") return false
        // An interrupted run leaves no timer change, so this runs at once.
        applyUnsafe(i, item.key, { _tag: "Interrupted", now: now() })
        return true
      },
      shutdown: (mode) =>
        Effect.gen(function*() {
          yield* Ref.set(i.accepting, false)
          if (mode === "drain") yield* i.idle.await
          yield* FiberMap.clear(i.timers)
          yield* Queue.shutdown(i.signals)
        }),
      apply: (key, input) =>
        Effect.suspend(() => {
          const [result, timer] = applyUnsafe(i, key, input)
          return timer === undefined ? Effect.succeed(result) : Effect.as(timer, result)
        }),
      applyUnsafe: (key, input) => applyUnsafe(i, key, input),
      table: i.table,
      awaitNoneStarted: i.noneStarted.await
    }
  })

/** What interprets a table's commands: the ready queue, the timer fibers, the latches, the metrics. */
interface Interpreter<S> {
  readonly table: KeyState.Table<S>
  readonly options: Options
  readonly clock: Clock.Clock
  /** Queued keys by priority; a key offered again at a higher priority leaves a stale entry behind, skipped when reached. */
  readonly high: MutableList.MutableList<string>
  readonly low: MutableList.MutableList<string>
  /** One signal per lane entry: a taker waits on it, then takes from the high lane first. */
  readonly signals: Queue.Queue<void>
  readonly timers: FiberMap.FiberMap<string>
  /** Open when nothing is queued or running. */
  readonly idle: Latch.Latch
  /** Open when no run is past its dependency gate. */
  readonly noneStarted: Latch.Latch
  readonly accepting: Ref.Ref<boolean>
  readonly queueDuration: EngineMetrics.Recorder
  readonly workDuration: EngineMetrics.Recorder
}

const interpreter = Effect.fnUntraced(function*<S>(name: string, options: Options) {
  const table = KeyState.table<S>()
  const attributes = { name }
  yield* EngineMetrics.observeGauge(EngineMetrics.depth, attributes, () => table.queued)
  yield* EngineMetrics.observeCounter(EngineMetrics.adds, attributes, () => table.counts.adds)
  const interpreter: Interpreter<S> = {
    table,
    options,
    clock: yield* Clock.Clock,
    high: MutableList.make<string>(),
    low: MutableList.make<string>(),
    signals: yield* Queue.unbounded<void>(),
    timers: yield* FiberMap.make<string>(),
    idle: yield* Latch.make(true),
    noneStarted: yield* Latch.make(true),
    accepting: yield* Ref.make(true),
    queueDuration: yield* EngineMetrics.observeHistogram(EngineMetrics.queueDuration, EngineMetrics.queueBuckets, attributes),
    workDuration: yield* EngineMetrics.observeHistogram(EngineMetrics.workDuration, EngineMetrics.queueBuckets, attributes)
  }
  return interpreter
})

const latches = <S>({ idle, noneStarted, table }: Interpreter<S>): void => {
  if (table.queued === 0 && table.running === 0) idle.openUnsafe()
  else idle.closeUnsafe()
  if (table.started === 0) noneStarted.openUnsafe()
  else noneStarted.closeUnsafe()
}

const transition = <S>(
  i: Interpreter<S>,
  key: string,
  input: KeyState.Input<S>,
  before: KeyState.KeyState<S> | undefined = i.table.keys.get(key)
): KeyState.Transition<S> => {
  const run = before?.run
  const result = KeyState.apply(i.table, key, input, before)
  if (run !== undefined && result.state?.run === undefined && input._tag !== "Interrupted") {
    i.workDuration.record((i.clock.currentTimeMillisUnsafe() - run.takenAt) / 1000)
  }
  return result
}

// Runs the commands that are the queue's and returns the timer change still to run, if any: it
// runs before the latches are set, so a waiter on `awaitIdle` sees the key's final timer.
const execute = <S>(i: Interpreter<S>, key: string, { commands, state }: KeyState.Transition<S>): Effect.Effect<unknown> | undefined => {
  let timer: Effect.Effect<unknown> | undefined
  for (const command of commands) {
    if (command._tag === "Offer") {
      MutableList.append(state !== undefined && Trigger.priorityOf(state.triggers) === "low" ? i.low : i.high, key)
      Queue.offerUnsafe(i.signals, undefined)
    }
    else if (command._tag === "Finished") i.options.finished?.(key, command)
    else if (command._tag === "SetTimer") {
      timer = command.timer === undefined || !Ref.getUnsafe(i.accepting)
        ? FiberMap.remove(i.timers, key)
        : FiberMap.run(i.timers, key, fire(i, key, command.timer))
    }
  }
  return timer
}

const applyUnsafe = <S>(
  i: Interpreter<S>,
  key: string,
  input: KeyState.Input<S>
): readonly [KeyState.Transition<S>, Effect.Effect<void> | undefined] => {
  const result = transition(i, key, input)
  return [result, settle(i, execute(i, key, result))]
}

const applyNow = <S>(i: Interpreter<S>, key: string, input: KeyState.Input<S>): Effect.Effect<void> =>
  settle(i, execute(i, key, transition(i, key, input))) ?? Effect.void

// Sets the latches now, or after the timer change when there is one.
const settle = <S>(i: Interpreter<S>, timer: Effect.Effect<unknown> | undefined): Effect.Effect<void> | undefined => {
  if (timer !== undefined) return Effect.andThen(timer, Effect.sync(() => latches(i)))
  latches(i)
  return undefined
}

const fire = <S>(i: Interpreter<S>, key: string, timer: KeyState.Timer): Effect.Effect<void> =>
  Effect.sleep(Duration.millis(Math.max(0, timer.at - i.clock.currentTimeMillisUnsafe()))).pipe(
    Effect.andThen(Effect.suspend(() =>
      Ref.getUnsafe(i.accepting)
        ? applyNow(i, key, { _tag: "TimerFired", timer, now: i.clock.currentTimeMillisUnsafe() })
        : Effect.void
    ))
  )

// A key forgotten or already taken since it was offered is skipped, and so is a low entry of a key
// offered again at high priority.
const take = <S>(i: Interpreter<S>): Effect.Effect<Item> => {
  const next: Effect.Effect<Item> = Effect.flatMap(Queue.take(i.signals), () => {
    const high = i.high.length > 0
    const key = MutableList.take(high ? i.high : i.low) as string
    const state = i.table.keys.get(key)
    if (state?.phase !== "Queued" || (!high && Trigger.priorityOf(state.triggers) === "high")) return next
    const run = transition(i, key, { _tag: "Take", now: i.clock.currentTimeMillisUnsafe() }, state).state!.run!
    latches(i)
    i.queueDuration.record((run.takenAt - run.queuedAt) / 1000)
    return Effect.succeed({ key, triggers: run.triggers, queuedAt: run.queuedAt })
  })
  return next
}
