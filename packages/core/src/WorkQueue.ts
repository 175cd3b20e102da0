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
export interface Item<S = unknown> {
  readonly key: string
  /** The triggers merged into this run, first of each kind. */
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  /** When the key was queued (ms). */
  readonly queuedAt: number
  /** When the key was taken (ms). */
  readonly takenAt: number
  /** The key's slot in the queue's table, which `applyTaken` steps without a look-up while the run lasts (read-only here). */
  readonly slot: Readonly<KeyState.Slot<S>>
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
  /**
   * Waits for the next key and marks it running. Interrupted once the queue is shut down. A taker
   * that may be interrupted and must not lose the key (a worker) waits on `ready` instead and takes
   * with `takeUnsafe` where it cannot be interrupted.
   */
  readonly take: Effect.Effect<Item<S>>
  /** Waits until a key may be queued, taking nothing. Interrupted once the queue is shut down. */
  readonly ready: Effect.Effect<void>
  /** Takes the next queued key now and marks it running; undefined when none is queued. */
  readonly takeUnsafe: () => Item<S> | undefined
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
  readonly requeue: (item: Item<S>) => boolean
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
  /**
   * `applyUnsafe` to the key of a taken item: while its run lasts the key keeps its slot, so the
   * table needs no look-up (after, it is looked up as `applyUnsafe` does).
   */
  readonly applyTaken: (item: Item<S>, input: KeyState.Input<S>) => readonly [KeyState.Transition<S>, Effect.Effect<void> | undefined]
  /** The key's state, if the queue holds one. */
  readonly state: (key: string) => KeyState.KeyState<S> | undefined
  /** Every key the queue holds, with its state. */
  readonly states: () => Iterable<readonly [string, KeyState.KeyState<S>]>
  /** The counts over every key's state; written only through the queue's operations. */
  readonly table: Omit<KeyState.Table<S>, "keys">
  /** Waits until no run is past its dependency gate (`Start` without an end). */
  readonly awaitNoneStarted: Effect.Effect<void>
}

export interface Options {
  /**
   * Adds of a key it answers true for are dropped, read as each add runs (a controller's released
   * keys). Removes, timers and runs already going are not affected.
   */
  readonly refuses?: ((key: string) => boolean) | undefined
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
    const refuses = options.refuses ?? (() => false)
    // Inputs are built when the effect runs, so they carry the time it ran at.
    return {
      add: (key, trigger) =>
        Effect.suspend(() =>
          Ref.getUnsafe(i.accepting) && !refuses(key) ? applyNow(i, key, { _tag: "Add", trigger, now: now() }) : Effect.void
        ),
      addAfter: (key, followUp) =>
        Effect.suspend(() =>
          Ref.getUnsafe(i.accepting) ? applyNow(i, key, { _tag: "Delay", timer: timerAfter(followUp) }) : Effect.void
        ),
      remove: (key) => Effect.suspend(() => applyNow(i, key, { _tag: "Forget" })),
      dueAt: (key) => i.table.keys.get(key)?.state?.timer?.at,
      take: take(i),
      ready: Effect.asVoid(Queue.peek(i.signals)),
      takeUnsafe: () => takeUnsafe(i),
      done: (key, followUp) =>
        Effect.suspend(() => applyNow(i, key, { _tag: "Done", now: now(), timer: followUp && timerAfter(followUp) })),
      depth: () => i.table.queued,
      running: () => i.table.running,
      awaitIdle: i.idle.await,
      requeue: (item) => {
        if (item.slot.state?.phase !== "Running") return false
        // An interrupted run leaves no timer change, so this runs at once.
        applySlot(i, item.slot, { _tag: "Interrupted", now: now() })
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
          const [result, timer] = applySlot(i, KeyState.slotOf(i.table, key), input)
          return timer === undefined ? Effect.succeed(result) : Effect.as(timer, result)
        }),
      applyUnsafe: (key, input) => applySlot(i, KeyState.slotOf(i.table, key), input),
      // A slot without a state was dropped from the table (the run had ended): look the key up.
      applyTaken: (item, input) =>
        applySlot(i, item.slot.state === undefined ? KeyState.slotOf(i.table, item.key) : item.slot, input),
      state: (key) => i.table.keys.get(key)?.state,
      states: () => states(i.table),
      table: i.table,
      awaitNoneStarted: i.noneStarted.await
    }
  })

/** What interprets a table's commands: the ready queue, the timer fibers, the latches, the metrics. */
interface Interpreter<S> {
  readonly table: KeyState.Table<S>
  readonly options: Options
  readonly clock: Clock.Clock
  /**
   * Queued keys by priority, as their slots (a take needs no lookup); a key offered again at a
   * higher priority, or dropped and added again, leaves a stale entry behind, skipped when reached.
   */
  readonly high: MutableList.MutableList<KeyState.Slot<S>>
  readonly low: MutableList.MutableList<KeyState.Slot<S>>
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
  const clock = yield* Clock.Clock
  // The running runs' ages, read from the key table when scraped: nothing is kept per run for them.
  const runningFor = (): Array<number> => {
    const ages: Array<number> = []
    if (table.running === 0) return ages
    const now = clock.currentTimeMillisUnsafe()
    for (const { state } of table.keys.values()) {
      if (state?.run !== undefined) ages.push((now - state.run.takenAt) / 1000)
    }
    return ages
  }
  yield* EngineMetrics.observeGauge(EngineMetrics.unfinishedWork, attributes, () => runningFor().reduce((sum, s) => sum + s, 0))
  yield* EngineMetrics.observeGauge(EngineMetrics.longestRunning, attributes, () => Math.max(0, ...runningFor()))
  const interpreter: Interpreter<S> = {
    table,
    options,
    clock,
    high: MutableList.make<KeyState.Slot<S>>(),
    low: MutableList.make<KeyState.Slot<S>>(),
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

function* states<S>(table: KeyState.Table<S>): Generator<readonly [string, KeyState.KeyState<S>]> {
  for (const { key, state } of table.keys.values()) if (state !== undefined) yield [key, state]
}

const transition = <S>(i: Interpreter<S>, slot: KeyState.Slot<S>, input: KeyState.Input<S>): KeyState.Transition<S> => {
  const run = slot.state?.run
  const result = KeyState.applyTo(i.table, slot, input)
  if (run !== undefined && result.state?.run === undefined && input._tag !== "Interrupted") {
    // The inputs that end most runs carry the time they ended at: one clock read fewer per run.
    const now = input._tag === "Succeeded" || input._tag === "Done" ? input.now : i.clock.currentTimeMillisUnsafe()
    i.workDuration.record((now - run.takenAt) / 1000)
  }
  return result
}

// Runs the commands that are the queue's and returns the timer change still to run, if any: it
// runs before the latches are set, so a waiter on `awaitIdle` sees the key's final timer.
const execute = <S>(i: Interpreter<S>, slot: KeyState.Slot<S>, { commands, state }: KeyState.Transition<S>): Effect.Effect<unknown> | undefined => {
  const key = slot.key
  let timer: Effect.Effect<unknown> | undefined
  for (const command of commands) {
    if (command._tag === "Offer") {
      MutableList.append(state !== undefined && Trigger.priorityOf(state.triggers) === "low" ? i.low : i.high, slot)
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

const applySlot = <S>(
  i: Interpreter<S>,
  slot: KeyState.Slot<S>,
  input: KeyState.Input<S>
): readonly [KeyState.Transition<S>, Effect.Effect<void> | undefined] => {
  const result = transition(i, slot, input)
  return [result, settle(i, execute(i, slot, result))]
}

const applyNow = <S>(i: Interpreter<S>, key: string, input: KeyState.Input<S>): Effect.Effect<void> => {
  const slot = KeyState.slotOf(i.table, key)
  return settle(i, execute(i, slot, transition(i, slot, input))) ?? Effect.void
}

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
// offered again at high priority. Each entry has its signal, consumed with it in one synchronous
// step: an interruption can come between waiting and taking, never between a signal and its entry.
const takeUnsafe = <S>(i: Interpreter<S>): Item<S> | undefined => {
  while (true) {
    const signal = Queue.takeUnsafe(i.signals)
    if (signal === undefined || signal._tag === "Failure") return undefined
    const high = i.high.length > 0
    const slot = MutableList.take(high ? i.high : i.low) as KeyState.Slot<S>
    const state = slot.state
    if (state?.phase !== "Queued" || (!high && Trigger.priorityOf(state.triggers) === "high")) continue
    const run = transition(i, slot, { _tag: "Take", now: i.clock.currentTimeMillisUnsafe() }).state!.run!
    latches(i)
    i.queueDuration.record((run.takenAt - run.queuedAt) / 1000)
    return { key: slot.key, triggers: run.triggers, queuedAt: run.queuedAt, takenAt: run.takenAt, slot }
  }
}

const take = <S>(i: Interpreter<S>): Effect.Effect<Item<S>> => {
  const next: Effect.Effect<Item<S>> = Effect.suspend(() => {
    const item = takeUnsafe(i)
    return item === undefined ? Effect.andThen(Queue.peek(i.signals), next) : Effect.succeed(item)
  })
  return next
}
