/**
 * Sharded operator replicas in one process on the embedded API server, with short timings (4 s
 * leases, 3 s renew deadline, 200 ms retry period: room for a loaded machine): every object is
 * labelled with one live replica, each replica caches only its own, a new replica takes a share
 * through drains, a replica stopped gracefully or cut off hands its keys over, and no key is ever
 * reconciled by two replicas at once. The protocol's timing is checked on a TestClock in ShardingClock.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome, Shards } from "@kubefx/core"
import { Builtins, Controller, Handover, Kube, Membership, Operator } from "@kubefx/kube"
import { Clock, type Duration, Effect, Exit, Fiber, Metric, References } from "effect"
import type * as OperatorHttp from "../src/operator/OperatorHttp.ts"
import { ensure, eventually, layer as cluster, namespace, partitionable, type Span, spanned } from "./support.ts"

// Short, with room for a loaded machine: a replica lost to a slow renewal would only slow the test down.
const timings = { leaseDuration: "4 seconds", renewDeadline: "3 seconds", retryPeriod: "200 millis" } as const

interface Interval extends Span {
  readonly replica: string
  readonly key: string
}

/** No two intervals of one key overlap, whichever replicas ran them. */
const assertNoOverlap = (intervals: ReadonlyArray<Interval>) => {
  const byKey = new Map<string, Array<Interval>>()
  for (const interval of intervals) byKey.set(interval.key, [...(byKey.get(interval.key) ?? []), interval])
  for (const [key, runs] of byKey) {
    const sorted = [...runs].sort((a, b) => a.start - b.start)
    for (let i = 1; i < sorted.length; i++) {
      assert.isAtMost(sorted[i - 1]!.end, sorted[i]!.start, `${key}: ${sorted[i]!.replica} started while ${sorted[i - 1]!.replica} ran`)
    }
  }
}

const objects = 60

layer(cluster, { excludeTestServices: true, timeout: "120 seconds" })("Sharding on the API server", (it) => {
  it.effect("replicas share the objects, cache only their own, hand keys over on join, leave and cut-off, never overlapping", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < objects; i++) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: ns } })
      }
      const intervals: Array<Interval> = []
      const cuts = new Map<string, boolean>()
      const replica = (identity: string) =>
        Operator.start(Operator.make({
          name: "sharded",
          http: false,
          sharding: { namespace: ns, identity, drainTimeout: "5 seconds", ...timings },
          controllers: [Controller.define({
            name: "sharded",
            for: Builtins.ConfigMap,
            namespace: ns,
            concurrency: 8,
            // Always busy: every key reconciles again 20 ms after each 30 ms run, so moves meet running reconciles.
            reconcile: (object) =>
              spanned(intervals, { replica: identity, key: object.metadata.name }, Effect.sleep("30 millis")).pipe(
                Effect.as(Outcome.requeueAfter("20 millis"))
              )
          })]
        })).pipe(
          Effect.provideService(Kube.Kube, partitionable(kube, () => cuts.get(identity) === true)),
          Effect.provideService(Metric.MetricRegistry, new Map())
        )
      const replicas = new Map<string, Operator.Running>()
      for (const name of ["r1", "r2", "r3"]) replicas.set(name, yield* replica(name))

      const labels = Effect.map(kube.list(Builtins.ConfigMap, { namespace: ns }), (list) =>
        list.items.filter((cm) => cm.metadata.name?.startsWith("cm-")).map((cm) => ({
          name: cm.metadata.name!,
          ...Handover.placement(cm)
        })))
      const settledOn = (members: ReadonlyArray<string>) =>
        eventually(
          Effect.gen(function*() {
            const placed = yield* labels
            // Settled is where the sharder stops: every object with the owner the members' ring names.
            // (A replica seen late by a loaded machine moves keys away and back; its share on the way
            // back is not the end.)
            const ring = Shards.ring(members)
            const stray = placed.filter((p) => p.owner !== Shards.owner(ring, `${ns}/${p.name}`) || p.draining !== undefined)
            yield* ensure(stray.length === 0, `${stray.length} objects not settled on ${members.join(",")}`)
            // Each replica owns a share, and its cache holds exactly the objects labelled with it.
            for (const member of members) {
              yield* ensure(placed.some((p) => p.owner === member), `${member} owns nothing`)
              const cache = replicas.get(member)!.controllers[0]!.controller()?.informer
              const own = placed.filter((p) => p.owner === member).map((p) => `${ns}/${p.name}`).sort()
              yield* ensure(JSON.stringify([...cache?.keys() ?? []].sort()) === JSON.stringify(own), `${member}'s cache is not its share`)
            }
            return placed
          }),
          "60 seconds"
        )
      const reconciledSince = (since: number) => new Set(intervals.filter((i) => i.start >= since).map((i) => i.key))

      // How evenly the ring spreads keys is Shards' own test; 60 keys in a random namespace vary.
      const first = yield* settledOn(["r1", "r2", "r3"])
      const start = yield* Clock.currentTimeMillis
      yield* eventually(Effect.suspend(() => ensure(reconciledSince(start).size === objects, "not every object is reconciled")))

      // A fourth replica takes about a quarter, each key drained from its owner first.
      replicas.set("r4", yield* replica("r4"))
      const joined = yield* settledOn(["r1", "r2", "r3", "r4"])
      // settledOn held every owner to the ring's and r4 to a share; every other key stayed where it was.
      for (const p of joined) {
        if (p.owner !== "r4") assert.strictEqual(p.owner, first.find((f) => f.name === p.name)?.owner, `${p.name} moved elsewhere`)
      }

      // A graceful stop hands its keys over at once: its Lease is deleted.
      yield* replicas.get("r1")!.shutdown
      yield* settledOn(["r2", "r3", "r4"])
      const r1Lease = yield* Effect.exit(kube.get(Builtins.Lease, Membership.leaseName("sharded", "r1"), ns))
      assert.isTrue(Exit.isFailure(r1Lease))

      // A replica cut off from the API server stops, exits, and its keys move once its Lease expired.
      const r2 = replicas.get("r2")!
      const done = yield* Effect.forkChild(Effect.exit(r2.done))
      cuts.set("r2", true)
      yield* settledOn(["r3", "r4"])
      const exit = yield* Fiber.join(done)
      assert.isTrue(Exit.isFailure(exit) && JSON.stringify(exit.cause).includes("MembershipLost"))
      const afterCut = yield* Clock.currentTimeMillis
      yield* eventually(Effect.suspend(() => ensure(reconciledSince(afterCut).size === objects, "not every object is reconciled after the cut")))

      assertNoOverlap(intervals)
      for (const name of ["r2", "r3", "r4"]) yield* replicas.get(name)!.shutdown
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")), 120_000)

  it.effect("two controllers of one kind: a key moves only once both stopped running it on its old owner", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < 20; i++) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: ns } })
      }
      const intervals: Array<Interval> = []
      const busy = (identity: string, controller: string, runFor: Duration.Input) =>
        Controller.define({
          name: controller,
          for: Builtins.ConfigMap,
          namespace: ns,
          concurrency: 20,
          reconcile: (object) =>
            spanned(intervals, { replica: identity, key: `${controller} ${object.metadata.name}` }, Effect.sleep(runFor)).pipe(
              Effect.as(Outcome.requeueAfter("10 millis"))
            )
        })
      const replica = (identity: string) =>
        Operator.start(Operator.make({
          name: "paired",
          http: false,
          sharding: { namespace: ns, identity, drainTimeout: "5 seconds", ...timings },
          controllers: [busy(identity, "quick", "5 millis"), busy(identity, "slow", "400 millis")]
        })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
      const a = yield* replica("a")
      yield* eventually(Effect.suspend(() => ensure(new Set(intervals.map((i) => i.key)).size === 40, "not every key ran on a")))
      const b = yield* replica("b")
      yield* eventually(Effect.suspend(() => ensure(intervals.some((i) => i.replica === "b" && i.key.startsWith("slow")), "b runs nothing yet")), "20 seconds")
      yield* eventually(Effect.gen(function*() {
        const placed = (yield* kube.list(Builtins.ConfigMap, { namespace: ns })).items.map(Handover.placement)
        yield* ensure(placed.every((p) => p.owner !== undefined && p.draining === undefined), "still moving")
      }), "20 seconds")
      assertNoOverlap(intervals)
      yield* a.shutdown
      yield* b.shutdown
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("owned objects carry their owner's shard label: each replica caches only its own objects' children, which follow a move", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < 20; i++) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `parent-${i}`, namespace: ns } })
      }
      const replica = (identity: string) =>
        Operator.start(Operator.make({
          name: "parents",
          http: false,
          sharding: { namespace: ns, identity, ...timings },
          controllers: [Controller.define({
            name: "parents",
            for: Builtins.ConfigMap,
            namespace: ns,
            owns: [Builtins.Secret],
            reconcile: (parent, ctx) =>
              ctx.applyOwned(Builtins.Secret, { metadata: { name: `${parent.metadata.name}-child` }, stringData: { from: "parent" } })
                .pipe(Effect.as(Outcome.done))
          })]
        })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
      const replicas = new Map<string, Operator.Running>([["a", yield* replica("a")], ["b", yield* replica("b")]])
      const childrenFollow = (members: ReadonlyArray<string>) =>
        eventually(Effect.gen(function*() {
          const parents = (yield* kube.list(Builtins.ConfigMap, { namespace: ns })).items.filter((cm) => cm.metadata.name?.startsWith("parent-"))
          const children = (yield* kube.list(Builtins.Secret, { namespace: ns })).items
          yield* ensure(children.length === 20, `${children.length} children`)
          for (const member of members) {
            const own = parents.filter((p) => Handover.placement(p).owner === member).map((p) => `${ns}/${p.metadata.name}-child`).sort()
            yield* ensure(own.length > 0, `${member} owns nothing yet`)
            const cached = replicas.get(member)!.controllers[0]!.controller()?.informers[1]?.keys() ?? []
            yield* ensure(JSON.stringify([...cached].sort()) === JSON.stringify(own), `${member} caches other children`)
          }
          for (const child of children) {
            const parent = parents.find((p) => `${p.metadata.name}-child` === child.metadata.name)
            yield* ensure(Handover.placement(child).owner === Handover.placement(parent!).owner, `${child.metadata.name} is not labelled as its parent`)
          }
        }), "20 seconds")
      yield* childrenFollow(["a", "b"])
      replicas.set("c", yield* replica("c"))
      yield* childrenFollow(["a", "b", "c"])
      for (const running of replicas.values()) yield* running.shutdown
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("the HTTP API shows the shard, the live members and, on the sharder, objects per member; metrics count both", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < 20; i++) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: ns } })
      }
      const replica = (identity: string) =>
        Operator.start(Operator.make({
          name: "observed",
          http: { port: 0 },
          sharding: { namespace: ns, identity, ...timings },
          controllers: [Controller.define({ name: "observed", for: Builtins.ConfigMap, namespace: ns, reconcile: () => Effect.succeed(Outcome.done) })]
        })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
      const a = yield* replica("a")
      const b = yield* replica("b")
      const view = (running: Operator.Running) =>
        Effect.promise(() => fetch(`${running.url}/controllers`).then((r) => r.json() as Promise<OperatorHttp.OperatorView>))
      const sharderOf = Effect.gen(function*() {
        for (const running of [a, b]) {
          const shown = (yield* view(running)).sharding
          if (shown?.assignment != null) return { running, shown }
        }
        return yield* Effect.fail(new Error("no replica runs the sharder yet"))
      })
      const { running, shown } = yield* eventually(Effect.flatMap(sharderOf, (found) => {
        const keys = found.shown.assignment![0]!.keys
        return ensure((keys.a ?? 0) + (keys.b ?? 0) === 20 && keys[""] === undefined && (keys.a ?? 0) > 0 && (keys.b ?? 0) > 0, JSON.stringify(keys))
          .pipe(Effect.as(found))
      }), "20 seconds")
      assert.deepStrictEqual(shown.members, ["a", "b"])
      assert.strictEqual(shown.assignment![0]!.sharder, "observed-sharder")
      assert.strictEqual(shown.lease, `${ns}/${Membership.leaseName("observed", shown.identity)}`)
      const other = running === a ? b : a
      assert.isNull((yield* view(other)).sharding?.assignment)
      // Each replica counts the objects it owns (its cache follows the labels through its watch), and the members it sees.
      const metrics = yield* eventually(Effect.gen(function*() {
        const assignment = (yield* view(running)).sharding?.assignment?.[0]
        const text = yield* Effect.promise(() => fetch(`${running.url}/metrics`).then((r) => r.text()))
        const owned = assignment?.keys[shown.identity]
        yield* ensure(assignment?.draining === 0 && text.includes(`kubefx_shard_keys{controller="observed"} ${owned}\n`), "keys not counted yet")
        return text
      }))
      assert.include(metrics, `kubefx_shard_members{group="observed"} 2`)
      assert.include(metrics, `kubefx_shard_member{group="observed"} 1`)
      const health = yield* Effect.promise(() => fetch(`${running.url}/healthz?verbose`).then((r) => r.text()))
      assert.include(health, "[+]shardMembership ok")
      yield* a.shutdown
      yield* b.shutdown
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("sharding and leader election exclude each other, and a bad identity is refused before anything starts", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const definition = Controller.define({ name: "refused", for: Builtins.ConfigMap, namespace: ns, reconcile: () => Effect.succeed(Outcome.done) })
      const both = yield* Effect.flip(Operator.start(Operator.make({
        name: "refused",
        http: false,
        sharding: { namespace: ns },
        leaderElection: { namespace: ns },
        controllers: [definition]
      })))
      assert.include(both.message, "sharding and leaderElection exclude each other")
      const badName = yield* Effect.flip(Operator.start(Operator.make({
        name: "refused",
        http: false,
        sharding: { namespace: ns, identity: "Replica_1" },
        controllers: [definition]
      })))
      assert.include(badName.message, "identity \"Replica_1\" must be up to 63 lowercase letters")
    }).pipe(Effect.scoped))
})
