/**
 * Storage object in-use protection, as kube has it: the StorageObjectInUseProtection admission
 * plugin gives every new PersistentVolumeClaim the `kubernetes.io/pvc-protection` finalizer and
 * every new PersistentVolume `kubernetes.io/pv-protection`; the protection controllers take them
 * off a claim being deleted once no scheduled pod names it (a generic ephemeral volume's claim:
 * once its pod is done), and off a volume being deleted once it is not bound. So a claim deleted
 * under a running pod stays `Terminating` until the pod is gone, as on a cluster.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import type * as Registry from "./Registry.ts"
import type * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** The finalizer of a claim in use. */
export const claimFinalizer = "kubernetes.io/pvc-protection"
/** The finalizer of a volume in use. */
export const volumeFinalizer = "kubernetes.io/pv-protection"

const record = KubeObject.record

const finalizerOf = (plural: string): string | undefined =>
  plural === "persistentvolumeclaims" ? claimFinalizer : plural === "persistentvolumes" ? volumeFinalizer : undefined

/**
 * Whether a write goes through the admission plugin: a claim's or a volume's creation.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as StorageProtection from "./StorageProtection.ts"
 * const claims = Builtins.make().find((r) => r.type.plural === "persistentvolumeclaims")!
 * StorageProtection.applies(claims, undefined, "CREATE") // true
 */
export const applies = (resource: Registry.Resource, subresource: string | undefined, operation: "CREATE" | "UPDATE"): boolean =>
  operation === "CREATE" && subresource === undefined && resource.type.group === "" && finalizerOf(resource.type.plural) !== undefined

/**
 * The object as the plugin admits it: with its protection finalizer.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as StorageProtection from "./StorageProtection.ts"
 * const claims = Builtins.make().find((r) => r.type.plural === "persistentvolumeclaims")!
 * StorageProtection.admit(claims, { metadata: { name: "data" } }).metadata // { name: "data", finalizers: ["kubernetes.io/pvc-protection"] }
 */
export const admit = (resource: Registry.Resource, object: KubeObject.KubeObject): KubeObject.KubeObject => {
  const finalizer = finalizerOf(resource.type.plural)
  const finalizers = KubeObject.meta(object).finalizers ?? []
  return finalizer === undefined || finalizers.includes(finalizer) ? object : KubeObject.withMeta(object, { finalizers: [...finalizers, finalizer] })
}

/**
 * The claim kube's ephemeral volume controller makes for a pod's generic ephemeral volume.
 *
 * @example
 * import * as StorageProtection from "./StorageProtection.ts"
 * StorageProtection.ephemeralClaimName({ metadata: { name: "worker" } }, { name: "scratch" }) // "worker-scratch"
 */
export const ephemeralClaimName = (pod: KubeObject.KubeObject, volume: Readonly<Record<string, unknown>>): string =>
  `${KubeObject.meta(pod).name ?? ""}-${String(volume.name)}`

/**
 * Whether a claim is the pod's own: the pod is its controller.
 *
 * @example
 * import * as StorageProtection from "./StorageProtection.ts"
 * StorageProtection.ownedBy({ metadata: { ownerReferences: [{ controller: true, uid: "u" }] } }, { metadata: { uid: "u" } }) // true
 */
export const ownedBy = (claim: KubeObject.KubeObject, pod: KubeObject.KubeObject): boolean =>
  (KubeObject.meta(claim).ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === KubeObject.meta(pod).uid)

/**
 * The claims a pod's volumes name: its `persistentVolumeClaim` ones, and `<pod>-<volume>` for each
 * generic ephemeral volume.
 *
 * @example
 * import * as StorageProtection from "./StorageProtection.ts"
 * StorageProtection.claimsOf({ metadata: { name: "db-0" }, spec: { volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data-db-0" } }, { name: "scratch", ephemeral: {} }] } })
 * // ["data-db-0", "db-0-scratch"]
 */
export const claimsOf = (pod: KubeObject.KubeObject): ReadonlyArray<string> =>
  KubeObject.records(record(pod.spec).volumes).flatMap((volume) => {
    if (volume.ephemeral !== undefined) return [ephemeralClaimName(pod, volume)]
    const name = record(volume.persistentVolumeClaim).claimName
    return typeof name === "string" && name !== "" ? [name] : []
  })

const shutDown = (pod: KubeObject.KubeObject) => {
  const phase = record(pod.status).phase
  return phase === "Succeeded" || phase === "Failed"
}

const uses = (pod: KubeObject.KubeObject, claim: KubeObject.KubeObject): boolean => {
  // Only scheduled pods: a kubelet never starts a pod on a claim being deleted.
  if (typeof record(pod.spec).nodeName !== "string" || record(pod.spec).nodeName === "") return false
  const name = KubeObject.meta(claim).name
  return KubeObject.records(record(pod.spec).volumes).some((volume) =>
    record(volume.persistentVolumeClaim).claimName === name ||
    (volume.ephemeral !== undefined && !shutDown(pod) && ephemeralClaimName(pod, volume) === name && ownedBy(claim, pod))
  )
}

export interface StorageProtection {
  /** Completes when nothing is queued. */
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
}

interface Key {
  readonly storage: "persistentvolumeclaims" | "persistentvolumes"
  readonly namespace: string
  readonly name: string
}

const writeOptions: Rest.WriteOptions = { dryRun: false, fieldManager: "kube-controller-manager", fieldValidation: "Ignore" }

/**
 * The protection controllers, in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as StorageProtection from "./StorageProtection.ts"
 * declare const env: import("./Rest.ts").Env
 * const program = Effect.scoped(Effect.flatMap(StorageProtection.make(env), (protection) => protection.idle))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env) {
  const { store } = env
  const inUse = (key: Key, object: KubeObject.KubeObject) =>
    key.storage === "persistentvolumes"
      ? record(object.status).phase === "Bound"
      : store.list("pods", key.namespace).some((pod) => uses(pod, object))

  const release = (key: Key): Effect.Effect<void, Status.ApiError> =>
    Effect.suspend(() => {
      const object = store.get(key.storage, key.namespace, key.name)
      const finalizer = finalizerOf(key.storage)!
      if (object === undefined || KubeObject.meta(object).deletionTimestamp === undefined) return Effect.void
      if (!(KubeObject.meta(object).finalizers ?? []).includes(finalizer) || inUse(key, object)) return Effect.void
      const resource = env.registry.byStorage(key.storage)[0]
      if (resource === undefined) return Effect.void
      const target = { resource, namespace: key.storage === "persistentvolumes" ? undefined : key.namespace, name: key.name }
      return Rest.update(env, target, undefined, writeOptions, (current) =>
        Effect.succeed(KubeObject.withMeta(current, { finalizers: (KubeObject.meta(current).finalizers ?? []).filter((f) => f !== finalizer) }))).pipe(
          Effect.asVoid,
          Effect.catchIf((error) => error.code === 404 || error.code === 409, () => Effect.void)
        )
    })

  const worker = yield* Worker.make("storage-protection", release, (key: Key) => `${key.storage}|${key.namespace}|${key.name}`)
  const look = (storage: Key["storage"], object: KubeObject.KubeObject) => {
    const m = KubeObject.meta(object)
    if (m.deletionTimestamp !== undefined) worker.enqueue({ storage, namespace: m.namespace ?? "", name: m.name ?? "" })
  }
  const onEvent = (event: Store.Event) => {
    if (event.storage === "persistentvolumeclaims" || event.storage === "persistentvolumes") {
      if (event.type !== "DELETED") look(event.storage, event.object)
    } else if (event.storage === "pods") {
      // A pod gone, done or moved may have been what held the claims it names.
      for (const name of claimsOf(event.object)) {
        const claim = store.get("persistentvolumeclaims", event.namespace, name)
        if (claim !== undefined) look("persistentvolumeclaims", claim)
      }
    }
  }
  for (const storage of ["persistentvolumeclaims", "persistentvolumes"] as const) {
    for (const object of store.list(storage, undefined)) look(storage, object)
  }
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending } satisfies StorageProtection
})
