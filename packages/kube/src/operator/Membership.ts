/**
 * Shard membership: each replica of a sharded operator holds a `coordination.k8s.io/v1` Lease of
 * its own, labelled with the group, and renews it as a leader renews the leader Lease (same timings
 * and checks). A replica that cannot renew within the renew deadline is lost: by the moment its
 * Lease can expire it must have stopped everything it owns, so another replica may take its keys
 * once the Lease expired. A replica leaving gracefully stops first, then deletes its Lease.
 *
 * Who is live is read by polling the group's Leases: a Lease is live while its record changed less
 * than a lease duration ago on the observer's own clock (as leader election judges a holder), and
 * gone once deleted or expired.
 *
 * @since 0.1.0
 */
import { Clock, Deferred, Duration, Effect, Fiber, Metric, Schema, Scope, Stream, SubscriptionRef } from "effect"
import { EngineMetrics } from "@kubefx/core"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import * as Builtins from "../client/Builtins.ts"
import * as Kube from "../client/Kube.ts"
import * as LeaderElection from "./LeaderElection.ts"
import * as Renewal from "./Renewal.ts"

/** The label that names a member Lease's group. */
export const groupLabel = "kubefx.dev/shard-group"

export class MembershipError extends Schema.TaggedError<MembershipError>()("MembershipError", {
  message: Schema.String
}) {}

export interface Options extends Pick<LeaderElection.Options, "leaseDuration" | "renewDeadline" | "retryPeriod"> {
  /** The group's name (the operator's): its Leases are `<group>-member-<identity>`. */
  readonly group: string
  readonly namespace: string
  /**
   * This replica's name in the group and on the objects it owns (a label value: up to 63
   * lowercase letters, digits and '-'); default `<hostname>-<random>`.
   */
  readonly identity?: string | undefined
}

export interface Member {
  readonly identity: string
  readonly leaseName: string
  readonly timings: LeaderElection.Timings
  /**
   * Completes, with the deadline (ms), when this replica missed its renew deadline: everything it
   * owns must have stopped by then, the earliest moment another replica may take it over.
   */
  readonly lost: Effect.Effect<number>
  /** False when renewals stopped for longer than the lease duration plus `toleranceMillis`. */
  readonly healthy: (toleranceMillis: number) => boolean
  /** Stops renewing and deletes the Lease: call once nothing this replica owns runs any more. */
  readonly leave: Effect.Effect<void>
}

const identityPattern = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/

const defaultIdentity = (): string => {
  const suffix = randomBytes(3).toString("hex")
  const host = hostname().toLowerCase().replace(/[^a-z0-9-]/g, "-").replace(/^-+|-+$/g, "").slice(0, 63 - suffix.length - 1)
  return host === "" ? `member-${suffix}` : `${host.replace(/-+$/, "")}-${suffix}`
}

/**
 * The member Lease's name for an identity.
 *
 * @example
 * import { Membership } from "@kubefx/kube"
 * Membership.leaseName("widgets-operator", "web-1a2b3c") // "widgets-operator-member-web-1a2b3c"
 */
export const leaseName = (group: string, identity: string): string => `${group}-member-${identity}`

/** `kubefx_shard_member{group}`: 1 while this replica holds its member Lease. */
export const memberStatus = Metric.gauge("kubefx_shard_member", {
  description: "Whether this replica holds its shard member Lease (1) or not (0)"
})

/** `kubefx_shard_members{group}`: the live members this replica sees. */
export const liveMembers = Metric.gauge("kubefx_shard_members", {
  description: "Live members of the shard group, as this replica sees them"
})

/** `kubefx_shard_keys{controller}`: the objects of a sharded controller's kind this replica owns (and caches). */
export const ownedKeys = Metric.gauge("kubefx_shard_keys", {
  description: "Objects of the controller's primary kind that this replica owns and caches"
})

/**
 * Joins the group in the current scope: creates this replica's Lease and renews it until `leave`
 * or the scope closes.
 *
 * @example
 * import { Effect } from "effect"
 * import { Membership } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const member = yield* Membership.join({ group: "widgets-operator", namespace: "operators" })
 *   const deadline = yield* member.lost
 *   yield* Effect.log(`stop everything before ${new Date(deadline).toISOString()}`)
 * })
 */
export const join = (
  options: Options
): Effect.Effect<Member, MembershipError | LeaderElection.LeaderElectionError, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const clock = yield* Clock.Clock
    const times = yield* LeaderElection.timings(options)
    const identity = options.identity ?? defaultIdentity()
    if (!identityPattern.test(identity)) {
      return yield* new MembershipError({
        message: `identity ${JSON.stringify(identity)} must be up to 63 lowercase letters, digits and '-', starting and ending with a letter or digit`
      })
    }
    const name = leaseName(options.group, identity)
    const now = () => clock.currentTimeMillisUnsafe()
    const lostSignal = yield* Deferred.make<number>()
    let holding = false
    let renewedAt = now()

    yield* EngineMetrics.observeGauge(memberStatus, { group: options.group }, () => holding ? 1 : 0)

    const spec = (time: number, previous: Builtins.Lease | undefined) => ({
      holderIdentity: identity,
      leaseDurationSeconds: times.leaseDuration / 1000,
      acquireTime: previous?.spec?.acquireTime ?? Builtins.formatMicroTime(time),
      renewTime: Builtins.formatMicroTime(time),
      leaseTransitions: previous?.spec?.leaseTransitions ?? 0
    })
    const fresh = (time: number): Builtins.Lease => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace: options.namespace, labels: { [groupLabel]: options.group } },
      spec: spec(time, undefined)
    })

    let lease = yield* kube.create(Builtins.Lease, fresh(now())).pipe(
      // The same identity again (a restarted replica given its name): the Lease is ours to renew.
      Effect.catchTag("AlreadyExists", () =>
        Effect.flatMap(kube.get(Builtins.Lease, name, options.namespace), (current) =>
          kube.replace(Builtins.Lease, { ...current, spec: spec(now(), current) }))),
      Effect.mapError((error) => new MembershipError({ message: `could not create member Lease ${options.namespace}/${name}: ${error.message}` }))
    )
    holding = true

    const renewOnce = (start: number) =>
      kube.replace(Builtins.Lease, { ...lease, spec: spec(start, lease) }).pipe(
        Effect.catchTag("Conflict", () =>
          Effect.flatMap(kube.get(Builtins.Lease, name, options.namespace), (current) =>
            kube.replace(Builtins.Lease, { ...current, spec: spec(start, current) }))),
        Effect.map((written) => {
          lease = written
          return true
        }),
        Effect.catch((error) => Effect.as(Effect.logDebug(`could not renew member Lease ${name}: ${error._tag}`), false))
      )

    // Renews every retry period; once a renewal misses the deadline the member is lost.
    const renew = Renewal.untilMissed(times, {
      now,
      renewedAt: () => renewedAt,
      attempt: (start, deadline) =>
        renewOnce(start).pipe(
          Effect.timeoutOption(Duration.millis(deadline - start)),
          Effect.map((ok) => ok._tag === "Some" && ok.value)
        ),
      renewed: (start) => {
        renewedAt = start
      }
    })
    const fiber = yield* Effect.forkScoped(Effect.gen(function*() {
      yield* renew
      holding = false
      yield* Effect.logError(`lost member Lease ${options.namespace}/${name}: no renewal within ${times.renewDeadline} ms`)
      yield* Deferred.succeed(lostSignal, renewedAt + times.leaseDuration)
    }), { startImmediately: true })

    const leave = Effect.gen(function*() {
      yield* Fiber.interrupt(fiber)
      if (!holding) return
      holding = false
      yield* kube.delete(Builtins.Lease, name, options.namespace, lease.metadata.uid === undefined ? {} : { preconditions: { uid: lease.metadata.uid } }).pipe(
        Effect.catch((error) => Effect.logWarning(`could not delete member Lease ${name}: ${error.message}`))
      )
    })

    return {
      identity,
      leaseName: name,
      timings: times,
      lost: Deferred.await(lostSignal),
      healthy: (toleranceMillis) => !holding || now() - renewedAt <= times.leaseDuration + toleranceMillis,
      leave
    } satisfies Member
  })

/** The live members of a group, as one replica sees them. */
export interface Members {
  /** Identities, sorted. */
  readonly live: () => ReadonlyArray<string>
  /** The live members, then every change. */
  readonly changes: Stream.Stream<ReadonlyArray<string>>
  /** Whether a poll has answered yet (before that, nobody is known to be live). */
  readonly known: () => boolean
}

interface Seen {
  readonly record: string
  readonly since: number
  readonly holder: string
  readonly durationMillis: number
}

/**
 * Watches the group's Leases by polling them every retry period, in the current scope.
 *
 * @example
 * import { Effect, Stream } from "effect"
 * import { Membership } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const members = yield* Membership.observe({ group: "widgets-operator", namespace: "operators" })
 *   yield* members.changes.pipe(Stream.runForEach((live) => Effect.log(`members: ${live.join(", ")}`)))
 * })
 */
export const observe = (
  options: Pick<Options, "group" | "namespace" | "retryPeriod">
): Effect.Effect<Members, never, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const clock = yield* Clock.Clock
    const period = Duration.toMillis(Duration.fromInputUnsafe(options.retryPeriod ?? "2 seconds"))
    const state = yield* SubscriptionRef.make<ReadonlyArray<string>>([])
    const seen = new Map<string, Seen>()
    let known = false
    yield* EngineMetrics.observeGauge(liveMembers, { group: options.group }, () => SubscriptionRef.getUnsafe(state).length)

    const poll = Effect.gen(function*() {
      const list = yield* kube.list(Builtins.Lease, { namespace: options.namespace, labelSelector: `${groupLabel}=${options.group}` })
      const now = clock.currentTimeMillisUnsafe()
      const names = new Set<string>()
      for (const lease of list.items) {
        const name = lease.metadata.name ?? ""
        names.add(name)
        const record = JSON.stringify([lease.spec?.holderIdentity, lease.spec?.renewTime, lease.spec?.leaseDurationSeconds])
        if (seen.get(name)?.record === record) continue
        seen.set(name, {
          record,
          since: now,
          holder: lease.spec?.holderIdentity ?? "",
          durationMillis: (lease.spec?.leaseDurationSeconds ?? 15) * 1000
        })
      }
      // A deleted Lease is a member that left after stopping everything: gone at once.
      for (const name of seen.keys()) if (!names.has(name)) seen.delete(name)
      known = true
    }).pipe(Effect.catch((error) => Effect.logDebug(`could not list member Leases: ${error.message}`)))

    const publish = Effect.suspend(() => {
      const now = clock.currentTimeMillisUnsafe()
      const live = Array.from(seen.values()).filter((s) => s.holder !== "" && now < s.since + s.durationMillis).map((s) => s.holder).sort()
      const previous = SubscriptionRef.getUnsafe(state)
      return previous.length === live.length && previous.every((name, i) => name === live[i])
        ? Effect.void
        : SubscriptionRef.set(state, live)
    })

    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.andThen(poll, publish), Effect.sleep(Duration.millis(period)))), {
      startImmediately: true
    })
    return {
      live: () => SubscriptionRef.getUnsafe(state),
      changes: SubscriptionRef.changes(state),
      known: () => known
    } satisfies Members
  })
