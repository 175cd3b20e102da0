/**
 * Discovery documents and `/version`: the legacy ones (`/api`, `/apis`, `/apis/<group>`, `/api/v1`,
 * `/apis/<group>/<version>`) and the aggregated ones (`/api` and `/apis` as an
 * `apidiscovery.k8s.io` `APIGroupDiscoveryList`, what kubectl and client-go ask for first). Groups
 * come in kube-aggregator's order: by their APIServices' group priority, highest first, then by
 * name; a group's versions by version priority, then newest first.
 */
import { createHash } from "node:crypto"
import * as Registry from "./Registry.ts"
import * as ResourceType from "./ResourceType.ts"
import * as TokenRequests from "./TokenRequests.ts"

/** A group version served, with its APIService's priorities. */
export interface ServedVersion {
  readonly group: string
  readonly version: string
  readonly groupPriority: number
  readonly versionPriority: number
}

/** What an extension API server's own discovery last listed for a group version it serves. */
export interface RemoteVersion extends ServedVersion {
  /** Its APIResourceList's `resources`, as it sent them; empty when it never answered. */
  readonly resources: ReadonlyArray<unknown>
  /** Whether its last discovery request succeeded: otherwise the resources are kept but stale. */
  readonly current: boolean
}

// kube-apiserver's discovery priorities of its own group versions (group, then version).
const priorities: Readonly<Record<string, readonly [number, number]>> = {
  "/v1": [18000, 1],
  "apiregistration.k8s.io/v1": [18000, 15],
  "apps/v1": [17800, 15],
  "events.k8s.io/v1": [17750, 15],
  "authentication.k8s.io/v1": [17700, 15],
  "authorization.k8s.io/v1": [17600, 15],
  "autoscaling/v1": [17500, 15],
  "autoscaling/v2": [17500, 30],
  "batch/v1": [17400, 15],
  "certificates.k8s.io/v1": [17300, 15],
  "networking.k8s.io/v1": [17200, 15],
  "policy/v1": [17100, 15],
  "rbac.authorization.k8s.io/v1": [17000, 15],
  "storage.k8s.io/v1": [16800, 15],
  "apiextensions.k8s.io/v1": [16700, 15],
  "admissionregistration.k8s.io/v1": [16700, 15],
  "scheduling.k8s.io/v1": [16600, 15],
  "coordination.k8s.io/v1": [16500, 15],
  "node.k8s.io/v1": [16300, 15],
  "discovery.k8s.io/v1": [16200, 15],
  "flowcontrol.apiserver.k8s.io/v1": [16100, 21]
}

/**
 * The group and version priority of a group version served here, as its local APIService has
 * them: kube-apiserver's table for built-in ones, 1000 and 100 for a CRD's.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * Discovery.priority("apps", "v1", false) // [17800, 15]
 * Discovery.priority("stable.example.com", "v1", true) // [1000, 100]
 */
export const priority = (group: string, version: string, custom: boolean): readonly [number, number] =>
  custom ? [1000, 100] : priorities[`${group}/${version}`] ?? [1000, 15]

// kube-aggregator lists its own group first, whatever the others' priorities.
const registrationGroup = "apiregistration.k8s.io"

const localVersions = (registry: Registry.Registry): ReadonlyArray<ServedVersion> =>
  registry.groups().flatMap((group) =>
    group.versions.map((version) => {
      const [groupPriority, versionPriority] = priority(group.name, version, registry.groupVersion(group.name, version).some((r) => r.type.custom))
      return { group: group.name, version, groupPriority, versionPriority }
    })
  )

// The groups served here and, for groups not served here, by APIServices (`remote`), in order.
const ordered = <V extends ServedVersion>(local: ReadonlyArray<V>, remote: ReadonlyArray<V>) => {
  const servedHere = new Set(local.map((v) => v.group))
  const byGroup = new Map<string, Array<V>>()
  for (const v of [...local, ...remote.filter((r) => !servedHere.has(r.group))]) {
    const versions = byGroup.get(v.group) ?? []
    versions.push(v)
    byGroup.set(v.group, versions)
  }
  const groupPriority = (name: string, versions: ReadonlyArray<V>) =>
    name === registrationGroup ? Infinity : Math.max(...versions.map((v) => v.groupPriority))
  return [...byGroup]
    .sort(([a, va], [b, vb]) => groupPriority(b, vb) - groupPriority(a, va) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, versions]) => ({
      name,
      versions: [...versions].sort((a, b) => b.versionPriority - a.versionPriority || Registry.compareVersions(a.version, b.version))
    }))
}

/**
 * `GET /api`.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * Discovery.apiVersions("127.0.0.1:6443").versions // ["v1"]
 */
export const apiVersions = (address: string) => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: address }]
})

const groupBody = (group: { readonly name: string; readonly versions: ReadonlyArray<ServedVersion> }) => ({
  name: group.name,
  versions: group.versions.map(({ version }) => ({ groupVersion: `${group.name}/${version}`, version })),
  preferredVersion: { groupVersion: `${group.name}/${group.versions[0]!.version}`, version: group.versions[0]!.version }
})

/**
 * `GET /apis`: the groups served here and those served by APIServices from Services (`remote`), in order.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * Discovery.groupList(Registry.make(Builtins.make())).groups.map((g) => g.name).includes("apps") // true
 */
export const groupList = (registry: Registry.Registry, remote: ReadonlyArray<ServedVersion> = []) => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: ordered(localVersions(registry), remote).map(groupBody)
})

/**
 * `GET /apis/<group>`, or undefined when the group is not served here nor by an APIService (`remote`).
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * Discovery.group(Registry.make(Builtins.make()), "apps")?.preferredVersion.version // "v1"
 */
export const group = (registry: Registry.Registry, name: string, remote: ReadonlyArray<ServedVersion> = []) => {
  const found = ordered(localVersions(registry).filter((v) => v.group === name), remote.filter((v) => v.group === name))[0]
  return found === undefined ? undefined : { kind: "APIGroup", apiVersion: "v1", ...groupBody(found) }
}

/**
 * `GET /api/v1` or `/apis/<group>/<version>`, or undefined when not served. Every main resource is
 * listed before any subresource entry: client-node takes the first entry whose kind matches.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * Discovery.resourceList(Registry.make(Builtins.make()), "apps", "v1")?.resources[0]?.name // "deployments"
 */
export const resourceList = (registry: Registry.Registry, group: string, version: string) => {
  const resources = registry.groupVersion(group, version)
  if (resources.length === 0) return undefined
  const main = resources.map(({ type }) => ({
    name: type.plural,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: type.verbs,
    ...(type.shortNames.length > 0 ? { shortNames: type.shortNames } : {}),
    ...(type.categories.length > 0 ? { categories: type.categories } : {})
  }))
  const subresources = resources.flatMap(({ type }) => [
    ...(type.subresources.status
      ? [{ name: `${type.plural}/status`, singularName: "", namespaced: type.namespaced, kind: type.kind, verbs: ["get", "patch", "update"] }]
      : []),
    ...(type.subresources.scale !== undefined
      ? [{
        name: `${type.plural}/scale`,
        singularName: "",
        namespaced: type.namespaced,
        group: "autoscaling",
        version: "v1",
        kind: "Scale",
        verbs: ["get", "patch", "update"]
      }]
      : []),
    ...(group === "" && type.plural === "namespaces"
      ? [{ name: "namespaces/finalize", singularName: "", namespaced: false, kind: "Namespace", verbs: ["update"] }]
      : []),
    ...(group === "" && type.plural === "pods"
      ? [
        { name: "pods/attach", singularName: "", namespaced: true, kind: "PodAttachOptions", verbs: ["create", "get"] },
        { name: "pods/binding", singularName: "", namespaced: true, kind: "Binding", verbs: ["create"] },
        { name: "pods/ephemeralcontainers", singularName: "", namespaced: true, kind: "Pod", verbs: ["get", "patch", "update"] },
        { name: "pods/eviction", singularName: "", namespaced: true, group: "policy", version: "v1", kind: "Eviction", verbs: ["create"] },
        { name: "pods/exec", singularName: "", namespaced: true, kind: "PodExecOptions", verbs: ["create", "get"] },
        { name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] },
        { name: "pods/portforward", singularName: "", namespaced: true, kind: "PodPortForwardOptions", verbs: ["create", "get"] }
      ]
      : []),
    ...(group === "" && type.plural === "serviceaccounts" ? [TokenRequests.discovery] : [])
  ])
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: ResourceType.groupVersion({ group, version }),
    resources: [...main, ...subresources]
  }
}

type Scope = "Namespaced" | "Cluster"

interface GroupVersionKind {
  readonly group: string
  readonly version: string
  readonly kind: string
}

interface AggregatedResource {
  readonly resource: string
  readonly responseKind: GroupVersionKind
  readonly scope: Scope
  readonly singularResource: string
  readonly verbs: ReadonlyArray<string>
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
  subresources?: Array<{ readonly subresource: string; readonly responseKind: GroupVersionKind; readonly verbs: ReadonlyArray<string> }>
}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

/**
 * An APIResourceList's `resources` as aggregated discovery lists them, as kube converts them: a
 * resource per entry without a slash, each subresource under its resource (one made for a
 * subresource without its resource). `own` gives the group version a resource's kind is answered
 * in when the entry names none (a CRD's), else it stays empty: the group version asked for.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * Discovery.toAggregated([
 *   { name: "widgets", singularName: "widget", namespaced: true, kind: "Widget", verbs: ["get"] },
 *   { name: "widgets/status", singularName: "", namespaced: true, kind: "Widget", verbs: ["get", "patch", "update"] }
 * ])[0]?.subresources?.[0]?.subresource // "status"
 */
export const toAggregated = (
  list: ReadonlyArray<unknown>,
  own: (resource: string) => { readonly group: string; readonly version: string } | undefined = () => undefined
): Array<AggregatedResource> => {
  const entries = list.filter((r): r is Record<string, unknown> => typeof r === "object" && r !== null && typeof (r as Record<string, unknown>).name === "string")
  const out: Array<AggregatedResource> = []
  const byName = new Map<string, AggregatedResource>()
  const kindOf = (r: Record<string, unknown>, resource: string): GroupVersionKind => {
    const ownVersion = own(resource)
    return {
      group: typeof r.group === "string" ? r.group : ownVersion?.group ?? "",
      version: typeof r.version === "string" ? r.version : ownVersion?.version ?? "",
      kind: typeof r.kind === "string" ? r.kind : ""
    }
  }
  for (const r of entries) {
    const name = r.name as string
    if (name.includes("/")) continue
    const shortNames = strings(r.shortNames)
    const categories = strings(r.categories)
    const resource: AggregatedResource = {
      resource: name,
      responseKind: kindOf(r, name),
      scope: r.namespaced === true ? "Namespaced" : "Cluster",
      singularResource: typeof r.singularName === "string" ? r.singularName : "",
      verbs: strings(r.verbs),
      ...(shortNames.length > 0 ? { shortNames } : {}),
      ...(categories.length > 0 ? { categories } : {})
    }
    out.push(resource)
    byName.set(name, resource)
  }
  for (const r of entries) {
    const [parent = "", subresource] = (r.name as string).split(/\/(.*)/s)
    if (subresource === undefined) continue
    let resource = byName.get(parent)
    if (resource === undefined) {
      resource = { resource: parent, responseKind: { group: "", version: "", kind: "" }, scope: r.namespaced === true ? "Namespaced" : "Cluster", singularResource: "", verbs: [] }
      out.push(resource)
      byName.set(parent, resource)
    }
    resource.subresources = [...resource.subresources ?? [], { subresource, responseKind: kindOf(r, parent), verbs: strings(r.verbs) }]
  }
  return out
}

// A group version served here, as kube's handlers list it: resources by name, a built-in one's
// subresources by name too, a CRD's status before scale; a CRD's kinds with their group version.
const localAggregated = (registry: Registry.Registry, group: string, version: string) => {
  const served = registry.groupVersion(group, version)
  const custom = new Set(served.filter((r) => r.type.custom).map((r) => r.type.plural))
  const resources = toAggregated(resourceList(registry, group, version)?.resources ?? [], (plural) => custom.has(plural) ? { group, version } : undefined)
  for (const resource of resources) {
    if (!custom.has(resource.resource)) resource.subresources?.sort((a, b) => a.subresource < b.subresource ? -1 : 1)
  }
  return resources.sort((a, b) => a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0)
}

/** The aggregated discovery versions kube-apiserver 1.32 serves. */
export type AggregatedVersion = "apidiscovery.k8s.io/v2" | "apidiscovery.k8s.io/v2beta1"

/**
 * `GET /api` (`core`) or `GET /apis` as aggregated discovery: every group (the core group alone at
 * `/api`) with each version's resources, in discovery's order. A group version served by an
 * APIService from a Service has what its server's discovery last listed, `Stale` when that
 * request failed since.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * const list = Discovery.aggregated(Registry.make(Builtins.make()), "apidiscovery.k8s.io/v2", { core: false })
 * list.items[0]?.metadata.name // "apiregistration.k8s.io"
 */
export const aggregated = (
  registry: Registry.Registry,
  apiVersion: AggregatedVersion,
  options: { readonly core: boolean; readonly remote?: ReadonlyArray<RemoteVersion> }
) => {
  // Each version with what it lists: a local one its served resources, a remote one its server's last answer.
  const local = (v: ServedVersion) => ({ ...v, resources: () => localAggregated(registry, v.group, v.version), current: true })
  const remote = (v: RemoteVersion) => ({ ...v, resources: () => toAggregated(v.resources), current: v.current })
  const groups = options.core
    ? [{ name: "", versions: [local({ group: "", version: "v1", groupPriority: 18000, versionPriority: 1 })] }]
    : ordered(localVersions(registry).map(local), (options.remote ?? []).map(remote))
  const versionOf = (v: (typeof groups)[number]["versions"][number]) => {
    const resources = v.resources()
    return { version: v.version, ...(resources.length > 0 ? { resources } : {}), freshness: v.current ? "Current" : "Stale" }
  }
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion,
    metadata: {},
    items: groups.map((g) => ({
      metadata: { ...(g.name === "" ? {} : { name: g.name }), creationTimestamp: null },
      versions: g.versions.map(versionOf)
    }))
  }
}

/**
 * The ETag of a discovery document, as kube computes it: the hex SHA-512 of its JSON.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * Discovery.etag("{}").length // 128
 */
export const etag = (json: string): string => createHash("sha512").update(json).digest("hex").toUpperCase()

/**
 * `GET /version`: the server claims Kubernetes 1.32.
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * Discovery.version.minor // "32"
 */
export const version = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0-kubefx",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2025-01-01T00:00:00Z",
  goVersion: "go1.23.0",
  compiler: "gc",
  platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`
}
