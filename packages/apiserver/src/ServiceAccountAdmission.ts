/**
 * kube-apiserver's ServiceAccount admission plugin, on Pods as they are created: a pod runs as
 * `default` unless it names another ServiceAccount, which must exist in its namespace (a 403
 * otherwise); it takes the ServiceAccount's imagePullSecrets when it has none; and unless the pod
 * or the ServiceAccount turn `automountServiceAccountToken` off, every container and init
 * container mounts the API token, the cluster's CA and the namespace at
 * `/var/run/secrets/kubernetes.io/serviceaccount` from a projected `kube-api-access-<random>`
 * volume (a container that mounts something there already keeps it).
 */
import { Effect } from "effect"
import * as Metadata from "./Metadata.ts"
import type * as Registry from "./Registry.ts"
import * as ServiceAccounts from "./ServiceAccounts.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** Where containers find the token, the CA and the namespace. */
export const mountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

const volumePrefix = "kube-api-access-"

/** The projected volume the plugin adds: a token that kube warns about after an hour, the CA, the namespace. */
const tokenVolume = (name: string) => ({
  name,
  projected: {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
      { configMap: { items: [{ key: "ca.crt", path: "ca.crt" }], name: ServiceAccounts.rootCaName } },
      { downwardAPI: { items: [{ fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" }, path: "namespace" }] } }
    ]
  }
})

/**
 * Whether a write goes through the plugin: a Pod's creation.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as ServiceAccountAdmission from "./ServiceAccountAdmission.ts"
 * const pods = Builtins.make().find((r) => r.type.plural === "pods")!
 * ServiceAccountAdmission.applies(pods, undefined, "CREATE") // true
 */
export const applies = (resource: Registry.Resource, subresource: string | undefined, operation: "CREATE" | "UPDATE"): boolean =>
  operation === "CREATE" && subresource === undefined && resource.type.group === "" && resource.type.plural === "pods"

/**
 * The pod as the plugin admits it, or kube-apiserver's 403 when its ServiceAccount does not exist.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ServiceAccountAdmission from "./ServiceAccountAdmission.ts"
 * import * as Store from "./Store.ts"
 * const refused = Effect.runSync(Effect.flip(ServiceAccountAdmission.admit(Store.make(), "default", "web", {
 *   metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "nginx" }] }
 * })))
 * refused.message // 'pods "web" is forbidden: error looking up service account default/default: serviceaccount "default" not found'
 */
export const admit = (
  store: Store.Store,
  namespace: string,
  name: string,
  pod: KubeObject.KubeObject
): Effect.Effect<KubeObject.KubeObject, Status.ApiError> => {
  const spec = KubeObject.record(pod.spec)
  const given = spec.serviceAccountName ?? spec.serviceAccount
  const accountName = typeof given === "string" && given !== "" ? given : ServiceAccounts.defaultName
  const account = store.get("serviceaccounts", namespace, accountName)
  if (account === undefined) {
    return Effect.fail(Status.forbidden(
      { group: "", plural: "pods" },
      name,
      `error looking up service account ${namespace}/${accountName}: serviceaccount ${JSON.stringify(accountName)} not found`
    ))
  }
  let next: Record<string, unknown> = { ...spec, serviceAccountName: accountName }
  const pullSecrets = account.imagePullSecrets
  if (KubeObject.records(spec.imagePullSecrets).length === 0 && Array.isArray(pullSecrets) && pullSecrets.length > 0) {
    next = { ...next, imagePullSecrets: pullSecrets }
  }
  const automount = typeof spec.automountServiceAccountToken === "boolean"
    ? spec.automountServiceAccountToken
    : typeof account.automountServiceAccountToken === "boolean"
    ? account.automountServiceAccountToken
    : true
  if (automount) next = withToken(next)
  return Effect.succeed({ ...pod, spec: next })
}

// Every container without something mounted at the path mounts the token volume, which is added
// unless the pod has one already.
const withToken = (spec: Record<string, unknown>): Record<string, unknown> => {
  const volumes = KubeObject.records(spec.volumes)
  const existing = volumes.find((volume) => typeof volume.name === "string" && volume.name.startsWith(volumePrefix))
  const volumeName = typeof existing?.name === "string" ? existing.name : Metadata.generateName(volumePrefix)
  let needed = false
  const mounted = (field: "initContainers" | "containers") => {
    if (!Array.isArray(spec[field])) return {}
    return {
      [field]: KubeObject.records(spec[field]).map((container) => {
        const mounts = KubeObject.records(container.volumeMounts)
        if (mounts.some((mount) => mount.mountPath === mountPath)) return container
        needed = true
        return { ...container, volumeMounts: [...mounts, { name: volumeName, readOnly: true, mountPath }] }
      })
    }
  }
  const next = { ...spec, ...mounted("initContainers"), ...mounted("containers") }
  return existing === undefined && needed ? { ...next, volumes: [...volumes, tokenVolume(volumeName)] } : next
}
