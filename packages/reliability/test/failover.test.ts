/**
 * Failover: three operator replicas (child processes) behind a leader Lease (2 s lease, 1 s renew
 * deadline, 200 ms retry period) reconcile Widgets that keep being created and changed. The leader
 * is SIGKILLed: another replica takes the Lease, no two replicas' reconciles ever overlap (each
 * reconcile's start and end are appended to a log file outside the replicas), and every Widget
 * converges on its latest spec.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Widgets from "@kubefx/example-widgets"
import { Builtins, Kube, LeaderElection } from "@kubefx/kube"
import { Effect, Fiber, Schedule } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Cluster from "../src/Cluster.ts"
import * as Fleet from "../src/Fleet.ts"
import * as Intervals from "../src/Intervals.ts"
import * as Processes from "../src/Processes.ts"
import * as Report from "../src/Report.ts"

const namespace = "failover"
const leaseName = "reliability-failover-leader"
const timings = { leaseDuration: 2000, renewDeadline: 1000, retryPeriod: 200 }
const replica = fileURLToPath(new URL("./fixtures/replica.ts", import.meta.url))

describe("failover", () => {
  it.live("the leader SIGKILLed: a new leader in time, reconciles of replicas never overlap, nothing lost", (ctx) =>
    Effect.gen(function*() {
      const entry = Report.start(ctx, "failover", 0)
      const started = Date.now()
      const dir = yield* Cluster.tempDir("kubefx-failover-")
      const { kube, kubeconfig } = yield* Cluster.embedded()
      yield* Cluster.prepare(namespace, [Widgets.Widget]).pipe(Effect.provideService(Kube.Kube, kube))
      const log = join(dir, "reconciles.log")
      writeFileSync(log, "")

      const desired = Fleet.tracked()
      const write = (i: number, message: string) =>
        Effect.andThen(Fleet.applyWidget(namespace, `w-${i}`, message), Effect.sync(() => desired.widgets.set(`w-${i}`, message)))
      yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => i), (i) => write(i, "first"), { concurrency: 8, discard: true }).pipe(
        Effect.provideService(Kube.Kube, kube)
      )

      const identities = ["replica-a", "replica-b", "replica-c"]
      const replicas = new Map<string, Processes.Child>()
      for (const identity of identities) {
        replicas.set(identity, yield* Processes.node(identity, [replica, kubeconfig, namespace, identity, log]))
      }
      const holder = Fleet.persistently(kube.get(Builtins.Lease, leaseName, namespace)).pipe(
        Effect.map((lease) => lease.spec),
        Effect.catchTag("NotFound", () => Effect.succeed(undefined))
      )
      const leader = yield* holder.pipe(
        Effect.repeat({ schedule: Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: "60 seconds" })), until: (spec) => (spec?.holderIdentity ?? "") !== "" }),
        Effect.map((spec) => spec?.holderIdentity ?? "")
      )

      // Work keeps arriving throughout: a new Widget, or a change to an old one, every 20 ms.
      let running = true
      const writer = yield* Effect.forkScoped(Effect.gen(function*() {
        for (let n = 0; running; n++) {
          yield* n % 2 === 0 ? write(100 + n / 2, "first") : write(n % 100, `change-${n}`)
          yield* Effect.sleep("20 millis")
        }
      }).pipe(Effect.provideService(Kube.Kube, kube)))

      // Let the leader work (its caches synced, reconciles flowing), then kill it.
      const reconciledBy = (identity: string) => readFileSync(log, "utf8").split("\n").filter((l) => l.startsWith(`E ${identity} `)).length
      yield* Effect.sync(() => reconciledBy(leader)).pipe(
        Effect.repeat({ schedule: Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: "60 seconds" })), until: (n) => n >= 100 })
      )
      yield* Effect.sleep("500 millis")
      const killed = yield* replicas.get(leader)!.kill("SIGKILL")
      const lastRenew = Date.parse((yield* holder)?.renewTime ?? "")
      const next = yield* holder.pipe(
        Effect.repeat({
          schedule: Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "30 seconds" })),
          until: (spec) => spec?.holderIdentity !== undefined && spec.holderIdentity !== "" && spec.holderIdentity !== leader
        })
      )
      const takeoverMillis = Date.parse(next?.acquireTime ?? "") - killed.at
      yield* Effect.sleep("2 seconds")
      running = false
      yield* Fiber.join(writer)

      const verdict = yield* Fleet.verdict(namespace, desired).pipe(
        Effect.provideService(Kube.Kube, kube),
        Effect.repeat({
          schedule: Schedule.spaced("250 millis").pipe(Schedule.upTo({ duration: "60 seconds" })),
          until: (v) => Fleet.isDone(v, desired.widgets.size)
        })
      )
      // The survivors stop gracefully, the new leader last: stopping it releases the Lease, and a
      // follower still running would take it and reconcile. Then the log is complete.
      const survivors = identities.filter((identity) => identity !== leader)
        .sort((a, b) => Number(a === next?.holderIdentity) - Number(b === next?.holderIdentity))
      for (const identity of survivors) yield* replicas.get(identity)!.kill("SIGTERM")
      const intervals = Intervals.parse(readFileSync(log, "utf8"), { [leader]: killed.at }, Date.now())
      const overlapping = Intervals.overlaps(intervals)
      const byLeader = (identity: string) => intervals.filter((i) => i.identity === identity).length
      const firstByNext = intervals.find((i) => i.identity === next?.holderIdentity)

      const bound = timings.leaseDuration + 2 * timings.retryPeriod * (1 + LeaderElection.jitterFactor)
      entry.objects = desired.widgets.size
      entry.durationMs = Date.now() - started
      entry.converged = verdict.converged
      entry.lostUpdates = verdict.lostUpdates
      Report.count(entry, "leader SIGKILLs", 1)
      entry.details = {
        timings,
        firstLeader: leader,
        newLeader: next?.holderIdentity,
        takeoverMillis,
        takeoverAfterLastRenewMillis: Date.parse(next?.acquireTime ?? "") - lastRenew,
        takeoverBoundMillis: bound,
        withinLeaseDurationPlusRetryPeriod: takeoverMillis <= timings.leaseDuration + timings.retryPeriod,
        firstReconcileOfNewLeaderAfterKillMillis: firstByNext === undefined ? undefined : firstByNext.start - killed.at,
        reconciles: Object.fromEntries(identities.map((identity) => [identity, byLeader(identity)])),
        reconcilesCutByTheKill: intervals.filter((i) => i.cut).length,
        overlappingIntervals: overlapping.length,
        pending: verdict.pending
      }
      assert.notStrictEqual(next?.holderIdentity, leader)
      assert.isAtMost(takeoverMillis, bound)
      assert.isAbove(byLeader(leader), 0)
      assert.isAbove(byLeader(next?.holderIdentity ?? ""), 0)
      assert.strictEqual(byLeader(leader) + byLeader(next?.holderIdentity ?? ""), intervals.length, "a follower reconciled")
      assert.deepStrictEqual(overlapping, [])
      assert.deepStrictEqual(verdict.pending, [])
      assert.strictEqual(verdict.converged, desired.widgets.size)
    }), 120_000)
})
