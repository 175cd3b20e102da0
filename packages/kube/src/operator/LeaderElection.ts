/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's algorithm and timings
 * (15 s lease, 10 s renew deadline, 2 s retry period): candidates poll the Lease and take it once
 * its holder has not renewed it for a whole lease duration, as they observed it on their own clock;
 * the leader renews every retry period; writes carry the read resourceVersion, so two candidates
 * never both win.
 *
 * One difference makes the guarantee explicit: the renew deadline counts from the start of the last
 * successful renewal (client-go counts from the first retry after it). Another replica can only
 * take the Lease a whole lease duration after that moment, so a leader that misses its deadline has
 * at least `leaseDuration - renewDeadline` to stop what the Lease guards (`onStoppedLeading`).
 *
 * @since 0.1.0
 */
import { Clock, Deferred, Duration, Effect, Fiber, Metric, Option, Random, Schema, Scope, Stream, SubscriptionRef } from "effect"
import { EngineMetrics } from "@kubefx/core"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import * as Builtins from "../client/Builtins.ts"
import * as Events from "../controller/Events.ts"
import * as Kube from "../client/Kube.ts"
import * as Renewal from "./Renewal.ts"

export class LeaderElectionError extends Schema.TaggedError<LeaderElectionError>()("LeaderElectionError", {
  message: Schema.String
}) {}

export interface Options {
  /** The Lease every replica of the operator competes for. */
  readonly leaseName: string
  readonly namespace: string
  /** This replica's identity; default `<hostname>_<uuid>`. */
  readonly identity?: string | undefined
  /** How long a Lease holds without renewal; a whole number of seconds (the Lease stores seconds). Default 15 s. */
  readonly leaseDuration?: Duration.Input | undefined
  /** How long the leader keeps trying to renew before it stops leading; default 10 s. */
  readonly renewDeadline?: Duration.Input | undefined
  /** Between attempts to acquire or renew (jittered up to x2.2 while acquiring); default 2 s. */
  readonly retryPeriod?: Duration.Input | undefined
  /** After losing the Lease, campaign again as a follower (true) or stop for good (false, the default). */
  readonly rejoin?: boolean | undefined
}

/** Validated timings, in milliseconds. */
export interface Timings {
  readonly leaseDuration: number
  readonly renewDeadline: number
  readonly retryPeriod: number
}

/** client-go's JitterFactor: acquire attempts wait `retryPeriod * (1 + random * 1.2)`. */
export const jitterFactor = 1.2

/**
 * The timings, checked as client-go checks them: lease > renew deadline > 1.2 x retry period > 0.
 *
 * @example
 * import { Effect } from "effect"
 * import { LeaderElection } from "@kubefx/kube"
 * Effect.runSync(LeaderElection.timings({})) // { leaseDuration: 15000, renewDeadline: 10000, retryPeriod: 2000 }
 */
export const timings = (
  options: Pick<Options, "leaseDuration" | "renewDeadline" | "retryPeriod">
): Effect.Effect<Timings, LeaderElectionError> => {
  const millis = (input: Duration.Input | undefined, fallback: string) =>
    Duration.toMillis(Duration.fromInputUnsafe(input ?? (fallback as Duration.Input)))
  const leaseDuration = millis(options.leaseDuration, "15 seconds")
  const renewDeadline = millis(options.renewDeadline, "10 seconds")
  const retryPeriod = millis(options.retryPeriod, "2 seconds")
  const fail = (message: string) => Effect.fail(new LeaderElectionError({ message }))
  if (!(retryPeriod > 0)) return fail("retryPeriod must be greater than zero")
  if (leaseDuration < 1000 || leaseDuration % 1000 !== 0) {
    return fail("leaseDuration must be a whole number of seconds, at least one (the Lease stores seconds)")
  }
  if (leaseDuration <= renewDeadline) return fail("leaseDuration must be greater than renewDeadline")
  if (renewDeadline <= jitterFactor * retryPeriod) return fail("renewDeadline must be greater than retryPeriod x 1.2")
  return Effect.succeed({ leaseDuration, renewDeadline, retryPeriod })
}

export type State =
  /** No answer about the Lease yet. */
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "Follower"; readonly leader: string | undefined }
  | { readonly _tag: "Leader"; readonly since: number }

export interface Callbacks {
  /** Runs when this replica becomes the leader. */
  readonly onStartedLeading: Effect.Effect<void>
  /**
   * Runs when this replica stops leading (lost the Lease, or `stop`); must have stopped everything
   * the Lease guards by `deadline` (ms), the earliest moment another replica may take it.
   */
  readonly onStoppedLeading: (deadline: number) => Effect.Effect<void>
}

export interface LeaderElector {
  readonly identity: string
  readonly leaseName: string
  readonly namespace: string
  readonly timings: Timings
  readonly state: () => State
  /** The current state, then every change. */
  readonly changes: Stream.Stream<State>
  readonly isLeader: () => boolean
  /**
   * client-go's healthz check: false when this replica believes it leads but has not renewed for
   * longer than the lease duration plus `toleranceMillis` (a stuck election loop).
   */
  readonly healthy: (toleranceMillis: number) => boolean
  /** Completes when this replica has lost the Lease and, not rejoining, campaigns no more. */
  readonly lost: Effect.Effect<void>
  /** Stops campaigning; a leader first runs `onStoppedLeading`, then releases the Lease for the others. */
  readonly stop: Effect.Effect<void>
}

/** `leader_election_master_status{name}`: 1 while this replica leads (client-go's metric). */
export const masterStatus = Metric.gauge("leader_election_master_status", {
  description: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master"
})

type LeaseSpec = NonNullable<Builtins.Lease["spec"]>

// What client-go compares byte for byte: a change of any field restarts the expiry clock.
const recordOf = (spec: LeaseSpec | undefined) =>
  JSON.stringify([
    spec?.holderIdentity ?? "",
    spec?.leaseDurationSeconds ?? null,
    spec?.acquireTime ?? null,
    spec?.renewTime ?? null,
    spec?.leaseTransitions ?? null
  ])

/**
 * Campaigns for the Lease in the current scope; closing the scope stops campaigning without
 * releasing (use `stop` for a graceful hand-over).
 *
 * @example
 * import { Effect } from "effect"
 * import { LeaderElection } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const elector = yield* LeaderElection.make({ leaseName: "widgets-operator", namespace: "operators" }, {
 *     onStartedLeading: Effect.log("leading"),
 *     onStoppedLeading: (deadline) => Effect.log(`stop everything before ${new Date(deadline).toISOString()}`)
 *   })
 *   yield* elector.lost
 * })
 */
export const make = (
  options: Options,
  callbacks: Callbacks
): Effect.Effect<LeaderElector, LeaderElectionError, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const scope = yield* Scope.Scope
    const clock = yield* Clock.Clock
    const times = yield* timings(options)
    const identity = options.identity ?? `${hostname()}_${randomUUID()}`
    if (identity === "" || options.leaseName === "") {
      return yield* new LeaderElectionError({ message: "identity and leaseName must not be empty" })
    }
    const { leaseName, namespace } = options
    const leaseDurationSeconds = times.leaseDuration / 1000
    const description = `${namespace}/${leaseName}`
    const events = yield* Events.make({ component: "leader-election", instance: identity })
    const state = yield* SubscriptionRef.make<State>({ _tag: "Unknown" })
    const lostSignal = yield* Deferred.make<void>()

    // The Lease as last read or written, and when its record last changed on this replica's clock.
    let lease: Builtins.Lease | undefined
    let observedRecord = ""
    let observedAt = 0
    let leading = false
    let renewedAt = 0

    yield* EngineMetrics.observeGauge(masterStatus, { name: leaseName }, () => leading ? 1 : 0)

    const now = () => clock.currentTimeMillisUnsafe()
    const holderOf = (object: Builtins.Lease | undefined) => object?.spec?.holderIdentity ?? ""
    const observe = (object: Builtins.Lease) => {
      const record = recordOf(object.spec)
      if (record !== observedRecord) {
        observedRecord = record
        observedAt = now()
      }
      lease = object
    }
    const setState = (next: State) => SubscriptionRef.set(state, next)

    const specAt = (time: number, previous: LeaseSpec | undefined, keepAcquired: boolean): LeaseSpec => {
      const micro = Builtins.formatMicroTime(time)
      return {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: keepAcquired ? previous?.acquireTime ?? micro : micro,
        renewTime: micro,
        leaseTransitions: keepAcquired ? previous?.leaseTransitions ?? 0 : (previous?.leaseTransitions ?? -1) + 1
      }
    }

    const write = (object: Builtins.Lease) =>
      kube.replace(Builtins.Lease, object).pipe(
        Effect.tap((object) => Effect.sync(() => observe(object))),
        Effect.as(true),
        Effect.catch((error) => Effect.as(Effect.logDebug(`could not write Lease ${description}: ${error._tag}`), false))
      )

    const create = (time: number) =>
      kube.create(Builtins.Lease, {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: leaseName, namespace },
        spec: specAt(time, undefined, false)
      }).pipe(
        Effect.tap((object) => Effect.sync(() => observe(object))),
        Effect.as(true),
        Effect.catch((error) => Effect.as(Effect.logDebug(`could not create Lease ${description}: ${error._tag}`), false))
      )

    // One round of client-go's tryAcquireOrRenew.
    const tryAcquireOrRenew = Effect.gen(function*() {
      const start = now()
      // The leader's fast path: write over the Lease it last wrote, without reading it first.
      if (leading && lease !== undefined && start < renewedAt + times.renewDeadline) {
        if (yield* write({ ...lease, spec: { ...lease.spec, ...specAt(start, lease.spec, true) } })) return true
      }
      const current = yield* kube.get(Builtins.Lease, leaseName, namespace).pipe(Effect.result)
      if (current._tag === "Failure") {
        if (current.failure._tag === "NotFound") return yield* create(start)
        yield* Effect.logWarning(`could not read Lease ${description}: ${current.failure.message}`)
        return false
      }
      observe(current.success)
      const holder = holderOf(current.success)
      const heldFor = (current.success.spec?.leaseDurationSeconds ?? leaseDurationSeconds) * 1000
      const ours = holder === identity
      if (holder !== "" && !ours && observedAt + heldFor > start) return false
      return yield* write({ ...current.success, spec: { ...current.success.spec, ...specAt(start, current.success.spec, ours) } })
    })

    // An attempt never outlives the moment it would be pointless (the renew deadline).
    const attempt = (until: number) =>
      Effect.suspend(() => {
        const left = until - now()
        return left <= 0 ? Effect.succeed(false) : tryAcquireOrRenew.pipe(
          Effect.timeoutOption(Duration.millis(left)),
          Effect.map((ok) => Option.getOrElse(ok, () => false))
        )
      })

    const followerState = () =>
      Effect.suspend(() => {
        const leader = holderOf(lease) || undefined
        const current = SubscriptionRef.getUnsafe(state)
        return current._tag === "Follower" && current.leader === leader ? Effect.void : setState({ _tag: "Follower", leader })
      })

    const acquire = Effect.gen(function*() {
      yield* Effect.logInfo(`attempting to acquire Lease ${description} as ${identity}`)
      while (true) {
        const start = now()
        if (yield* attempt(start + times.renewDeadline)) {
          renewedAt = start
          return
        }
        yield* followerState()
        const jitter = yield* Random.next
        yield* Effect.sleep(Duration.millis(times.retryPeriod * (1 + jitter * jitterFactor)))
      }
    })

    // Renews every retry period; returns once a renewal missed the deadline.
    const renew = Renewal.untilMissed(times, {
      now,
      renewedAt: () => renewedAt,
      attempt: (_, deadline) => attempt(deadline),
      renewed: (start) => {
        renewedAt = start
      }
    })

    const stopLeading = Effect.uninterruptible(Effect.gen(function*() {
      if (!leading) return
      leading = false
      const deadline = renewedAt + times.leaseDuration
      yield* followerState()
      yield* callbacks.onStoppedLeading(deadline)
    }))

    const campaign = Effect.gen(function*() {
      while (true) {
        yield* acquire
        yield* Effect.uninterruptible(Effect.gen(function*() {
          leading = true
          yield* setState({ _tag: "Leader", since: renewedAt })
          yield* Effect.logInfo(`acquired Lease ${description} as ${identity}`)
          if (lease !== undefined) yield* events.record(lease, { type: "Normal", reason: "LeaderElection", message: `${identity} became leader` })
          yield* callbacks.onStartedLeading
        }))
        yield* renew
        yield* Effect.logWarning(`lost Lease ${description}: no renewal within ${times.renewDeadline} ms`)
        yield* stopLeading
        if (options.rejoin !== true) {
          yield* Deferred.succeed(lostSignal, undefined)
          return
        }
      }
    })

    const fiber = yield* Effect.forkIn(campaign, scope, { startImmediately: true })

    const release = Effect.gen(function*() {
      const time = now()
      const micro = Builtins.formatMicroTime(time)
      const released = (object: Builtins.Lease): Builtins.Lease => ({
        ...object,
        spec: {
          ...object.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: micro,
          renewTime: micro,
          leaseTransitions: object.spec?.leaseTransitions ?? 0
        }
      })
      if (lease !== undefined && (yield* write(released(lease)))) return
      // The Lease moved on since we last wrote it: release only if it is still ours.
      const current = yield* Effect.option(kube.get(Builtins.Lease, leaseName, namespace))
      if (Option.isSome(current) && holderOf(current.value) === identity) yield* write(released(current.value))
    })

    const stop = Effect.gen(function*() {
      const wasLeading = leading
      yield* Fiber.interrupt(fiber)
      yield* stopLeading
      if (wasLeading) {
        yield* release
        yield* Effect.logInfo(`released Lease ${description}`)
        if (lease !== undefined) yield* events.record(lease, { type: "Normal", reason: "LeaderElection", message: `${identity} stopped leading` })
      }
      yield* followerState()
    })

    return {
      identity,
      leaseName,
      namespace,
      timings: times,
      state: () => SubscriptionRef.getUnsafe(state),
      changes: SubscriptionRef.changes(state),
      isLeader: () => leading,
      healthy: (toleranceMillis) => !leading || now() - renewedAt <= times.leaseDuration + toleranceMillis,
      lost: Deferred.await(lostSignal),
      stop
    } satisfies LeaderElector
  })
