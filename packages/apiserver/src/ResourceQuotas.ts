/**
 * kube-controller-manager's resourcequota controller, running in the server: each ResourceQuota's
 * status holds its `hard` limits and what the namespace's objects use of each (`used`), kept
 * current as objects come, change and go. (What a creation may use is checked at admission, by
 * `QuotaUsage.admit`.)
 */
import { Effect } from "effect"
import * as QuotaUsage from "./QuotaUsage.ts"
import type * as Registry from "./Registry.ts"
import * as Rest from "./Rest.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "kube-controller-manager",
  fieldValidation: "Ignore"
}

export interface ResourceQuotas {
  /** Completes when nothing is queued. */
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
}

// The resource whose objects count towards a tracked name.
const counted = (registry: Registry.Registry, name: string): Registry.Resource | undefined => {
  const core = (plural: string) => registry.byStorage(plural)[0]
  if (name.startsWith("count/")) {
    const [plural, ...group] = name.slice(6).split(".")
    return registry.all().find((r) => r.type.plural === plural && r.type.group === group.join("."))
  }
  if (name === "requests.storage" || name.includes(".storageclass.storage.k8s.io/")) return core("persistentvolumeclaims")
  if (name.startsWith("services.")) return core("services")
  if (["secrets", "configmaps", "persistentvolumeclaims", "replicationcontrollers", "resourcequotas", "services", "pods"].includes(name)) return core(name)
  return core("pods")
}

/**
 * A quota's status as the controller writes it: `hard` as the spec states it, `used` for each of
 * its names.
 *
 * @example
 * declare const store: import("./Store.ts").Store
 * declare const registry: import("./Registry.ts").Registry
 * declare const quota: import("@kubefx/schema/internal").KubeObject.KubeObject
 * ResourceQuotas.statusOf(store, registry, quota) // { hard: { pods: "10" }, used: { pods: "2" } }
 */
export const statusOf = (store: Store.Store, registry: Registry.Registry, quota: KubeObject.KubeObject) => {
  const hard = KubeObject.record(KubeObject.record(quota.spec).hard)
  const namespace = KubeObject.meta(quota).namespace ?? ""
  const used: Record<string, string> = {}
  for (const name of Object.keys(hard).sort()) {
    const resource = counted(registry, name)
    const values = resource === undefined ? [] : QuotaUsage.used(store, resource, namespace, quota, [name]).get(name)!
    used[name] = values.length === 0 ? "0" : QuantityMath.sum(values)
  }
  return { hard, used }
}

/**
 * Starts the controller over `env.store` in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ResourceQuotas from "./ResourceQuotas.ts"
 * declare const env: import("./Rest.ts").Env
 * const program = Effect.scoped(Effect.flatMap(ResourceQuotas.make(env), (quotas) => quotas.idle))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env) {
  const { registry, store } = env
  const quotas = registry.byStorage("resourcequotas")[0]!
  const refresh = (namespace: string) =>
    Effect.forEach(store.list("resourcequotas", namespace), (quota) => {
      const status = statusOf(store, registry, quota)
      if (JSON.stringify(quota.status ?? {}) === JSON.stringify(status)) return Effect.void
      const name = KubeObject.meta(quota).name ?? ""
      return Rest.update(env, { resource: quotas, namespace, name }, "status", writeOptions, (current) =>
        Effect.succeed({ ...current, status: statusOf(store, registry, current) })).pipe(
          Effect.asVoid,
          Effect.catchIf((error) => error.code === 404, () => Effect.void)
        )
    }, { discard: true })
  const worker = yield* Worker.make("resourcequotas", refresh, (namespace: string) => namespace)
  // A quota's own status write changes nothing it counts (its status is not usage).
  const onEvent = (event: Store.Event) => {
    if (event.namespace === "" || store.count("resourcequotas", event.namespace) === 0) return
    if (event.storage === "resourcequotas" && event.type === "MODIFIED" && event.prev !== undefined &&
      JSON.stringify(event.prev.spec) === JSON.stringify(event.object.spec)) return
    worker.enqueue(event.namespace)
  }
  for (const quota of store.list("resourcequotas", undefined)) worker.enqueue(KubeObject.meta(quota).namespace ?? "")
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending } satisfies ResourceQuotas
})
