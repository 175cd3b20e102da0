/**
 * The per-key rules as pure transitions: each test names the rule and the transition it checks,
 * drives `KeyState.step` with inputs and times, and needs no clock, fibers or queue.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { KeyState, RetryPolicy, Trigger } from "@kubefx/core"

type State = KeyState.KeyState<string> | undefined

/** Steps through inputs, returning the last transition and every command on the way. */
const run = (state: State, ...inputs: ReadonlyArray<KeyState.Input<string>>) => {
  let current = state
  const commands: Array<KeyState.Command> = []
  let last: KeyState.Transition<string> = { state, commands: [] }
  for (const input of inputs) {
    last = KeyState.step(current, input)
    current = last.state
    commands.push(...last.commands)
  }
  return { state: current, last, commands }
}

const add = (now = 0, trigger: Trigger.Trigger = Trigger.event()): KeyState.Input<string> => ({ _tag: "Add", trigger, now })
const take = (now = 0): KeyState.Input<string> => ({ _tag: "Take", now })
const start = (now = 0, maxAttempts?: number): KeyState.Input<string> => ({ _tag: "Start", now, maxAttempts })
const ok = (now = 0, requeueAfter?: Duration.Input): KeyState.Input<string> => ({
  _tag: "Succeeded",
  now,
  requeueAfter: requeueAfter === undefined ? undefined : Duration.fromInputUnsafe(requeueAfter)
})
const fail = (now = 0, kind: "Transient" | "Permanent" | "Defect" = "Transient", retry = true): KeyState.Input<string> => ({
  _tag: "Failed",
  now,
  kind,
  message: "no",
  retry
})
const stepper: RetryPolicy.Stepper<unknown> = () => Effect.succeedNone
const stepped = (delay: Duration.Input | undefined): KeyState.Input<string> => ({
  _tag: "Stepped",
  stepper,
  delay: delay === undefined ? undefined : Duration.fromInputUnsafe(delay)
})
const tags = (commands: ReadonlyArray<KeyState.Command>) => commands.map((command) => command._tag)
const finished = (commands: ReadonlyArray<KeyState.Command>) =>
  commands.filter((command): command is Extract<KeyState.Command, { _tag: "Finished" }> => command._tag === "Finished")

/** A key whose last run failed and armed a retry timer of `delay` at time `at`. */
const retrying = (at: number, delay: Duration.Input) => run(undefined, add(at), take(at), start(at), fail(at), stepped(delay)).state

describe("KeyState", () => {
  describe("R1 serial: Add, Take, Succeeded", () => {
    it("Add to an idle key queues it and offers it once; further Adds merge, first trigger of each kind", () => {
      const { state, commands } = run(undefined, add(0, Trigger.event("a")), add(1, Trigger.related("x")), add(2, Trigger.event("b")))
      assert.deepStrictEqual(tags(commands), ["Offer"])
      assert.strictEqual(state?.phase, "Queued")
      assert.deepStrictEqual(state?.triggers, [Trigger.event("a"), Trigger.related("x")])
      assert.strictEqual(state?.queuedAt, 0)
    })

    it("Add while Running marks the key dirty; Succeeded then queues exactly one follow-up", () => {
      const during = run(undefined, add(), take(), start(), add(5), add(6), add(7))
      assert.strictEqual(during.state?.phase, "Running")
      assert.isTrue(during.state?.dirty)
      assert.deepStrictEqual(tags(during.commands), ["Offer"], "no second offer while it runs")
      const after = run(during.state, ok(10))
      assert.strictEqual(after.state?.phase, "Queued")
      assert.strictEqual(after.state?.queuedAt, 5)
      assert.deepStrictEqual(tags(after.commands), ["Offer", "Finished"])
    })

    it("Take of a key that is not Queued changes nothing (a stale offer)", () => {
      const running = run(undefined, add(), take()).state
      assert.strictEqual(KeyState.step(running, take()).state, running)
      assert.isUndefined(KeyState.step(undefined, take()).state)
    })
  })

  describe("R2 success: Succeeded", () => {
    it("ends the failure streak and records the run", () => {
      const armed = retrying(0, "2 seconds")!
      const { state, commands } = run(armed, { _tag: "TimerFired", timer: armed.timer!, now: 2000 })
      assert.strictEqual(state?.phase, "Queued")
      const done = run(state, take(2000), start(2000), ok(2100))
      assert.strictEqual(done.state?.attempt, 0)
      assert.isUndefined(done.state?.pendingRetry)
      assert.isUndefined(done.state?.stepper)
      assert.deepStrictEqual(done.state?.last?.result, { _tag: "Done" })
      assert.strictEqual(done.state?.last?.durationMillis, 100)
      assert.deepStrictEqual(tags(commands), ["Offer"])
    })

    it("with requeueAfter leaves a reschedule timer", () => {
      const { state, commands } = run(undefined, add(), take(), start(), ok(100, "5 seconds"))
      assert.deepStrictEqual(state?.timer, { at: 5100, trigger: Trigger.reschedule })
      assert.deepStrictEqual(finished(commands)[0]?.next, { at: 5100, trigger: Trigger.reschedule })
      assert.deepStrictEqual(state?.last?.result, { _tag: "RequeueAfter", afterMillis: 5000 })
    })
  })

  describe("R3 supersede: Add and TimerFired", () => {
    it("Add cancels the pending timer; the timer that fires after is ignored", () => {
      const rescheduled = run(undefined, add(), take(), start(), ok(0, "10 seconds")).state!
      const timer = rescheduled.timer!
      const added = KeyState.step(rescheduled, add(5000))
      assert.isUndefined(added.state?.timer)
      assert.deepStrictEqual(tags(added.commands), ["SetTimer", "Offer"])
      const stale = KeyState.step(added.state, { _tag: "TimerFired", timer, now: 10_000 })
      assert.strictEqual(stale.state, added.state)
    })

    it("TimerFired of the current timer queues the key with the timer's trigger and cancels nothing", () => {
      const rescheduled = run(undefined, add(), take(), start(), ok(0, "10 seconds")).state!
      const fired = KeyState.step(rescheduled, { _tag: "TimerFired", timer: rescheduled.timer!, now: 10_000 })
      assert.deepStrictEqual(fired.state?.triggers, [Trigger.reschedule])
      assert.deepStrictEqual(tags(fired.commands), ["Offer"])
    })
  })

  describe("R4 retry: Failed, StepRetry, Stepped", () => {
    it("a transient failure asks the policy for a delay, then arms a retry timer", () => {
      const failed = run(undefined, add(), take(), start(), fail(100))
      assert.deepStrictEqual(failed.last.commands, [{ _tag: "StepRetry", stepper: undefined }])
      assert.strictEqual(failed.state?.phase, "Running", "the run ends only once the delay is known")
      const armed = KeyState.step(failed.state, stepped("2 seconds"))
      assert.deepStrictEqual(armed.state?.timer, { at: 2100, trigger: Trigger.retry })
      assert.strictEqual(armed.state?.stepper, stepper)
      assert.deepStrictEqual(finished(armed.commands)[0]?.run.result, { _tag: "Transient", message: "no" })
    })

    it("only a run the retry timer triggered counts as an attempt", () => {
      const armed = retrying(0, "2 seconds")!
      const retry = run(armed, { _tag: "TimerFired", timer: armed.timer!, now: 2000 }, take(2000), start(2000, 5))
      assert.strictEqual(retry.state?.attempt, 1)
      assert.deepStrictEqual(retry.state?.run?.started?.attempt, { attempt: 1, isLastAttempt: false })
      assert.isUndefined(retry.state?.pendingRetry)
    })
  })

  describe("R5 event during a pending retry: Add, Start, Failed", () => {
    it("the event's run is not counted, and its failure re-arms the same delay without stepping", () => {
      const armed = retrying(0, "3 seconds")!
      const event = run(armed, add(1000), take(1000), start(1000), fail(1200))
      assert.strictEqual(event.state?.attempt, 0)
      assert.deepStrictEqual(event.state?.timer, { at: 4200, trigger: Trigger.retry })
      assert.notInclude(tags(event.commands), "StepRetry")
    })
  })

  describe("R6 exhausted: Stepped without a delay", () => {
    it("marks the key exhausted; the next failure arms nothing and steps nothing; a success resets", () => {
      const exhausted = run(undefined, add(), take(), start(), fail(), stepped(undefined)).state
      assert.isTrue(exhausted?.exhausted)
      assert.isUndefined(exhausted?.timer)
      const again = run(exhausted, add(10), take(10), start(10, 5))
      assert.isTrue(again.state?.run?.started?.attempt.isLastAttempt)
      const failedAgain = KeyState.step(again.state, fail(20))
      assert.deepStrictEqual(tags(failedAgain.commands), ["Finished"])
      assert.isTrue(finished(failedAgain.commands)[0]?.exhausted)
      const success = run(again.state, ok(20))
      assert.isFalse(success.state?.exhausted)
    })
  })

  describe("R8 permanent: Failed", () => {
    it("a permanent failure or an error handler's noRetry leaves no timer and drops the pending retry", () => {
      const permanent = run(retrying(0, "2 seconds"), add(500), take(500), start(500), fail(600, "Permanent"))
      assert.isUndefined(permanent.state?.timer)
      assert.isUndefined(permanent.state?.pendingRetry)
      assert.deepStrictEqual(permanent.state?.last?.result, { _tag: "Permanent", message: "no" })
      const noRetry = run(undefined, add(), take(), start(), fail(0, "Transient", false))
      assert.deepStrictEqual(noRetry.state?.last?.result, { _tag: "Transient", message: "no", noRetry: true })
      assert.isUndefined(noRetry.state?.timer)
    })
  })

  describe("R14 resync: Resync", () => {
    it("resets the streak of a key left alone for a whole period, and queues it with the resync trigger", () => {
      const armed = retrying(0, "1 hour")!
      const early = KeyState.step(armed, { _tag: "Resync", now: 30_000, periodMillis: 60_000 })
      assert.strictEqual(early.state?.stepper, stepper)
      const late = KeyState.step(armed, { _tag: "Resync", now: 60_000, periodMillis: 60_000 })
      assert.isUndefined(late.state?.stepper)
      assert.isUndefined(late.state?.pendingRetry)
      assert.deepStrictEqual(late.state?.triggers, [Trigger.resync])
      assert.deepStrictEqual(tags(late.commands), ["SetTimer", "Offer"])
    })
  })

  describe("R17 forget: Forget", () => {
    it("drops an idle or queued key and cancels its timer", () => {
      const forgotten = KeyState.step(retrying(0, "2 seconds"), { _tag: "Forget" })
      assert.isUndefined(forgotten.state)
      assert.deepStrictEqual(forgotten.commands, [{ _tag: "SetTimer", timer: undefined }])
    })

    it("a running key finishes its run, reports it, and keeps neither state nor timer", () => {
      const { state, commands } = run(undefined, add(), take(), start(), { _tag: "Forget" }, ok(100, "1 minute"))
      assert.isUndefined(state)
      assert.deepStrictEqual(finished(commands).map((c) => c.next), [undefined])
    })

    it("an Add after forgetting a running key gives a fresh key its follow-up run", () => {
      const armed = retrying(0, "2 seconds")!
      const { state } = run(armed, add(100), take(100), start(100), { _tag: "Forget" }, add(150), fail(200))
      assert.strictEqual(state?.phase, "Queued")
      assert.strictEqual(state?.attempt, 0)
      assert.isUndefined(state?.pendingRetry)
      assert.isUndefined(state?.last)
    })
  })

  describe("hold: Interrupted", () => {
    it("puts a taken key back with its triggers and those that came since, and reports a started run", () => {
      const notStarted = run(undefined, add(0, Trigger.retry), take(), add(5, Trigger.event("meanwhile")), { _tag: "Interrupted", now: 6 })
      assert.strictEqual(notStarted.state?.phase, "Queued")
      assert.deepStrictEqual(notStarted.state?.triggers, [Trigger.retry, Trigger.event("meanwhile")])
      assert.strictEqual(notStarted.state?.queuedAt, 0)
      assert.deepStrictEqual(tags(notStarted.last.commands), ["Offer"])
      const started = run(undefined, add(), take(), start(), { _tag: "Interrupted", now: 9 })
      assert.deepStrictEqual(finished(started.last.commands)[0]?.run.result, { _tag: "Interrupted" })
    })
  })

  describe("Snapshot", () => {
    it("keeps the known-good state, except for a key forgotten meanwhile", () => {
      const running = run(undefined, add(), take(), start()).state
      assert.deepStrictEqual(KeyState.step(running, { _tag: "Snapshot", lastGood: Option.some("good") }).state?.lastGood, Option.some("good"))
      const forgotten = KeyState.step(running, { _tag: "Forget" }).state
      assert.strictEqual(KeyState.step(forgotten, { _tag: "Snapshot", lastGood: Option.some("good") }).state, forgotten)
    })
  })

  describe("Table", () => {
    it("apply keeps the queued, running and started counts and the run counts in step with the states", () => {
      const table = KeyState.table<string>()
      KeyState.apply(table, "a", add())
      KeyState.apply(table, "b", add())
      assert.strictEqual(table.queued, 2)
      KeyState.apply(table, "a", take())
      KeyState.apply(table, "a", start())
      assert.deepStrictEqual([table.queued, table.running, table.started], [1, 1, 1])
      KeyState.apply(table, "a", fail())
      KeyState.apply(table, "a", stepped("1 second"))
      assert.deepStrictEqual([table.queued, table.running, table.started], [1, 0, 0])
      assert.deepStrictEqual([table.counts.adds, table.counts.error, table.counts.retries, table.counts.triggers.event], [2, 1, 1, 1])
      KeyState.apply(table, "b", { _tag: "Forget" })
      assert.strictEqual(table.queued, 0)
      assert.isFalse(table.keys.has("b"))
    })
  })
})
