/**
 * What 1.32's StatefulSet controller makes of a StatefulSet, as pure functions for the workload
 * simulator: its revisions (ControllerRevisions named by the hash of the pod template they hold),
 * the Pod and claims of each ordinal, the next step of a rollout (create, delete or wait, ordered
 * or in parallel, highest ordinal first for scale-downs and updates, above the partition), and the
 * status it reports.
 */
import * as ControllerRevisions from "./ControllerRevisions.ts"
import * as PodTemplates from "./PodTemplates.ts"
import * as Rollouts from "./Rollouts.ts"
import { Json, KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const count = KubeObject.number

export const revisionLabel = "controller-revision-hash"
export const podNameLabel = "statefulset.kubernetes.io/pod-name"
export const podIndexLabel = "apps.kubernetes.io/pod-index"

const ordinalPattern = /^(.*)-([0-9]+)$/

/**
 * A Pod's ordinal in the StatefulSet named `set`, or -1 when its name is not `<set>-<ordinal>`.
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * StatefulSets.ordinal({ metadata: { name: "db-2" } }, "db") // 2
 * StatefulSets.ordinal({ metadata: { name: "db-x" } }, "db") // -1
 */
export const ordinal = (pod: KubeObject.KubeObject, set: string): number => {
  const match = ordinalPattern.exec(KubeObject.meta(pod).name ?? "")
  if (match === null || match[1] !== set) return -1
  const value = Number(match[2])
  return Number.isSafeInteger(value) && value <= 2147483647 ? value : -1
}

const startOrdinal = (set: KubeObject.KubeObject) => count(record(record(set.spec).ordinals).start)
const replicasOf = (set: KubeObject.KubeObject) => count(record(set.spec).replicas, 1)

// Go's encoding/json of a map: keys sorted, HTML characters escaped.
const goJson = (value: unknown): string =>
  Json.canonical(value as Json.Json).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/**
 * The name of the revision holding the StatefulSet's current template: `<name>-<hash>`, the hash
 * kube's (FNV-32 of the data's JSON and the collision count, in kube's safe alphabet).
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * const db = { metadata: { name: "db" }, spec: { template: { metadata: { labels: { app: "db" } } } } }
 * StatefulSets.revisionName(db).startsWith("db-") // true
 */
export const revisionName = (set: KubeObject.KubeObject): string => {
  const bytes = new TextEncoder().encode(goJson(ControllerRevisions.data(set)) + String(count(record(set.status).collisionCount)))
  let hash = 0x811c9dc5
  for (const byte of bytes) hash = (Math.imul(hash, 0x01000193) ^ byte) >>> 0
  return `${(KubeObject.meta(set).name ?? "").slice(0, 223)}-${Rollouts.safeEncode(String(hash))}`
}

const claimName = (claim: Readonly<Record<string, unknown>>, set: KubeObject.KubeObject, at: number) =>
  `${String(record(claim.metadata).name ?? "")}-${KubeObject.meta(set).name ?? ""}-${at}`

const claimTemplates = (set: KubeObject.KubeObject) => KubeObject.records(record(set.spec).volumeClaimTemplates)

const retention = (set: KubeObject.KubeObject) => {
  const policy = record(record(set.spec).persistentVolumeClaimRetentionPolicy)
  return { whenDeleted: policy.whenDeleted === "Delete", whenScaled: policy.whenScaled === "Delete" }
}

const controllerRef = (kind: string, apiVersion: string, owner: KubeObject.KubeObject) => {
  const m = KubeObject.meta(owner)
  return { apiVersion, kind, name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }
}

/**
 * The PersistentVolumeClaims of an ordinal, one per claim template: `<claim>-<set>-<ordinal>`,
 * labelled with the set's selector, owned by the set when its retention policy deletes them with it.
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * const db = { metadata: { name: "db", namespace: "default" }, spec: { selector: { matchLabels: { app: "db" } }, volumeClaimTemplates: [{ metadata: { name: "data" }, spec: {} }] } }
 * StatefulSets.claims(db, 0)[0].metadata // { name: "data-db-0", namespace: "default", labels: { app: "db" } }
 */
export const claims = (set: KubeObject.KubeObject, at: number): ReadonlyArray<KubeObject.KubeObject> => {
  const selector = record(record(record(set.spec).selector).matchLabels)
  return claimTemplates(set).map((claim) => {
    const { status: _, ...rest } = claim
    const m = record(claim.metadata)
    return {
      ...rest,
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        ...m,
        name: claimName(claim, set, at),
        namespace: KubeObject.meta(set).namespace,
        labels: { ...record(m.labels), ...selector },
        ...(retention(set).whenDeleted ? { ownerReferences: [controllerRef("StatefulSet", "apps/v1", set)] } : {})
      }
    }
  })
}

/**
 * The claims of a scaled-down ordinal's Pod that its retention policy deletes with the Pod (they get
 * the Pod as their controller before it goes), by name.
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * StatefulSets.claimsDeletedWith({ metadata: { name: "db" }, spec: { persistentVolumeClaimRetentionPolicy: { whenScaled: "Delete" }, volumeClaimTemplates: [{ metadata: { name: "data" } }] } }, 3) // ["data-db-3"]
 */
export const claimsDeletedWith = (set: KubeObject.KubeObject, at: number): ReadonlyArray<string> =>
  retention(set).whenScaled ? claimTemplates(set).map((claim) => claimName(claim, set, at)) : []

/**
 * A claim owned by the Pod it is deleted with (and no longer by the set).
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * StatefulSets.ownedByPod({ metadata: { name: "data-db-3" } }, { metadata: { name: "db-3", uid: "p" } }).metadata.ownerReferences[0].kind // "Pod"
 */
export const ownedByPod = (claim: KubeObject.KubeObject, pod: KubeObject.KubeObject): KubeObject.KubeObject =>
  KubeObject.withMeta(claim, {
    ownerReferences: [
      ...(KubeObject.meta(claim).ownerReferences ?? []).filter((ref) => ref.kind !== "StatefulSet" && ref.kind !== "Pod"),
      controllerRef("Pod", "v1", pod)
    ]
  })

/**
 * The Pod of an ordinal at a revision: `<set>-<ordinal>`, the revision's template labelled with the
 * revision, its name and index, its hostname and the set's service as its subdomain, a volume per
 * claim template, owned by the set.
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * const db = { metadata: { name: "db", namespace: "default", uid: "u" }, spec: { serviceName: "db" } }
 * StatefulSets.pod(db, 1, "db-7c5f", { metadata: { labels: { app: "db" } }, spec: { containers: [] } }).spec.hostname // "db-1"
 */
export const pod = (
  set: KubeObject.KubeObject,
  at: number,
  revision: string,
  template: Readonly<Record<string, unknown>>
): KubeObject.KubeObject & { readonly spec: Record<string, unknown> } => {
  const name = `${KubeObject.meta(set).name ?? ""}-${at}`
  const templateMeta = record(template.metadata)
  const templateSpec = record(template.spec)
  const templates = claimTemplates(set)
  const claimed = new Set(templates.map((claim) => String(record(claim.metadata).name)))
  const volumes = [
    ...templates.map((claim) => ({
      name: String(record(claim.metadata).name),
      persistentVolumeClaim: { claimName: claimName(claim, set, at) }
    })),
    ...KubeObject.records(templateSpec.volumes).filter((volume) => !claimed.has(String(volume.name)))
  ]
  const serviceName = record(set.spec).serviceName
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      ...PodTemplates.podMetadata(template),
      name,
      labels: { ...record(templateMeta.labels), [revisionLabel]: revision, [podNameLabel]: name, [podIndexLabel]: String(at) },
      ownerReferences: [controllerRef("StatefulSet", "apps/v1", set)]
    },
    spec: {
      ...templateSpec,
      ...(volumes.length === 0 ? {} : { volumes }),
      hostname: name,
      ...(typeof serviceName === "string" && serviceName !== "" ? { subdomain: serviceName } : {})
    }
  }
}

const healthy = (pod: KubeObject.KubeObject, minReadySeconds: number, now: number) =>
  KubeObject.meta(pod).deletionTimestamp === undefined && record(pod.status).phase === "Running" &&
  Rollouts.podAvailable(pod, minReadySeconds, now)

/** The controller's next step: the ordinals to create (each at its revision) and the pods to delete. */
export interface Step {
  readonly create: ReadonlyArray<{ readonly ordinal: number; readonly revision: "current" | "update" }>
  readonly remove: ReadonlyArray<KubeObject.KubeObject>
}

/**
 * The next step of the StatefulSet's rollout, as 1.32's controller takes it: with `OrderedReady`
 * one ordinal at a time, lowest first, each waiting for the ones before it to be running and
 * available (with `Parallel`, every missing pod at once); pods beyond the replicas deleted highest
 * first; then, with `RollingUpdate`, the highest pod at or above the partition not at the update
 * revision deleted (to come back at it), one at a time, each once every pod above it is healthy.
 * Failed or succeeded pods are deleted, to be made again.
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * StatefulSets.next({ metadata: { name: "db" }, spec: { replicas: 2 } }, [], "db-1", 0).create // [{ ordinal: 0, revision: "update" }]
 */
export const next = (set: KubeObject.KubeObject, pods: ReadonlyArray<KubeObject.KubeObject>, updateRevision: string, now: number): Step => {
  const spec = record(set.spec)
  const name = KubeObject.meta(set).name ?? ""
  const start = startOrdinal(set)
  const end = start + replicasOf(set)
  const ordered = spec.podManagementPolicy !== "Parallel"
  const minReady = count(spec.minReadySeconds)
  const strategy = record(spec.updateStrategy)
  const rolling = strategy.type !== "OnDelete"
  const partition = count(record(strategy.rollingUpdate).partition)
  const byOrdinal = new Map<number, KubeObject.KubeObject>()
  const condemned: Array<KubeObject.KubeObject> = []
  for (const p of pods) {
    const at = ordinal(p, name)
    if (at >= start && at < end) byOrdinal.set(at, p)
    else condemned.push(p)
  }
  const create: Array<Step["create"][number]> = []
  const remove: Array<KubeObject.KubeObject> = []
  const revisionFor = (at: number) => (rolling && at < start + partition ? "current" : "update") as "current" | "update"
  for (let at = start; at < end; at++) {
    const p = byOrdinal.get(at)
    const phase = record(p?.status).phase
    if (p === undefined) {
      create.push({ ordinal: at, revision: revisionFor(at) })
      if (ordered) return { create, remove }
      continue
    }
    if ((phase === "Failed" || phase === "Succeeded") && KubeObject.meta(p).deletionTimestamp === undefined) {
      remove.push(p)
      if (ordered) return { create, remove }
      continue
    }
    if (ordered && !healthy(p, minReady, now)) return { create, remove }
  }
  // Beyond the replicas: highest ordinal first; ordered, one at a time.
  condemned.sort((a, b) => ordinal(b, name) - ordinal(a, name))
  for (const p of condemned) {
    if (KubeObject.meta(p).deletionTimestamp !== undefined) {
      if (ordered) return { create, remove }
      continue
    }
    remove.push(p)
    if (ordered) return { create, remove }
  }
  if (!rolling || create.length > 0 || remove.length > 0) return { create, remove }
  for (let at = end - 1; at >= start + partition; at--) {
    const p = byOrdinal.get(at)
    if (p === undefined) return { create, remove }
    if (KubeObject.meta(p).labels?.[revisionLabel] !== updateRevision && KubeObject.meta(p).deletionTimestamp === undefined) {
      return { create, remove: [p] }
    }
    if (!healthy(p, minReady, now)) return { create, remove }
  }
  return { create, remove }
}

/**
 * The StatefulSet's status from its pods, as 1.32's controller counts them: those created, ready,
 * available, at the current and at the update revision; a rolling update whose every replica is
 * updated and ready makes the update revision current.
 *
 * @example
 * import * as StatefulSets from "./StatefulSets.ts"
 * StatefulSets.status({ metadata: { generation: 1 }, spec: { replicas: 0 } }, [], "db-1", "db-1", 0) // { observedGeneration: 1, replicas: 0, ... }
 */
export const status = (
  set: KubeObject.KubeObject,
  pods: ReadonlyArray<KubeObject.KubeObject>,
  currentRevision: string,
  updateRevision: string,
  now: number
): Record<string, unknown> => {
  const spec = record(set.spec)
  const minReady = count(spec.minReadySeconds)
  let replicas = 0
  let ready = 0
  let available = 0
  let current = 0
  let updated = 0
  for (const p of pods) {
    if (record(p.status).phase === undefined) continue
    replicas++
    const isReady = record(p.status).phase === "Running" && Rollouts.podAvailable(p, 0, now)
    if (isReady) ready++
    if (isReady && Rollouts.podAvailable(p, minReady, now)) available++
    const revision = KubeObject.meta(p).labels?.[revisionLabel]
    if (KubeObject.meta(p).deletionTimestamp !== undefined) continue
    if (revision === currentRevision) current++
    if (revision === updateRevision) updated++
  }
  const desired = replicasOf(set)
  const complete = record(spec.updateStrategy).type !== "OnDelete" && updated === desired && ready === desired && replicas === desired
  return {
    ...record(set.status),
    observedGeneration: KubeObject.meta(set).generation ?? 1,
    replicas,
    readyReplicas: ready,
    currentReplicas: complete ? updated : current,
    updatedReplicas: updated,
    currentRevision: complete ? updateRevision : currentRevision,
    updateRevision,
    collisionCount: count(record(set.status).collisionCount),
    availableReplicas: available
  }
}
