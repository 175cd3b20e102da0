/**
 * The resources the server serves: the built-in kinds, plus the kinds of Established
 * CustomResourceDefinitions, which appear and disappear while the server runs. Each served
 * group/version/resource maps to a storage key shared by all versions of that resource (and by
 * core/v1 and events.k8s.io/v1 Events, which are one stored object seen two ways).
 */
import type * as Conversion from "./Conversion.ts"
import type * as CreateOnly from "./CreateOnly.ts"
import * as ResourceType from "./ResourceType.ts"
import type * as Printers from "./Printers.ts"
import type * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** A served group/version/resource and how the server treats it. */
export interface Resource {
  readonly type: ResourceType.ResourceType
  /** The storage key, shared by every version of the resource. */
  readonly storage: string
  /** Whether `metadata.generation` is kept (custom resources, Deployments, CRDs; not ConfigMaps). */
  readonly generation: boolean
  /** Whether an update without `metadata.resourceVersion` is accepted (last write wins). */
  readonly unconditionalUpdate: boolean
  /**
   * Selectable fields whose value kube derives rather than reads as it is (its GetAttrs): a
   * boolean or count as Go formats it, a field under another name.
   */
  readonly fieldValues?: Readonly<Record<string, (object: KubeObject.KubeObject) => string>> | undefined
  /** The stored object as this version serves it (default: only apiVersion changes). */
  readonly fromStorage?: (object: KubeObject.KubeObject) => KubeObject.KubeObject
  /** A written object as it is stored, with the storage apiVersion (default: the served one). */
  readonly toStorage?: (object: KubeObject.KubeObject) => KubeObject.KubeObject
  /**
   * For a CRD whose versions convert by webhook: converts objects to an apiVersion (stored objects
   * to the served one on reads and watches, written ones to the storage version on writes).
   */
  readonly convert?: { readonly storageApiVersion: string; readonly converter: Conversion.Converter } | undefined
  /** For a deprecated CRD version: the warning every request to it answers with. */
  readonly deprecationWarning?: string | undefined
  /** For a CRD's resources: what else decides how they are served (storage version, conversion), to notice its change. */
  readonly fingerprint?: string | undefined
  /** Kind-specific defaults the server sets on create (e.g. a Namespace's phase). */
  readonly prepareCreate?: (object: KubeObject.KubeObject) => KubeObject.KubeObject
  /** Kind-specific preparation of an update (e.g. a CRD's defaults and storedVersions). */
  readonly prepareUpdate?: (object: KubeObject.KubeObject, old: KubeObject.KubeObject) => KubeObject.KubeObject
  /**
   * Kind-specific defaults, applied to every create and update as kube-apiserver applies its
   * defaulters when it decodes a write (a Service's type, a Pod's restartPolicy...).
   */
  readonly defaults?: (object: KubeObject.KubeObject, old: KubeObject.KubeObject | undefined) => KubeObject.KubeObject
  /**
   * What the registry assigns once admission is past, over the defaults (a Service's cluster IP
   * and node ports): admission never sees it.
   */
  readonly allocate?: (object: KubeObject.KubeObject, old: KubeObject.KubeObject | undefined) => KubeObject.KubeObject
  /** Finalizers the server adds when the object is deleted (a CRD's instance cleanup). */
  readonly deleteFinalizers?: ReadonlyArray<string>
  /** What else the first deletion of an object that stays writes with its deletion time (a CRD's Terminating condition). */
  readonly markDeleted?: (object: KubeObject.KubeObject) => KubeObject.KubeObject
  /** Kind-specific validation of a create or update, of the object or of one of its subresources (422 causes). */
  readonly validate?: (
    object: KubeObject.KubeObject,
    old: KubeObject.KubeObject | undefined,
    subresource?: string | undefined
  ) => ReadonlyArray<Status.StatusCause>
  /** The `kubectl get` columns of a built-in kind (custom resources use their printer columns). */
  readonly printer?: Printers.Printer
  /** The CRD that defines this resource, for custom resources. */
  readonly crd?: string
  /**
   * Set for kinds that are only created, never stored (access reviews, TokenReview): computes the
   * response to a create. Rest.create refuses such kinds; their other verbs are 405.
   */
  readonly createOnly?: CreateOnly.Handler
  /**
   * Set for kinds whose objects are computed when read, never stored (ComponentStatus): what a
   * list answers, and a get finds by name. Their verbs are `get` and `list`.
   */
  readonly computed?: () => ReadonlyArray<KubeObject.KubeObject>
}

export interface GroupVersions {
  readonly name: string
  readonly versions: ReadonlyArray<string>
  readonly preferred: string
}

export interface Registry {
  readonly lookup: (group: string, version: string, plural: string) => Resource | undefined
  /** The resources of one group/version, in registration order. */
  readonly groupVersion: (group: string, version: string) => ReadonlyArray<Resource>
  /** Served groups other than the core group, in registration order. */
  readonly groups: () => ReadonlyArray<GroupVersions>
  readonly all: () => ReadonlyArray<Resource>
  /** The resource serving `apiVersion`/`kind` (for owner references and embedded objects). */
  readonly byKind: (apiVersion: string, kind: string) => Resource | undefined
  /** The resources stored under a storage key (one per served version). */
  readonly byStorage: (storage: string) => ReadonlyArray<Resource>
  /** Serves the versions of a CRD, replacing what it served before. */
  readonly registerCrd: (crd: string, resources: ReadonlyArray<Resource>) => void
  /** Stops serving a CRD's versions; returns the resources that were served. */
  readonly unregisterCrd: (crd: string) => ReadonlyArray<Resource>
  /** A counter bumped on every change, for caches of discovery and OpenAPI documents. */
  readonly generation: () => number
}

const id = (group: string, version: string, plural: string) => `${group}/${version}/${plural}`

/**
 * A registry holding `builtins` (and no custom resources yet).
 *
 * @example
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * const registry = Registry.make(Builtins.make())
 * registry.lookup("apps", "v1", "deployments")?.type.kind // "Deployment"
 */
export const make = (builtins: ReadonlyArray<Resource>): Registry => {
  const byId = new Map<string, Resource>()
  const crds = new Map<string, ReadonlyArray<Resource>>()
  let changes = 0
  for (const r of builtins) byId.set(id(r.type.group, r.type.version, r.type.plural), r)

  const all = () => [...byId.values()]

  const groups = (): ReadonlyArray<GroupVersions> => {
    const out = new Map<string, Array<string>>()
    for (const r of byId.values()) {
      if (r.type.group === "") continue
      const versions = out.get(r.type.group) ?? []
      if (!versions.includes(r.type.version)) versions.push(r.type.version)
      out.set(r.type.group, versions)
    }
    return [...out].map(([name, versions]) => {
      const sorted = [...versions].sort(compareVersions)
      return { name, versions: sorted, preferred: sorted[0]! }
    })
  }

  return {
    lookup: (group, version, plural) => byId.get(id(group, version, plural)),
    groupVersion: (group, version) => all().filter((r) => r.type.group === group && r.type.version === version),
    groups,
    all,
    byKind: (apiVersion, kind) => {
      const [group, version] = apiVersion.includes("/") ? apiVersion.split("/", 2) as [string, string] : ["", apiVersion]
      return all().find((r) => r.type.group === group && r.type.version === version && r.type.kind === kind)
    },
    byStorage: (storage) => all().filter((r) => r.storage === storage),
    registerCrd: (crd, resources) => {
      const before = crds.get(crd)
      const same = before !== undefined && before.length === resources.length &&
        before.every((r, i) => KubeObject.equals(r.type, resources[i]!.type) && r.fingerprint === resources[i]!.fingerprint)
      if (same) return
      for (const r of before ?? []) byId.delete(id(r.type.group, r.type.version, r.type.plural))
      for (const r of resources) byId.set(id(r.type.group, r.type.version, r.type.plural), r)
      crds.set(crd, resources)
      changes++
    },
    unregisterCrd: (crd) => {
      const served = crds.get(crd)
      if (served === undefined) return []
      for (const r of served) byId.delete(id(r.type.group, r.type.version, r.type.plural))
      crds.delete(crd)
      changes++
      return served
    },
    generation: () => changes
  }
}

/**
 * Orders Kubernetes versions the way discovery prefers them: GA before beta before alpha, higher
 * numbers first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1), then anything else alphabetically.
 *
 * @example
 * import * as Registry from "./Registry.ts"
 * ["v1beta1", "v1", "v2alpha1", "v2"].sort(Registry.compareVersions) // ["v2", "v1", "v1beta1", "v2alpha1"]
 */
export const compareVersions = (a: string, b: string): number => {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v)
    if (m === null) return undefined
    const stability = m[2] === undefined ? 3 : m[2] === "beta" ? 2 : 1
    return [stability, Number(m[1]), Number(m[3] ?? 0)]
  }
  const ra = rank(a)
  const rb = rank(b)
  if (ra === undefined || rb === undefined) {
    return ra !== undefined ? -1 : rb !== undefined ? 1 : a < b ? -1 : a > b ? 1 : 0
  }
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!
  return 0
}

/**
 * The object as `resource` serves it: converted from storage, with its apiVersion and kind.
 *
 * @example
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * const cm = Registry.make(Builtins.make()).lookup("", "v1", "configmaps")!
 * Registry.served(cm, { metadata: { name: "a" } }).apiVersion // "v1"
 */
export const served = (resource: Resource, stored: KubeObject.KubeObject): KubeObject.KubeObject => {
  const converted = resource.fromStorage === undefined ? stored : resource.fromStorage(stored)
  return { apiVersion: ResourceType.groupVersion(resource.type), kind: resource.type.kind, ...stripTypeMeta(converted) }
}

/**
 * The object as it is stored, from what a client wrote to `resource`.
 *
 * @example
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * const cm = Registry.make(Builtins.make()).lookup("", "v1", "configmaps")!
 * Registry.stored(cm, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } }).kind // "ConfigMap"
 */
export const stored = (resource: Resource, written: KubeObject.KubeObject): KubeObject.KubeObject => {
  return resource.toStorage !== undefined
    ? resource.toStorage(written)
    : { apiVersion: ResourceType.groupVersion(resource.type), kind: resource.type.kind, ...stripTypeMeta(written) }
}

const stripTypeMeta = (object: KubeObject.KubeObject): KubeObject.KubeObject => {
  const { apiVersion: _a, kind: _k, ...rest } = object
  return rest
}
