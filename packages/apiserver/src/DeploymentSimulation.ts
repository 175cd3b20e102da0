/**
 * The workload simulator's Deployment and ReplicaSet controllers, as kube-controller-manager's run
 * them: a Deployment's ReplicaSet per pod template, scaled through a rollout (the arithmetic is
 * {@link Rollouts}'), and each ReplicaSet's Pods, made from its template and deleted beyond its
 * replicas; the statuses counted from them, and the controllers' events (`ScalingReplicaSet`,
 * `SuccessfulCreate`, `FailedCreate`, `SuccessfulDelete`).
 */
import { Duration, Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as PodTemplates from "./PodTemplates.ts"
import * as Rest from "./Rest.ts"
import * as Rollouts from "./Rollouts.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Context = SimulatedController.Context
type Key = SimulatedController.Key

const record = KubeObject.record
const count = KubeObject.number
const controlled = SimulatedController.controlled
const writeSpec = SimulatedController.writeObject
const writeStatus = SimulatedController.writeStatus

/**
 * kube-controller-manager's Deployment controller, one look at a Deployment: the ReplicaSet of its
 * current template (made, or taken back with a new revision), scaled up as old ones scale down by
 * the rollout's rules, old ones beyond `revisionHistoryLimit` deleted, and the status from them.
 *
 * @example
 * import * as DeploymentSimulation from "./DeploymentSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const web: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = DeploymentSimulation.deployment(ctx, { storage: "deployments.apps", namespace: "default", name: "web" }, web)
 */
export const deployment = (ctx: Context, key: Key, deployment: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    if (KubeObject.meta(deployment).deletionTimestamp !== undefined) return
    const spec = record(deployment.spec)
    const owned = controlled(ctx.env, "replicasets.apps", key.namespace, deployment)
    const newest = owned.reduce((n, rs) => Math.max(n, Rollouts.revision(rs)), 0)
    const paused = spec.paused === true
    // A paused Deployment rolls nothing out: its newest ReplicaSet stays the one it scales.
    let fresh = owned.find((rs) => Rollouts.runsTemplate(rs, spec.template)) ??
      (paused ? owned.find((rs) => Rollouts.revision(rs) === newest) : undefined)
    if (fresh === undefined) {
      const replicaSets = ctx.env.registry.byStorage("replicasets.apps")[0]
      if (replicaSets === undefined) return
      const made = yield* Effect.result(Rest.create(ctx.env, replicaSets, key.namespace, Rollouts.replicaSetFor(deployment, newest + 1), ctx.writeOptions))
      if (made._tag === "Failure") return
      fresh = made.success.object
    } else if (!paused && Rollouts.revision(fresh) < newest) {
      // A rollback to an earlier template: its ReplicaSet becomes the newest revision.
      yield* writeSpec(ctx, "replicasets.apps", fresh, (current) =>
        KubeObject.withMeta(current, { annotations: Rollouts.revived(current, newest + 1) }))
      fresh = ctx.env.store.get("replicasets.apps", key.namespace, KubeObject.meta(fresh).name ?? "") ?? fresh
    }
    // The Deployment's own annotations (a change cause) go to its new ReplicaSet as they change.
    const copied = Rollouts.copiedAnnotations(deployment)
    if (Object.entries(copied).some(([k, v]) => KubeObject.meta(fresh!).annotations?.[k] !== v)) {
      yield* writeSpec(ctx, "replicasets.apps", fresh, (current) =>
        KubeObject.withMeta(current, { annotations: { ...KubeObject.meta(current).annotations, ...copied } }))
      fresh = ctx.env.store.get("replicasets.apps", key.namespace, KubeObject.meta(fresh).name ?? "") ?? fresh
    }
    const old = owned.filter((rs) => KubeObject.meta(rs).uid !== KubeObject.meta(fresh!).uid)
    const available = (rs: KubeObject.KubeObject) => count(record(rs.status).availableReplicas)
    const plan = Rollouts.scale(deployment, { available: available(fresh) }, old.map((rs) => ({ replicas: count(record(rs.spec).replicas), available: available(rs) })))
    const scaleTo = (rs: KubeObject.KubeObject, replicas: number) => {
      const from = count(record(rs.spec).replicas)
      if (from === replicas) return Effect.void
      const message = `Scaled ${replicas > from ? "up" : "down"} replica set ${KubeObject.meta(rs).name ?? ""} from ${from} to ${replicas}`
      // Scaled, it is told the replicas the Deployment now wants.
      return writeSpec(ctx, "replicasets.apps", rs, (current) => ({
        ...KubeObject.withMeta(current, { annotations: { ...KubeObject.meta(current).annotations, ...Rollouts.replicasAnnotations(deployment) } }),
        spec: { ...record(current.spec), replicas }
      })).pipe(
        Effect.andThen(ControllerEvents.record(ctx.env, ctx.writeOptions, deployment, "deployment-controller", { type: "Normal", reason: "ScalingReplicaSet", message }))
      )
    }
    yield* scaleTo(fresh, plan.newReplicas)
    yield* Effect.forEach(old, (rs, i) => scaleTo(rs, plan.oldReplicas[i]!), { discard: true })
    const revisionNow = String(Rollouts.revision(ctx.env.store.get("replicasets.apps", key.namespace, KubeObject.meta(fresh).name ?? "") ?? fresh))
    if (KubeObject.meta(deployment).annotations?.[Rollouts.revisionAnnotation] !== revisionNow) {
      yield* writeSpec(ctx, "deployments.apps", deployment, (current) =>
        KubeObject.withMeta(current, { annotations: { ...KubeObject.meta(current).annotations, [Rollouts.revisionAnnotation]: revisionNow } }))
    }
    // Old ReplicaSets with no pods left, beyond the history kept, oldest first.
    const limit = count(spec.revisionHistoryLimit, 10)
    const retired = old.filter((rs) => count(record(rs.spec).replicas) === 0 && count(record(rs.status).replicas) === 0)
      .sort((a, b) => Rollouts.revision(a) - Rollouts.revision(b))
    const replicaSets = ctx.env.registry.byStorage("replicasets.apps")[0]
    if (replicaSets !== undefined) {
      for (const rs of retired.slice(0, Math.max(0, retired.length - limit))) {
        yield* Effect.ignore(Rest.remove(ctx.env, { resource: replicaSets, namespace: key.namespace, name: KubeObject.meta(rs).name ?? "" }, { propagationPolicy: "Background", preconditions: undefined, dryRun: false }))
      }
    }
    const all = controlled(ctx.env, "replicasets.apps", key.namespace, deployment)
    const current = all.find((rs) => KubeObject.meta(rs).uid === KubeObject.meta(fresh!).uid) ?? fresh
    yield* writeStatus(ctx, key, (now) => Rollouts.deploymentStatus(now, current, all))
    // A rollout that stops progressing times out: look again at its deadline.
    const written = ctx.env.store.get("deployments.apps", key.namespace, key.name)
    const deadline = written === undefined ? undefined : Rollouts.progressDeadline(written)
    if (deadline !== undefined) yield* ctx.again(key, Duration.millis(Math.max(0, deadline - Date.now()) + 10))
  })

/**
 * kube-controller-manager's ReplicaSet controller, one look at a ReplicaSet: as many Pods as its
 * replicas (made from its template, or the not-ready and newest deleted first), and the status
 * from them, with a `ReplicaFailure` when admission refuses a Pod.
 *
 * @example
 * import * as DeploymentSimulation from "./DeploymentSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const rs: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = DeploymentSimulation.replicaSet(ctx, { storage: "replicasets.apps", namespace: "default", name: "web-abc" }, rs)
 */
export const replicaSet = (ctx: Context, key: Key, replicaSet: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    if (KubeObject.meta(replicaSet).deletionTimestamp !== undefined) return
    const spec = record(replicaSet.spec)
    const pods = ctx.env.registry.byStorage("pods")[0]
    if (pods === undefined) return
    const event = (recorded: ControllerEvents.Event) => ControllerEvents.record(ctx.env, ctx.writeOptions, replicaSet, "replicaset-controller", recorded)
    let own = controlled(ctx.env, "pods", key.namespace, replicaSet)
    const wanted = count(spec.replicas, 1)
    let refused: string | undefined
    const template = record(spec.template)
    for (let i = own.length; i < wanted && refused === undefined; i++) {
      const m = KubeObject.meta(replicaSet)
      const body = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          ...PodTemplates.podMetadata(template),
          generateName: `${key.name}-`,
          ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
        },
        spec: record(template.spec)
      }
      const made = yield* Effect.result(Rest.create(ctx.env, pods, key.namespace, body, ctx.writeOptions))
      if (made._tag === "Failure") refused = made.failure.message
      yield* event(made._tag === "Failure"
        ? { type: "Warning", reason: "FailedCreate", message: `Error creating: ${made.failure.message}` }
        : { type: "Normal", reason: "SuccessfulCreate", message: `Created pod: ${KubeObject.meta(made.success.object).name ?? ""}` })
    }
    if (own.length > wanted) {
      // Not-ready pods go first, then the newest.
      const order = [...own].sort((a, b) => {
        const ready = (p: KubeObject.KubeObject) => (record(p.status).phase === "Running" ? 1 : 0)
        return ready(a) - ready(b) || String(KubeObject.meta(b).creationTimestamp).localeCompare(String(KubeObject.meta(a).creationTimestamp))
      })
      for (const pod of order.slice(0, own.length - wanted)) {
        const m = KubeObject.meta(pod)
        const removed = yield* Effect.result(Rest.remove(ctx.env, { resource: pods, namespace: key.namespace, name: m.name ?? "" }, { propagationPolicy: undefined, preconditions: { uid: m.uid ?? "" }, dryRun: false }))
        if (removed._tag === "Success") yield* event({ type: "Normal", reason: "SuccessfulDelete", message: `Deleted pod: ${m.name ?? ""}` })
      }
    }
    own = controlled(ctx.env, "pods", key.namespace, replicaSet)
    const counts = Rollouts.podCounts(replicaSet, own, Date.now())
    yield* writeStatus(ctx, key, (current) => Rollouts.replicaSetStatus(current, counts, refused))
    // A pod waiting out minReadySeconds becomes available without an event: look again then.
    const minReady = count(spec.minReadySeconds)
    if (minReady > 0 && counts.available < counts.ready) yield* ctx.again(key, Duration.seconds(minReady))
  })

