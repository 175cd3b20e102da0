/**
 * Leader election on the embedded API server, with short timings (1 s lease, 600 ms renew
 * deadline, 150 ms retry period): the Lease record client-go writes, hand-over on release and on
 * expiry, and three operator replicas in one process whose reconciles never overlap. The exact
 * times (deadlines, expiry, rejoining) are checked on a TestClock in LeaderElectionClock.test.ts.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube, LeaderElection, Operator } from "@kubefx/kube"
import { Clock, Effect, Metric, References, Ref } from "effect"
import { ensure, eventually, layer as cluster, namespace, partitionable, type Span, spanned } from "./support.ts"

const timings = { leaseDuration: "1 second", renewDeadline: "600 millis", retryPeriod: "150 millis" } as const
const microTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

const quiet = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provideService(References.MinimumLogLevel, "None"))

const getLease = (ns: string, name: string) => Effect.flatMap(Kube.Kube, (kube) => kube.get(Builtins.Lease, name, ns))

describe("LeaderElection.timings", () => {
  it.effect("defaults to client-go's and rejects what client-go rejects", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* LeaderElection.timings({}), { leaseDuration: 15000, renewDeadline: 10000, retryPeriod: 2000 })
      const error = (options: Parameters<typeof LeaderElection.timings>[0]) =>
        Effect.map(Effect.flip(LeaderElection.timings(options)), (e) => e.message)
      assert.include(yield* error({ leaseDuration: "10 seconds" }), "leaseDuration must be greater than renewDeadline")
      assert.include(yield* error({ renewDeadline: "2 seconds" }), "renewDeadline must be greater than retryPeriod x 1.2")
      assert.include(yield* error({ leaseDuration: "1500 millis", renewDeadline: "1 second", retryPeriod: "100 millis" }), "whole number of seconds")
      assert.include(yield* error({ retryPeriod: 0 }), "retryPeriod must be greater than zero")
    }))
})

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("LeaderElection on the API server", (it) => {
  it.effect("the first candidate creates the Lease as client-go does; MicroTime round-trips exactly; a second follows", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const a = yield* LeaderElection.make({ leaseName: "first", namespace: ns, identity: "a", ...timings }, {
        onStartedLeading: Effect.void,
        onStoppedLeading: () => Effect.void
      })
      yield* eventually(Effect.suspend(() => ensure(a.isLeader(), "a does not lead")))
      const lease = yield* getLease(ns, "first")
      assert.strictEqual(lease.spec?.holderIdentity, "a")
      assert.strictEqual(lease.spec?.leaseDurationSeconds, 1)
      assert.strictEqual(lease.spec?.leaseTransitions, 0)
      assert.match(lease.spec?.acquireTime ?? "", microTime)
      assert.match(lease.spec?.renewTime ?? "", microTime)
      // Renewals move renewTime and keep acquireTime.
      const renewed = yield* eventually(Effect.flatMap(getLease(ns, "first"), (l) =>
        l.spec?.renewTime !== lease.spec?.renewTime ? Effect.succeed(l) : Effect.fail(new Error("not renewed"))))
      assert.strictEqual(renewed.spec?.acquireTime, lease.spec?.acquireTime)

      // A MicroTime is stored and served exactly as written, digit for digit.
      const written = "2026-01-02T03:04:05.123456Z"
      yield* kube.create(Builtins.Lease, {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "micro", namespace: ns },
        spec: { holderIdentity: "x", acquireTime: written, renewTime: written }
      })
      const raw = (yield* kube.request({ method: "GET", path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/micro` })) as {
        spec: { acquireTime: string; renewTime: string }
      }
      assert.deepStrictEqual([raw.spec.acquireTime, raw.spec.renewTime], [written, written])

      const b = yield* LeaderElection.make({ leaseName: "first", namespace: ns, identity: "b", ...timings }, {
        onStartedLeading: Effect.void,
        onStoppedLeading: () => Effect.void
      })
      yield* eventually(Effect.suspend(() => {
        const state = b.state()
        return ensure(state._tag === "Follower" && state.leader === "a", JSON.stringify(state))
      }))
      assert.isFalse(b.isLeader())
      yield* a.stop
      yield* b.stop
    }).pipe(quiet))

  it.effect("stop runs onStoppedLeading, then releases: the follower takes over at once, counting a transition", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const log = yield* Ref.make<Array<string>>([])
      const note = (entry: string) => Ref.update(log, (xs) => [...xs, entry])
      const candidate = (identity: string) =>
        LeaderElection.make({ leaseName: "handover", namespace: ns, identity, ...timings }, {
          onStartedLeading: note(`${identity} started`),
          onStoppedLeading: () => note(`${identity} stopped`)
        })
      const a = yield* candidate("a")
      yield* eventually(Effect.suspend(() => ensure(a.isLeader(), "a does not lead")))
      const b = yield* candidate("b")
      yield* eventually(Effect.suspend(() => ensure(b.state()._tag === "Follower", "b has not looked yet")))
      yield* a.stop
      yield* eventually(Effect.suspend(() => ensure(b.isLeader(), "b does not lead")))
      assert.deepStrictEqual(yield* Ref.get(log), ["a started", "a stopped", "b started"])
      const lease = yield* getLease(ns, "handover")
      assert.strictEqual(lease.spec?.holderIdentity, "b")
      assert.strictEqual(lease.spec?.leaseTransitions, 1)
      assert.strictEqual(Metric.isMetric(LeaderElection.masterStatus), true)
      yield* b.stop
      assert.strictEqual((yield* getLease(ns, "handover")).spec?.holderIdentity, "")
    }).pipe(quiet))

  it.effect("three replicas: exactly one reconciles; stopping it hands over to one other; reconciles never overlap", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (const name of ["a", "b", "c"]) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns } })
      }
      const intervals: Array<{ readonly replica: string } & Span> = []
      const cuts = new Map<string, boolean>()
      const replica = (identity: string) =>
        Operator.start(Operator.make({
          name: "replicated",
          http: false,
          leaderElection: { namespace: ns, identity, ...timings },
          controllers: [Controller.define({
            name: "replicated",
            for: Builtins.ConfigMap,
            namespace: ns,
            concurrency: 3,
            // Always busy: every key reconciles again 20 ms after each 30 ms run.
            reconcile: () => spanned(intervals, { replica: identity }, Effect.sleep("30 millis")).pipe(Effect.as(Outcome.requeueAfter("20 millis")))
          })]
        })).pipe(
          Effect.provideService(Kube.Kube, partitionable(kube, () => cuts.get(identity) === true)),
          Effect.provideService(Metric.MetricRegistry, new Map())
        )
      const replicas = new Map([["r1", yield* replica("r1")], ["r2", yield* replica("r2")], ["r3", yield* replica("r3")]])
      const leaders = () => [...replicas].filter(([, r]) => r.leaderElector?.isLeader() === true).map(([name]) => name)
      const reconciledBy = (since: number) => new Set(intervals.filter((i) => i.start >= since).map((i) => i.replica))

      yield* eventually(Effect.suspend(() => ensure(leaders().length === 1 && intervals.length > 20, "no steady leader yet")))
      const first = leaders()[0]!
      const settled = yield* Clock.currentTimeMillis
      // Every key runs again each 50 ms: wait for fifteen more runs, then ask who ran them.
      const runsSince = (since: number) => intervals.filter((i) => i.start >= since).length
      yield* eventually(Effect.suspend(() => ensure(runsSince(settled) >= 15, "the leader is not reconciling")))
      assert.deepStrictEqual([...reconciledBy(settled)], [first])
      // Followers keep their caches warm and their controllers held.
      for (const [name, running] of replicas) {
        const controller = running.controllers[0]!.controller()!
        assert.strictEqual(controller.informer.size(), 3)
        assert.strictEqual(controller.isHeld(), name !== first)
      }

      // Stopping the leader hands over to one of the others. (Counted from the end of its shutdown:
      // a run it began while stopping is its last, not a second leader.)
      yield* replicas.get(first)!.shutdown
      const stopAt = yield* Clock.currentTimeMillis
      yield* eventually(Effect.suspend(() => ensure(reconciledBy(stopAt).size === 1 && !reconciledBy(stopAt).has(first), "no hand-over yet")))
      const second = [...reconciledBy(stopAt)][0]!

      // Cutting the new leader off: it stops, and only after its Lease expired does the last one lead.
      const cutAt = yield* Clock.currentTimeMillis
      cuts.set(second, true)
      yield* eventually(Effect.suspend(() => {
        const now = reconciledBy(cutAt)
        return ensure(now.size === 2 && !now.has(first), `reconciled since the cut: ${[...now].join(",")}`)
      }))
      // The last replica leads and has run fifteen times since the cut: still one leader, not the cut one.
      const third = [...reconciledBy(cutAt)].find((name) => name !== second)!
      yield* eventually(Effect.suspend(() =>
        ensure(intervals.filter((i) => i.replica === third && i.start >= cutAt).length >= 15, "the last replica is not reconciling")))
      assert.deepStrictEqual(leaders(), [third])

      // No two replicas ever reconciled at the same time.
      const latestEnd = new Map<string, number>()
      for (const interval of [...intervals].sort((x, y) => x.start - y.start)) {
        for (const [other, end] of latestEnd) {
          if (other !== interval.replica) {
            assert.isAtMost(end, interval.start, `${interval.replica} started at ${interval.start} while ${other} ran until ${end}`)
          }
        }
        latestEnd.set(interval.replica, Math.max(latestEnd.get(interval.replica) ?? 0, interval.end))
      }
      for (const running of replicas.values()) yield* running.shutdown
    }).pipe(quiet))

  it.effect("a controller that needs no leader election runs on every replica, leading or not, and goes on when leadership moves", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one", namespace: ns } })
      // Who ran each controller: "elected" by default, "local" on every replica.
      const runs = yield* Ref.make<Array<{ readonly controller: string; readonly replica: string; readonly at: number }>>([])
      const recorded = (controller: string, replica: string) => () =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => Ref.update(runs, (xs) => [...xs, { controller, replica, at }])).pipe(
          Effect.as(Outcome.requeueAfter("50 millis"))
        )
      const replica = (identity: string) =>
        Operator.start(Operator.make({
          name: "mixed",
          http: false,
          leaderElection: { namespace: ns, identity, ...timings },
          controllers: [
            Controller.define({ name: "elected", for: Builtins.ConfigMap, namespace: ns, reconcile: recorded("elected", identity) }),
            Controller.define({ name: "local", for: Builtins.ConfigMap, namespace: ns, needLeaderElection: false, reconcile: recorded("local", identity) })
          ]
        })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
      const replicas = new Map([["r1", yield* replica("r1")], ["r2", yield* replica("r2")]])
      const leaders = () => [...replicas].filter(([, r]) => r.leaderElector?.isLeader() === true).map(([name]) => name)
      const ranSince = (since: number, controller: string) =>
        Effect.map(Ref.get(runs), (xs) => [...new Set(xs.filter((x) => x.at >= since && x.controller === controller).map((x) => x.replica))].sort())
      yield* eventually(Effect.suspend(() => ensure(leaders().length === 1, "no leader yet")))
      const first = leaders()[0]!
      const settled = yield* Clock.currentTimeMillis
      yield* eventually(Effect.flatMap(ranSince(settled, "local"), (by) => ensure(by.join() === "r1,r2", by.join())))
      assert.deepStrictEqual(yield* ranSince(settled, "elected"), [first])
      for (const [name, running] of replicas) {
        const held = Object.fromEntries(running.controllers.map((c) => [c.name, c.controller()!.isHeld()]))
        assert.deepStrictEqual(held, { elected: name !== first, local: false })
      }
      // The leader gone, the other leads; its own "local" never stopped.
      yield* replicas.get(first)!.shutdown
      replicas.delete(first)
      const second = [...replicas.keys()][0]!
      const handedOver = yield* Clock.currentTimeMillis
      yield* eventually(Effect.flatMap(ranSince(handedOver, "elected"), (by) => ensure(by.join() === second, by.join())))
      assert.deepStrictEqual(yield* ranSince(handedOver, "local"), [second])
      yield* replicas.get(second)!.shutdown
    }).pipe(quiet))

  it.effect("a sharded operator refuses a controller that needs no leader election", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(Operator.start(Operator.make({
        name: "sharded-everywhere",
        http: false,
        sharding: { namespace: "default" },
        controllers: [Controller.define({ name: "everywhere", for: Builtins.ConfigMap, needLeaderElection: false, reconcile: () => Effect.succeed(Outcome.done) })]
      })))
      assert.strictEqual(refused.message, "controller everywhere sets needLeaderElection false: a sharded operator's replicas split the keys, none runs them all")
    }))
})
