/**
 * What a kubelet needs before it starts a pod's containers, and says when it is missing: the
 * Secrets and ConfigMaps its volumes mount (a projected volume's sources among them), then those
 * its containers' environment reads (`env[].valueFrom`, `envFrom`), each unless marked
 * `optional` (the root CA ConfigMap of a token volume is taken as there). A volume that cannot be
 * mounted holds the whole pod in `ContainerCreating` (`FailedMount`); a container whose environment
 * cannot be made waits in `CreateContainerConfigError`. Both start once what they need exists.
 *
 * Images are taken as pulled, but for those of a registry under `.invalid`, the top-level domain
 * reserved never to resolve (`registry.invalid/app:1`): their container waits in `ErrImagePull`,
 * then `ImagePullBackOff`, as on any cluster, until the image is changed.
 */
import * as ServiceAccounts from "./ServiceAccounts.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const records = KubeObject.records

/** Why the kubelet cannot start the pod: a volume it cannot mount, or a container's environment. */
export type Blocked =
  | { readonly _tag: "Mount"; readonly message: string }
  | { readonly _tag: "Config"; readonly container: string; readonly message: string }
  | { readonly _tag: "Pull"; readonly container: string; readonly image: string; readonly message: string }

type Source = "secret" | "configmap"

const storageOf: Record<Source, string> = { secret: "secrets", configmap: "configmaps" }

const lookup = (store: Store.Store, namespace: string, source: Source, name: string) => store.get(storageOf[source], namespace, name)

// The kubelet's error for a missing source: the API's NotFound for the source's kind.
const notFound = (source: Source, name: string) => `${source} "${name}" not found`

// The root CA ConfigMap every token volume projects is taken as published in every namespace: a
// test server may run without its publisher (see RootCaPublisher).
const published = (source: Source, name: string) => source === "configmap" && name === ServiceAccounts.rootCaName

// A volume's missing sources, as the kubelet's volume plugins report them.
const volumeErrors = (store: Store.Store, namespace: string, volume: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const missing = (source: Source, ref: Readonly<Record<string, unknown>>, name: unknown) =>
    ref.optional === true || typeof name !== "string" || published(source, name) || lookup(store, namespace, source, name) !== undefined
      ? []
      : [notFound(source, name)]
  if (KubeObject.isObject(volume.secret)) return missing("secret", volume.secret, volume.secret.secretName)
  if (KubeObject.isObject(volume.configMap)) return missing("configmap", volume.configMap, volume.configMap.name)
  if (KubeObject.isObject(volume.projected)) {
    return records(volume.projected.sources).flatMap((source) =>
      KubeObject.isObject(source.secret)
        ? missing("secret", source.secret, source.secret.name)
        : KubeObject.isObject(source.configMap)
        ? missing("configmap", source.configMap, source.configMap.name)
        : []
    )
  }
  return []
}

// A container's first environment error, as the kubelet's makeEnvironmentVariables reports it.
const environmentError = (store: Store.Store, namespace: string, container: Readonly<Record<string, unknown>>): string | undefined => {
  for (const from of records(container.envFrom)) {
    for (const [source, ref] of [["secret", from.secretRef], ["configmap", from.configMapRef]] as const) {
      if (!KubeObject.isObject(ref) || ref.optional === true || typeof ref.name !== "string") continue
      if (lookup(store, namespace, source, ref.name) === undefined) return notFound(source, ref.name)
    }
  }
  for (const variable of records(container.env)) {
    const valueFrom = record(variable.valueFrom)
    for (const [source, ref, kind] of [["secret", valueFrom.secretKeyRef, "Secret"], ["configmap", valueFrom.configMapKeyRef, "ConfigMap"]] as const) {
      if (!KubeObject.isObject(ref) || ref.optional === true || typeof ref.name !== "string") continue
      const found = lookup(store, namespace, source, ref.name)
      if (found === undefined) return notFound(source, ref.name)
      const key = String(ref.key ?? "")
      const data = { ...record(found.data), ...(source === "configmap" ? record(found.binaryData) : {}) }
      if (!(key in data)) return `couldn't find key ${key} in ${kind} ${namespace}/${ref.name}`
    }
  }
  return undefined
}

/**
 * Why the kubelet cannot start `pod` yet, or undefined when it can: the first volume it cannot
 * mount (`MountVolume.SetUp failed for volume "cert" : secret "cert" not found`), else the first
 * container whose environment it cannot make (`secret "db" not found`, `couldn't find key password
 * in Secret default/db`).
 *
 * @example
 * import * as PodReferences from "./PodReferences.ts"
 * declare const store: import("./Store.ts").Store
 * const pod = { metadata: { namespace: "default" }, spec: { volumes: [{ name: "cert", secret: { secretName: "cert" } }] } }
 * PodReferences.blocked(store, pod) // { _tag: "Mount", message: 'MountVolume.SetUp failed for volume "cert" : secret "cert" not found' } while there is no such Secret
 */
export const blocked = (store: Store.Store, pod: KubeObject.KubeObject): Blocked | undefined => {
  const namespace = KubeObject.meta(pod).namespace ?? ""
  const spec = record(pod.spec)
  for (const volume of records(spec.volumes)) {
    const errors = volumeErrors(store, namespace, volume)
    if (errors.length === 0) continue
    // Several errors read as Go's aggregate of them.
    const reason = errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`
    return { _tag: "Mount", message: `MountVolume.SetUp failed for volume "${String(volume.name ?? "")}" : ${reason}` }
  }
  // The kubelet pulls a container's image before it makes its environment.
  for (const container of [...records(spec.initContainers), ...records(spec.containers)]) {
    const name = String(container.name ?? "")
    const image = String(container.image ?? "")
    const pull = pullError(image)
    if (pull !== undefined) return { _tag: "Pull", container: name, image, message: pull }
    const message = environmentError(store, namespace, container)
    if (message !== undefined) return { _tag: "Config", container: name, message }
  }
  return undefined
}

// An image reference as containerd resolves it: its registry (docker.io when the first part names
// none), and the reference with a tag (latest) unless it has a digest.
const resolved = (image: string): { readonly registry: string; readonly reference: string } => {
  const slash = image.indexOf("/")
  const first = slash < 0 ? "" : image.slice(0, slash)
  const named = first.includes(".") || first.includes(":") || first === "localhost"
  const registry = named ? first : "docker.io"
  const path = named ? image.slice(slash + 1) : slash < 0 ? `library/${image}` : image
  const tagged = path.includes("@") || /:[^/]*$/.test(path) ? path : `${path}:latest`
  return { registry, reference: `${registry}/${tagged}` }
}

// containerd's error for an image of a registry that cannot resolve, as the kubelet reports it.
const pullError = (image: string): string | undefined => {
  const { registry, reference } = resolved(image)
  const host = registry.replace(/:\d+$/, "")
  if (!host.endsWith(".invalid") && host !== "invalid") return undefined
  const at = reference.slice(registry.length + 1)
  const [repository, tag] = at.includes("@") ? at.split("@") as [string, string] : [at.replace(/:[^:]*$/, ""), at.replace(/^.*:/, "")]
  return `rpc error: code = Unknown desc = failed to pull and unpack image "${reference}": failed to resolve reference "${reference}": ` +
    `failed to do request: Head "https://${registry}/v2/${repository}/manifests/${tag}": dial tcp: lookup ${host}: no such host`
}
