/**
 * What 1.32's DaemonSet controller reports of a DaemonSet in a cluster whose nodes run nothing (the
 * embedded server has no kubelet, and no Node of its own): the nodes that should run its pod (those
 * its node selector picks whose taints it tolerates, with the tolerations the controller adds),
 * none of them scheduled, the generation observed.
 */
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const records = KubeObject.records

// The tolerations the DaemonSet controller adds to its pods.
const added = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/pid-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" }
]

const tolerates = (toleration: Readonly<Record<string, unknown>>, taint: Readonly<Record<string, unknown>>) => {
  if (toleration.effect !== undefined && toleration.effect !== "" && toleration.effect !== taint.effect) return false
  if (toleration.operator === "Exists") return toleration.key === undefined || toleration.key === "" || toleration.key === taint.key
  return toleration.key === taint.key && (toleration.value ?? "") === (taint.value ?? "")
}

/**
 * The nodes that should run the DaemonSet's pod: its node selector's, tolerating their
 * `NoSchedule` and `NoExecute` taints.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * const ds = { spec: { template: { spec: { nodeSelector: { disk: "ssd" } } } } }
 * DaemonSets.eligible(ds, [{ metadata: { name: "a", labels: { disk: "ssd" } } }, { metadata: { name: "b" } }]).length // 1
 */
export const eligible = (daemonSet: KubeObject.KubeObject, nodes: ReadonlyArray<KubeObject.KubeObject>): ReadonlyArray<KubeObject.KubeObject> => {
  const podSpec = record(record(record(daemonSet.spec).template).spec)
  const selector = Object.entries(record(podSpec.nodeSelector))
  const tolerations = [...records(podSpec.tolerations), ...added]
  return nodes.filter((node) => {
    const labels = KubeObject.meta(node).labels ?? {}
    if (!selector.every(([key, value]) => labels[key] === value)) return false
    return records(record(node.spec).taints)
      .filter((taint) => taint.effect === "NoSchedule" || taint.effect === "NoExecute")
      .every((taint) => tolerations.some((t) => tolerates(t, taint)))
  })
}

/**
 * The DaemonSet's status: its nodes desired, none scheduled, ready or available (nothing runs
 * here), all of them unavailable, its generation observed.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * DaemonSets.status({ metadata: { generation: 2 }, spec: {} }, []) // { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, observedGeneration: 2 }
 */
export const status = (daemonSet: KubeObject.KubeObject, nodes: ReadonlyArray<KubeObject.KubeObject>): Record<string, unknown> => {
  const desired = eligible(daemonSet, nodes).length
  const { numberUnavailable: _, ...previous } = record(daemonSet.status)
  return {
    ...previous,
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    desiredNumberScheduled: desired,
    numberReady: 0,
    observedGeneration: KubeObject.meta(daemonSet).generation ?? 1,
    ...(desired > 0 ? { numberUnavailable: desired } : {})
  }
}
