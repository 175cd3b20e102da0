/**
 * kube-scheduler's scoring, for a pod more than one node can run: each of 1.32's default score
 * plugins rates every such node from 0 to 100 as the plugin normalizes it, the ratings are summed
 * with the plugins' weights, and the pod goes to the best node (kube breaks a tie at random; here
 * the first node in the scheduler's order wins it). The plugins: TaintToleration (3, fewer
 * `PreferNoSchedule` taints the pod does not tolerate), NodeAffinity (2, the weights of the
 * preferred terms the node meets), PodTopologySpread (2, fewer matching pods in the node's domains
 * by the pod's `ScheduleAnyway` constraints, or by the system's default spreading over hostname and
 * zone of the pods of its Services and controller), InterPodAffinity (2, the preferred affinity and
 * anti-affinity of the pod and of the pods placed, and their required affinity at weight 1),
 * NodeResourcesFit (1, the least allocated cpu and memory, missing requests counted as 100m and
 * 200Mi) and NodeResourcesBalancedAllocation (1, cpu and memory allocated alike).
 */
import * as QuotaUsage from "./QuotaUsage.ts"
import * as Scheduling from "./Scheduling.ts"
import * as TopologySpread from "./TopologySpread.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

const record = KubeObject.record
const records = KubeObject.records
const maxScore = 100
const hostname = "kubernetes.io/hostname"
const zone = "topology.kubernetes.io/zone"

/** What scoring looks at: the pod, the nodes that passed the filters, all nodes, the pods placed. */
export interface Candidates {
  readonly pod: KubeObject.KubeObject
  readonly feasible: ReadonlyArray<KubeObject.KubeObject>
  readonly nodes: ReadonlyArray<KubeObject.KubeObject>
  readonly placed: ReadonlyArray<Scheduling.Placed>
  readonly namespaceLabels: (namespace: string) => Readonly<Record<string, string>>
  /** The selector of the pod's Services and controller, for the default spreading (none: no default spreading). */
  readonly spreadSelector?: Readonly<Record<string, unknown>> | undefined
}

const labelsOf = (object: KubeObject.KubeObject) => KubeObject.meta(object).labels ?? {}

// The framework's DefaultNormalizeScore: scaled to the highest, and reversed where fewer is better.
const normalize = (scores: ReadonlyArray<number>, reverse = false): ReadonlyArray<number> => {
  const highest = Math.max(0, ...scores)
  if (highest === 0) return scores.map(() => reverse ? maxScore : 0)
  return scores.map((score) => {
    const scaled = Math.trunc(maxScore * score / highest)
    return reverse ? maxScore - scaled : scaled
  })
}

const taintToleration = ({ pod, feasible }: Candidates): ReadonlyArray<number> => {
  const tolerations = records(record(pod.spec).tolerations).filter((t) => t.effect === undefined || t.effect === "" || t.effect === "PreferNoSchedule")
  return normalize(feasible.map((node) =>
    records(record(node.spec).taints).filter((taint) => taint.effect === "PreferNoSchedule" && !tolerations.some((t) => Scheduling.tolerates(t, taint))).length
  ), true)
}

const nodeAffinity = ({ pod, feasible }: Candidates): ReadonlyArray<number> => {
  const preferred = records(record(record(record(pod.spec).affinity).nodeAffinity).preferredDuringSchedulingIgnoredDuringExecution)
  return normalize(feasible.map((node) =>
    preferred.reduce((sum, term) => sum + (Scheduling.termHolds(record(term.preference), node) ? Number(term.weight ?? 0) : 0), 0)
  ))
}

const weighted = (pod: KubeObject.KubeObject, kind: "podAffinity" | "podAntiAffinity") =>
  records(record(record(record(pod.spec).affinity)[kind]).preferredDuringSchedulingIgnoredDuringExecution)
    .map((term) => ({ weight: Number(term.weight ?? 0), term: record(term.podAffinityTerm) }))

const interPodAffinity = ({ pod, feasible, placed, namespaceLabels }: Candidates): ReadonlyArray<number> => {
  // Weights by topology domain (key, then value), as the plugin's PreScore adds them up.
  const byDomain = new Map<string, Map<string, number>>()
  const add = (term: Readonly<Record<string, unknown>>, on: KubeObject.KubeObject, weight: number) => {
    const key = String(term.topologyKey ?? "")
    const value = labelsOf(on)[key]
    if (value === undefined || weight === 0) return
    const values = byDomain.get(key) ?? new Map<string, number>()
    values.set(value, (values.get(value) ?? 0) + weight)
    byDomain.set(key, values)
  }
  const affinity = weighted(pod, "podAffinity")
  const antiAffinity = weighted(pod, "podAntiAffinity")
  for (const { pod: other, node } of placed) {
    for (const { weight, term } of affinity) if (Scheduling.termSelects(term, pod, other, namespaceLabels)) add(term, node, weight)
    for (const { weight, term } of antiAffinity) if (Scheduling.termSelects(term, pod, other, namespaceLabels)) add(term, node, -weight)
    const theirs = record(record(other.spec).affinity)
    // Their required affinity terms count at kube's hardPodAffinityWeight, 1.
    for (const term of records(record(theirs.podAffinity).requiredDuringSchedulingIgnoredDuringExecution)) {
      if (Scheduling.termSelects(term, other, pod, namespaceLabels)) add(term, node, 1)
    }
    for (const { weight, term } of weighted(other, "podAffinity")) if (Scheduling.termSelects(term, other, pod, namespaceLabels)) add(term, node, weight)
    for (const { weight, term } of weighted(other, "podAntiAffinity")) if (Scheduling.termSelects(term, other, pod, namespaceLabels)) add(term, node, -weight)
  }
  const scores = feasible.map((node) => [...byDomain].reduce((sum, [key, values]) => sum + (values.get(labelsOf(node)[key] ?? "") ?? 0), 0))
  const [least, most] = [Math.min(...scores), Math.max(...scores)]
  return scores.map((score) => most > least ? Math.trunc(maxScore * (score - least) / (most - least)) : 0)
}

interface SoftConstraint {
  readonly key: string
  readonly maxSkew: number
  readonly selector: Readonly<Record<string, unknown>>
}

// The pod's ScheduleAnyway constraints (with matchLabelKeys), or the system's defaults when it has none at all.
const softConstraints = (pod: KubeObject.KubeObject, spreadSelector: Readonly<Record<string, unknown>> | undefined): ReadonlyArray<SoftConstraint> => {
  const own = records(record(pod.spec).topologySpreadConstraints)
  if (own.length === 0) {
    if (spreadSelector === undefined) return []
    return [{ key: hostname, maxSkew: 3, selector: spreadSelector }, { key: zone, maxSkew: 5, selector: spreadSelector }]
  }
  return own.flatMap((c) => {
    const selector = TopologySpread.selectorOf(c, labelsOf(pod))
    return c.whenUnsatisfiable !== "ScheduleAnyway" || selector === undefined
      ? []
      : [{ key: String(c.topologyKey ?? ""), maxSkew: Number(c.maxSkew ?? 1), selector }]
  })
}

const topologySpread = ({ pod, feasible, placed, spreadSelector }: Candidates): ReadonlyArray<number> => {
  const constraints = softConstraints(pod, spreadSelector)
  if (constraints.length === 0) return feasible.map(() => 0)
  // Constraints of the pod's own need every key on a node; the defaults do not.
  const requireAll = records(record(pod.spec).topologySpreadConstraints).length > 0
  const ignored = (node: KubeObject.KubeObject) => requireAll && constraints.some((c) => labelsOf(node)[c.key] === undefined)
  const counted = feasible.filter((node) => !ignored(node))
  const matches = (other: KubeObject.KubeObject, selector: Readonly<Record<string, unknown>>) => TopologySpread.counts(pod, selector, other)
  const spec = record(pod.spec)
  const perConstraint = constraints.map((c) => {
    const domains = new Set(counted.flatMap((node) => labelsOf(node)[c.key] ?? []))
    const size = c.key === hostname ? counted.length : domains.size
    const inDomain = new Map<string, number>([...domains].map((value) => [value, 0]))
    for (const { pod: other, node } of placed) {
      const value = labelsOf(node)[c.key]
      if (value === undefined || !inDomain.has(value) || !Scheduling.affinityHolds(spec, node) || ignored(node)) continue
      if (matches(other, c.selector)) inDomain.set(value, inDomain.get(value)! + 1)
    }
    return { constraint: c, weight: Math.log(size + 2), inDomain }
  })
  const raw = feasible.map((node) => {
    if (ignored(node)) return undefined
    let score = 0
    for (const { constraint, weight, inDomain } of perConstraint) {
      const value = labelsOf(node)[constraint.key]
      if (value === undefined) continue
      const count = constraint.key === hostname
        ? placed.filter((p) => p.node === node && matches(p.pod, constraint.selector)).length
        : inDomain.get(value) ?? 0
      score += count * weight + (constraint.maxSkew - 1)
    }
    return Math.round(score)
  })
  const valid = raw.filter((score): score is number => score !== undefined)
  const [least, most] = [Math.min(...valid), Math.max(0, ...valid)]
  return raw.map((score) => score === undefined ? 0 : most === 0 ? maxScore : Math.trunc(maxScore * (most + least - score) / most))
}

// A container's cpu and memory requests, those it lacks as kube-scheduler's non-zero defaults.
const withDefaultRequests = (container: Readonly<Record<string, unknown>>) => {
  const resources = record(container.resources)
  const requests = record(resources.requests)
  return { ...container, resources: { ...resources, requests: { cpu: "100m", memory: "200Mi", ...requests } } }
}

interface Usage {
  readonly cpu: number
  readonly memory: number
}

const usage = (pod: KubeObject.KubeObject, nonZero: boolean): Usage => {
  const spec = record(pod.spec)
  const requests = QuotaUsage.podResources(
    nonZero ? { ...spec, containers: records(spec.containers).map(withDefaultRequests), initContainers: records(spec.initContainers).map(withDefaultRequests) } : spec,
    "requests"
  )
  return { cpu: QuantityMath.toNumber(requests.get("cpu") ?? "0") * 1000, memory: QuantityMath.toNumber(requests.get("memory") ?? "0") }
}

const allocatableOf = (node: KubeObject.KubeObject): Usage | undefined => {
  const allocatable = record(record(node.status).allocatable)
  if (allocatable.cpu === undefined || allocatable.memory === undefined) return undefined
  return { cpu: QuantityMath.toNumber(allocatable.cpu) * 1000, memory: QuantityMath.toNumber(allocatable.memory) }
}

const requestedOn = (candidates: Candidates, node: KubeObject.KubeObject, nonZero: boolean): Usage => {
  const own = usage(candidates.pod, nonZero)
  return candidates.placed.filter((p) => p.node === node).reduce((sum, p) => {
    const theirs = usage(p.pod, nonZero)
    return { cpu: sum.cpu + theirs.cpu, memory: sum.memory + theirs.memory }
  }, own)
}

const leastAllocated = (candidates: Candidates): ReadonlyArray<number> =>
  candidates.feasible.map((node) => {
    const allocatable = allocatableOf(node)
    if (allocatable === undefined) return 0
    const requested = requestedOn(candidates, node, true)
    const free = (used: number, capacity: number) => capacity === 0 || used > capacity ? 0 : Math.trunc((capacity - used) * maxScore / capacity)
    return Math.trunc((free(requested.cpu, allocatable.cpu) + free(requested.memory, allocatable.memory)) / 2)
  })

const balancedAllocation = (candidates: Candidates): ReadonlyArray<number> =>
  candidates.feasible.map((node) => {
    const allocatable = allocatableOf(node)
    if (allocatable === undefined || allocatable.cpu === 0 || allocatable.memory === 0) return 0
    const requested = requestedOn(candidates, node, false)
    const spread = Math.abs(Math.min(1, requested.cpu / allocatable.cpu) - Math.min(1, requested.memory / allocatable.memory)) / 2
    return Math.trunc((1 - spread) * maxScore)
  })

const plugins: ReadonlyArray<readonly [number, (candidates: Candidates) => ReadonlyArray<number>]> = [
  [3, taintToleration],
  [2, nodeAffinity],
  [2, topologySpread],
  [2, interPodAffinity],
  [1, leastAllocated],
  [1, balancedAllocation]
]

/**
 * Each feasible node's total score, in the order given.
 *
 * @example
 * import * as Scoring from "./Scoring.ts"
 * const node = (name: string, disk: string) => ({ metadata: { name, labels: { disk } } })
 * const pod = { metadata: { name: "p", namespace: "default" }, spec: { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [
 *   { weight: 10, preference: { matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] } }] } } } }
 * const nodes = [node("a", "hdd"), node("b", "ssd")]
 * Scoring.scores({ pod, feasible: nodes, nodes, placed: [], namespaceLabels: () => ({}) }) // [300, 500]
 */
export const scores = (candidates: Candidates): ReadonlyArray<number> => {
  const totals = candidates.feasible.map(() => 0)
  for (const [weight, plugin] of plugins) {
    for (const [i, score] of plugin(candidates).entries()) totals[i]! += weight * score
  }
  return totals
}

/**
 * The node kube-scheduler would pick of the feasible ones: the highest total score, the first of
 * them on a tie; undefined when none is feasible.
 *
 * @example
 * import * as Scoring from "./Scoring.ts"
 * const node = (name: string) => ({ metadata: { name, labels: { "kubernetes.io/hostname": name } } })
 * const nodes = [node("a"), node("b")]
 * const web = (name: string) => ({ metadata: { name, namespace: "default", labels: { app: "web" } }, spec: {} })
 * Scoring.best({ pod: web("web-2"), feasible: nodes, nodes, placed: [{ pod: web("web-1"), node: nodes[0]! }], namespaceLabels: () => ({}), spreadSelector: { matchLabels: { app: "web" } } })?.metadata?.name // "b"
 */
export const best = (candidates: Candidates): KubeObject.KubeObject | undefined => {
  if (candidates.feasible.length <= 1) return candidates.feasible[0]
  const totals = scores(candidates)
  let chosen = 0
  for (const [i, total] of totals.entries()) if (total > totals[chosen]!) chosen = i
  return candidates.feasible[chosen]
}
