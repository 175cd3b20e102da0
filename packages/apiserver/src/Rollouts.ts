/**
 * What 1.32's Deployment and ReplicaSet controllers make of a Deployment, as pure functions for the
 * workload simulator: the ReplicaSet of its pod template (named by the template's hash, labelled
 * `pod-template-hash`, numbered by `deployment.kubernetes.io/revision`), how many pods each of its
 * ReplicaSets should run as a rollout goes, and the statuses both report from their pods.
 */
import * as StatusConditions from "./StatusConditions.ts"
import { Json, KubeObject } from "@kubefx/schema/internal"

type Obj = Readonly<Record<string, unknown>>

const record = KubeObject.record
const count = KubeObject.number

export const hashLabel = "pod-template-hash"
export const revisionAnnotation = "deployment.kubernetes.io/revision"

const alphanums = "bcdfghjklmnpqrstvwxz2456789"

// Keys sorted at every level, so equal templates hash alike whatever their key order.
const stable = (value: unknown): string => Json.canonical((value ?? null) as Json.Json)

/**
 * The pod template's hash as kube spells it (FNV-32a, its decimal digits mapped onto kube's safe
 * alphabet); the value of `pod-template-hash` and the end of the ReplicaSet's name.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.templateHash({ spec: { containers: [{ name: "web", image: "nginx" }] } }) === Rollouts.templateHash({ spec: { containers: [{ image: "nginx", name: "web" }] } }) // true
 */
export const templateHash = (template: unknown): string => {
  let hash = 0x811c9dc5
  const text = stable(template)
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0
  return safeEncode(String(hash))
}

/**
 * Text in kube's safe alphabet (no vowels, no digits or letters that read alike), as its names'
 * hashes are spelled: each character mapped by its code.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.safeEncode("0123") // "4567"
 */
export const safeEncode = (text: string): string =>
  [...text].map((c) => alphanums[c.charCodeAt(0) % alphanums.length]).join("")

const withoutHash = (template: unknown): Obj => {
  const t = record(template)
  const m = record(t.metadata)
  const { [hashLabel]: _, ...labels } = record(m.labels)
  return { ...t, metadata: { ...m, labels } }
}

/**
 * Whether a ReplicaSet runs the Deployment's current pod template (its hash label aside).
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * const template = { metadata: { labels: { app: "web" } }, spec: { containers: [] } }
 * Rollouts.runsTemplate({ spec: { template: { ...template, metadata: { labels: { app: "web", "pod-template-hash": "x" } } } } }, template) // true
 */
export const runsTemplate = (replicaSet: KubeObject.KubeObject, template: unknown): boolean =>
  stable(withoutHash(record(replicaSet.spec).template)) === stable(withoutHash(template))

/**
 * A ReplicaSet's revision (0 when it has none).
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.revision({ metadata: { annotations: { "deployment.kubernetes.io/revision": "3" } } }) // 3
 */
export const revision = (replicaSet: KubeObject.KubeObject): number => {
  const value = Number(KubeObject.meta(replicaSet).annotations?.[revisionAnnotation] ?? "0")
  return Number.isInteger(value) ? value : 0
}

/**
 * The ReplicaSet a Deployment makes for its current template: `<name>-<hash>`, owned by it, its
 * selector and template labels extended by the hash, at the given revision, with no replicas yet.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * const web = { metadata: { name: "web", namespace: "default", uid: "u" }, spec: { replicas: 2, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [] } } } }
 * Rollouts.replicaSetFor(web, 1).metadata // { name: "web-" + its hash, ... }
 */
export const replicaSetFor = (deployment: KubeObject.KubeObject, revisionNumber: number): KubeObject.KubeObject => {
  const spec = record(deployment.spec)
  const template = record(spec.template)
  const hash = templateHash(template)
  const m = KubeObject.meta(deployment)
  const selector = record(spec.selector)
  const templateMeta = record(template.metadata)
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: `${m.name ?? ""}-${hash}`,
      namespace: m.namespace,
      labels: { ...record(templateMeta.labels), [hashLabel]: hash },
      annotations: {
        ...copiedAnnotations(deployment),
        ...replicasAnnotations(deployment),
        [revisionAnnotation]: String(revisionNumber)
      },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
    },
    spec: {
      replicas: 0,
      minReadySeconds: count(spec.minReadySeconds),
      selector: { ...selector, matchLabels: { ...record(selector.matchLabels), [hashLabel]: hash } },
      template: { ...template, metadata: { ...templateMeta, labels: { ...record(templateMeta.labels), [hashLabel]: hash } } }
    }
  }
}

// The Deployment's annotations its controller does not copy to a ReplicaSet.
const notCopied = new Set([
  "kubectl.kubernetes.io/last-applied-configuration",
  revisionAnnotation,
  "deployment.kubernetes.io/revision-history",
  "deployment.kubernetes.io/desired-replicas",
  "deployment.kubernetes.io/max-replicas",
  "deprecated.deployment.rollback.to"
])

/**
 * The Deployment's annotations its controller copies to its new ReplicaSet (`kubernetes.io/change-cause`,
 * which `kubectl rollout history` shows, among them).
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.copiedAnnotations({ metadata: { annotations: { "kubernetes.io/change-cause": "v2", "deployment.kubernetes.io/revision": "2" } } }) // { "kubernetes.io/change-cause": "v2" }
 */
export const copiedAnnotations = (deployment: KubeObject.KubeObject): Record<string, string> =>
  Object.fromEntries(Object.entries(KubeObject.meta(deployment).annotations ?? {}).filter(([key]) => !notCopied.has(key)))

/**
 * The replica counts a ReplicaSet's annotations say its Deployment wants: its replicas, and with
 * the surge the most it may run.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.replicasAnnotations({ spec: { replicas: 4 } })["deployment.kubernetes.io/max-replicas"] // "5"
 */
export const replicasAnnotations = (deployment: KubeObject.KubeObject): Record<string, string> => {
  const replicas = count(record(deployment.spec).replicas, 1)
  return {
    "deployment.kubernetes.io/desired-replicas": String(replicas),
    "deployment.kubernetes.io/max-replicas": String(replicas + surge(deployment))
  }
}

// maxSurge and maxUnavailable of a rolling update, resolved against the replicas as kube rounds them.
/**
 * An int-or-percent (`maxSurge`, `maxUnavailable`) as a count of `replicas`, a percentage rounded up
 * or down (25% when unset).
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.resolve("25%", 10, true) // 3
 */
export const resolve = (value: unknown, replicas: number, up: boolean): number => {
  if (typeof value === "number") return value
  const percent = Number(String(value ?? "25%").replace("%", ""))
  const exact = (percent * replicas) / 100
  return up ? Math.ceil(exact) : Math.floor(exact)
}

const surge = (deployment: KubeObject.KubeObject): number => {
  const spec = record(deployment.spec)
  const strategy = record(spec.strategy)
  return strategy.type === "Recreate" ? 0 : resolve(record(strategy.rollingUpdate).maxSurge, count(spec.replicas, 1), true)
}

/**
 * How many pods the new ReplicaSet and each old one should run now: a rolling update brings the
 * new one up to the desired replicas plus the surge and takes old ones down as new pods become
 * available, keeping the desired replicas less the unavailable allowance; Recreate first takes
 * every old pod away.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * const deployment = { spec: { replicas: 4 } }
 * Rollouts.scale(deployment, { available: 0 }, [{ replicas: 4, available: 4 }]) // { newReplicas: 2, oldReplicas: [3] }
 */
export const scale = (
  deployment: KubeObject.KubeObject,
  fresh: { readonly available: number },
  old: ReadonlyArray<{ readonly replicas: number; readonly available: number }>
): { readonly newReplicas: number; readonly oldReplicas: ReadonlyArray<number> } => {
  const spec = record(deployment.spec)
  const desired = count(spec.replicas, 1)
  const strategy = record(spec.strategy)
  const oldPods = old.reduce((n, rs) => n + rs.replicas, 0)
  if (strategy.type === "Recreate") {
    return { newReplicas: oldPods > 0 ? 0 : desired, oldReplicas: old.map(() => 0) }
  }
  const unavailable = resolve(record(strategy.rollingUpdate).maxUnavailable, desired, false)
  // Old pods kept: enough that the available pods stay at least desired - maxUnavailable.
  let keep = Math.max(0, desired - unavailable - fresh.available)
  const oldReplicas = old.map((rs) => {
    const kept = Math.min(rs.replicas, Math.min(keep, rs.available))
    keep -= kept
    return kept
  })
  const newReplicas = Math.min(desired, Math.max(0, desired + surge(deployment) - oldReplicas.reduce((n, r) => n + r, 0)))
  return { newReplicas, oldReplicas }
}

/** What a ReplicaSet's pods are, as its status counts them. */
export interface PodCounts {
  readonly replicas: number
  readonly fullyLabeled: number
  readonly ready: number
  readonly available: number
}

/**
 * Whether a Pod is ready, and has been for `minReadySeconds` at `now` (milliseconds).
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * const pod = { status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" }] } }
 * Rollouts.podAvailable(pod, 10, Date.parse("2026-01-01T00:00:05Z")) // false
 */
export const podAvailable = (pod: KubeObject.KubeObject, minReadySeconds: number, now: number): boolean => {
  const condition = KubeObject.records(record(pod.status).conditions).find((c) => c.type === "Ready")
  if (condition?.status !== "True") return false
  if (minReadySeconds <= 0) return true
  const since = typeof condition.lastTransitionTime === "string" ? Date.parse(condition.lastTransitionTime) : Number.NaN
  return !Number.isNaN(since) && since + minReadySeconds * 1000 <= now
}

/**
 * A ReplicaSet's pods as its status counts them: all, those with every template label, the ready,
 * and the available (ready for `minReadySeconds`).
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.podCounts({ spec: { template: { metadata: { labels: { app: "web" } } } } }, [], 0).replicas // 0
 */
export const podCounts = (replicaSet: KubeObject.KubeObject, pods: ReadonlyArray<KubeObject.KubeObject>, now: number): PodCounts => {
  const spec = record(replicaSet.spec)
  const labels = Object.entries(record(record(record(spec.template).metadata).labels))
  const minReady = count(spec.minReadySeconds)
  let fullyLabeled = 0
  let ready = 0
  let available = 0
  for (const pod of pods) {
    const own = KubeObject.meta(pod).labels ?? {}
    if (labels.every(([key, value]) => own[key] === value)) fullyLabeled++
    if (!podAvailable(pod, 0, now)) continue
    ready++
    if (podAvailable(pod, minReady, now)) available++
  }
  return { replicas: pods.length, fullyLabeled, ready, available }
}

const revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"

/**
 * A ReplicaSet's annotations once a rollback makes it revision `revision`: that revision, and the
 * one it had appended to `revision-history` (kept to 2,000 characters, the oldest dropped first),
 * as the Deployment controller keeps them.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.revived({ metadata: { annotations: { "deployment.kubernetes.io/revision": "1" } } }, 3)
 * // { "deployment.kubernetes.io/revision": "3", "deployment.kubernetes.io/revision-history": "1" }
 */
export const revived = (replicaSet: KubeObject.KubeObject, revision: number): Record<string, string> => {
  const annotations = KubeObject.meta(replicaSet).annotations ?? {}
  const old = annotations[revisionAnnotation]
  if (old === undefined) return { ...annotations, [revisionAnnotation]: String(revision) }
  const history = (annotations[revisionHistoryAnnotation] ?? "").split(",").filter((r) => r !== "")
  while (history.length > 0 && [...history, old].join(",").length > 2000) history.shift()
  return { ...annotations, [revisionAnnotation]: String(revision), [revisionHistoryAnnotation]: [...history, old].join(",") }
}

/**
 * A ReplicaSet's status from its pods; `refused`, the message of a pod creation admission refused.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * Rollouts.replicaSetStatus({ metadata: { generation: 1 } }, { replicas: 2, fullyLabeled: 2, ready: 1, available: 1 }, undefined).readyReplicas // 1
 */
export const replicaSetStatus = (replicaSet: KubeObject.KubeObject, pods: PodCounts, refused: string | undefined): Record<string, unknown> => {
  // The controller states only ReplicaFailure; conditions others set stay.
  const others = KubeObject.records(record(replicaSet.status).conditions).filter((c) => c.type !== "ReplicaFailure")
  const conditions = refused === undefined ? others : [
    ...others,
    { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: refused, lastTransitionTime: keptTime(replicaSet, "ReplicaFailure") }
  ]
  return {
    replicas: pods.replicas,
    fullyLabeledReplicas: pods.fullyLabeled,
    readyReplicas: pods.ready,
    availableReplicas: pods.available,
    observedGeneration: KubeObject.meta(replicaSet).generation ?? 1,
    ...(conditions.length === 0 ? {} : { conditions })
  }
}

const keptTime = (object: KubeObject.KubeObject, type: string): string => {
  const before = KubeObject.records(record(object.status).conditions).find((c) => c.type === type)
  return typeof before?.lastTransitionTime === "string" ? before.lastTransitionTime : KubeObject.timestamp()
}

/**
 * A Deployment's status from its ReplicaSets, as 1.32's controller reports it: pods of every
 * ReplicaSet, the new one's as updated, the ready and available, `Available` against the
 * unavailable allowance, `Progressing` naming the new ReplicaSet (stamped each time the rollout
 * progresses, `ProgressDeadlineExceeded` once it has not for `progressDeadlineSeconds`), and a
 * `ReplicaFailure` it reports. `now` is the time in epoch milliseconds.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * const web = { metadata: { generation: 1 }, spec: { replicas: 1 } }
 * const rs = { metadata: { name: "web-abc" }, spec: { replicas: 1 }, status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 } }
 * Rollouts.deploymentStatus(web, rs, [rs]).availableReplicas // 1
 */
export const deploymentStatus = (
  deployment: KubeObject.KubeObject,
  fresh: KubeObject.KubeObject,
  all: ReadonlyArray<KubeObject.KubeObject>,
  now: number = Date.now()
): Record<string, unknown> => {
  const spec = record(deployment.spec)
  const previous = record(deployment.status)
  const desired = count(spec.replicas, 1)
  const sum = (field: string) => all.reduce((n, rs) => n + count(record(rs.status)[field]), 0)
  const replicas = sum("replicas")
  // A paused Deployment's newest ReplicaSet may not run its template: then none is updated.
  const updated = runsTemplate(fresh, spec.template) ? count(record(fresh.status).replicas) : 0
  const available = sum("availableReplicas")
  const ready = sum("readyReplicas")
  const allowance = record(spec.strategy).type === "Recreate" ? 0 : resolve(record(record(spec.strategy).rollingUpdate).maxUnavailable, desired, false)
  const target = all.reduce((n, rs) => n + count(record(rs.spec).replicas), 0)
  const name = KubeObject.meta(fresh).name ?? ""
  const done = updated === desired && replicas === desired && available === desired && count(record(fresh.status).availableReplicas) === desired
  const failure = KubeObject.records(record(fresh.status).conditions).find((c) => c.type === "ReplicaFailure" && c.status === "True")
  const stamp = KubeObject.timestamp(new Date(now))
  const progress = progressing(deployment, spec.paused === true, done, { replicas, updated, ready, available }, name, now)
  const next: Array<StatusConditions.Condition> = [
    available >= desired - allowance
      ? { type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "Deployment has minimum availability." }
      : { type: "Available", status: "False", reason: "MinimumReplicasUnavailable", message: "Deployment does not have minimum availability." },
    progress.condition,
    ...(failure === undefined ? [] : [{ type: "ReplicaFailure", status: "True" as const, reason: "FailedCreate", message: String(failure.message ?? "") }])
  ]
  // The controller states Available, Progressing and ReplicaFailure; conditions others set stay.
  const conditions = StatusConditions.set(previous.conditions, next, { stamp: "lastUpdateTime", keep: (type) => type !== "ReplicaFailure", now: stamp })
  return {
    observedGeneration: KubeObject.meta(deployment).generation ?? 1,
    replicas,
    updatedReplicas: updated,
    readyReplicas: ready,
    availableReplicas: available,
    unavailableReplicas: Math.max(0, target - available),
    // Progress restamps the condition even when it says the same.
    conditions: progress.restamp
      ? conditions.map((c) => record(c).type === "Progressing" ? { ...record(c), lastUpdateTime: stamp } : c)
      : conditions
  }
}

/**
 * When a Deployment still rolling out times out, in epoch milliseconds: its `Progressing`
 * condition's last update plus `progressDeadlineSeconds`; undefined when it is done, paused, has
 * timed out already, or has no deadline.
 *
 * @example
 * import * as Rollouts from "./Rollouts.ts"
 * const web = { spec: { progressDeadlineSeconds: 60 }, status: { conditions: [{ type: "Progressing", status: "True", reason: "ReplicaSetUpdated", lastUpdateTime: "2026-01-01T00:00:00Z" }] } }
 * Rollouts.progressDeadline(web) // Date.parse("2026-01-01T00:01:00Z")
 */
export const progressDeadline = (deployment: KubeObject.KubeObject): number | undefined => {
  const deadline = record(deployment.spec).progressDeadlineSeconds
  const condition = KubeObject.records(record(deployment.status).conditions).find((c) => c.type === "Progressing")
  if (typeof deadline !== "number" || condition?.status !== "True" || condition.reason !== "ReplicaSetUpdated") return undefined
  const since = Date.parse(String(condition.lastUpdateTime ?? ""))
  return Number.isNaN(since) ? undefined : since + deadline * 1000
}

// The controller's Progressing condition: stated anew when the rollout is done, paused, progressing
// (then restamped) or timed out; otherwise the one it has, as it is.
const progressing = (
  deployment: KubeObject.KubeObject,
  paused: boolean,
  done: boolean,
  counts: { readonly replicas: number; readonly updated: number; readonly ready: number; readonly available: number },
  name: string,
  now: number
): { readonly condition: StatusConditions.Condition; readonly restamp: boolean } => {
  if (paused) return { condition: { type: "Progressing", status: "Unknown", reason: "DeploymentPaused", message: "Deployment is paused" }, restamp: false }
  if (done) return { condition: { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable", message: `ReplicaSet "${name}" has successfully progressed.` }, restamp: false }
  const before = record(deployment.status)
  const updating = { type: "Progressing", status: "True", reason: "ReplicaSetUpdated", message: `ReplicaSet "${name}" is progressing.` } as const
  const moved = counts.updated > count(before.updatedReplicas) ||
    counts.replicas - counts.updated < count(before.replicas) - count(before.updatedReplicas) ||
    counts.ready > count(before.readyReplicas) || counts.available > count(before.availableReplicas)
  const current = KubeObject.records(before.conditions).find((c) => c.type === "Progressing")
  if (moved || current === undefined || current.reason === "NewReplicaSetAvailable" || current.reason === "DeploymentPaused") {
    return { condition: updating, restamp: true }
  }
  const deadline = progressDeadline(deployment)
  if (deadline !== undefined && deadline <= now) {
    return { condition: { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: `ReplicaSet "${name}" has timed out progressing.` }, restamp: false }
  }
  return { condition: { type: "Progressing", status: current.status === "False" ? "False" : "True", reason: String(current.reason ?? ""), message: String(current.message ?? "") }, restamp: false }
}
