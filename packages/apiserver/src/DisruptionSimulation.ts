/**
 * kube-controller-manager's disruption controller, one look at a PodDisruptionBudget for the
 * workload simulator: its status counted from the pods it selects and their controllers' replicas
 * (a ReplicaSet's Deployment, a StatefulSet, a ReplicationController), written when it changed.
 */
import { Effect } from "effect"
import * as Disruptions from "./Disruptions.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

/**
 * Writes the budget's status as the disruption controller counts it.
 *
 * @example
 * import * as DisruptionSimulation from "./DisruptionSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pdb: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = DisruptionSimulation.budget(ctx, { storage: "poddisruptionbudgets.policy", namespace: "default", name: "web" }, pdb)
 */
export const budget = (ctx: SimulatedController.Context, key: SimulatedController.Key, pdb: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  Effect.suspend(() => {
    const { store } = ctx.env
    const pods = store.list("pods", key.namespace).filter((pod) => Disruptions.selects(pdb, pod))
    const owner = (object: KubeObject.KubeObject, storage: string) => {
      const ref = (KubeObject.meta(object).ownerReferences ?? []).find((r) => r.controller === true)
      const found = ref === undefined ? undefined : store.get(storage, key.namespace, String(ref.name))
      return found !== undefined && KubeObject.meta(found).uid === ref?.uid ? found : undefined
    }
    const scaleOf = (controller: KubeObject.KubeObject) => ({
      controller: KubeObject.meta(controller).uid ?? "",
      replicas: KubeObject.number(record(controller.spec).replicas, 1)
    })
    const scale = (pod: KubeObject.KubeObject) => {
      const ref = (KubeObject.meta(pod).ownerReferences ?? []).find((r) => r.controller === true)
      if (ref?.kind === "ReplicaSet") {
        const replicaSet = owner(pod, "replicasets.apps")
        if (replicaSet === undefined) return undefined
        const deployment = owner(replicaSet, "deployments.apps")
        return scaleOf(deployment ?? replicaSet)
      }
      const storage = ref?.kind === "StatefulSet" ? "statefulsets.apps" : ref?.kind === "ReplicationController" ? "replicationcontrollers" : undefined
      const controller = storage === undefined ? undefined : owner(pod, storage)
      return controller === undefined ? undefined : scaleOf(controller)
    }
    const next = Disruptions.status(pdb, pods, scale, Date.now())
    if (KubeObject.equals(next, record(pdb.status))) return Effect.void
    return SimulatedController.writeStatus(ctx, key, () => next)
  })
