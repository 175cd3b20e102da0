/**
 * An operator: what users deploy. One process runs a set of controllers, each isolated from the
 * others (own queue, workers, retries, health; a failure, a defect or a backlog in one never touches
 * another), started in `dependsOn` order with shared informers, observable over HTTP (probes,
 * Prometheus metrics, controller state), optionally one of several replicas behind a leader Lease,
 * and shut down gracefully: stop taking work, let running reconciles finish within a timeout,
 * interrupt the rest, release the Lease.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Controller as Engine, EngineMetrics } from "@kubefx/core"
import {
  Cause,
  Clock,
  Deferred,
  Duration,
  Effect,
  Exit,
  Layer,
  Predicate,
  PubSub,
  Schema,
  Scope,
  Semaphore,
  Stream
} from "effect"
import * as CacheSync from "../cache/CacheSync.ts"
import type * as Informer from "../cache/Informer.ts"
import type * as ObjectMeta from "../client/ObjectMeta.ts"
import * as Controller from "../controller/Controller.ts"
import * as Handover from "../controller/Handover.ts"
import * as Kube from "../client/Kube.ts"
import type * as KubeConfig from "../client/KubeConfig.ts"
import * as LeaderElection from "./LeaderElection.ts"
import * as Membership from "./Membership.ts"
import * as OperatorHttp from "./OperatorHttp.ts"
import type * as Rbac from "./Rbac.ts"
import * as SharedInformers from "../cache/SharedInformers.ts"
import * as Watcher from "../cache/Watcher.ts"
import * as Sharder from "./Sharder.ts"
import * as Telemetry from "./Telemetry.ts"
import * as WebhookServer from "./WebhookServer.ts"

export class OperatorError extends Schema.TaggedError<OperatorError>()("OperatorError", { message: Schema.String }) {}

/** This replica lost the leader Lease and, configured not to rejoin, stopped. */
export class LeadershipLost extends Schema.TaggedError<LeadershipLost>()("LeadershipLost", { lease: Schema.String }) {}

/** This replica could not renew its shard member Lease: it stopped everything it owned and exits. */
export class MembershipLost extends Schema.TaggedError<MembershipLost>()("MembershipLost", { lease: Schema.String }) {}

export interface LeaderElectionOptions extends Omit<LeaderElection.Options, "leaseName"> {
  /** Default `<operator name>-leader`. */
  readonly leaseName?: string | undefined
}

export interface ShardingOptions extends Omit<Membership.Options, "group"> {
  /** How long a running reconcile of a key moving to another replica may go on; default 30 s. */
  readonly drainTimeout?: Duration.Input | undefined
  /** The Lease that elects the replica running the sharder; default `<operator name>-sharder`. */
  readonly leaseName?: string | undefined
  /** How many replicas `kubefx manifests` deploys; default 3. Replicas may join and leave at any time. */
  readonly replicas?: number | undefined
}

export interface Options<R> {
  /** Names the operator: the default Lease name, the ClusterRole, logs. */
  readonly name: string
  readonly controllers: ReadonlyArray<Controller.Any<R>>
  /** Run as one of several replicas: only the holder of the Lease reconciles. */
  readonly leaderElection?: LeaderElectionOptions | undefined
  /**
   * Run as one of several replicas that share the objects: each caches and reconciles only the
   * objects labelled with its identity (`kubefx.dev/shard`), and one elected replica keeps the
   * labels spread over the live replicas, moving a key only once its old owner stopped running it.
   * Excludes `leaderElection`.
   */
  readonly sharding?: ShardingOptions | undefined
  /** Probes, metrics and controller state; default 127.0.0.1:8080; `false` for none. */
  readonly http?: OperatorHttp.Options | false | undefined
  /** How long running reconciles may finish on shutdown before they are interrupted; default 30 s. */
  readonly shutdownTimeout?: Duration.Input | undefined
  /** Permissions the operator needs beyond its controllers' (for `Rbac`). */
  readonly rbac?: ReadonlyArray<Rbac.PolicyRule> | undefined
  /** Admission webhooks, served over HTTPS (default 127.0.0.1:9443) by every replica. */
  readonly webhooks?: WebhookServer.Options<R> | undefined
  /**
   * How every cache reads the objects there are now: `"list"` (the default) pages through lists,
   * `"streaming"` asks the API server for a streaming list (a watch with `sendInitialEvents`, served
   * from its watch cache), falling back to lists where the server refuses them (`Watcher.InitialList`).
   */
  readonly initialList?: Watcher.InitialListStrategy | undefined
}

/** An operator, declared: a value that `run` starts, and that `Rbac` and `kubefx rbac` read. */
export interface Operator<R = never> {
  readonly _tag: "Operator"
  readonly name: string
  /** Every controller, dependencies included, in an order where each follows its dependencies. */
  readonly controllers: ReadonlyArray<Controller.Any<R>>
  readonly options: Options<R>
}

/**
 * Declares an operator. Controllers named in `dependsOn` but not listed are added.
 *
 * @example
 * import { Operator } from "@kubefx/kube"
 * declare const widgets: import("@kubefx/kube").Controller.Any
 * export const operator = Operator.make({
 *   name: "widgets-operator",
 *   controllers: [widgets],
 *   leaderElection: { namespace: "widgets-system" }
 * })
 */
export const make = <R>(options: Options<R>): Operator<R> => ({
  _tag: "Operator",
  name: options.name,
  controllers: inDependencyOrder(options.controllers),
  options
})

/**
 * Whether a value (a module's export, say) is an operator made by `make`.
 *
 * @example
 * import { Operator } from "@kubefx/kube"
 * const operators = Object.values(await import("./operator.ts")).filter(Operator.isOperator)
 */
export const isOperator = (value: unknown): value is Operator<unknown> =>
  Predicate.hasProperty(value, "_tag") && value._tag === "Operator" &&
  Predicate.hasProperty(value, "controllers") && Array.isArray(value.controllers)

const inDependencyOrder = <R>(definitions: ReadonlyArray<Controller.Any<R>>): ReadonlyArray<Controller.Any<R>> => {
  const ordered: Array<Controller.Any<R>> = []
  const visiting = new Set<Controller.Any<R>>()
  const visit = (definition: Controller.Any<R>) => {
    if (ordered.includes(definition) || visiting.has(definition)) return
    visiting.add(definition)
    for (const dependency of definition.dependsOn) visit(dependency)
    visiting.delete(definition)
    ordered.push(definition)
  }
  for (const definition of definitions) visit(definition)
  return ordered
}

const validate = <R>(operator: Operator<R>): string | undefined => {
  const names = new Set<string>()
  for (const definition of operator.controllers) {
    if (names.has(definition.name)) return `two controllers are named ${definition.name}`
    if (definition.name === "events") return "a controller cannot be named events (the HTTP event stream's path)"
    names.add(definition.name)
  }
  const cycle = (definition: Controller.Any<R>, path: ReadonlyArray<Controller.Any<R>>): string | undefined => {
    if (path.includes(definition)) return [...path.slice(path.indexOf(definition)), definition].map((d) => d.name).join(" -> ")
    for (const dependency of definition.dependsOn) {
      const found = cycle(dependency, [...path, definition])
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const definition of operator.controllers) {
    const found = cycle(definition, [])
    if (found !== undefined) return `dependsOn has a cycle: ${found}`
  }
  const everywhere = operator.controllers.find((definition) => !definition.needLeaderElection)
  if (operator.options.sharding !== undefined && everywhere !== undefined) {
    return `controller ${everywhere.name} sets needLeaderElection false: a sharded operator's replicas split the keys, none runs them all`
  }
  return undefined
}

/**
 * Where a controller of a running operator is: waiting for its dependencies to start, syncing its
 * caches, running (reconciling, or held while this replica does not lead), failed to start, stopped.
 */
export type Phase = "Waiting" | "Syncing" | "Running" | "Failed" | "Stopped"

export interface ControllerHandle {
  readonly name: string
  readonly definition: Controller.Any<unknown>
  readonly phase: () => Phase
  /** Why it failed to start (phase `Failed`): its caches did not sync, say, with the list's error. */
  readonly failure: () => string | undefined
  /** Once started. */
  readonly controller: () => Controller.Running | undefined
}

// A start failure as one line: the error's message (a cache that did not sync says which and why).
const failureMessage = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error.message : String(error)
}

/** One probe check, as `/readyz?verbose` lists them. */
export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly message?: string | undefined
}

export interface Running {
  readonly name: string
  readonly phase: () => "Starting" | "Running" | "Stopping" | "Stopped"
  readonly controllers: ReadonlyArray<ControllerHandle>
  /** With leader election, the leader Lease's; with sharding, the sharder Lease's. */
  readonly leaderElector: LeaderElection.LeaderElector | undefined
  /** This replica's shard membership, when sharded. */
  readonly member: Membership.Member | undefined
  /** Startup: every controller started once. Liveness: the election loop is not stuck. Readiness: caches synced, leader state known, not stopping. */
  readonly checks: {
    readonly startup: () => ReadonlyArray<Check>
    readonly liveness: () => ReadonlyArray<Check>
    readonly readiness: () => ReadonlyArray<Check>
  }
  /** Every finished run of every controller, from the moment of subscription. */
  readonly reports: Stream.Stream<Engine.RunReport>
  /** The HTTP server's address ("http://127.0.0.1:8080"), when it serves. */
  readonly url: string | undefined
  /** The webhook server's address ("https://127.0.0.1:9443"), when the operator has webhooks. */
  readonly webhookUrl: string | undefined
  /** Graceful shutdown (also run when the operator's scope closes); idempotent. */
  readonly shutdown: Effect.Effect<void>
  /** Completes once shut down; fails if this replica lost the Lease and does not rejoin, or its member Lease. */
  readonly done: Effect.Effect<void, LeadershipLost | MembershipLost>
}

// client-go's HealthzAdaptor tolerance in controller-runtime's manager.
const electionTolerance = Duration.toMillis(Duration.seconds(20))

/**
 * Starts the operator in the current scope: the HTTP server, then every controller once its
 * dependencies run (held until this replica leads, with leader election), then the election.
 * Closing the scope shuts it down gracefully.
 *
 * @example
 * import { Effect } from "effect"
 * import { Operator } from "@kubefx/kube"
 * declare const operator: Operator.Operator
 * const program = Effect.scoped(Effect.flatMap(Operator.start(operator), (running) => running.done))
 */
export const start = <R>(
  operator: Operator<R>
): Effect.Effect<
  Running,
  OperatorError | LeaderElection.LeaderElectionError | Membership.MembershipError | OperatorHttp.OperatorHttpError,
  R | Kube.Kube | Scope.Scope
> =>
  Effect.gen(function*() {
    const invalid = validate(operator)
    if (invalid !== undefined) return yield* new OperatorError({ message: invalid })
    const options = operator.options
    // Bad timings fail the start before anything runs.
    if (options.leaderElection !== undefined) yield* LeaderElection.timings(options.leaderElection)
    const sharding = options.sharding
    if (sharding !== undefined) {
      if (options.leaderElection !== undefined) {
        return yield* new OperatorError({ message: "sharding and leaderElection exclude each other: a sharded operator elects the replica that runs its sharder itself" })
      }
      yield* LeaderElection.timings(sharding)
    }
    // Controllers and their informers live in a scope of their own that closes only after the
    // graceful shutdown (a finalizer of the outer scope added later, so run earlier) held them.
    const scope = yield* Scope.fork(yield* Scope.Scope, "sequential")
    const clock = yield* Clock.Clock
    const shared = yield* Scope.provide(SharedInformers.make, scope)
    const reports = yield* PubSub.sliding<Engine.RunReport>(4096)
    const transitions = yield* Semaphore.make(1)
    const stopped = yield* Deferred.make<void, LeadershipLost | MembershipLost>()
    const shutdownTimeout = Duration.fromInputUnsafe(options.shutdownTimeout ?? "30 seconds")
    const electing = options.leaderElection !== undefined
    let phase: "Starting" | "Running" | "Stopping" | "Stopped" = "Starting"
    let leading = !electing
    let startedOnce = false
    let elector: LeaderElection.LeaderElector | undefined
    // A sharded replica is a member before its controllers start, so the sharder may give it keys.
    const member = sharding === undefined ? undefined : yield* Membership.join({ ...sharding, group: operator.name })
    const members = sharding === undefined
      ? undefined
      : yield* Scope.provide(Membership.observe({ group: operator.name, namespace: sharding.namespace, retryPeriod: sharding.retryPeriod }), scope)
    const shard = member === undefined ? undefined : { identity: member.identity }
    // A drain is acknowledged once every controller of the kind released the key: one follower per kind.
    const kindOf = (definition: Controller.Any<R>) => `${definition.for.group}/${definition.for.plural}`
    const followers = new Map<string, { readonly waiting: Set<Controller.Any<R>>; readonly started: Array<Handover.Follower> }>()
    for (const definition of shard === undefined ? [] : operator.controllers) {
      const group = followers.get(kindOf(definition)) ?? { waiting: new Set(), started: [] }
      group.waiting.add(definition)
      followers.set(kindOf(definition), group)
    }
    // Once each controller of the kind started (or failed to: it runs nothing), its drains are followed.
    const follow = (definition: Controller.Any<R>, started: Controller.Running | undefined) =>
      Effect.suspend(() => {
        const group = followers.get(kindOf(definition))
        if (shard === undefined || group === undefined) return Effect.void
        group.waiting.delete(definition)
        if (started !== undefined) group.started.push({ engine: started, informer: started.informer })
        if (group.waiting.size > 0 || group.started.length === 0) return Effect.void
        const drainTimeout = Duration.fromInputUnsafe(sharding?.drainTimeout ?? "30 seconds")
        return Scope.provide(Handover.follow(group.started, { identity: shard.identity, resource: definition.for, drainTimeout }), scope)
      })
    const sharders: Array<Sharder.Sharder> = []
    let sharderLeading = false

    interface Slot {
      phase: Phase
      failure: string | undefined
      controller: Controller.Running | undefined
      readonly started: Deferred.Deferred<Controller.Running>
    }
    const slots = new Map<Controller.Any<R>, Slot>()
    for (const definition of operator.controllers) {
      slots.set(definition, { phase: "Waiting", failure: undefined, controller: undefined, started: Deferred.makeUnsafe() })
    }
    const running = () => Array.from(slots.values(), (slot) => slot.controller).filter((c) => c !== undefined)

    const handles: ReadonlyArray<ControllerHandle> = operator.controllers.map((definition) => {
      const slot = slots.get(definition)!
      return { name: definition.name, definition, phase: () => slot.phase, failure: () => slot.failure, controller: () => slot.controller }
    })

    const startController = (definition: Controller.Any<R>) =>
      Effect.gen(function*() {
        const slot = slots.get(definition)!
        const dependencies = yield* Effect.forEach(definition.dependsOn, (dependency) => Deferred.await(slots.get(dependency)!.started))
        slot.phase = "Syncing"
        const made = yield* definition.run({ dependsOn: dependencies, held: electing && definition.needLeaderElection, shard }).pipe(
          Effect.provideService(SharedInformers.SharedInformers, shared),
          Scope.provide(scope),
          Effect.exit
        )
        if (Exit.isFailure(made)) {
          slot.phase = "Failed"
          slot.failure = failureMessage(made.cause)
          yield* follow(definition, undefined)
          return yield* Effect.logError(`controller ${definition.name} failed to start`, made.cause)
        }
        const started = made.value
        // A kind cached more than once (owned and watched through different selectors) is one series.
        const byKind = new Map<string, Array<Informer.Informer<ObjectMeta.KubeObject>>>()
        for (const informer of started.informers) byKind.set(informer.resource.kind, [...(byKind.get(informer.resource.kind) ?? []), informer])
        for (const [kind, caches] of byKind) {
          yield* Scope.provide(
            EngineMetrics.observeGauge(CacheSync.failingGauge, { controller: definition.name, kind }, () =>
              caches.some((cache) => cache.failure() !== undefined) ? 1 : 0),
            scope
          )
        }
        if (shard !== undefined) {
          yield* Scope.provide(EngineMetrics.observeGauge(Membership.ownedKeys, { controller: definition.name }, () => started.informer.size()), scope)
          yield* follow(definition, started)
        }
        yield* Stream.runForEach(started.reports, (report) => PubSub.publish(reports, report)).pipe(Effect.forkIn(scope))
        yield* transitions.withPermits(1)(Effect.gen(function*() {
          slot.controller = started
          slot.phase = phase === "Stopping" || phase === "Stopped" ? "Stopped" : "Running"
          if ((leading || !definition.needLeaderElection) && slot.phase === "Running") yield* started.resume
        }))
        yield* Deferred.succeed(slot.started, started)
        yield* Effect.logInfo(`controller ${definition.name} started`)
      }).pipe(Effect.annotateLogs({ controller: definition.name }))

    const view: OperatorHttp.Source = {
      name: operator.name,
      controllers: handles,
      leaderElector: () => elector,
      sharding: () =>
        member === undefined || members === undefined ? undefined : {
          identity: member.identity,
          lease: `${sharding?.namespace}/${member.leaseName}`,
          members: members.live(),
          assignment: sharderLeading ? sharders.map((sharder) => ({ sharder: sharder.name, ...sharder.assignment() })) : null
        },
      checks: {
        startup: () => startupChecks(),
        liveness: () => livenessChecks(),
        readiness: () => readinessChecks()
      },
      reports: Stream.fromPubSub(reports)
    }

    const startupChecks = (): ReadonlyArray<Check> => {
      if (!startedOnce) startedOnce = handles.every((handle) => handle.phase() === "Running")
      const failed = handles.filter((handle) => handle.phase() === "Failed").map((handle) => `${handle.name} (${handle.failure()})`)
      const message = startedOnce ? undefined : failed.length > 0 ? `failed to start: ${failed.join(", ")}` : "controllers are starting"
      return [{ name: "controllers", ok: startedOnce, message }]
    }
    const livenessChecks = (): ReadonlyArray<Check> => [
      { name: "ping", ok: true },
      ...(elector === undefined ? [] : [{
        name: "leaderElection",
        ok: elector.healthy(electionTolerance),
        message: elector.healthy(electionTolerance) ? undefined : "leading without renewing the Lease"
      }]),
      ...(member === undefined ? [] : [{
        name: "shardMembership",
        ok: member.healthy(electionTolerance),
        message: member.healthy(electionTolerance) ? undefined : "not renewing the member Lease"
      }])
    ]
    const readinessChecks = (): ReadonlyArray<Check> => {
      const syncing = handles.filter((handle) => handle.phase() !== "Running").map((handle) => `${handle.name} (${handle.phase()})`)
      const known = !electing || (elector !== undefined && elector.state()._tag !== "Unknown")
      return [
        { name: "informers", ok: syncing.length === 0, message: syncing.length === 0 ? undefined : `not synced: ${syncing.join(", ")}` },
        ...(electing ? [{ name: "leaderElection", ok: known, message: known ? undefined : "leader not known yet" }] : []),
        { name: "shutdown", ok: phase === "Starting" || phase === "Running", message: phase === "Stopping" ? "shutting down" : undefined }
      ]
    }

    const server = options.http === false ? undefined : yield* OperatorHttp.serve(view, options.http ?? {})
    const webhookServer = options.webhooks === undefined ? undefined : yield* WebhookServer.serve(options.webhooks)

    for (const definition of operator.controllers) {
      yield* Effect.forkIn(startController(definition), scope, { startImmediately: true })
    }

    const holdAll = (drainTimeout: Duration.Duration, only: (definition: Controller.Any<R>) => boolean = () => true) =>
      Effect.forEach(
        Array.from(slots).flatMap(([definition, slot]) => slot.controller !== undefined && only(definition) ? [slot.controller] : []),
        (c) => c.hold({ drainTimeout }),
        { concurrency: "unbounded", discard: true }
      )

    if (options.leaderElection !== undefined) {
      const le = options.leaderElection
      const made = yield* LeaderElection.make({ ...le, leaseName: le.leaseName ?? `${operator.name}-leader` }, {
        onStartedLeading: transitions.withPermits(1)(Effect.gen(function*() {
          if (phase === "Stopping" || phase === "Stopped") return
          leading = true
          yield* Effect.forEach(running(), (c) => c.resume, { discard: true })
        })),
        // Running reconciles may finish while that still ends safely before `deadline`.
        onStoppedLeading: (deadline) =>
          transitions.withPermits(1)(Effect.gen(function*() {
            leading = false
            const margin = Math.min(1000, (made.timings.leaseDuration - made.timings.renewDeadline) / 2)
            // Controllers that run on every replica go on.
            yield* holdAll(Duration.millis(Math.max(0, deadline - clock.currentTimeMillisUnsafe() - margin)), (definition) => definition.needLeaderElection)
          }))
      })
      elector = made
      if (le.rejoin !== true) {
        yield* made.lost.pipe(
          Effect.andThen(Deferred.fail(stopped, new LeadershipLost({ lease: `${made.namespace}/${made.leaseName}` }))),
          Effect.forkScoped
        )
      }
    }

    if (sharding !== undefined && member !== undefined && members !== undefined) {
      elector = yield* LeaderElection.make({
        leaseName: sharding.leaseName ?? `${operator.name}-sharder`,
        namespace: sharding.namespace,
        identity: member.identity,
        leaseDuration: sharding.leaseDuration,
        renewDeadline: sharding.renewDeadline,
        retryPeriod: sharding.retryPeriod,
        rejoin: true
      }, {
        onStartedLeading: transitions.withPermits(1)(Effect.suspend(() => {
          sharderLeading = true
          return Effect.forEach(sharders, (sharder) => sharder.resume, { discard: true })
        })),
        onStoppedLeading: () =>
          transitions.withPermits(1)(Effect.suspend(() => {
            sharderLeading = false
            return Effect.forEach(sharders, (sharder) => sharder.hold, { discard: true })
          }))
      })
      // One sharder per primary kind, namespaces and selector, whatever number of controllers reconcile it.
      const scopes = new Map<string, Controller.Any<R>>()
      for (const definition of operator.controllers) {
        const resource = definition.for
        const namespaces = definition.namespaces === undefined ? [definition.namespace ?? ""] : [...definition.namespaces].sort()
        scopes.set(JSON.stringify([resource.group, resource.plural, namespaces, definition.labelSelector ?? ""]), definition)
      }
      for (const definition of scopes.values()) {
        const made = Sharder.make({
          name: `${definition.name}-sharder`,
          resource: definition.for,
          namespace: definition.namespace,
          namespaces: definition.namespaces,
          labelSelector: definition.labelSelector,
          members
        })
        yield* Effect.forkIn(
          Effect.flatMap(Scope.provide(made, scope), (sharder) =>
            transitions.withPermits(1)(Effect.suspend(() => {
              sharders.push(sharder)
              return sharderLeading ? sharder.resume : Effect.void
            }))),
          scope,
          { startImmediately: true }
        )
      }
      // A replica that cannot renew its member Lease stops everything it owns before the Lease
      // can expire (when another replica may take its keys), then exits.
      yield* member.lost.pipe(
        Effect.flatMap((deadline) =>
          Effect.andThen(
            transitions.withPermits(1)(Effect.suspend(() => {
              const margin = Math.min(1000, (member.timings.leaseDuration - member.timings.renewDeadline) / 2)
              return holdAll(Duration.millis(Math.max(0, deadline - clock.currentTimeMillisUnsafe() - margin)))
            })),
            Deferred.fail(stopped, new MembershipLost({ lease: `${sharding.namespace}/${member.leaseName}` }))
          )
        ),
        Effect.forkScoped
      )
    }
    phase = "Running"

    const shutdown = Effect.uninterruptible(Effect.gen(function*() {
      if (phase === "Stopping" || phase === "Stopped") return yield* Deferred.await(stopped).pipe(Effect.ignore)
      phase = "Stopping"
      yield* Effect.logInfo(`operator ${operator.name} shutting down: running reconciles have ${Duration.format(shutdownTimeout)}`)
      yield* transitions.withPermits(1)(Effect.sync(() => {
        for (const slot of slots.values()) if (slot.phase !== "Failed" && slot.phase !== "Running") slot.phase = "Stopped"
      }))
      yield* holdAll(shutdownTimeout)
      // Only now that nothing reconciles may another replica take over.
      if (elector !== undefined) yield* elector.stop
      if (member !== undefined) yield* member.leave
      yield* Effect.forEach(running(), (c) => c.shutdown(), { concurrency: "unbounded", discard: true })
      for (const slot of slots.values()) if (slot.phase === "Running") slot.phase = "Stopped"
      phase = "Stopped"
      yield* Deferred.succeed(stopped, undefined)
      yield* Effect.logInfo(`operator ${operator.name} stopped`)
    }))
    yield* Effect.addFinalizer(() => shutdown)

    return {
      name: operator.name,
      phase: () => phase,
      controllers: handles,
      leaderElector: elector,
      member,
      checks: view.checks,
      reports: view.reports,
      url: server?.url,
      webhookUrl: webhookServer?.url,
      shutdown,
      done: Deferred.await(stopped)
    } satisfies Running
  }).pipe((started) =>
    operator.options.initialList === undefined ? started : Effect.provideService(started, Watcher.InitialList, operator.options.initialList)
  )

/**
 * Runs the operator until it is interrupted (SIGTERM/SIGINT under `NodeRuntime.runMain`), which
 * shuts it down gracefully, or until it loses the Lease without rejoining (`LeadershipLost`).
 *
 * @example
 * import { Effect } from "effect"
 * import { Kube, Operator } from "@kubefx/kube"
 * declare const operator: Operator.Operator
 * const main = Operator.run(operator).pipe(Effect.provide(Kube.layer({ _tag: "Default" })))
 */
export const run = <R>(
  operator: Operator<R>
): Effect.Effect<
  void,
  OperatorError | LeadershipLost | MembershipLost | LeaderElection.LeaderElectionError | Membership.MembershipError | OperatorHttp.OperatorHttpError,
  R | Kube.Kube
> =>
  Effect.scoped(Effect.flatMap(start(operator), (running) => running.done))

/**
 * The exit code for how a run ended: 0 for success or a signal (a graceful shutdown), 1 otherwise.
 *
 * @example
 * import { Exit } from "effect"
 * import { Operator } from "@kubefx/kube"
 * Operator.exitCode(Exit.void) // 0
 */
export const exitCode = (exit: Exit.Exit<unknown, unknown>): number =>
  Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1

export interface MainOptions<R> {
  /** Default: $KUBECONFIG, ~/.kube/config or the in-cluster service account, as kubectl looks. */
  readonly kubeconfig?: KubeConfig.Source | undefined
  /** The services the reconcilers need. */
  readonly layer?: Layer.Layer<R, unknown, Kube.Kube> | undefined
  /** JSON logs by default; OTLP tracing when an endpoint is set (or $OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly telemetry?: Telemetry.Options | undefined
}

/**
 * Makes this process stop as on SIGTERM when the IPC channel it was started with closes (Node's
 * `fork`, or "ipc" in `spawn`'s stdio): the channel closes however the parent ends, SIGKILL
 * included, so a harness killed outright leaves nothing of this process running. The channel is
 * unreferenced: it never keeps the process alive by itself. Does nothing without a channel.
 * `main` calls it; a process with a main of its own (over `start`, under `NodeRuntime.runMain`)
 * calls it before running.
 *
 * @example
 * import { Operator } from "@kubefx/kube"
 * Operator.stopWithParent()
 */
export const stopWithParent = (): void => {
  if (process.channel === undefined) return
  process.channel.unref()
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"))
}

/**
 * Runs the operator as a process: JSON logs, the cluster from the kubeconfig, graceful shutdown on
 * SIGTERM or SIGINT and then exit code 0; exit code 1 if it fails or loses the Lease without rejoining.
 * Started with an IPC channel (a test harness's `fork`), it also shuts down when the channel closes,
 * so a parent that is killed outright leaves no operator behind (`stopWithParent`).
 *
 * @example
 * import { Operator } from "@kubefx/kube"
 * declare const operator: Operator.Operator
 * Operator.main(operator, { telemetry: { serviceName: "widgets-operator" } })
 */
export const main = <R>(operator: Operator<R>, options: MainOptions<R> = {}): void => {
  const services = (options.layer ?? Layer.empty) as Layer.Layer<R, unknown, Kube.Kube>
  const program = run(operator).pipe(
    Effect.provide(Layer.provideMerge(services, Kube.layer(options.kubeconfig ?? { _tag: "Default" }))),
    Effect.provide(Telemetry.layer(options.telemetry))
  )
  stopWithParent()
  NodeRuntime.runMain(program, { teardown: (exit, onExit) => onExit(exitCode(exit)) })
}
