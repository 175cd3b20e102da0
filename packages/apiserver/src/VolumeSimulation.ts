/**
 * The workload simulator's storage, as kind's: a default StorageClass `standard` whose provisioner
 * (`rancher.io/local-path`) makes a PersistentVolume for each claim of its class, at once for an
 * `Immediate` class and once the scheduler picked the node of the claim's first pod for a
 * `WaitForFirstConsumer` one (the claim's `volume.kubernetes.io/selected-node`); kube's
 * PersistentVolume controller gives a claim made with no class the default one once there is one,
 * makes a volume made by hand `Available`, binds a claim to the volume
 * it names, one made out for it, or the smallest of those there that fit it before any is made,
 * binds the two (the claim `Bound` with the volume's capacity), grows a bound claim's volume and
 * capacity to its request where its class allows expansion, and
 * reclaims the volume when its claim is gone (deleted for `Delete`, `Released` for `Retain`); kube's
 * ephemeral volume controller makes a pod's generic ephemeral volumes' claims, owned by it. The
 * scheduler's volume binding keeps a pod whose claims are missing, being deleted or unbound
 * `Immediate` ones `Unschedulable`, and binds one whose `WaitForFirstConsumer` claims wait for it
 * only once they are bound. Claims of another provisioner's class wait for it, as on a cluster.
 */
import { Effect } from "effect"
import * as ClaimResize from "./ClaimResize.ts"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as DefaultStorageClass from "./DefaultStorageClass.ts"
import * as Rest from "./Rest.ts"
import * as Selectors from "./Selectors.ts"
import * as SimulatedController from "./SimulatedController.ts"
import type * as Status from "./Status.ts"
import * as StorageProtection from "./StorageProtection.ts"
import type * as Store from "./Store.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

const record = KubeObject.record

/** The provisioner of the default class, kind's. */
export const provisioner = "rancher.io/local-path"

/** The annotation the scheduler puts on a `WaitForFirstConsumer` claim: the node its volume is for. */
export const selectedNode = "volume.kubernetes.io/selected-node"

const claims = "persistentvolumeclaims"
const volumes = "persistentvolumes"
const classes = "storageclasses.storage.k8s.io"

/**
 * kind's default StorageClass.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * VolumeSimulation.defaultClass().volumeBindingMode // "WaitForFirstConsumer"
 */
export const defaultClass = (): KubeObject.KubeObject => ({
  apiVersion: "storage.k8s.io/v1",
  kind: "StorageClass",
  metadata: { name: "standard", annotations: { [DefaultStorageClass.defaultAnnotation]: "true" } },
  provisioner,
  reclaimPolicy: "Delete",
  volumeBindingMode: "WaitForFirstConsumer"
})

/**
 * Makes the default StorageClass unless the cluster has one already (kept when the server
 * restarts with its data, or a test made its own).
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const options: import("./Rest.ts").WriteOptions
 * const made = VolumeSimulation.ensureDefaultClass(env, options)
 */
export const ensureDefaultClass = (env: Rest.Env, options: Rest.WriteOptions): Effect.Effect<void> => {
  const resource = env.registry.byStorage(classes)[0]
  if (resource === undefined || env.store.list(classes, undefined).some(DefaultStorageClass.isDefault)) return Effect.void
  return Effect.ignore(Rest.create(env, resource, undefined, defaultClass(), options))
}

const ephemeralVolumes = (pod: KubeObject.KubeObject) => KubeObject.records(record(pod.spec).volumes).filter((volume) => volume.ephemeral !== undefined)

/**
 * kube's ephemeral volume controller: the claim of each of a pod's generic ephemeral volumes, made
 * from its template, named `<pod>-<volume>` and owned by the pod (so it goes with it).
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const pod: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const made = VolumeSimulation.ensureEphemeral(ctx, pod)
 */
export const ensureEphemeral = (ctx: SimulatedController.Context, pod: KubeObject.KubeObject): Effect.Effect<void> =>
  Effect.suspend(() => {
    const resource = ctx.env.registry.byStorage(claims)[0]
    const m = KubeObject.meta(pod)
    const namespace = m.namespace ?? ""
    const missing = ephemeralVolumes(pod).filter((volume) => ctx.env.store.get(claims, namespace, StorageProtection.ephemeralClaimName(pod, volume)) === undefined)
    if (resource === undefined || missing.length === 0) return Effect.void
    return Effect.forEach(missing, (volume) => {
      const template = record(record(volume.ephemeral).volumeClaimTemplate)
      const name = StorageProtection.ephemeralClaimName(pod, volume)
      return Effect.ignore(Rest.create(ctx.env, resource, namespace, {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: {
          ...record(template.metadata),
          name,
          ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: m.name, uid: m.uid, controller: true, blockOwnerDeletion: true }]
        },
        spec: record(template.spec)
      }, ctx.writeOptions))
    }, { discard: true })
  })

/** What the scheduler's volume binding makes of a pod's claims. */
export type Binding =
  | { readonly _tag: "Bound" }
  | { readonly _tag: "Unresolvable"; readonly reason: string }
  | { readonly _tag: "Waiting"; readonly claims: ReadonlyArray<KubeObject.KubeObject> }

const classOf = (store: Store.Store, claim: KubeObject.KubeObject) => {
  const name = record(claim.spec).storageClassName
  return typeof name === "string" && name !== "" ? store.get(classes, "", name) : undefined
}

const bound = (claim: KubeObject.KubeObject) => record(claim.status).phase === "Bound"

/**
 * The pod's claims: all bound; one that stops it from any node (kube-scheduler's reason); or the
 * `WaitForFirstConsumer` claims that wait for its node.
 *
 * @example
 * import * as Store from "./Store.ts"
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * VolumeSimulation.binding(Store.make(), { metadata: { namespace: "default" }, spec: { volumes: [{ name: "d", persistentVolumeClaim: { claimName: "d" } }] } })
 * // { _tag: "Unresolvable", reason: 'persistentvolumeclaim "d" not found' }
 */
export const binding = (store: Store.Store, pod: KubeObject.KubeObject): Binding => {
  const namespace = KubeObject.meta(pod).namespace ?? ""
  const waiting: Array<KubeObject.KubeObject> = []
  let immediate = false
  const ephemeral = new Set(ephemeralVolumes(pod).map((volume) => StorageProtection.ephemeralClaimName(pod, volume)))
  for (const name of StorageProtection.claimsOf(pod)) {
    const claim = store.get(claims, namespace, name)
    if (claim === undefined) {
      return {
        _tag: "Unresolvable",
        reason: ephemeral.has(name)
          ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${name}"`
          : `persistentvolumeclaim "${name}" not found`
      }
    }
    if (ephemeral.has(name) && !StorageProtection.ownedBy(claim, pod)) {
      return { _tag: "Unresolvable", reason: `PVC ${namespace}/${name} was not created for pod ${namespace}/${KubeObject.meta(pod).name ?? ""} (pod is not owner)` }
    }
    if (KubeObject.meta(claim).deletionTimestamp !== undefined) return { _tag: "Unresolvable", reason: `persistentvolumeclaim "${name}" is being deleted` }
    if (bound(claim)) continue
    if (classOf(store, claim)?.volumeBindingMode === "WaitForFirstConsumer") waiting.push(claim)
    else immediate = true
  }
  if (immediate) return { _tag: "Unresolvable", reason: "pod has unbound immediate PersistentVolumeClaims" }
  return waiting.length > 0 ? { _tag: "Waiting", claims: waiting } : { _tag: "Bound" }
}

/**
 * Whether a claim of the pod's is `ReadWriteOncePod` and another scheduled pod, not done, uses it:
 * then no node will do (kube-scheduler's VolumeRestrictions).
 *
 * @example
 * import * as Store from "./Store.ts"
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * VolumeSimulation.heldReadWriteOncePod(Store.make(), { metadata: { name: "a", namespace: "default" }, spec: {} }) // false
 */
export const heldReadWriteOncePod = (store: Store.Store, pod: KubeObject.KubeObject): boolean => {
  const m = KubeObject.meta(pod)
  const namespace = m.namespace ?? ""
  const exclusive = StorageProtection.claimsOf(pod).filter((name) => {
    const claim = store.get(claims, namespace, name)
    return claim !== undefined && accessModes(record(claim.spec)).includes("ReadWriteOncePod")
  })
  if (exclusive.length === 0) return false
  return store.list("pods", namespace).some((other) => {
    const phase = record(other.status).phase
    const nodeName = record(other.spec).nodeName
    return KubeObject.meta(other).uid !== m.uid && typeof nodeName === "string" && nodeName !== "" && phase !== "Succeeded" &&
      phase !== "Failed" && StorageProtection.claimsOf(other).some((name) => exclusive.includes(name))
  })
}

/**
 * The scheduler's choice of node for the `WaitForFirstConsumer` claims that wait for a pod, which
 * starts their provisioning.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const claim: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const selected = VolumeSimulation.select(ctx, [claim], "kubefx-node")
 */
export const select = (ctx: SimulatedController.Context, waiting: ReadonlyArray<KubeObject.KubeObject>, node: string): Effect.Effect<void, Status.ApiError> =>
  Effect.forEach(
    waiting.filter((claim) => KubeObject.meta(claim).annotations?.[selectedNode] === undefined),
    (claim) =>
      SimulatedController.writeObject(ctx, claims, claim, (current) => KubeObject.withMeta(current, {
        annotations: { ...KubeObject.meta(current).annotations, [selectedNode]: node }
      })),
    { discard: true }
  )

/**
 * Whether the provisioner and the binder have something to do for a claim: it is not bound.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * VolumeSimulation.pending({ status: { phase: "Pending" } }) // true
 */
export const pending = (claim: KubeObject.KubeObject): boolean => !bound(claim) && KubeObject.meta(claim).deletionTimestamp === undefined

/**
 * Whether a bound claim asks for more storage than it has: the resizer's to grow.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * VolumeSimulation.resizing({ spec: { resources: { requests: { storage: "2Gi" } } }, status: { phase: "Bound", capacity: { storage: "1Gi" } } }) // true
 */
export const resizing = (claim: KubeObject.KubeObject): boolean =>
  bound(claim) && KubeObject.meta(claim).deletionTimestamp === undefined &&
  (QuantityMath.compare(ClaimResize.requested(claim) ?? "0", record(record(claim.status).capacity).storage ?? "0") ?? 0) > 0

// The resizer of a class that allows expansion: the volume grown to the request, then the claim's
// capacity (with no filesystem to grow, in one step).
const expand = (ctx: SimulatedController.Context, key: SimulatedController.Key, claim: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const volumeName = record(claim.spec).volumeName
    const volume = typeof volumeName === "string" ? ctx.env.store.get(volumes, "", volumeName) : undefined
    const storageClass = classOf(ctx.env.store, claim)
    if (volume === undefined || storageClass?.allowVolumeExpansion !== true) return
    const size = ClaimResize.requested(claim)
    const resizer = `external-resizer ${String(storageClass.provisioner)}`
    yield* ControllerEvents.record(ctx.env, ctx.writeOptions, claim, resizer, {
      type: "Normal",
      reason: "Resizing",
      message: `External resizer is resizing volume ${volumeName}`
    })
    yield* ctx.update({ storage: volumes, namespace: "", name: String(volumeName) }, undefined, (current) => ({
      ...current,
      spec: { ...record(current.spec), capacity: { ...record(record(current.spec).capacity), storage: size } }
    }))
    yield* SimulatedController.writeStatus(ctx, key, (current) => ({
      ...record(current.status),
      capacity: { ...record(record(current.status).capacity), storage: size }
    }))
    yield* ControllerEvents.record(ctx.env, ctx.writeOptions, claim, resizer, {
      type: "Normal",
      reason: "VolumeResizeSuccessful",
      message: "Resize volume succeeded"
    })
  })

/**
 * The provisioner's and the binder's look at a claim: a volume made and bound to it when its class
 * is the simulated provisioner's and (for `WaitForFirstConsumer`) its node is chosen; the events
 * kube's controllers record otherwise.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const claim: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = VolumeSimulation.claim(ctx, { storage: "persistentvolumeclaims", namespace: "default", name: "data" }, claim)
 */
export const claim = (ctx: SimulatedController.Context, key: SimulatedController.Key, claim: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    if (resizing(claim)) return yield* expand(ctx, key, claim)
    if (!pending(claim)) return
    const { store } = ctx.env
    // A claim made with no class while there was no default gets the default once there is one.
    const classed = DefaultStorageClass.admit(store, claim)
    if (classed !== claim) {
      return yield* SimulatedController.writeObject(ctx, claims, claim, (current) =>
        record(current.spec).storageClassName === undefined ? { ...current, spec: { ...record(current.spec), storageClassName: record(classed.spec).storageClassName } } : current)
    }
    const spec = record(claim.spec)
    const className = typeof spec.storageClassName === "string" ? spec.storageClassName : ""
    const event = (component: string, recorded: ControllerEvents.Event) =>
      ControllerEvents.record(ctx.env, ctx.writeOptions, claim, component, recorded)
    const storageClass = className === "" ? undefined : store.get(classes, "", className)
    const node = KubeObject.meta(claim).annotations?.[selectedNode]
    // A WaitForFirstConsumer claim is bound, to a volume there or a new one, once its node is chosen.
    if (storageClass?.volumeBindingMode === "WaitForFirstConsumer" && node === undefined) {
      return yield* event("persistentvolume-controller", {
        type: "Normal",
        reason: "WaitForFirstConsumer",
        message: "waiting for first consumer to be created before binding"
      })
    }
    // A volume there (the one it names, else the smallest that fits) is bound before any is made.
    const named = typeof spec.volumeName === "string" && spec.volumeName !== "" ? spec.volumeName : undefined
    if (named !== undefined) {
      const volume = store.get(volumes, "", named)
      if (volume === undefined) return
      if (!available(volume, claim)) {
        return yield* event("persistentvolume-controller", {
          type: "Warning",
          reason: "FailedBinding",
          message: `volume "${named}" already bound to a different claim.`
        })
      }
      return yield* bind(ctx, key, claim, volume, false)
    }
    const matching = match(store, claim, className)
    if (matching !== undefined) return yield* bind(ctx, key, claim, matching, true)
    if (className === "") {
      return yield* event("persistentvolume-controller", {
        type: "Normal",
        reason: "FailedBinding",
        message: "no persistent volumes available for this claim and no storage class is set"
      })
    }
    if (storageClass === undefined) {
      return yield* event("persistentvolume-controller", {
        type: "Warning",
        reason: "ProvisioningFailed",
        message: `storageclass.storage.k8s.io "${className}" not found`
      })
    }
    if (storageClass.provisioner !== provisioner) {
      return yield* event("persistentvolume-controller", {
        type: "Normal",
        reason: "ExternalProvisioning",
        message: `Waiting for a volume to be created either by the external provisioner '${
          String(storageClass.provisioner)
        }' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`
      })
    }
    const resource = ctx.env.registry.byStorage(volumes)[0]
    if (resource === undefined) return
    const m = KubeObject.meta(claim)
    const name = `pvc-${m.uid ?? ""}`
    const made = yield* Effect.result(Rest.create(ctx.env, resource, undefined, {
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: {
        name,
        annotations: { "pv.kubernetes.io/provisioned-by": provisioner, ...(node === undefined ? {} : { "local.path.provisioner/selected-node": node }) }
      },
      spec: {
        accessModes: spec.accessModes ?? ["ReadWriteOnce"],
        capacity: { storage: ClaimResize.requested(claim) ?? "1Gi" },
        claimRef: { apiVersion: "v1", kind: "PersistentVolumeClaim", namespace: key.namespace, name: key.name, uid: m.uid, resourceVersion: m.resourceVersion },
        hostPath: { path: `/var/local-path-provisioner/${name}_${key.namespace}_${key.name}`, type: "DirectoryOrCreate" },
        persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? "Delete",
        storageClassName: className,
        volumeMode: spec.volumeMode ?? "Filesystem",
        ...(node === undefined
          ? {}
          : { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [node] }] }] } } })
      }
    }, ctx.writeOptions))
    // Made already (this claim looked at again before its binding was seen): bound all the same.
    if (made._tag === "Failure" && made.failure.code !== 409) return yield* made.failure
    if (made._tag === "Success") {
      yield* event(provisioner, { type: "Normal", reason: "ProvisioningSucceeded", message: `Successfully provisioned volume ${name}` })
    }
    const volume = store.get(volumes, "", name)
    if (volume !== undefined) yield* bind(ctx, key, claim, volume, true)
  })

// A volume the claim may have: not being deleted, Available (or made for it), and bound to no
// other claim (its claimRef, when set, names this one).
const available = (volume: KubeObject.KubeObject, claim: KubeObject.KubeObject) => {
  const ref = record(record(volume.spec).claimRef)
  const m = KubeObject.meta(claim)
  const phase = record(volume.status).phase
  return KubeObject.meta(volume).deletionTimestamp === undefined && (phase === "Available" || phase === "Pending" || phase === "Bound") &&
    (ref.name === undefined || (ref.name === m.name && ref.namespace === m.namespace && (ref.uid === undefined || ref.uid === m.uid)))
}

const accessModes = (spec: Readonly<Record<string, unknown>>) => Array.isArray(spec.accessModes) ? spec.accessModes.map(String) : []

// kube's binder's choice among the volumes there: of the claim's class, with its access modes, its
// volume mode, its selector's labels and at least its request; one made out for it first, else the
// smallest.
const match = (store: Store.Store, claim: KubeObject.KubeObject, className: string): KubeObject.KubeObject | undefined => {
  const spec = record(claim.spec)
  const request = ClaimResize.requested(claim) ?? "0"
  const selector = record(spec.selector)
  const fits = store.list(volumes, undefined).filter((volume) => {
    const volumeSpec = record(volume.spec)
    const phase = record(volume.status).phase
    return (phase === "Available" || record(volumeSpec.claimRef).name === KubeObject.meta(claim).name) && available(volume, claim) &&
      (volumeSpec.storageClassName ?? "") === className &&
      (volumeSpec.volumeMode ?? "Filesystem") === (spec.volumeMode ?? "Filesystem") &&
      accessModes(spec).every((mode) => accessModes(volumeSpec).includes(mode)) &&
      (QuantityMath.compare(storageOf(volume), request) ?? -1) >= 0 &&
      (spec.selector === undefined || Selectors.matchesSelector(selector, KubeObject.meta(volume).labels ?? {}))
  })
  const madeFor = fits.find((volume) => record(record(volume.spec).claimRef).name !== undefined)
  return madeFor ?? fits.sort((a, b) => QuantityMath.compare(storageOf(a), storageOf(b)) ?? 0)[0]
}

const storageOf = (volume: KubeObject.KubeObject) => record(record(volume.spec).capacity).storage ?? "0"

// kube's binder: the volume's claimRef and phase, then the claim's volume name, annotations and
// status with the volume's capacity and access modes.
const bind = (
  ctx: SimulatedController.Context,
  key: SimulatedController.Key,
  claim: KubeObject.KubeObject,
  volume: KubeObject.KubeObject,
  byController: boolean
): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const m = KubeObject.meta(claim)
    const name = KubeObject.meta(volume).name ?? ""
    const at = { storage: volumes, namespace: "", name }
    yield* ctx.update(at, undefined, (current) => ({
      ...current,
      spec: {
        ...record(current.spec),
        claimRef: { apiVersion: "v1", kind: "PersistentVolumeClaim", namespace: key.namespace, name: key.name, uid: m.uid, resourceVersion: m.resourceVersion }
      }
    }))
    yield* ctx.update(at, "status", (current) => ({ ...current, status: { ...record(current.status), phase: "Bound" } }))
    const provisioned = KubeObject.meta(volume).annotations?.["pv.kubernetes.io/provisioned-by"]
    yield* SimulatedController.writeObject(ctx, claims, claim, (current) => ({
      ...KubeObject.withMeta(current, {
        annotations: {
          ...KubeObject.meta(current).annotations,
          "pv.kubernetes.io/bind-completed": "yes",
          ...(byController ? { "pv.kubernetes.io/bound-by-controller": "yes" } : {}),
          ...(provisioned === undefined
            ? {}
            : { "volume.beta.kubernetes.io/storage-provisioner": provisioned, "volume.kubernetes.io/storage-provisioner": provisioned })
        }
      }),
      spec: { ...record(current.spec), volumeName: name }
    }))
    const volumeSpec = record(volume.spec)
    yield* SimulatedController.writeStatus(ctx, key, (current) => ({
      ...record(current.status),
      phase: "Bound",
      accessModes: volumeSpec.accessModes ?? record(current.spec).accessModes ?? ["ReadWriteOnce"],
      capacity: { storage: storageOf(volume) }
    }))
  })

/**
 * Whether a volume is just made (`Pending`, not being deleted): the binder's to make `Available`.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * VolumeSimulation.fresh({ status: { phase: "Pending" } }) // true
 */
export const fresh = (volume: KubeObject.KubeObject): boolean =>
  record(volume.status).phase === "Pending" && KubeObject.meta(volume).deletionTimestamp === undefined

/**
 * The binder's look at a volume: one just made (`Pending`) is `Available`.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * declare const volume: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const looked = VolumeSimulation.volume(ctx, { storage: "persistentvolumes", namespace: "", name: "pv-1" }, volume)
 */
export const volume = (ctx: SimulatedController.Context, key: SimulatedController.Key, volume: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
  fresh(volume)
    ? ctx.update(key, "status", (current) =>
      record(current.status).phase === "Pending" ? { ...current, status: { ...record(current.status), phase: "Available" } } : current)
    : Effect.void

/**
 * The binder's look at the volumes of a claim that is gone: each `Released`, and deleted if its
 * reclaim policy is `Delete`.
 *
 * @example
 * import * as VolumeSimulation from "./VolumeSimulation.ts"
 * declare const ctx: import("./SimulatedController.ts").Context
 * const reclaimed = VolumeSimulation.reclaim(ctx, "default", "data")
 */
export const reclaim = (ctx: SimulatedController.Context, namespace: string, name: string): Effect.Effect<void, Status.ApiError> =>
  Effect.gen(function*() {
    const resource = ctx.env.registry.byStorage(volumes)[0]
    const current = ctx.env.store.get(claims, namespace, name)
    if (resource === undefined) return
    for (const volume of ctx.env.store.list(volumes, undefined)) {
      const ref = record(record(volume.spec).claimRef)
      if (ref.namespace !== namespace || ref.name !== name || (current !== undefined && KubeObject.meta(current).uid === ref.uid)) continue
      const volumeName = KubeObject.meta(volume).name ?? ""
      // Released first, as kube's binder marks it, so its protection lets it go; then deleted if so reclaimed.
      if (record(volume.status).phase !== "Released") {
        yield* ctx.update({ storage: volumes, namespace: "", name: volumeName }, "status", (stored) => ({ ...stored, status: { ...record(stored.status), phase: "Released" } }))
      }
      if (record(volume.spec).persistentVolumeReclaimPolicy === "Delete") {
        yield* Effect.ignore(Rest.remove(ctx.env, { resource, namespace: undefined, name: volumeName }, {
          propagationPolicy: undefined,
          preconditions: { uid: KubeObject.meta(volume).uid ?? "" },
          dryRun: false
        }))
      }
    }
  })
