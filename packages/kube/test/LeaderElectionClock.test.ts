/**
 * Leader election's timing on a TestClock: when a cut-off leader stops, when a follower may take
 * over, how fast a released Lease changes hands, and rejoining. The candidates share one in-memory
 * Lease store that answers at once (with optimistic concurrency, as the API server does), so every
 * `TestClock.adjust` lets each candidate finish its round before the test looks: the times below
 * are exact. What the Lease looks like on a real API server is tested in LeaderElection.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Builtins, Kube, LeaderElection } from "@kubefx/kube"
import { Clock, Effect, Random, References } from "effect"
import { TestClock } from "effect/testing"
import { type Store, storeClient } from "./memoryStore.ts"

const timings = { leaseDuration: "1 second", renewDeadline: "600 millis", retryPeriod: "150 millis" } as const

// No jitter: a follower retries exactly every retryPeriod.
const noJitter = { nextDoubleUnsafe: () => 0, nextIntUnsafe: () => 0 } as unknown as Random.Random

interface Candidate {
  readonly elector: LeaderElection.LeaderElector
  /** What happened to this candidate, at which virtual time. */
  readonly log: Array<string>
  /** While true, the candidate's requests fail: it is cut off from the API server. */
  readonly cut: { value: boolean }
}

const candidate = (clock: TestClock.TestClock, store: Store, identity: string, options: { readonly rejoin?: boolean } = {}) =>
  Effect.gen(function*() {
    const log: Array<string> = []
    const cut = { value: false }
    const note = (entry: string) => Effect.sync(() => log.push(`${entry} at ${clock.currentTimeMillisUnsafe()}`))
    const elector = yield* LeaderElection.make({ leaseName: "lease", namespace: "operators", identity, ...timings, ...options }, {
      onStartedLeading: note("started"),
      onStoppedLeading: (deadline) => note(`stopped with deadline ${deadline}`)
    }).pipe(
      Effect.provideService(Kube.Kube, storeClient(store, () => cut.value)),
      Effect.provideService(Clock.Clock, clock),
      Effect.provideService(Random.Random, noJitter),
      Effect.provideService(References.MinimumLogLevel, "None")
    )
    return { elector, log, cut } satisfies Candidate
  })

const holder = (store: Store) =>
  (store.objects.get("leases/operators/lease") as Builtins.Lease | undefined)?.spec?.holderIdentity

// Moves the clock in steps of 10 ms (finer than any timing here), so each sleeper wakes at its own time.
const advance = (clock: TestClock.TestClock, millis: number) =>
  Effect.gen(function*() {
    for (let moved = 0; moved < millis; moved += 10) yield* clock.adjust("10 millis")
  })

describe("LeaderElection on a TestClock", () => {
  it.effect("a leader cut off from the API server stops at its last renewal + renewDeadline; the follower leads only once the Lease it saw has expired", () =>
    Effect.gen(function*() {
      const clock = yield* TestClock.make()
      const store: Store = { objects: new Map(), version: 0 }
      const a = yield* candidate(clock, store, "a")
      const b = yield* candidate(clock, store, "b")
      yield* advance(clock, 0)
      assert.deepStrictEqual(a.log, ["started at 0"])
      assert.strictEqual(holder(store), "a")
      // a renews every 150 ms; b looks every 150 ms and sees each renewal.
      yield* advance(clock, 500)
      assert.strictEqual(b.elector.state()._tag, "Follower")
      a.cut.value = true
      // a's last renewal was at 450: it gives up at 450 + 600, telling its callback the Lease may be
      // taken from 450 + 1000 on.
      yield* advance(clock, 540)
      assert.deepStrictEqual(a.log, ["started at 0"])
      yield* advance(clock, 10)
      assert.deepStrictEqual(a.log, ["started at 0", "stopped with deadline 1450 at 1050"])
      assert.isFalse(a.elector.isLeader())
      // b saw the record change at 450 (its look at 450 comes after a's renewal), so the Lease is
      // a's until 1450 on b's clock; b's next look after that is at 1500.
      yield* advance(clock, 440)
      assert.deepStrictEqual(b.log, [])
      yield* advance(clock, 10)
      assert.deepStrictEqual(b.log, ["started at 1500"])
      assert.strictEqual(holder(store), "b")
      yield* b.elector.stop
    }))

  it.effect("stop releases the Lease: the follower takes over at its next look, not after the lease duration", () =>
    Effect.gen(function*() {
      const clock = yield* TestClock.make()
      const store: Store = { objects: new Map(), version: 0 }
      const a = yield* candidate(clock, store, "a")
      const b = yield* candidate(clock, store, "b")
      yield* advance(clock, 320)
      yield* a.elector.stop
      assert.deepStrictEqual(a.log, ["started at 0", "stopped with deadline 1300 at 320"])
      assert.strictEqual(holder(store), "")
      // b looks at 450, sees the Lease released and takes it, counting one transition.
      yield* advance(clock, 120)
      assert.deepStrictEqual(b.log, [])
      yield* advance(clock, 10)
      assert.deepStrictEqual(b.log, ["started at 450"])
      const lease = store.objects.get("leases/operators/lease") as Builtins.Lease
      assert.strictEqual(lease.spec?.leaseTransitions, 1)
      yield* b.elector.stop
    }))

  it.effect("with rejoin, a leader that lost the Lease follows the new leader and leads again once it is released", () =>
    Effect.gen(function*() {
      const clock = yield* TestClock.make()
      const store: Store = { objects: new Map(), version: 0 }
      const a = yield* candidate(clock, store, "a", { rejoin: true })
      const b = yield* candidate(clock, store, "b")
      yield* advance(clock, 500)
      a.cut.value = true
      yield* advance(clock, 1000)
      assert.deepStrictEqual(a.log, ["started at 0", "stopped with deadline 1450 at 1050"])
      assert.deepStrictEqual(b.log, ["started at 1500"])
      a.cut.value = false
      yield* advance(clock, 150)
      const state = a.elector.state()
      assert.deepStrictEqual(state._tag === "Follower" ? state.leader : state._tag, "b")
      yield* b.elector.stop
      yield* advance(clock, 150)
      assert.deepStrictEqual(a.log, ["started at 0", "stopped with deadline 1450 at 1050", "started at 1800"])
      assert.isTrue(a.elector.isLeader())
      yield* a.elector.stop
    }))
})
