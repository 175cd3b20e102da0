/**
 * The state of one key in a controller, and the rules that move it: a pure
 * `(state, input) -> (state, commands)` function. Queueing (merge, dirty follow-up, timers an add
 * supersedes) and the retry streak (attempts, pending retry, exhaustion) live in one record, so there
 * is no second copy to keep in sync; the work queue interprets the commands (timers as fibers, the
 * ready queue, reports) and the controller feeds it what its runs did.
 *
 * @since 0.1.0
 */
import { Duration, Option } from "effect"
import type * as RetryPolicy from "./RetryPolicy.ts"
import * as Trigger from "./Trigger.ts"

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

/** A pending timer: at `at` (ms) the key is queued with `trigger`, unless an add comes first. */
export interface Timer {
  readonly at: number
  readonly trigger: Trigger.Trigger
}

/** The retry info of a started run. */
export interface Attempt {
  /** Retries so far in the current failure streak. */
  readonly attempt: number
  readonly isLastAttempt: boolean
}

/** A run, from the moment a worker took the key. */
export interface Run {
  readonly takenAt: number
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  readonly queuedAt: number
  /** Set once the run passed the dependency gate and its reconcile began. */
  readonly started: { readonly at: number; readonly attempt: Attempt; readonly countedAsRetry: boolean } | undefined
  /** Set by a failure that waits for the retry policy's next delay. */
  readonly failed: { readonly result: RunResult; readonly at: number } | undefined
}

/** The last finished run of a key. */
export interface LastRun {
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  readonly attempt: number
  readonly isLastAttempt: boolean
  readonly startedAt: number
  readonly durationMillis: number
  readonly result: RunResult
}

export interface KeyState<S = unknown> {
  readonly phase: "Idle" | "Queued" | "Running"
  /** Running only: an add came during the run, which owes exactly one follow-up run. */
  readonly dirty: boolean
  /** The triggers merged into the queued run, or into the follow-up a dirty run owes. */
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  readonly queuedAt: number
  readonly timer: Timer | undefined
  readonly run: Run | undefined
  /** Forgotten while it ran (R17): the run leaves nothing behind. */
  readonly forgotten: boolean
  /** Retries so far in the current failure streak. */
  readonly attempt: number
  readonly exhausted: boolean
  /** The delay of the retry timer armed by the streak, kept while an event's run goes first (R5). */
  readonly pendingRetry: Duration.Duration | undefined
  /** The retry policy's state for the current streak. */
  readonly stepper: RetryPolicy.Stepper<unknown> | undefined
  readonly lastRunAt: number | undefined
  readonly last: LastRun | undefined
  readonly lastGood: Option.Option<S>
}

/** What happens to a key. */
export type Input<S = unknown> =
  /** An event, a related change or a resync: queue now, superseding the timer (R1, R3). */
  | { readonly _tag: "Add"; readonly trigger: Trigger.Trigger; readonly now: number }
  /** Queue after a delay, replacing the key's timer. */
  | { readonly _tag: "Delay"; readonly timer: Timer }
  /** The timer came due; ignored unless it is still the key's timer. */
  | { readonly _tag: "TimerFired"; readonly timer: Timer; readonly now: number }
  /** The periodic resync (R14): a key left alone for a whole period starts its retries afresh. */
  | { readonly _tag: "Resync"; readonly now: number; readonly periodMillis: number }
  /** A worker took the key. */
  | { readonly _tag: "Take"; readonly now: number }
  /** The run passed the dependency gate; `maxAttempts` is the policy's, when known. */
  | { readonly _tag: "Start"; readonly now: number; readonly maxAttempts: number | undefined }
  /** The reconcile succeeded (R2), with its requeue-after delay if any. */
  | { readonly _tag: "Succeeded"; readonly now: number; readonly requeueAfter: Duration.Duration | undefined }
  /** The reconcile failed; `retry` is false when the error handler answered noRetry (R8). */
  | {
    readonly _tag: "Failed"
    readonly now: number
    readonly kind: "Transient" | "Permanent" | "Defect"
    readonly message: string
    readonly retry: boolean
    /** The run was cut off by the controller's `timeout`. */
    readonly timedOut?: boolean
  }
  /** The retry policy stepped (see the `StepRetry` command): the delay, or none when it ended. */
  | {
    readonly _tag: "Stepped"
    readonly stepper: RetryPolicy.Stepper<unknown>
    readonly delay: Duration.Duration | undefined
  }
  /** The run ended outside the controller's rules (a bare work queue), leaving `timer` if given. */
  | { readonly _tag: "Done"; readonly now: number; readonly timer: Timer | undefined }
  /** The run was stopped before it ended (hold, shutdown): the key is queued again. */
  | { readonly _tag: "Interrupted"; readonly now: number }
  /** The known-good state read after a success. */
  | { readonly _tag: "Snapshot"; readonly lastGood: Option.Option<S> }
  /** The object is gone (R17): drop the key's state, its queued run and its timer. */
  | { readonly _tag: "Forget" }

/** What the interpreter does after a transition. */
export type Command =
  /** Hand the key to a worker, at the priority of its queued triggers (again when a fresh change raised it). */
  | { readonly _tag: "Offer" }
  /** Cancel the key's timer fiber, then start one for `timer` if given. */
  | { readonly _tag: "SetTimer"; readonly timer: Timer | undefined }
  /** Step the retry policy (starting a streak when `stepper` is undefined) and answer `Stepped`. */
  | { readonly _tag: "StepRetry"; readonly stepper: RetryPolicy.Stepper<unknown> | undefined }
  /** A run ended: publish it. */
  | { readonly _tag: "Finished"; readonly run: LastRun; readonly next: Timer | undefined; readonly exhausted: boolean }

/** A transition's result: the key's next state (undefined: the key is dropped) and what to do. */
export interface Transition<S> {
  readonly state: KeyState<S> | undefined
  readonly commands: ReadonlyArray<Command>
}

/** A key nothing has happened to. */
export const empty: KeyState<never> = {
  phase: "Idle",
  dirty: false,
  triggers: [],
  queuedAt: 0,
  timer: undefined,
  run: undefined,
  forgotten: false,
  attempt: 0,
  exhausted: false,
  pendingRetry: undefined,
  stepper: undefined,
  lastRunAt: undefined,
  last: undefined,
  lastGood: Option.none()
}

const none: ReadonlyArray<Command> = []
const offer: Command = { _tag: "Offer" }
const cancelTimer: Command = { _tag: "SetTimer", timer: undefined }
// The commands most transitions give, shared rather than allocated per transition.
const offerOnly: ReadonlyArray<Command> = [offer]
const cancelAndOffer: ReadonlyArray<Command> = [cancelTimer, offer]

/**
 * Moves a key by one input. Pure: the same state and input always give the same transition.
 *
 * @example
 * import { KeyState, Trigger } from "@kubefx/core"
 * const queued = KeyState.step(undefined, { _tag: "Add", trigger: Trigger.event(), now: 0 })
 * queued.state?.phase // "Queued"
 * queued.commands // [{ _tag: "Offer" }]
 */
export const step = <S>(state: KeyState<S> | undefined, input: Input<S>): Transition<S> => {
  const current: KeyState<S> = state ?? empty
  switch (input._tag) {
    case "Add":
      return add(current, input.trigger, input.now)
    case "Delay":
      return { state: { ...current, timer: input.timer }, commands: [{ _tag: "SetTimer", timer: input.timer }] }
    case "TimerFired":
      // The firing timer's fiber is the one running this transition: clear it, do not cancel it.
      return current.timer === input.timer ? add({ ...current, timer: undefined }, input.timer.trigger, input.now) : unchanged(state)
    case "Resync":
      return add(
        current.lastRunAt !== undefined && input.now - current.lastRunAt >= input.periodMillis ? freshStreak(current) : current,
        Trigger.resync,
        input.now
      )
    case "Take":
      return take(state, input.now)
    case "Start":
      return start(state, input.now, input.maxAttempts)
    case "Succeeded":
      return succeeded(state, input.now, input.requeueAfter)
    case "Failed":
      return failed(state, input)
    case "Stepped":
      return stepped(state, input.stepper, input.delay)
    case "Done":
      return state?.run === undefined ? unchanged(state) : finish(state, input.now, undefined, input.timer)
    case "Interrupted":
      return interrupted(state, input.now)
    case "Snapshot":
      return state === undefined || state.forgotten ? unchanged(state) : { state: { ...state, lastGood: input.lastGood }, commands: none }
    case "Forget":
      return forget(state)
  }
}

const unchanged = <S>(state: KeyState<S> | undefined): Transition<S> => ({ state, commands: none })

// Most successes end no streak: the state stays the same value.
const freshStreak = <S>(state: KeyState<S>): KeyState<S> =>
  state.attempt === 0 && !state.exhausted && state.pendingRetry === undefined && state.stepper === undefined
    ? state
    : { ...state, attempt: 0, exhausted: false, pendingRetry: undefined, stepper: undefined }

// R1: adds merge into one queued run; an add while the key runs owes exactly one follow-up run.
// R3: an add supersedes the key's timer.
const add = <S>(state: KeyState<S>, trigger: Trigger.Trigger, now: number): Transition<S> => {
  const commands = state.timer === undefined ? none : [cancelTimer]
  if (state.phase === "Idle") {
    return {
      state: { ...state, phase: "Queued", triggers: [trigger], queuedAt: now, timer: undefined },
      commands: commands.length === 0 ? offerOnly : cancelAndOffer
    }
  }
  if (state.phase === "Running" && !state.dirty) {
    return { state: { ...state, dirty: true, triggers: [trigger], queuedAt: now, timer: undefined }, commands }
  }
  const triggers = Trigger.merge(state.triggers, trigger)
  // Most adds to a queued key merge into nothing new: the state stays the same value.
  if (triggers === state.triggers && state.timer === undefined) return { state, commands }
  // A fresh change to a key queued at low priority moves it ahead (offered again, now high).
  const promoted = state.phase === "Queued" && Trigger.priorityOf(triggers) === "high" &&
    Trigger.priorityOf(state.triggers) === "low"
  return { state: { ...state, triggers, timer: undefined }, commands: promoted ? [...commands, offer] : commands }
}

const take = <S>(state: KeyState<S> | undefined, now: number): Transition<S> =>
  state?.phase !== "Queued" ? unchanged(state) : {
    state: {
      ...state,
      phase: "Running",
      triggers: [],
      run: { takenAt: now, triggers: state.triggers, queuedAt: state.queuedAt, started: undefined, failed: undefined }
    },
    commands: none
  }

// R4/R5: only a run the retry timer triggered counts as a retry attempt; an event's run while a
// retry is pending leaves the attempt where it was.
const start = <S>(state: KeyState<S> | undefined, now: number, maxAttempts: number | undefined): Transition<S> => {
  if (state?.run === undefined || state.run.started !== undefined) return unchanged(state)
  const countedAsRetry = Trigger.isRetry(state.run.triggers) && state.pendingRetry !== undefined
  const attempt = countedAsRetry ? state.attempt + 1 : state.attempt
  const isLastAttempt = state.exhausted || (maxAttempts !== undefined && attempt >= maxAttempts)
  return {
    state: {
      ...state,
      attempt,
      pendingRetry: countedAsRetry ? undefined : state.pendingRetry,
      lastRunAt: now,
      run: { ...state.run, started: { at: now, attempt: { attempt, isLastAttempt }, countedAsRetry } }
    },
    commands: none
  }
}

// R2: a success ends the failure streak; a requeue-after leaves a reschedule timer.
const succeeded = <S>(state: KeyState<S> | undefined, now: number, requeueAfter: Duration.Duration | undefined): Transition<S> => {
  if (state?.run === undefined) return unchanged(state)
  const result: RunResult = requeueAfter === undefined
    ? done
    : { _tag: "RequeueAfter", afterMillis: Duration.toMillis(requeueAfter) }
  const timer = requeueAfter === undefined ? undefined : { at: now + Duration.toMillis(requeueAfter), trigger: Trigger.reschedule }
  return finish(freshStreak(state), now, result, timer)
}

// R4 retry, R5 resume at the same attempt, R6 exhausted, R8 permanent or noRetry.
const failed = <S>(state: KeyState<S> | undefined, input: Extract<Input<S>, { _tag: "Failed" }>): Transition<S> => {
  if (state?.run === undefined) return unchanged(state)
  const noRetry = input.kind !== "Permanent" && !input.retry
  const result: RunResult = noRetry
    ? { _tag: input.kind, message: input.message, noRetry: true }
    : { _tag: input.kind, message: input.message }
  if (input.kind === "Permanent" || noRetry) return finish({ ...state, pendingRetry: undefined }, input.now, result, undefined)
  if (state.exhausted) return finish(state, input.now, result, undefined)
  if (state.run.started?.countedAsRetry !== true && state.pendingRetry !== undefined) {
    return finish(state, input.now, result, retryAt(input.now, state.pendingRetry))
  }
  return {
    state: { ...state, run: { ...state.run, failed: { result, at: input.now } } },
    commands: [{ _tag: "StepRetry", stepper: state.stepper }]
  }
}

const stepped = <S>(
  state: KeyState<S> | undefined,
  stepper: RetryPolicy.Stepper<unknown>,
  delay: Duration.Duration | undefined
): Transition<S> => {
  const failure = state?.run?.failed
  if (state === undefined || failure === undefined) return unchanged(state)
  return delay === undefined
    ? finish({ ...state, stepper, exhausted: true, pendingRetry: undefined }, failure.at, failure.result, undefined)
    : finish({ ...state, stepper, pendingRetry: delay }, failure.at, failure.result, retryAt(failure.at, delay))
}

const retryAt = (now: number, delay: Duration.Duration): Timer => ({ at: now + Duration.toMillis(delay), trigger: Trigger.retry })

const done: RunResult = { _tag: "Done" }

// A dirty run is queued again at once, superseding its timer; otherwise the timer it leaves
// replaces any other. A run forgotten meanwhile leaves no state, only its follow-up.
const finish = <S>(state: KeyState<S>, now: number, result: RunResult | undefined, timer: Timer | undefined): Transition<S> => {
  const run = state.run!
  const last = result === undefined || run.started === undefined ? undefined : lastRun(run, now, result)
  const kept = state.forgotten ? empty as KeyState<S> : state
  const after: KeyState<S> = {
    ...kept,
    phase: state.dirty ? "Queued" : "Idle",
    dirty: false,
    triggers: state.triggers,
    queuedAt: state.queuedAt,
    timer: state.dirty || state.forgotten ? undefined : timer,
    run: undefined,
    last: state.forgotten ? undefined : last ?? state.last
  }
  const setTimer = state.timer !== undefined || after.timer !== undefined
  if (!setTimer && last === undefined) return { state: isBlank(after) ? undefined : after, commands: state.dirty ? offerOnly : none }
  const commands: Array<Command> = []
  if (setTimer) commands.push({ _tag: "SetTimer", timer: after.timer })
  if (state.dirty) commands.push(offer)
  if (last !== undefined) commands.push({ _tag: "Finished", run: last, next: after.timer, exhausted: state.exhausted })
  return { state: isBlank(after) ? undefined : after, commands }
}

const lastRun = (run: Run, now: number, result: RunResult): LastRun => ({
  triggers: run.triggers,
  attempt: run.started!.attempt.attempt,
  isLastAttempt: run.started!.attempt.isLastAttempt,
  startedAt: run.started!.at,
  durationMillis: now - run.started!.at,
  result
})

const interrupted = <S>(state: KeyState<S> | undefined, now: number): Transition<S> => {
  const run = state?.run
  if (state === undefined || run === undefined) return unchanged(state)
  const kept = state.forgotten ? empty as KeyState<S> : state
  const commands: Array<Command> = [offer]
  if (run.started !== undefined) {
    commands.push({ _tag: "Finished", run: lastRun(run, now, interruptedResult), next: undefined, exhausted: state.exhausted })
  }
  return {
    state: {
      ...kept,
      phase: "Queued",
      dirty: false,
      triggers: state.dirty ? state.triggers.reduce(Trigger.merge, run.triggers) : run.triggers,
      queuedAt: run.queuedAt,
      run: undefined
    },
    commands
  }
}

const interruptedResult: RunResult = { _tag: "Interrupted" }

// R17: a running key finishes its run but keeps nothing; anything else is dropped at once (a
// queued key stays in the ready queue, where `Take` skips it).
const forget = <S>(state: KeyState<S> | undefined): Transition<S> => {
  if (state === undefined) return unchanged(state)
  const commands = state.timer === undefined ? none : [cancelTimer]
  if (state.phase !== "Running") return { state: undefined, commands }
  return { state: { ...state, forgotten: true, dirty: false, triggers: [], timer: undefined }, commands }
}

// A key with nothing queued, running, pending or remembered needs no entry.
const isBlank = <S>(state: KeyState<S>): boolean =>
  state.phase === "Idle" && state.timer === undefined && state.last === undefined && state.lastRunAt === undefined &&
  state.attempt === 0 && !state.exhausted && state.pendingRetry === undefined && Option.isNone(state.lastGood)

/**
 * Whether the controller reports on the key: it has started a run since it was last forgotten.
 *
 * @example
 * import { KeyState } from "@kubefx/core"
 * KeyState.isKnown(KeyState.empty) // false
 */
export const isKnown = <S>(state: KeyState<S>): boolean => state.lastRunAt !== undefined && !state.forgotten

/**
 * Whether the key's last run failed.
 *
 * @example
 * import { KeyState } from "@kubefx/core"
 * KeyState.lastFailed(KeyState.empty) // false
 */
export const lastFailed = <S>(state: KeyState<S>): boolean => {
  const tag = state.last?.result._tag
  return tag === "Transient" || tag === "Permanent" || tag === "Defect"
}

/** Counts over a table's transitions, for metrics. */
export interface Counts {
  adds: number
  success: number
  requeueAfter: number
  error: number
  terminal: number
  panics: number
  timeouts: number
  retries: number
  readonly triggers: Record<ReturnType<typeof Trigger.label>, number>
}

/**
 * A key's place in a table. Each transition replaces its state, never edits it. Once the key is
 * dropped the slot holds `undefined` and is out of the table: the key's next state goes into a new
 * slot from `slotOf`.
 */
export interface Slot<S> {
  readonly key: string
  state: KeyState<S> | undefined
}

/**
 * Every key's state and the counts derived from it. `apply` is the only writer: it stores what
 * `step` returned, so the table never holds a state the rules did not produce.
 */
export interface Table<S> {
  /** Every key with a state; a transition replaces its slot's state, so the map changes only when keys come and go. */
  readonly keys: Map<string, Slot<S>>
  /** Keys queued and not yet taken. */
  queued: number
  /** Keys taken by a worker. */
  running: number
  /** Runs past the dependency gate. */
  started: number
  readonly counts: Counts
}

/**
 * An empty table.
 *
 * @example
 * import { KeyState } from "@kubefx/core"
 * const table = KeyState.table()
 * table.queued // 0
 */
export const table = <S = unknown>(): Table<S> => ({
  keys: new Map(),
  queued: 0,
  running: 0,
  started: 0,
  counts: {
    adds: 0,
    success: 0,
    requeueAfter: 0,
    error: 0,
    terminal: 0,
    panics: 0,
    timeouts: 0,
    retries: 0,
    triggers: { event: 0, related: 0, retry: 0, reschedule: 0, resync: 0 }
  }
})

/**
 * Steps the key's state by `input`, stores the result and returns the transition.
 *
 * @example
 * import { KeyState, Trigger } from "@kubefx/core"
 * const table = KeyState.table()
 * KeyState.apply(table, "default/a", { _tag: "Add", trigger: Trigger.event(), now: 0 })
 * table.queued // 1
 */
export const apply = <S>(table: Table<S>, key: string, input: Input<S>): Transition<S> =>
  applyTo(table, slotOf(table, key), input)

/**
 * The key's slot in the table, or a new one (not stored until a transition gives it a state).
 *
 * @example
 * import { KeyState } from "@kubefx/core"
 * KeyState.slotOf(KeyState.table(), "default/a").state // undefined
 */
export const slotOf = <S>(table: Table<S>, key: string): Slot<S> => table.keys.get(key) ?? { key, state: undefined }

/**
 * `apply` to a slot already in hand (one look-up fewer): one from `slotOf` of the same table, as long
 * as its key has not been dropped since (a dropped slot is out of the table for good).
 *
 * @example
 * import { KeyState, Trigger } from "@kubefx/core"
 * const table = KeyState.table()
 * const slot = KeyState.slotOf(table, "default/a")
 * KeyState.applyTo(table, slot, { _tag: "Add", trigger: Trigger.event(), now: 0 })
 * slot.state?.phase // "Queued"
 */
export const applyTo = <S>(table: Table<S>, slot: Slot<S>, input: Input<S>): Transition<S> => {
  const before = slot.state
  const transition = step(before, input)
  const after = transition.state
  if (after === before) return transition
  slot.state = after
  if (after === undefined) table.keys.delete(slot.key)
  else if (before === undefined) table.keys.set(slot.key, slot)
  table.queued += phaseIs(after, "Queued") - phaseIs(before, "Queued")
  table.running += phaseIs(after, "Running") - phaseIs(before, "Running")
  table.started += isStarted(after) - isStarted(before)
  count(table.counts, before, after, input, transition.commands)
  return transition
}

const phaseIs = <S>(state: KeyState<S> | undefined, phase: KeyState<S>["phase"]): number => state?.phase === phase ? 1 : 0

const isStarted = <S>(state: KeyState<S> | undefined): number => state?.run?.started === undefined ? 0 : 1

const count = <S>(
  counts: Counts,
  before: KeyState<S> | undefined,
  after: KeyState<S> | undefined,
  input: Input<S>,
  commands: ReadonlyArray<Command>
): void => {
  if (input._tag === "Add" || input._tag === "TimerFired" || input._tag === "Resync") {
    if ((after?.phase === "Queued" && before?.phase !== "Queued") || (after?.dirty === true && before?.dirty !== true)) counts.adds++
  } else if (input._tag === "Start") {
    counts.triggers[Trigger.label(Trigger.reason(after!.run!.triggers))]++
  } else if (input._tag === "Failed" && input.timedOut === true) {
    counts.timeouts++
  } else if (input._tag === "Stepped" && input.delay !== undefined) {
    counts.retries++
  }
  for (const command of commands) {
    if (command._tag !== "Finished") continue
    const result = command.run.result._tag
    if (result === "Done") counts.success++
    else if (result === "RequeueAfter") counts.requeueAfter++
    else if (result !== "Interrupted") {
      counts.error++
      if (result === "Permanent") counts.terminal++
      if (result === "Defect") counts.panics++
    }
  }
}
