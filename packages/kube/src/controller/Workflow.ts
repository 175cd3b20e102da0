/**
 * A workflow: dependents (and plain steps) in a DAG of `dependsOn` edges, as a value. Running it
 * reconciles every node whose parents are all ready, independent nodes concurrently; a node whose
 * parent is not ready, or failed, waits; the rest carries on ("as complete as possible", as in
 * JOSDK). A node whose precondition is false is deleted, after everything below it. The result
 * says, per node, whether it is ready, not ready, waiting, skipped, inactive or failed, and maps to
 * one condition per node on the primary. Cleanup deletes the graph in reverse: a node once every
 * node that depends on it is gone.
 *
 * `reconciler` and `cleanup` turn a workflow into the functions `Controller.define` takes.
 *
 * @since 0.1.0
 */
import { Failure, Outcome } from "@kubefx/core"
import { Cause, Clock, Deferred, Duration, Effect, Semaphore } from "effect"
import * as Conditions from "./Conditions.ts"
import type * as Controller from "./Controller.ts"
import * as Dependent from "./Dependent.ts"
import type * as KubeError from "../client/KubeError.ts"
import type * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"
import type * as Rbac from "../operator/Rbac.ts"

/** A plain reconcile step as a node: external state, or anything that is not one object. */
export interface Step<P extends ObjectMeta.KubeObject, E = never, R = never> {
  readonly _tag: "Step"
  readonly name: string
  readonly reconcile: (primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Outcome.Outcome | void, E, R>
  readonly ready: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<boolean, E, R>) | undefined
  readonly reconcileWhen: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<boolean, E, R>) | undefined
  readonly activeWhen: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<boolean, E, R>) | undefined
  /** Undoes the step; `requeueAfter` means still in progress. */
  readonly cleanup: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Outcome.Outcome | void, E, R>) | undefined
}

/** One node of a workflow: a dependent (one object) or a plain step. Names are unique in a workflow. */
export type Node<P extends ObjectMeta.KubeObject, E = never, R = never> = Dependent.Dependent<P, ObjectMeta.KubeObject, E, R, unknown> | Step<P, E, R>

declare const VarianceId: unique symbol

/** A DAG of nodes for primaries of type `P`; `E` and `R` are the unions of its nodes' errors and requirements. */
export interface Workflow<P extends ObjectMeta.KubeObject, E = never, R = never> {
  readonly _tag: "Workflow"
  /** In an order where every node comes after the nodes it depends on. */
  readonly nodes: ReadonlyArray<Node<P, E, R>>
  /** Node name -> the names of the nodes it depends on. */
  readonly dependsOn: ReadonlyMap<string, ReadonlyArray<string>>
  readonly [VarianceId]?: { readonly _P: (primary: Controller.Stored<P>) => void; readonly _E: () => E; readonly _R: () => R }
}

/** Anything a workflow is built from. */
export type Part<P extends ObjectMeta.KubeObject, E = never, R = never> = Node<P, E, R> | Workflow<P, E, R>

/** The errors of a part: a dependent's own and the API's, a step's, or a workflow's nodes'. */
export type Error<T> = T extends Workflow<infer _P, infer E, infer _R> ? E
  : T extends Dependent.Dependent<infer _P, infer _S, infer _E, infer _R, infer _O> ? Dependent.Error<T>
  : T extends Step<infer _P, infer E, infer _R> ? E
  : never

/** The requirements of a part. */
export type Services<T> = T extends Workflow<infer _P, infer _E, infer R> ? R
  : T extends Dependent.Dependent<infer _P, infer _S, infer _E, infer R, infer _O> ? R
  : T extends Step<infer _P, infer _E, infer R> ? R
  : never

/** The primary kind the parts share. */
export type Primary<T> = [T] extends [Part<infer P, unknown, unknown>] ? P : never

/** Any part, whatever its primary, errors and requirements. */
export type AnyPart = Part<never, unknown, unknown>

/** A workflow of these parts. */
export type Of<Parts extends ReadonlyArray<AnyPart>> = Workflow<
  Primary<Parts[number]>,
  Error<Parts[number]>,
  Services<Parts[number]>
>

/**
 * Declares a plain step node.
 *
 * @example
 * import { Effect } from "effect"
 * import { Controller, Workflow } from "@kubefx/kube"
 * const dns = Workflow.step({
 *   name: "dns",
 *   reconcile: (site: { metadata: { name?: string } }) => Effect.log(`register ${site.metadata.name}`),
 *   cleanup: (site) => Effect.log(`unregister ${site.metadata.name}`)
 * })
 */
export const step = <P extends ObjectMeta.KubeObject, E = never, R = never>(options: {
  readonly name: string
  readonly reconcile: (primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Outcome.Outcome | void, E, R>
  readonly ready?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Dependent.Check<E, R>) | undefined
  readonly reconcileWhen?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Dependent.Check<E, R>) | undefined
  readonly activeWhen?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Dependent.Check<E, R>) | undefined
  readonly cleanup?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Outcome.Outcome | void, E, R>) | undefined
}): Step<P, E, R> => ({
  _tag: "Step",
  name: options.name,
  reconcile: options.reconcile,
  ready: Dependent.check(options.ready),
  reconcileWhen: Dependent.check(options.reconcileWhen),
  activeWhen: Dependent.check(options.activeWhen),
  cleanup: options.cleanup
})

const isWorkflow = <P extends ObjectMeta.KubeObject, E, R>(part: Part<P, E, R>): part is Workflow<P, E, R> => part._tag === "Workflow"

const roots = (workflow: Workflow<never, unknown, unknown>) => workflow.nodes.filter((node) => (workflow.dependsOn.get(node.name) ?? []).length === 0)

const leaves = (workflow: Workflow<never, unknown, unknown>) => {
  const parents = new Set(Array.from(workflow.dependsOn.values()).flat())
  return workflow.nodes.filter((node) => !parents.has(node.name))
}

const asWorkflow = <P extends ObjectMeta.KubeObject, E, R>(part: Part<P, E, R>): Workflow<P, E, R> =>
  isWorkflow(part) ? part : { _tag: "Workflow", nodes: [part], dependsOn: new Map() }

// Joins parts and extra edges; checks names and edges, and orders the nodes (Kahn, stable). The
// type of the whole, W, is what the parts' types make it (`Of`); joining values cannot prove it.
const build = <W extends Workflow<never, unknown, unknown>>(
  parts: ReadonlyArray<AnyPart>,
  edges: ReadonlyArray<readonly [node: string, parent: string]>
): W => {
  const nodes = new Map<string, Node<never, unknown, unknown>>()
  const dependsOn = new Map<string, Set<string>>()
  const link = (node: string, parent: string) => {
    if (!nodes.has(node) || !nodes.has(parent)) {
      throw new globalThis.Error(`workflow: ${nodes.has(node) ? parent : node} in dependsOn is not a node of the workflow`)
    }
    if (node === parent) throw new globalThis.Error(`workflow: ${node} depends on itself`)
    dependsOn.get(node)!.add(parent)
  }
  for (const part of parts.map(asWorkflow)) {
    for (const node of part.nodes) {
      const known = nodes.get(node.name)
      if (known !== undefined && known !== node) throw new globalThis.Error(`workflow: two nodes are named ${node.name}`)
      nodes.set(node.name, node)
      if (!dependsOn.has(node.name)) dependsOn.set(node.name, new Set())
    }
    for (const [node, parents] of part.dependsOn) for (const parent of parents) link(node, parent)
  }
  for (const [node, parent] of edges) link(node, parent)

  const ordered: Array<Node<never, unknown, unknown>> = []
  const placed = new Set<string>()
  while (ordered.length < nodes.size) {
    const next = Array.from(nodes.values()).filter((node) =>
      !placed.has(node.name) && Array.from(dependsOn.get(node.name)!).every((parent) => placed.has(parent))
    )
    if (next.length === 0) {
      const cycle = Array.from(nodes.keys()).filter((name) => !placed.has(name))
      throw new globalThis.Error(`workflow: dependsOn has a cycle among ${cycle.join(", ")}`)
    }
    for (const node of next) {
      ordered.push(node)
      placed.add(node.name)
    }
  }
  const workflow: Workflow<never, unknown, unknown> = {
    _tag: "Workflow",
    nodes: ordered,
    dependsOn: new Map(Array.from(dependsOn, ([name, parents]) => [name, Array.from(parents)]))
  }
  return workflow as W
}

/**
 * A workflow of nodes (and workflows) with `dependsOn` edges by node name: any DAG. Throws on
 * duplicate names, unknown names and cycles.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const content: Workflow.Node<any>, deployment: Workflow.Node<any>, service: Workflow.Node<any>
 * const site = Workflow.make({
 *   nodes: [content, deployment, service],
 *   dependsOn: { deployment: ["content"], service: ["deployment"] }
 * })
 */
export const make = <const Parts extends ReadonlyArray<AnyPart>>(options: {
  readonly nodes: Parts
  readonly dependsOn?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
}): Of<Parts> =>
  build<Of<Parts>>(
    options.nodes,
    Object.entries(options.dependsOn ?? {}).flatMap(([node, parents]) => parents.map((parent) => [node, parent] as const))
  )

/**
 * Parts one after another: every root of a part depends on every leaf of the part before it.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const content: Workflow.Node<any>, deployment: Workflow.Node<any>, service: Workflow.Node<any>
 * const site = Workflow.sequence(content, deployment, service)
 */
export const sequence = <const Parts extends ReadonlyArray<AnyPart>>(...parts: Parts): Of<Parts> => {
  const workflows = parts.map(asWorkflow)
  const edges = workflows.slice(1).flatMap((part, i) =>
    roots(part).flatMap((root) => leaves(workflows[i]!).map((leaf) => [root.name, leaf.name] as const))
  )
  return build<Of<Parts>>(workflows, edges)
}

/**
 * Parts side by side, with no edge between them: they run concurrently.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const config: Workflow.Node<any>, secret: Workflow.Node<any>, deployment: Workflow.Node<any>
 * const app = Workflow.sequence(Workflow.parallel(config, secret), deployment)
 */
export const parallel = <const Parts extends ReadonlyArray<AnyPart>>(...parts: Parts): Of<Parts> => build<Of<Parts>>(parts, [])

/**
 * Adds a precondition to every node of a part: when it is false they are not reconciled, and are
 * deleted if they exist.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const ingress: Workflow.Node<{ metadata: {}; spec: { exposed: boolean } }>
 * const exposed = Workflow.when((site: { metadata: {}; spec: { exposed: boolean } }) => site.spec.exposed, ingress)
 */
export const when = <P extends ObjectMeta.KubeObject, const T extends Part<P, unknown, unknown>, E2 = never, R2 = never>(
  condition: (primary: Controller.Stored<P>, context: Controller.Context<P>) => Dependent.Check<E2, R2>,
  part: T
): Workflow<P, Error<T> | E2, Services<T> | R2> => {
  const precondition = Dependent.check(condition)!
  const workflow = asWorkflow(part)
  const guarded = workflow.nodes.map((node): Node<P, unknown, unknown> => ({
    ...node,
    reconcileWhen: (primary, context) =>
      node.reconcileWhen === undefined
        ? precondition(primary, context)
        : Effect.flatMap(precondition(primary, context), (holds) => holds ? node.reconcileWhen!(primary, context) : Effect.succeed(false))
  }))
  return build<Workflow<P, Error<T> | E2, Services<T> | R2>>(
    guarded,
    Array.from(workflow.dependsOn, ([node, parents]) => parents.map((parent) => [node, parent] as const)).flat()
  )
}

/**
 * The kinds of the workflow's owned dependents, for the controller's `owns`.
 *
 * @example
 * import { Controller, Workflow } from "@kubefx/kube"
 * declare const site: Workflow.Workflow<any>
 * const owns = Workflow.owns(site) // [ConfigMap, Deployment, Service]
 */
export const owns = <P extends ObjectMeta.KubeObject, E, R>(workflow: Workflow<P, E, R>): ReadonlyArray<Resource.Resource> =>
  Array.from(new Set(workflow.nodes.flatMap((node) => node._tag === "Dependent" && node.owned ? [node.resource] : [])))

/**
 * The RBAC rules a workflow needs beyond reading its kinds: to apply and delete every dependent
 * (a precondition turned false and the cleanup delete them). `Workflow.controller` declares them,
 * with the extra rules given in its `rbac` option.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const site: Workflow.Workflow<any>
 * const rules = Workflow.rules(site)
 * // [{ apiGroups: [""], resources: ["configmaps"], verbs: ["create", "patch", "delete"] }, ...]
 */
export const rules = <P extends ObjectMeta.KubeObject, E, R>(workflow: Workflow<P, E, R>): ReadonlyArray<Rbac.PolicyRule> =>
  Array.from(new Set(workflow.nodes.flatMap((node) => node._tag === "Dependent" ? [node.resource] : [])), (resource) => ({
    apiGroups: [resource.group],
    resources: [resource.plural],
    verbs: ["create", "patch", "delete"]
  }))

/** How one node ended. */
export type Status<E> =
  /** Reconciled and ready; `applied` when this run wrote it. */
  | { readonly _tag: "Ready"; readonly applied: boolean }
  /** Reconciled, not ready yet: nodes that depend on it wait. */
  | { readonly _tag: "NotReady"; readonly applied: boolean }
  /** Not reconciled: these parents are not ready (or failed, or wait themselves). */
  | { readonly _tag: "Waiting"; readonly on: ReadonlyArray<string> }
  /** Not wanted: its precondition (or that of `because`, which it depends on) is false. `deleted` once it is gone. */
  | { readonly _tag: "Skipped"; readonly because: string; readonly deleted: boolean }
  /** Its activation condition is false: neither reconciled nor deleted. */
  | { readonly _tag: "Inactive" }
  /** Cleanup: deleted. */
  | { readonly _tag: "Deleted" }
  /** Cleanup: deletion requested, not complete yet. */
  | { readonly _tag: "Deleting" }
  | { readonly _tag: "Failed"; readonly cause: Cause.Cause<E> }

/** What one run of a workflow (or of its cleanup) did, node by node. */
export interface Result<E> {
  /** Every node, in workflow order. */
  readonly nodes: ReadonlyArray<{ readonly name: string; readonly status: Status<E> }>
  /** The steps' outcomes, merged (the earliest requeue). */
  readonly outcome: Outcome.Outcome
}

const isGone = (status: Status<unknown>) =>
  status._tag === "Deleted" || status._tag === "Inactive" || (status._tag === "Skipped" && status.deleted)

/**
 * Whether every node is where it should be: ready, or deleted as wanted, or inactive.
 *
 * @example
 * import { Outcome } from "@kubefx/core"
 * import { Workflow } from "@kubefx/kube"
 * Workflow.isComplete({ nodes: [{ name: "a", status: { _tag: "Ready", applied: false } }], outcome: Outcome.done }) // true
 */
export const isComplete = (result: Result<unknown>): boolean =>
  result.nodes.every(({ status }) => status._tag === "Ready" || isGone(status))

/**
 * The failed nodes and why.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const result: Workflow.Result<unknown>
 * Workflow.failures(result).map((f) => f.name)
 */
export const failures = <E>(result: Result<E>): ReadonlyArray<{ readonly name: string; readonly cause: Cause.Cause<E> }> =>
  result.nodes.flatMap(({ name, status }) => status._tag === "Failed" ? [{ name, cause: status.cause }] : [])

const explain = (name: string, status: Status<unknown>): string => {
  switch (status._tag) {
    case "Ready":
      return `${name} is ready`
    case "NotReady":
      return `${name} is not ready`
    case "Waiting":
      return `${name} waits for ${status.on.join(", ")}`
    case "Skipped":
      return `${name} is ${status.deleted ? "skipped" : "being deleted"}: ${
        status.because === name ? "its precondition is false" : `${status.because} is skipped or inactive`
      }`
    case "Inactive":
      return `${name} is inactive`
    case "Deleted":
      return `${name} is deleted`
    case "Deleting":
      return `${name} is being deleted`
    case "Failed":
      return `${name} failed: ${Failure.message(Failure.fromCause(status.cause))}`
  }
}

/**
 * One line about every node that is not where it should be, for a condition message.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const result: Workflow.Result<unknown>
 * Workflow.describe(result) // "deployment is not ready; service waits for deployment"
 */
export const describe = (result: Result<unknown>): string =>
  result.nodes.filter(({ status }) => status._tag !== "Ready" && !isGone(status)).map(({ name, status }) => explain(name, status)).join("; ")

/**
 * The default condition type of a node: its name in PascalCase, then `Ready`.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * Workflow.conditionType("config-map") // "ConfigMapReady"
 */
export const conditionType = (name: string): string =>
  name.split(/[^A-Za-z0-9]+/).filter((word) => word !== "").map((word) => word[0]!.toUpperCase() + word.slice(1)).join("") + "Ready"

const conditionOf = (status: Status<unknown>): { readonly status: Conditions.Status; readonly reason: string } => {
  switch (status._tag) {
    case "Ready":
      return { status: "True", reason: "Ready" }
    case "Waiting":
      return { status: "Unknown", reason: "Waiting" }
    case "Skipped":
      return { status: "False", reason: status.deleted ? "Skipped" : "Deleting" }
    case "Failed":
      return { status: "False", reason: "Failed" }
    default:
      return { status: "False", reason: status._tag }
  }
}

/**
 * One condition per node: `<Name>Ready` True when ready, Unknown while waiting for its parents,
 * False otherwise, with the reason (`NotReady`, `Waiting`, `Skipped`, `Deleting`, `Inactive`,
 * `Failed`) and a message naming what it waits for or why it failed (at most 256 characters).
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const result: Workflow.Result<unknown>
 * const updates = Workflow.conditions(result, { observedGeneration: 3 })
 */
export const conditions = (
  result: Result<unknown>,
  options: { readonly type?: ((name: string) => string) | undefined; readonly observedGeneration?: number | undefined } = {}
): ReadonlyArray<Conditions.Update> =>
  result.nodes.map(({ name, status }) => ({
    type: (options.type ?? conditionType)(name),
    ...conditionOf(status),
    message: status._tag === "Ready" ? "" : Conditions.cut(explain(name, status)),
    observedGeneration: options.observedGeneration
  }))

export interface RunOptions {
  /** Nodes reconciled (or deleted) at the same time; default: all that can. */
  readonly concurrency?: number | undefined
}

const limiter = (concurrency: number | undefined) =>
  concurrency === undefined
    ? Effect.succeed(<A, E, R>(effect: Effect.Effect<A, E, R>) => effect)
    : Effect.map(Semaphore.make(concurrency), (semaphore) => Semaphore.withPermit(semaphore))

// A node's failure is its status; it never stops the traversal.
const orFailed = <R>(effect: Effect.Effect<Status<unknown>, unknown, R>): Effect.Effect<Status<unknown>, never, R> =>
  Effect.catchCause(effect, (cause) => Effect.succeed<Status<unknown>>({ _tag: "Failed", cause }))

// Deletes one node's object (or undoes its step); true when that is complete.
const removeNode = <P extends ObjectMeta.KubeObject>(
  node: Node<P, unknown, unknown>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>,
  outcomes: Array<Outcome.Outcome>
): Effect.Effect<boolean, unknown, unknown> => {
  if (node._tag === "Dependent") return Dependent.remove(node, primary, context)
  if (node.cleanup === undefined) return Effect.succeed(true)
  return Effect.map(node.cleanup(primary, context), (result) => {
    const outcome = result ?? Outcome.done
    outcomes.push(outcome)
    return outcome._tag === "Done"
  })
}

// The generator functions of a run are made once, not per run (see the package README's
// performance notes); the visits a traversal makes per node still make theirs per run.
const reconcileNode = Effect.fnUntraced(function*<P extends ObjectMeta.KubeObject>(
  node: Node<P, unknown, unknown>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>,
  outcomes: Array<Outcome.Outcome>
) {
  if (node.activeWhen !== undefined && !(yield* node.activeWhen(primary, context))) return { _tag: "Inactive" } as const
  if (node.reconcileWhen !== undefined && !(yield* node.reconcileWhen(primary, context))) {
    return { _tag: "Skipped", because: node.name, deleted: false } as const
  }
  if (node._tag === "Dependent") {
    const { applied, ready } = yield* Dependent.reconcile(node, primary, context)
    return { _tag: ready ? "Ready" : "NotReady", applied } as const
  }
  outcomes.push((yield* node.reconcile(primary, context)) ?? Outcome.done)
  const ready = node.ready === undefined ? true : yield* node.ready(primary, context)
  return { _tag: ready ? "Ready" : "NotReady", applied: true } as const
})

/** What visiting a node may use: the concurrency limit, the graph downwards, and the others' final statuses. */
interface Traversal {
  readonly limit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly children: (name: string) => ReadonlyArray<string>
  /** Waits for the final statuses of these nodes. */
  readonly settled: (names: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Status<unknown>>>
  /** Where steps put the outcomes they answer. */
  readonly outcomes: Array<Outcome.Outcome>
}

// Visits every node concurrently; each waits for what it needs through the deferred statuses.
const traverse = <P extends ObjectMeta.KubeObject, E, R>(
  self: Workflow<P, E, R>,
  options: RunOptions,
  visit: (node: Node<P, unknown, unknown>, traversal: Traversal) => Effect.Effect<Status<unknown>, never, unknown>
): Effect.Effect<Result<E>, never, R> =>
  Effect.gen(function*() {
    const below = new Map<string, Array<string>>(self.nodes.map((node) => [node.name, []]))
    for (const [node, parents] of self.dependsOn) for (const parent of parents) below.get(parent)!.push(node)
    const final = new Map(self.nodes.map((node) => [node.name, Deferred.makeUnsafe<Status<unknown>>()]))
    const traversal: Traversal = {
      limit: yield* limiter(options.concurrency),
      children: (name) => below.get(name)!,
      settled: (names) => Effect.forEach(names, (name) => Deferred.await(final.get(name)!)),
      outcomes: []
    }
    const nodes = yield* Effect.forEach(self.nodes, (node) =>
      Effect.map(
        Effect.tap(visit(node, traversal), (status) => Deferred.succeed(final.get(node.name)!, status)),
        (status) => ({ name: node.name, status })
      ), { concurrency: "unbounded" })
    return { nodes, outcome: Outcome.combine(traversal.outcomes) } as Result<E>
  }) as Effect.Effect<Result<E>, never, R>

/**
 * Reconciles the workflow once for a primary (see the module documentation for the rules). Never
 * fails: failures are in the result, per node.
 *
 * @example
 * import { Effect } from "effect"
 * import { Workflow } from "@kubefx/kube"
 * declare const site: Workflow.Workflow<any>
 * declare const primary: any
 * declare const ctx: import("@kubefx/kube").Controller.Context<any>
 * const result = Workflow.run(site, primary, ctx) // Effect<Result>
 */
export const run = <P extends ObjectMeta.KubeObject, E, R>(
  self: Workflow<P, E, R>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>,
  options: RunOptions = {}
): Effect.Effect<Result<E>, never, R> =>
  Effect.suspend(() => {
    // What each node decided, before a skipped node's deletion (which waits for the nodes below it).
    const decided = new Map(self.nodes.map((node) => [node.name, Deferred.makeUnsafe<Status<unknown>>()]))
    return traverse(self, options, (node, { children, limit, outcomes, settled }) =>
      Effect.gen(function*() {
        const parents = self.dependsOn.get(node.name) ?? []
        const above = yield* Effect.forEach(parents, (parent) => Deferred.await(decided.get(parent)!))
        const skippedAt = above.findIndex((status) => status._tag === "Skipped" || status._tag === "Inactive")
        const skippedParent = above[skippedAt]
        const waitingOn = parents.filter((_, i) => above[i]!._tag !== "Ready")
        const decision: Status<unknown> = skippedParent !== undefined
          ? { _tag: "Skipped", because: skippedParent._tag === "Skipped" ? skippedParent.because : parents[skippedAt]!, deleted: false }
          : waitingOn.length > 0
          ? { _tag: "Waiting", on: waitingOn }
          : yield* orFailed(limit(reconcileNode(node, primary, context, outcomes)))
        yield* Deferred.succeed(decided.get(node.name)!, decision)
        if (decision._tag !== "Skipped") return decision
        // A skipped node is deleted once every node below it (all skipped too) is gone.
        const gone = (yield* settled(children(node.name))).every(isGone)
        return gone
          ? yield* orFailed(Effect.map(limit(removeNode(node, primary, context, outcomes)), (deleted) => ({ ...decision, deleted })))
          : decision
      }))
  })

/**
 * Deletes everything the workflow made, in reverse: a node once every node depending on it is gone
 * (deleted, or inactive). Nodes whose activation condition is false are left alone. Never fails:
 * failures are in the result, per node.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const site: Workflow.Workflow<any>
 * declare const primary: any
 * declare const ctx: import("@kubefx/kube").Controller.Context<any>
 * const result = Workflow.runCleanup(site, primary, ctx)
 */
export const runCleanup = <P extends ObjectMeta.KubeObject, E, R>(
  self: Workflow<P, E, R>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>,
  options: RunOptions = {}
): Effect.Effect<Result<E>, never, R> =>
  traverse(self, options, (node, { children, limit, outcomes, settled }) =>
    Effect.gen(function*() {
      const below = children(node.name)
      const statuses = yield* settled(below)
      const waitingOn = below.filter((_, i) => !isGone(statuses[i]!))
      if (waitingOn.length > 0) return { _tag: "Waiting", on: waitingOn }
      return yield* orFailed(limit(Effect.gen(function*() {
        if (node.activeWhen !== undefined && !(yield* node.activeWhen(primary, context))) return { _tag: "Inactive" } as const
        return (yield* removeNode(node, primary, context, outcomes)) ? { _tag: "Deleted" } as const : { _tag: "Deleting" } as const
      })))
    }))

const failWithAll = <E>(result: Result<E>): Effect.Effect<void, E> => {
  const causes = failures(result).map((failure) => failure.cause)
  return causes.length === 0 ? Effect.void : Effect.failCause(causes.reduce(Cause.combine))
}

interface WithConditions {
  readonly status?: { readonly conditions?: ReadonlyArray<Conditions.Condition> } | undefined
}

// Staged with the run's status write (one request with Ready), every node's condition each run:
// the write states all the conditions the controller owns, and is not sent when none changed.
const writeConditions = Effect.fnUntraced(function*<P extends ObjectMeta.KubeObject>(
  primary: Controller.Stored<P>,
  context: Controller.Context<P>,
  updates: ReadonlyArray<Conditions.Update>
) {
  if (context.resource.custom?.status === undefined || updates.length === 0) return
  const next = Conditions.merge((primary as WithConditions).status?.conditions ?? [], updates, yield* Clock.currentTimeMillis)
  yield* context.applyStatus({ status: { conditions: updates.map((update) => Conditions.get(next, update.type)!) } })
})

export interface ReconcilerOptions extends RunOptions {
  /** Write one condition per node (see `conditions`) on the primary's status; default true. Needs `status.conditions` as `Conditions.Conditions`. */
  readonly conditions?: boolean | undefined
  /** The condition type of a node; default `conditionType`. */
  readonly conditionType?: ((name: string) => string) | undefined
  /** Look again after this long while a node is not ready or being deleted (events usually come first); default 30 s. */
  readonly recheckAfter?: Duration.Input | false | undefined
}

/**
 * The `reconcile` of `Controller.make` for a workflow: runs it, writes the per-node conditions,
 * fails with every node failure in the cause, and otherwise reports `Ready=False` with reason
 * `DependentsNotReady` (naming what waits) until every node is ready.
 *
 * @example
 * import { Controller, Workflow } from "@kubefx/kube"
 * declare const site: Workflow.Workflow<any>
 * declare const Website: import("@kubefx/kube").Resource.Resource<any>
 * const websites = Controller.start(Controller.define({
 *   name: "websites",
 *   for: Website,
 *   owns: Workflow.owns(site),
 *   reconcile: Workflow.reconciler(site),
 *   cleanup: Workflow.cleanup(site)
 * }))
 */
export const reconciler = <P extends ObjectMeta.KubeObject, E, R>(
  self: Workflow<P, E, R>,
  options: ReconcilerOptions = {}
): (primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Outcome.Outcome, E | KubeError.KubeError | Resource.DecodeError, R> =>
  Effect.fnUntraced(function*(primary: Controller.Stored<P>, context: Controller.Context<P>) {
    const result = yield* run(self, primary, context, options)
    if (options.conditions !== false) {
      yield* writeConditions(primary, context, conditions(result, {
        type: options.conditionType,
        observedGeneration: primary.metadata.generation
      }))
    }
    yield* failWithAll(result)
    if (isComplete(result)) return result.outcome
    yield* context.setReadyCondition({ status: "False", reason: "DependentsNotReady", message: describe(result) })
    const recheck = options.recheckAfter ?? "30 seconds"
    return recheck === false ? result.outcome : Outcome.combine([result.outcome, Outcome.requeueAfter(recheck)])
  })

export interface CleanupOptions extends RunOptions {
  /** Look again after this long while something is still being deleted (the finalizer stays); default 5 s. */
  readonly recheckAfter?: Duration.Input | undefined
}

/**
 * The `cleanup` of `Controller.make` for a workflow: deletes in reverse order, keeping the
 * finalizer (with a requeue) until everything is gone, and fails with every node failure.
 *
 * @example
 * import { Workflow } from "@kubefx/kube"
 * declare const site: Workflow.Workflow<any>
 * const cleanup = Workflow.cleanup(site, { recheckAfter: "2 seconds" })
 */
export const cleanup = <P extends ObjectMeta.KubeObject, E, R>(
  self: Workflow<P, E, R>,
  options: CleanupOptions = {}
): (primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Outcome.Outcome, E, R> =>
  Effect.fnUntraced(function*(primary: Controller.Stored<P>, context: Controller.Context<P>) {
    const result = yield* runCleanup(self, primary, context, options)
    yield* failWithAll(result)
    return isComplete(result)
      ? result.outcome
      : Outcome.combine([result.outcome, Outcome.requeueAfter(options.recheckAfter ?? Duration.seconds(5))])
  })

/**
 * The parts of a controller a workflow supplies, to spread into `Controller.define`: the kinds it
 * owns, its `reconciler`, its `cleanup` and the RBAC rules they need (`rules`), so the workflow is
 * named once. Rules the reconciler needs besides go in the `rbac` option: an `rbac` given to
 * `Controller.define` after the spread would replace the workflow's own.
 *
 * @example
 * import { Controller, Workflow } from "@kubefx/kube"
 * declare const site: Workflow.Workflow<Website>
 * declare const Website: import("@kubefx/kube").Resource.Resource<Website>
 * type Website = import("@kubefx/kube").ObjectMeta.KubeObject
 * const websites = Controller.define({
 *   name: "websites",
 *   for: Website,
 *   // The reconciler also reads the TLS Secret a Website names.
 *   ...Workflow.controller(site, { rbac: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }] })
 * })
 */
export const controller = <P extends ObjectMeta.KubeObject, E, R>(
  self: Workflow<P, E, R>,
  options: {
    readonly reconcile?: ReconcilerOptions | undefined
    readonly cleanup?: CleanupOptions | undefined
    /** Rules the controller needs besides the workflow's own. */
    readonly rbac?: ReadonlyArray<Rbac.PolicyRule> | undefined
  } = {}
) => ({
  owns: owns(self),
  reconcile: reconciler(self, options.reconcile),
  cleanup: cleanup(self, options.cleanup),
  rbac: [...rules(self), ...(options.rbac ?? [])]
})
