/**
 * The workload simulator's StatefulSet controller, as kube-controller-manager's runs it: the
 * set's revisions as ControllerRevisions, its Pods `<name>-<ordinal>` (and their claims) made,
 * replaced and deleted one step at a time (the steps are {@link StatefulSets}'), events for each,
 * and the status counted from the Pods.
 */
import { Duration, Effect } from "effect"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as ControllerRevisions from "./ControllerRevisions.ts"
import * as Rest from "./Rest.ts"
import * as Rollouts from "./Rollouts.ts"
import * as SimulatedController from "./SimulatedController.ts"
import * as StatefulSets from "./StatefulSets.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const count = KubeObject.number
const component = "statefulset-controller"

const nameOf = (object: KubeObject.KubeObject) => KubeObject.meta(object).name ?? ""

/**
 * kube-controller-manager's StatefulSet controller, one look at a StatefulSet: its update revision
 * (made, or an earlier one taken back as the newest), the next step of its rollout, revisions
 * beyond `revisionHistoryLimit` that no pod runs deleted, and the status from its pods.
 *
 * @example
 * import * as StatefulSetSimulation from "./StatefulSetSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const db: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = StatefulSetSimulation.statefulSet(ctx, { storage: "statefulsets.apps", namespace: "default", name: "db" }, db)
 */
export const statefulSet = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  set: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const { env } = ctx
    const pods = env.registry.byStorage("pods")[0]
    const claims = env.registry.byStorage("persistentvolumeclaims")[0]
    if (KubeObject.meta(set).deletionTimestamp !== undefined || pods === undefined) return
    const event = (type: "Normal" | "Warning", reason: string, message: string) =>
      ControllerEvents.record(env, ctx.writeOptions, set, component, { type, reason, message })

    // The update revision: the current template's, made or taken back as the newest.
    const updateName = StatefulSets.revisionName(set)
    const history = yield* ControllerRevisions.ensure(ctx, key.namespace, set, updateName)
    if (history === undefined) return
    const storedCurrent = record(set.status).currentRevision
    const currentName = typeof storedCurrent === "string" && history.some((r) => nameOf(r) === storedCurrent) ? storedCurrent : updateName
    const currentRevision = history.find((r) => nameOf(r) === currentName)

    // One step of the rollout.
    // Pods being deleted (held by a finalizer) count: an ordered rollout waits for them to go.
    const members = () => SimulatedController.controlled(env, "pods", key.namespace, set, true)
    const step = StatefulSets.next(set, members(), updateName, Date.now())
    for (const { ordinal, revision } of step.create) {
      const template = revision === "current" && currentRevision !== undefined
        ? ControllerRevisions.template(currentRevision)
        : record(record(set.spec).template)
      const body = StatefulSets.pod(set, ordinal, revision === "current" ? currentName : updateName, template)
      const podName = nameOf(body)
      let refused = false
      for (const claim of claims === undefined ? [] : StatefulSets.claims(set, ordinal)) {
        if (env.store.get("persistentvolumeclaims", key.namespace, nameOf(claim)) !== undefined) continue
        const made = yield* Effect.result(Rest.create(env, claims!, key.namespace, claim, ctx.writeOptions))
        refused ||= made._tag === "Failure"
        yield* made._tag === "Failure"
          ? event("Warning", "FailedCreate", `create Claim ${nameOf(claim)} for Pod ${podName} in StatefulSet ${key.name} failed error: ${made.failure.message}`)
          : event("Normal", "SuccessfulCreate", `create Claim ${nameOf(claim)} Pod ${podName} in StatefulSet ${key.name} success`)
      }
      if (refused) break
      const made = yield* Effect.result(Rest.create(env, pods, key.namespace, body, ctx.writeOptions))
      if (made._tag === "Failure") {
        yield* event("Warning", "FailedCreate", `create Pod ${podName} in StatefulSet ${key.name} failed error: ${made.failure.message}`)
        break
      }
      yield* event("Normal", "SuccessfulCreate", `create Pod ${podName} in StatefulSet ${key.name} successful`)
    }
    for (const pod of step.remove) {
      // A scaled-down pod's claims that go with it get it as their owner first.
      const at = StatefulSets.ordinal(pod, key.name)
      const start = count(record(record(set.spec).ordinals).start)
      if (at >= start + count(record(set.spec).replicas, 1)) {
        for (const claimName of StatefulSets.claimsDeletedWith(set, at)) {
          const claim = env.store.get("persistentvolumeclaims", key.namespace, claimName)
          if (claim !== undefined) yield* SimulatedController.writeObject(ctx, "persistentvolumeclaims", claim, (current) => StatefulSets.ownedByPod(current, pod))
        }
      }
      const removed = yield* Effect.result(Rest.remove(env, { resource: pods, namespace: key.namespace, name: nameOf(pod) }, {
        propagationPolicy: undefined,
        preconditions: { uid: KubeObject.meta(pod).uid ?? "" },
        dryRun: false
      }))
      yield* removed._tag === "Failure"
        ? event("Warning", "FailedDelete", `delete Pod ${nameOf(pod)} in StatefulSet ${key.name} failed error: ${removed.failure.message}`)
        : event("Normal", "SuccessfulDelete", `delete Pod ${nameOf(pod)} in StatefulSet ${key.name} successful`)
    }

    // History beyond the limit, oldest first, but for revisions a pod runs or the status names.
    const running = members()
    yield* ControllerRevisions.truncate(ctx, key.namespace, set,
      new Set([updateName, currentName, ...running.map((p) => KubeObject.meta(p).labels?.[StatefulSets.revisionLabel] ?? "")]))

    const now = Date.now()
    yield* SimulatedController.writeStatus(ctx, key, (current) => StatefulSets.status(current, members(), currentName, updateName, now))
    // A pod waiting out minReadySeconds becomes available without an event: look again then.
    const minReady = count(record(set.spec).minReadySeconds)
    if (minReady > 0 && members().some((p) => Rollouts.podAvailable(p, 0, now) && !Rollouts.podAvailable(p, minReady, now))) {
      yield* ctx.again(key, Duration.seconds(minReady))
    }
  })
