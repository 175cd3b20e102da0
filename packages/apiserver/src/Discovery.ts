/**
 * Legacy discovery documents (`/api`, `/apis`, `/apis/<group>`, `/api/v1`, `/apis/<group>/<version>`)
 * and `/version`. Aggregated discovery is not served: clients that ask for it accept these
 * documents in plain `application/json` instead.
 */
import type * as Registry from "./Registry.ts"
import * as ResourceType from "./ResourceType.ts"
import * as TokenRequests from "./TokenRequests.ts"

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

const groupBody = (group: Registry.GroupVersions) => ({
  name: group.name,
  versions: group.versions.map((version) => ({ groupVersion: `${group.name}/${version}`, version })),
  preferredVersion: { groupVersion: `${group.name}/${group.preferred}`, version: group.preferred }
})

/**
 * `GET /apis`: the groups served here, then those served by APIServices from Services (`remote`).
 *
 * @example
 * import * as Discovery from "./Discovery.ts"
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * Discovery.groupList(Registry.make(Builtins.make())).groups.map((g) => g.name).includes("apps") // true
 */
export const groupList = (registry: Registry.Registry, remote: ReadonlyArray<Registry.GroupVersions> = []) => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: [...registry.groups(), ...remote].map(groupBody)
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
export const group = (registry: Registry.Registry, name: string, remote: ReadonlyArray<Registry.GroupVersions> = []) => {
  const found = registry.groups().find((g) => g.name === name) ?? remote.find((g) => g.name === name)
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
        { name: "pods/ephemeralcontainers", singularName: "", namespaced: true, kind: "Pod", verbs: ["get", "patch", "update"] },
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
