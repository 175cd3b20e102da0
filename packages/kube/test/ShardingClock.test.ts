/**
 * Shard membership and the handover's timing on a TestClock, over an in-memory Lease store: when a
 * cut-off member must have stopped, when the others may take its keys, and that a member that
 * never acknowledges a drain keeps its keys until its Lease expired. The protocol on a real API
 * server is tested in Sharding.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Shards } from "@kubefx/core"
import { Kube, Membership } from "@kubefx/kube"
import { Clock, Effect, Fiber, References } from "effect"
import { TestClock } from "effect/testing"
import { type Store, storeClient } from "./memoryStore.ts"

const timings = { leaseDuration: "1 second", renewDeadline: "600 millis", retryPeriod: "150 millis" } as const

const within = <A, E, R>(clock: TestClock.TestClock, store: Store, cut: () => boolean, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(Kube.Kube, storeClient(store, cut)),
    Effect.provideService(Clock.Clock, clock),
    Effect.provideService(References.MinimumLogLevel, "None")
  )

// Moves the clock in steps of 10 ms (finer than any timing here), so each sleeper wakes at its own time.
const advance = (clock: TestClock.TestClock, millis: number) =>
  Effect.gen(function*() {
    for (let moved = 0; moved < millis; moved += 10) yield* clock.adjust("10 millis")
  })

const join = (clock: TestClock.TestClock, store: Store, identity: string, cut: { value: boolean }) =>
  within(clock, store, () => cut.value, Membership.join({ group: "widgets", namespace: "operators", identity, ...timings }))

describe("Shard membership on a TestClock", () => {
  it.effect("a cut-off member is lost at its last renewal + renewDeadline; the others see it gone only once its Lease expired", () =>
    Effect.gen(function*() {
      const clock = yield* TestClock.make()
      const store: Store = { objects: new Map(), version: 0 }
      const cutA = { value: false }
      const a = yield* join(clock, store, "a", cutA)
      yield* join(clock, store, "b", { value: false })
      const members = yield* within(clock, store, () => false, Membership.observe({ group: "widgets", namespace: "operators", retryPeriod: "150 millis" }))
      const lost = yield* Effect.forkChild(a.lost, { startImmediately: true })
      yield* advance(clock, 10)
      assert.deepStrictEqual(members.live(), ["a", "b"])
      // a renews every 150 ms; cut off at 500, its last renewal was at 450.
      yield* advance(clock, 490)
      cutA.value = true
      yield* advance(clock, 540)
      assert.isUndefined(lost.pollUnsafe())
      yield* advance(clock, 20)
      // Lost at 450 + 600, with everything stopped by 450 + 1000, when the Lease may expire.
      assert.strictEqual(yield* Fiber.join(lost), 1450)
      assert.deepStrictEqual(members.live(), ["a", "b"])
      // The observer saw a's last renewal at its poll of 450: a is gone from 1450 on, at the next poll.
      yield* advance(clock, 380)
      assert.deepStrictEqual(members.live(), ["a", "b"])
      yield* advance(clock, 150)
      assert.deepStrictEqual(members.live(), ["b"])
    }).pipe(Effect.scoped))

  it.effect("a member that leaves deletes its Lease and is gone at the next poll, without waiting for expiry", () =>
    Effect.gen(function*() {
      const clock = yield* TestClock.make()
      const store: Store = { objects: new Map(), version: 0 }
      const a = yield* join(clock, store, "a", { value: false })
      yield* join(clock, store, "b", { value: false })
      const members = yield* within(clock, store, () => false, Membership.observe({ group: "widgets", namespace: "operators", retryPeriod: "150 millis" }))
      yield* advance(clock, 300)
      assert.deepStrictEqual(members.live(), ["a", "b"])
      yield* within(clock, store, () => false, a.leave)
      assert.isFalse(store.objects.has(`leases/operators/${Membership.leaseName("widgets", "a")}`))
      yield* advance(clock, 150)
      assert.deepStrictEqual(members.live(), ["b"])
    }).pipe(Effect.scoped))

  it.effect("a key whose owner never acknowledges the drain moves only once the owner's Lease expired", () =>
    Effect.gen(function*() {
      const clock = yield* TestClock.make()
      const store: Store = { objects: new Map(), version: 0 }
      const cutSilent = { value: false }
      // `silent` holds its Lease but runs nothing that could acknowledge a drain.
      const silent = yield* join(clock, store, "silent", cutSilent)
      yield* join(clock, store, "b", { value: false })
      const members = yield* within(clock, store, () => false, Membership.observe({ group: "widgets", namespace: "operators", retryPeriod: "150 millis" }))
      yield* advance(clock, 10)
      const ring = () => Shards.ring(members.live())
      const key = Array.from({ length: 100 }, (_, i) => `default/w-${i}`).find((k) => Shards.owner(ring(), k) === "b")!
      // The sharder's view of the key: owned by `silent`, asked to drain towards b.
      let placement: Shards.Placement = { owner: "silent", draining: undefined, acknowledged: undefined }
      const steps: Array<string> = []
      const sharderRound = Effect.sync(() => {
        const step = Shards.decide(key, placement, ring())
        if (step._tag === "Drain") placement = { ...placement, draining: step.to }
        if (step._tag === "Assign") placement = { owner: step.to, draining: undefined, acknowledged: undefined }
        if (step._tag !== "Keep") steps.push(`${step._tag} at ${clock.currentTimeMillisUnsafe()}`)
      })
      const rounds = yield* Effect.forkChild(Effect.forever(Effect.andThen(sharderRound, Effect.sleep("150 millis"))).pipe(
        Effect.provideService(Clock.Clock, clock)
      ), { startImmediately: true })
      yield* advance(clock, 3000)
      // Drained at once, then nothing: no acknowledgement, and the owner is live.
      assert.deepStrictEqual(steps, ["Drain at 10"])
      const lost = yield* Effect.forkChild(silent.lost, { startImmediately: true })
      cutSilent.value = true
      yield* advance(clock, 2000)
      const deadline = yield* Fiber.join(lost)
      assert.strictEqual(steps.length, 2)
      const movedAt = Number(steps[1]!.replace("Assign at ", ""))
      assert.match(steps[1]!, /^Assign at /)
      // The move waits for the moment the owner must have stopped by (its Lease's expiry), and not much longer.
      assert.isAtLeast(movedAt, deadline)
      assert.isAtMost(movedAt, deadline + 2 * 150)
      yield* Fiber.interrupt(rounds)
    }).pipe(Effect.scoped))
})
