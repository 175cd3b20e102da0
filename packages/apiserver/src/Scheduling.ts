/**
 * Whether a pod may run on a node, as kube-scheduler's filters (and the DaemonSet controller)
 * decide it: its node selector, its required node affinity (labels and `metadata.name`), the
 * node's `NoSchedule` and `NoExecute` taints it must tolerate (an unschedulable node's among them),
 * and the required pod affinity and anti-affinity of it and the pods already placed; and the
 * scheduler's message when no node will do (room for its requests and host ports is ResourceFit's).
 */
import * as Selectors from "./Selectors.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const records = KubeObject.records

/** Why a node will not do: its labels or name, a taint the pod does not tolerate, or the pods on it. */
export type Misfit =
  | { readonly _tag: "Affinity" }
  | { readonly _tag: "Unschedulable" }
  | { readonly _tag: "Taint"; readonly taint: string }
  | { readonly _tag: "PodAffinity" }
  | { readonly _tag: "PodAntiAffinity" }
  | { readonly _tag: "ReadWriteOncePod" }
  | { readonly _tag: "Ports" }
  /** kube-scheduler's PodTopologySpread: a skew past `maxSkew`, or the node lacks a constraint's topology key. */
  | { readonly _tag: "TopologySpread"; readonly missingLabel: boolean }
  /** kube-scheduler's NodeResourcesFit reasons (`Insufficient cpu`, `Too many pods`), one or more. */
  | { readonly _tag: "Insufficient"; readonly reasons: ReadonlyArray<string> }

/**
 * Whether a toleration tolerates a taint: the same effect (or any, when it names none), and the
 * same key and value (`Equal`) or the key alone (`Exists`; every key, when it names none).
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * Scheduling.tolerates({ key: "gpu", operator: "Exists" }, { key: "gpu", value: "a100", effect: "NoSchedule" }) // true
 */
export const tolerates = (toleration: Readonly<Record<string, unknown>>, taint: Readonly<Record<string, unknown>>): boolean => {
  if (toleration.effect !== undefined && toleration.effect !== "" && toleration.effect !== taint.effect) return false
  if (toleration.operator === "Exists") return toleration.key === undefined || toleration.key === "" || toleration.key === taint.key
  return toleration.key === taint.key && (toleration.value ?? "") === (taint.value ?? "")
}

const strings = (value: unknown): ReadonlyArray<string> => Array.isArray(value) ? value.map(String) : []

/**
 * Whether a node selector term holds for `node`: all of its requirements do; an empty term matches
 * nothing, as kube has it.
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * Scheduling.termHolds({ matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] }, { metadata: { labels: { disk: "ssd" } } }) // true
 */
export const termHolds = (term: Readonly<Record<string, unknown>>, node: KubeObject.KubeObject) => {
  const labels = KubeObject.meta(node).labels ?? {}
  const expressions = records(term.matchExpressions)
  const fields = records(term.matchFields)
  if (expressions.length === 0 && fields.length === 0) return false
  return expressions.every((r) => Selectors.requirementHolds(r, labels[String(r.key)])) &&
    fields.every((r) => r.key === "metadata.name" && Selectors.requirementHolds(r, KubeObject.meta(node).name))
}

/**
 * Whether `node` has the labels (and name) a pod of `podSpec` requires: its node selector and its
 * required node affinity.
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * Scheduling.affinityHolds({ nodeSelector: { disk: "ssd" } }, { metadata: { name: "a", labels: { disk: "ssd" } } }) // true
 */
export const affinityHolds = (podSpec: Readonly<Record<string, unknown>>, node: KubeObject.KubeObject): boolean => {
  const labels = KubeObject.meta(node).labels ?? {}
  if (!Object.entries(record(podSpec.nodeSelector)).every(([key, value]) => labels[key] === value)) return false
  const required = record(record(record(podSpec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution)
  const terms = records(required.nodeSelectorTerms)
  return terms.length === 0 || terms.some((term) => termHolds(term, node))
}

/**
 * Why `node` will not run a pod of `podSpec` (tolerating `tolerations` besides its own), or
 * undefined when it will.
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * Scheduling.misfit({ nodeSelector: { disk: "ssd" } }, { metadata: { name: "a", labels: { disk: "hdd" } } }) // { _tag: "Affinity" }
 * Scheduling.misfit({}, { metadata: { name: "a" }, spec: { taints: [{ key: "gpu", effect: "NoSchedule" }] } }) // { _tag: "Taint", taint: "{gpu: }" }
 */
export const misfit = (
  podSpec: Readonly<Record<string, unknown>>,
  node: KubeObject.KubeObject,
  tolerations: ReadonlyArray<Readonly<Record<string, unknown>>> = []
): Misfit | undefined => {
  if (!affinityHolds(podSpec, node)) return { _tag: "Affinity" }
  const allowed = [...records(podSpec.tolerations), ...tolerations]
  const nodeSpec = record(node.spec)
  if (nodeSpec.unschedulable === true && !allowed.some((t) => tolerates(t, { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" }))) {
    return { _tag: "Unschedulable" }
  }
  const untolerated = records(nodeSpec.taints)
    .filter((taint) => taint.effect === "NoSchedule" || taint.effect === "NoExecute")
    .find((taint) => !allowed.some((t) => tolerates(t, taint)))
  return untolerated === undefined ? undefined : { _tag: "Taint", taint: `{${String(untolerated.key)}: ${String(untolerated.value ?? "")}}` }
}

/**
 * kube-scheduler's `FailedScheduling` message when none of `nodes` will run the pod: each node's
 * reasons counted, then what preemption found (`preemption`: why the pod may not preempt; empty
 * when it preempted, which adds nothing; by default that no pod of lower priority was in the way).
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * Scheduling.unschedulable([{ _tag: "Affinity" }])
 * // "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
 */
export const unschedulable = (misfits: ReadonlyArray<Misfit>, preemption?: string): string => {
  if (misfits.length === 0) return "no nodes available to schedule pods"
  const reasons = new Map<string, number>()
  const count = (reason: string) => reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
  for (const m of misfits) {
    if (m._tag === "Insufficient") {
      m.reasons.forEach(count)
      continue
    }
    const reason = m._tag === "Affinity"
      ? "node(s) didn't match Pod's node affinity/selector"
      : m._tag === "Unschedulable"
      ? "node(s) were unschedulable"
      : m._tag === "PodAffinity"
      ? "node(s) didn't match pod affinity rules"
      : m._tag === "PodAntiAffinity"
      ? "node(s) didn't match pod anti-affinity rules"
      : m._tag === "ReadWriteOncePod"
      ? "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
      : m._tag === "Ports"
      ? "node(s) didn't have free ports for the requested pod ports"
      : m._tag === "TopologySpread"
      ? `node(s) didn't match pod topology spread constraints${m.missingLabel ? " (missing required label)" : ""}`
      : `node(s) had untolerated taint ${m.taint}`
    count(reason)
  }
  const listed = [...reasons].map(([reason, n]) => `${n} ${reason}`).sort().join(", ")
  const total = misfits.length
  // Preemption could only help against pods in the way (anti-affinity, a ReadWriteOncePod claim's
  // user, host ports, requests), and found none of lower priority.
  const blocked = misfits.filter((m) =>
    m._tag === "PodAntiAffinity" || m._tag === "ReadWriteOncePod" || m._tag === "Ports" || m._tag === "Insufficient" ||
    (m._tag === "TopologySpread" && !m.missingLabel)
  ).length
  const found = [
    ...(blocked > 0 ? [`${blocked} No preemption victims found for incoming pod`] : []),
    ...(total - blocked > 0 ? [`${total - blocked} Preemption is not helpful for scheduling`] : [])
  ].join(", ")
  const after = preemption === undefined ? ` preemption: 0/${total} nodes are available: ${found}.` : preemption === "" ? "" : ` preemption: ${preemption}.`
  return `0/${total} nodes are available: ${listed}.${after}`
}

/**
 * kube-scheduler's `FailedScheduling` message when the pod itself rules out every one of `nodes`
 * (a claim missing or unbound, found before any node is looked at).
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * Scheduling.unresolvable(1, 'persistentvolumeclaim "data" not found')
 * // '0/1 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'
 */
export const unresolvable = (nodes: number, reason: string): string =>
  `0/${nodes} nodes are available: ${reason}. preemption: 0/${nodes} nodes are available: ${nodes} Preemption is not helpful for scheduling.`

/** A pod already bound, with the node it is on. */
export interface Placed {
  readonly pod: KubeObject.KubeObject
  readonly node: KubeObject.KubeObject
}

/**
 * Whether a pod (anti-)affinity term of `owner` selects `candidate`: its label selector over the
 * candidate's labels, in the namespaces the term names (the owner's namespace when it names none;
 * every namespace for an empty namespace selector).
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * const pod = (name: string) => ({ metadata: { name, namespace: "default", labels: { app: "db" } } })
 * Scheduling.termSelects({ labelSelector: { matchLabels: { app: "db" } }, topologyKey: "zone" }, pod("a"), pod("b"), () => ({})) // true
 */
export const termSelects = (
  term: Readonly<Record<string, unknown>>,
  owner: KubeObject.KubeObject,
  candidate: KubeObject.KubeObject,
  namespaceLabels: (namespace: string) => Readonly<Record<string, string>>
): boolean => {
  const namespace = KubeObject.meta(candidate).namespace ?? ""
  const names = strings(term.namespaces)
  const namespaceSelector = term.namespaceSelector
  const inNamespace = names.includes(namespace) ||
    (KubeObject.isObject(namespaceSelector)
      ? Selectors.matchesSelector(namespaceSelector, namespaceLabels(namespace))
      : names.length === 0 && namespace === (KubeObject.meta(owner).namespace ?? ""))
  return inNamespace && KubeObject.isObject(term.labelSelector) && Selectors.matchesSelector(term.labelSelector, KubeObject.meta(candidate).labels ?? {})
}

const sameDomain = (term: Readonly<Record<string, unknown>>, a: KubeObject.KubeObject, b: KubeObject.KubeObject) => {
  const key = String(term.topologyKey ?? "")
  const value = (KubeObject.meta(a).labels ?? {})[key]
  return value !== undefined && value === (KubeObject.meta(b).labels ?? {})[key]
}

const required = (pod: KubeObject.KubeObject, kind: "podAffinity" | "podAntiAffinity") =>
  records(record(record(record(pod.spec).affinity)[kind]).requiredDuringSchedulingIgnoredDuringExecution)

/**
 * Why `node` will not run `pod` for the pods already placed: a required pod anti-affinity term
 * (the pod's, or a placed pod's that selects it) with a matching pod in the node's topology domain,
 * or a required pod affinity term with none there (unless no pod matches it anywhere and the pod
 * matches it itself: the first of its group).
 *
 * @example
 * import * as Scheduling from "./Scheduling.ts"
 * const term = { labelSelector: { matchLabels: { app: "db" } }, topologyKey: "kubernetes.io/hostname" }
 * const node = { metadata: { name: "a", labels: { "kubernetes.io/hostname": "a" } } }
 * const db = (name: string) => ({ metadata: { name, namespace: "default", labels: { app: "db" } }, spec: { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } } })
 * Scheduling.podMisfit(db("db-1"), node, [{ pod: db("db-0"), node }], () => ({})) // { _tag: "PodAntiAffinity" }
 */
export const podMisfit = (
  pod: KubeObject.KubeObject,
  node: KubeObject.KubeObject,
  placed: ReadonlyArray<Placed>,
  namespaceLabels: (namespace: string) => Readonly<Record<string, string>>
): Misfit | undefined => {
  for (const term of required(pod, "podAntiAffinity")) {
    if (placed.some((p) => sameDomain(term, node, p.node) && termSelects(term, pod, p.pod, namespaceLabels))) return { _tag: "PodAntiAffinity" }
  }
  for (const p of placed) {
    for (const term of required(p.pod, "podAntiAffinity")) {
      if (sameDomain(term, node, p.node) && termSelects(term, p.pod, pod, namespaceLabels)) return { _tag: "PodAntiAffinity" }
    }
  }
  for (const term of required(pod, "podAffinity")) {
    const matching = placed.filter((p) => termSelects(term, pod, p.pod, namespaceLabels))
    const firstOfGroup = matching.length === 0 && termSelects(term, pod, pod, namespaceLabels)
    if (!firstOfGroup && !matching.some((p) => sameDomain(term, node, p.node))) return { _tag: "PodAffinity" }
  }
  return undefined
}
