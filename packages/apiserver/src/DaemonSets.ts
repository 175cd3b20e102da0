/**
 * What 1.32's DaemonSet controller makes of a DaemonSet, as pure functions for the workload
 * simulator and the server: the template generation kube keeps in an annotation, the nodes that
 * should run its pod (its node selector's, tolerating their taints with the tolerations the
 * controller adds), the pod it makes for a node, the next step of its rollout, and its status.
 */
import * as PodTemplates from "./PodTemplates.ts"
import * as Rollouts from "./Rollouts.ts"
import * as Scheduling from "./Scheduling.ts"
import * as WorkloadDefaults from "./WorkloadDefaults.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const records = KubeObject.records
const count = KubeObject.number

export const templateGenerationAnnotation = "deprecated.daemonset.template.generation"
export const revisionLabel = "controller-revision-hash"
export const templateGenerationLabel = "pod-template-generation"

// The tolerations the DaemonSet controller adds to its pods.
const added = [
  { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
  { key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/memory-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/pid-pressure", operator: "Exists", effect: "NoSchedule" },
  { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" }
]

const templateGeneration = (daemonSet: KubeObject.KubeObject) => {
  const value = Number(KubeObject.meta(daemonSet).annotations?.[templateGenerationAnnotation])
  return Number.isInteger(value) && value > 0 ? value : 0
}

const withTemplateGeneration = (daemonSet: KubeObject.KubeObject, generation: number) =>
  KubeObject.withMeta(daemonSet, { annotations: { ...KubeObject.meta(daemonSet).annotations, [templateGenerationAnnotation]: String(generation) } })

/**
 * A created DaemonSet's template generation, 1 unless the client gave one, as kube's strategy sets it.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * DaemonSets.prepareCreate({ metadata: { name: "logs" } }).metadata.annotations // { "deprecated.daemonset.template.generation": "1" }
 */
export const prepareCreate = (daemonSet: KubeObject.KubeObject): KubeObject.KubeObject & { readonly metadata: Record<string, unknown> } =>
  withTemplateGeneration(daemonSet, Math.max(1, templateGeneration(daemonSet))) as KubeObject.KubeObject & { readonly metadata: Record<string, unknown> }

/**
 * An updated DaemonSet's template generation: the stored one, one more when the template changed.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * const old = { metadata: { annotations: { "deprecated.daemonset.template.generation": "1" } }, spec: { template: { spec: { containers: [{ name: "a", image: "x:1" }] } } } }
 * DaemonSets.prepareUpdate({ ...old, spec: { template: { spec: { containers: [{ name: "a", image: "x:2" }] } } } }, old).metadata.annotations // { "deprecated.daemonset.template.generation": "2" }
 */
export const prepareUpdate = (daemonSet: KubeObject.KubeObject, old: KubeObject.KubeObject): KubeObject.KubeObject & { readonly metadata: Record<string, unknown> } => {
  const template = (ds: KubeObject.KubeObject) => record(WorkloadDefaults.daemonSet(ds, undefined).spec).template
  const changed = !KubeObject.equals(template(daemonSet), template(old))
  return withTemplateGeneration(daemonSet, Math.max(1, templateGeneration(old)) + (changed ? 1 : 0)) as KubeObject.KubeObject & { readonly metadata: Record<string, unknown> }
}

/**
 * The nodes that should run the DaemonSet's pod: those its template's node selector and affinity
 * pick, tolerating their `NoSchedule` and `NoExecute` taints.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * const ds = { spec: { template: { spec: { nodeSelector: { disk: "ssd" } } } } }
 * DaemonSets.eligible(ds, [{ metadata: { name: "a", labels: { disk: "ssd" } } }, { metadata: { name: "b" } }]).length // 1
 */
export const eligible = (daemonSet: KubeObject.KubeObject, nodes: ReadonlyArray<KubeObject.KubeObject>): ReadonlyArray<KubeObject.KubeObject> => {
  const podSpec = record(record(record(daemonSet.spec).template).spec)
  return nodes.filter((node) => Scheduling.misfit(podSpec, node, added) === undefined)
}

/**
 * The hash of the DaemonSet's current template, the `controller-revision-hash` of its pods.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * DaemonSets.hash({ spec: { template: { spec: { containers: [] } } } }).length > 0 // true
 */
export const hash = (daemonSet: KubeObject.KubeObject): string => Rollouts.templateHash(record(daemonSet.spec).template)

/**
 * The node a DaemonSet pod is for: the one its node affinity names by `metadata.name`.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * const pod = { spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-1"] }] }] } } } } }
 * DaemonSets.nodeOf(pod) // "node-1"
 */
export const nodeOf = (pod: KubeObject.KubeObject): string | undefined => {
  const terms = records(record(record(record(record(pod.spec).affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms)
  for (const term of terms) {
    const field = records(term.matchFields).find((f) => f.key === "metadata.name" && f.operator === "In")
    const values = Array.isArray(field?.values) ? field.values : []
    if (typeof values[0] === "string") return values[0]
  }
  return undefined
}

/**
 * The pod the DaemonSet makes for a node, as its controller makes it: the template labelled with
 * the revision hash and template generation, pinned to the node by node affinity, with the
 * controller's tolerations, owned by the DaemonSet.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * const ds = { metadata: { name: "logs", uid: "u" }, spec: { template: { metadata: { labels: { app: "logs" } }, spec: { containers: [] } } } }
 * DaemonSets.podFor(ds, "node-1").metadata.generateName // "logs-"
 */
export const podFor = (daemonSet: KubeObject.KubeObject, node: string): KubeObject.KubeObject & { readonly metadata: Record<string, unknown> } => {
  const m = KubeObject.meta(daemonSet)
  const template = record(record(daemonSet.spec).template)
  const templateMeta = record(template.metadata)
  const spec = record(template.spec)
  const affinity = record(spec.affinity)
  const nodeAffinity = record(affinity.nodeAffinity)
  const tolerations = [...records(spec.tolerations)]
  for (const toleration of added) if (!tolerations.some((t) => t.key === toleration.key && t.effect === toleration.effect)) tolerations.push(toleration)
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      ...PodTemplates.podMetadata(template),
      generateName: `${m.name ?? ""}-`,
      labels: { ...record(templateMeta.labels), [revisionLabel]: hash(daemonSet), [templateGenerationLabel]: String(Math.max(1, templateGeneration(daemonSet))) },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "DaemonSet", name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
    },
    spec: {
      ...spec,
      affinity: {
        ...affinity,
        nodeAffinity: {
          ...nodeAffinity,
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [node] }] }]
          }
        }
      },
      tolerations
    }
  }
}

/** The controller's next step: the nodes to make a pod for, and the pods to delete. */
export interface Step {
  readonly create: ReadonlyArray<string>
  readonly remove: ReadonlyArray<KubeObject.KubeObject>
}

/**
 * The next step of the DaemonSet's rollout: a pod made on each node that should run one and has
 * none, pods on other nodes (or a node's extra ones) deleted, and with `RollingUpdate` an outdated
 * pod deleted (to be made again) while fewer than `maxUnavailable` are unavailable.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * DaemonSets.next({ metadata: { name: "logs" }, spec: { template: {} } }, [{ metadata: { name: "node-1" } }], [], 0).create // ["node-1"]
 */
export const next = (daemonSet: KubeObject.KubeObject, nodes: ReadonlyArray<KubeObject.KubeObject>, pods: ReadonlyArray<KubeObject.KubeObject>, now: number): Step => {
  const spec = record(daemonSet.spec)
  const wanted = new Set(eligible(daemonSet, nodes).map((n) => KubeObject.meta(n).name ?? ""))
  const byNode = new Map<string, Array<KubeObject.KubeObject>>()
  const remove: Array<KubeObject.KubeObject> = []
  for (const pod of pods) {
    const node = nodeOf(pod)
    if (node === undefined || !wanted.has(node)) remove.push(pod)
    else byNode.set(node, [...(byNode.get(node) ?? []), pod])
  }
  const create = [...wanted].filter((node) => !byNode.has(node))
  for (const onNode of byNode.values()) remove.push(...onNode.slice(1))
  const strategy = record(spec.updateStrategy)
  if (strategy.type === "OnDelete") return { create, remove }
  const minReady = count(spec.minReadySeconds)
  const current = hash(daemonSet)
  const kept = [...byNode.values()].map((onNode) => onNode[0]!)
  const available = (pod: KubeObject.KubeObject) => record(pod.status).phase === "Running" && Rollouts.podAvailable(pod, minReady, now)
  const maxUnavailable = Rollouts.resolve(record(strategy.rollingUpdate).maxUnavailable ?? 1, wanted.size, true) || 1
  let unavailable = create.length + kept.filter((pod) => !available(pod)).length
  for (const pod of kept) {
    if (KubeObject.meta(pod).labels?.[revisionLabel] === current || unavailable >= maxUnavailable) continue
    remove.push(pod)
    if (available(pod)) unavailable++
  }
  return { create, remove }
}

/**
 * The DaemonSet's status from its pods, as its controller counts them.
 *
 * @example
 * import * as DaemonSets from "./DaemonSets.ts"
 * DaemonSets.status({ metadata: { generation: 2 }, spec: {} }, [], [], 0) // { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, observedGeneration: 2 }
 */
export const status = (
  daemonSet: KubeObject.KubeObject,
  nodes: ReadonlyArray<KubeObject.KubeObject>,
  pods: ReadonlyArray<KubeObject.KubeObject>,
  now: number
): Record<string, unknown> => {
  const wanted = new Set(eligible(daemonSet, nodes).map((n) => KubeObject.meta(n).name ?? ""))
  const minReady = count(record(daemonSet.spec).minReadySeconds)
  const current = hash(daemonSet)
  const scheduled = new Set<string>()
  let misscheduled = 0
  let ready = 0
  let available = 0
  let updated = 0
  for (const pod of pods) {
    const node = nodeOf(pod) ?? ""
    if (!wanted.has(node)) {
      misscheduled++
      continue
    }
    if (scheduled.has(node)) continue
    scheduled.add(node)
    const running = record(pod.status).phase === "Running"
    if (running && Rollouts.podAvailable(pod, 0, now)) ready++
    if (running && Rollouts.podAvailable(pod, minReady, now)) available++
    if (KubeObject.meta(pod).labels?.[revisionLabel] === current) updated++
  }
  const { numberUnavailable: _, numberAvailable: __, updatedNumberScheduled: ___, ...previous } = record(daemonSet.status)
  return {
    ...previous,
    currentNumberScheduled: scheduled.size,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: wanted.size,
    numberReady: ready,
    observedGeneration: KubeObject.meta(daemonSet).generation ?? 1,
    ...(updated > 0 ? { updatedNumberScheduled: updated } : {}),
    ...(available > 0 ? { numberAvailable: available } : {}),
    ...(wanted.size - available > 0 ? { numberUnavailable: wanted.size - available } : {})
  }
}
