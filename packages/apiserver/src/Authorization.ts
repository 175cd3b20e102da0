/**
 * Who may do what, as kube-apiserver's RBAC authorizer decides it: `system:masters` (the server's
 * own token) may do anything; every other user may do what the Roles and ClusterRoles bound to it,
 * to one of its groups or to its ServiceAccount allow, the bootstrap roles among them (`bootstrap`:
 * what every authenticated user may do, stored at start as kube-apiserver stores them). A
 * ClusterRole named by a binding but not stored allows nothing, as in a cluster.
 * Impersonation (`kubectl --as`, `--as-group`) is allowed to whom RBAC grants `impersonate` on
 * the users, groups or ServiceAccounts named. A role or binding its writer writes grants no more
 * than the writer holds, unless it may `escalate` the role or `bind` the role referred to. An
 * aggregated ClusterRole's rules are those the aggregation controller (`Aggregation`) wrote.
 */
import type * as Authentication from "./Authentication.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** A request on a resource (`verb` as RBAC names it: get, list, watch, create, update, patch, delete, deletecollection). */
export interface ResourceRequest {
  readonly _tag: "Resource"
  readonly verb: string
  readonly group: string
  readonly resource: string
  readonly subresource?: string | undefined
  /** Undefined or "" for a cluster-scoped request. */
  readonly namespace?: string | undefined
  /** "" or undefined when the request names no object (list, create). */
  readonly name?: string | undefined
}

/** A request on any other path (`verb` is the HTTP method in lower case, get for HEAD). */
export interface NonResourceRequest {
  readonly _tag: "NonResource"
  readonly verb: string
  readonly path: string
}

export type Request = ResourceRequest | NonResourceRequest

/** rbac.authorization.k8s.io/v1 PolicyRule, as stored. */
export interface PolicyRule {
  readonly verbs: ReadonlyArray<string>
  readonly apiGroups?: ReadonlyArray<string>
  readonly resources?: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string>
  readonly nonResourceURLs?: ReadonlyArray<string>
}

export interface Authorization {
  /** Whether `user` may make `request`. */
  readonly allows: (user: Authentication.User, request: Request) => boolean
  /** The rules that apply to `user` in `namespace` (a SelfSubjectRulesReview), wildcards for `system:masters`. */
  readonly rules: (user: Authentication.User, namespace: string) => ReadonlyArray<PolicyRule>
  /**
   * The 403 for `user` writing `object`, a role or binding granting what `user` does not hold
   * itself (unless it may `escalate` that role or `bind` its role); undefined when it may.
   */
  readonly escalation: (
    user: Authentication.User,
    type: { readonly group: string; readonly plural: string },
    object: KubeObject.KubeObject
  ) => Status.ApiError | undefined
}

const rbacGroup = "rbac.authorization.k8s.io"
const clusterRoles = "clusterroles.rbac.authorization.k8s.io"
const clusterRoleBindings = "clusterrolebindings.rbac.authorization.k8s.io"
const roles = "roles.rbac.authorization.k8s.io"
const roleBindings = "rolebindings.rbac.authorization.k8s.io"

const everything: ReadonlyArray<PolicyRule> = [
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] }
]

const bootstrapMeta = (name: string): KubeObject.KubeObject => ({
  name,
  uid: KubeObject.uid(),
  creationTimestamp: KubeObject.timestamp(),
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" }
})

/** A stored object of the bootstrap policy. */
export interface Stored {
  readonly storage: string
  readonly object: KubeObject.KubeObject
}

const bootstrapRole = (name: string, rules: ReadonlyArray<PolicyRule>, groups: ReadonlyArray<string>): ReadonlyArray<Stored> => [
  { storage: clusterRoles, object: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: bootstrapMeta(name), rules } },
  {
    storage: clusterRoleBindings,
    object: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: bootstrapMeta(name),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: groups.map((group) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }))
    }
  }
]

const healthAndVersion = ["/healthz", "/livez", "/readyz", "/version", "/version/"]

/**
 * kube-apiserver's bootstrap ClusterRoles and their bindings that a cluster's users rely on:
 * `cluster-admin` (bound to `system:masters`), and what every authenticated user may do:
 * discovery, OpenAPI, health and version paths (`system:discovery`, `system:public-info-viewer`)
 * and reviewing its own access and identity (`system:basic-user`). The server stores them at start
 * when they are missing, as kube-apiserver does.
 *
 * @example
 * import * as Authorization from "./Authorization.ts"
 * Authorization.bootstrap().map((o) => o.object.metadata.name)
 * // ["cluster-admin", "cluster-admin", "system:discovery", "system:discovery", ...]
 */
export const bootstrap = (): ReadonlyArray<Stored> => [
  ...bootstrapRole("cluster-admin", everything, ["system:masters"]),
  ...bootstrapRole("system:discovery", [{
    verbs: ["get"],
    nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]
  }], ["system:authenticated"]),
  ...bootstrapRole("system:public-info-viewer", [{ verbs: ["get"], nonResourceURLs: healthAndVersion }], ["system:authenticated", "system:unauthenticated"]),
  ...bootstrapRole("system:basic-user", [
    { verbs: ["create"], apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"] },
    { verbs: ["create"], apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"] }
  ], ["system:authenticated"])
]

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

const rulesOf = (role: KubeObject.KubeObject | undefined): ReadonlyArray<PolicyRule> =>
  role === undefined || !Array.isArray(role.rules)
    ? []
    : role.rules.filter(KubeObject.isObject).map((rule) => ({
      verbs: strings(rule.verbs),
      apiGroups: strings(rule.apiGroups),
      resources: strings(rule.resources),
      resourceNames: strings(rule.resourceNames),
      nonResourceURLs: strings(rule.nonResourceURLs)
    }))

// A binding's subject: a User by name, a Group the user is in, or the ServiceAccount the user is.
const binds = (binding: KubeObject.KubeObject, user: Authentication.User, bindingNamespace: string): boolean =>
  Array.isArray(binding.subjects) && binding.subjects.filter(KubeObject.isObject).some((subject) => {
    switch (subject.kind) {
      case "User":
        return subject.name === user.username
      case "Group":
        return typeof subject.name === "string" && user.groups.includes(subject.name)
      case "ServiceAccount": {
        const namespace = typeof subject.namespace === "string" && subject.namespace !== "" ? subject.namespace : bindingNamespace
        return user.username === `system:serviceaccount:${namespace}:${String(subject.name)}`
      }
      default:
        return false
    }
  })

const roleRefOf = (binding: KubeObject.KubeObject): { readonly kind: string; readonly name: string } | undefined => {
  const ref = binding.roleRef
  return KubeObject.isObject(ref) && typeof ref.kind === "string" && typeof ref.name === "string" ? { kind: ref.kind, name: ref.name } : undefined
}

const matches = (values: ReadonlyArray<string> | undefined, wanted: string): boolean =>
  values !== undefined && (values.includes("*") || values.includes(wanted))

// "pods", "pods/log", "*", and "*/scale" for a subresource of any resource, as RBAC reads them.
const resourceMatches = (resources: ReadonlyArray<string> | undefined, resource: string, subresource: string | undefined): boolean => {
  if (resources === undefined) return false
  const combined = subresource === undefined || subresource === "" ? resource : `${resource}/${subresource}`
  return resources.some((r) => r === "*" || r === combined || (subresource !== undefined && subresource !== "" && r === `*/${subresource}`))
}

// A non-resource URL rule: the path itself, or a prefix ending in "*".
const pathMatches = (urls: ReadonlyArray<string> | undefined, path: string): boolean =>
  urls !== undefined && urls.some((url) => url === "*" || url === path || (url.endsWith("*") && path.startsWith(url.slice(0, -1))))

/**
 * Whether `rule` allows `request`.
 *
 * @example
 * import * as Authorization from "./Authorization.ts"
 * Authorization.ruleAllows(
 *   { verbs: ["get"], apiGroups: [""], resources: ["configmaps"], resourceNames: ["a"] },
 *   { _tag: "Resource", verb: "get", group: "", resource: "configmaps", namespace: "default", name: "a" }
 * ) // true
 */
export const ruleAllows = (rule: PolicyRule, request: Request): boolean => {
  if (!matches(rule.verbs, request.verb)) return false
  if (request._tag === "NonResource") return pathMatches(rule.nonResourceURLs, request.path)
  return matches(rule.apiGroups, request.group) &&
    resourceMatches(rule.resources, request.resource, request.subresource) &&
    (rule.resourceNames === undefined || rule.resourceNames.length === 0 ||
      (request.name !== undefined && request.name !== "" && rule.resourceNames.includes(request.name)))
}

// An administrator, whom nothing is denied.
const isMaster = (user: Authentication.User): boolean => user.groups.includes("system:masters")

/**
 * The authorizer over the RBAC objects of `store`.
 *
 * @example
 * import * as Authentication from "./Authentication.ts"
 * import * as Authorization from "./Authorization.ts"
 * import * as Store from "./Store.ts"
 * const authorization = Authorization.make(Store.make())
 * authorization.allows(Authentication.admin, { _tag: "Resource", verb: "delete", group: "", resource: "namespaces", name: "x" }) // true
 */
export const make = (store: Store.Store): Authorization => {
  const bound = (user: Authentication.User, namespace: string | undefined): Array<PolicyRule> => {
    const found: Array<PolicyRule> = []
    for (const binding of store.list(clusterRoleBindings, undefined)) {
      const ref = roleRefOf(binding)
      if (ref?.kind === "ClusterRole" && binds(binding, user, "")) found.push(...rulesOf(store.get(clusterRoles, "", ref.name)))
    }
    if (namespace !== undefined && namespace !== "") {
      for (const binding of store.list(roleBindings, namespace)) {
        const ref = roleRefOf(binding)
        if (ref === undefined || !binds(binding, user, namespace)) continue
        found.push(...rulesOf(ref.kind === "Role" ? store.get(roles, namespace, ref.name) : store.get(clusterRoles, "", ref.name)))
      }
    }
    return found
  }
  const allows = (user: Authentication.User, request: Request) =>
    isMaster(user) ||
    bound(user, request._tag === "Resource" ? request.namespace : undefined).some((rule) => ruleAllows(rule, request))
  const rules = (user: Authentication.User, namespace: string) => isMaster(user) ? everything : bound(user, namespace)
  const escalation = (
    user: Authentication.User,
    type: { readonly group: string; readonly plural: string },
    object: KubeObject.KubeObject
  ): Status.ApiError | undefined => {
    if (type.group !== rbacGroup || isMaster(user)) return undefined
    const meta = KubeObject.meta(object)
    const namespace = meta.namespace ?? ""
    const name = meta.name ?? ""
    const may = (verb: string, resource: string, target: string) =>
      allows(user, { _tag: "Resource", verb, group: rbacGroup, resource, namespace, name: target })
    let granted: ReadonlyArray<PolicyRule>
    if (type.plural === "roles" || type.plural === "clusterroles") {
      if (may("escalate", type.plural, name)) return undefined
      granted = rulesOf(object)
    } else if (type.plural === "rolebindings" || type.plural === "clusterrolebindings") {
      const ref = roleRefOf(object)
      if (ref === undefined) return undefined
      const roleResource = ref.kind === "Role" ? "roles" : "clusterroles"
      if (may("bind", roleResource, ref.name)) return undefined
      granted = rulesOf(ref.kind === "Role" ? store.get(roles, namespace, ref.name) : store.get(clusterRoles, "", ref.name))
    } else {
      return undefined
    }
    const held = rules(user, namespace)
    const missing = granted.filter((rule) => permissions(rule).some((permission) => !held.some((own) => ruleAllows(own, permission))))
    if (missing.length === 0) return undefined
    const groups = user.groups.map((g) => JSON.stringify(g)).join(" ")
    return Status.forbidden(type, name, `user "${user.username}" (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${missing.map(compact).join("\n")}`)
  }
  return { allows, rules, escalation }
}

// Each single permission a rule grants, as the request it allows.
const permissions = (rule: PolicyRule): ReadonlyArray<Request> => {
  const urls = rule.nonResourceURLs ?? []
  if (urls.length > 0) return urls.flatMap((path) => rule.verbs.map((verb): Request => ({ _tag: "NonResource", verb, path })))
  const names = (rule.resourceNames ?? []).length > 0 ? rule.resourceNames! : [""]
  return (rule.apiGroups ?? []).flatMap((group) =>
    (rule.resources ?? []).flatMap((combined) => {
      const slash = combined.indexOf("/")
      const resource = slash < 0 ? combined : combined.slice(0, slash)
      const subresource = slash < 0 ? undefined : combined.slice(slash + 1)
      return rule.verbs.flatMap((verb) => names.map((name): Request => ({ _tag: "Resource", verb, group, resource, subresource, name })))
    })
  )
}

// A rule as kube-apiserver writes it in an escalation error: {APIGroups:[""], Resources:["secrets"], Verbs:["get"]}.
const compact = (rule: PolicyRule): string => {
  const list = (values: ReadonlyArray<string> | undefined) => `[${(values ?? []).map((v) => JSON.stringify(v)).join(", ")}]`
  const fields = [
    ...((rule.apiGroups ?? []).length > 0 ? [`APIGroups:${list(rule.apiGroups)}`] : []),
    ...((rule.resources ?? []).length > 0 ? [`Resources:${list(rule.resources)}`] : []),
    ...((rule.resourceNames ?? []).length > 0 ? [`ResourceNames:${list(rule.resourceNames)}`] : []),
    ...((rule.nonResourceURLs ?? []).length > 0 ? [`NonResourceURLs:${list(rule.nonResourceURLs)}`] : []),
    `Verbs:${list(rule.verbs)}`
  ]
  return `{${fields.join(", ")}}`
}

/**
 * The 403 kube-apiserver answers a request its authorizer denies:
 * `configmaps "a" is forbidden: User "u" cannot get resource "configmaps" in API group "" in the namespace "default"`.
 *
 * @example
 * import * as Authorization from "./Authorization.ts"
 * const user = { username: "system:serviceaccount:default:robot", groups: [] }
 * Authorization.forbidden(user, { _tag: "Resource", verb: "list", group: "", resource: "secrets", namespace: "default" }).message
 * // 'secrets is forbidden: User "system:serviceaccount:default:robot" cannot list resource "secrets" in API group "" in the namespace "default"'
 */
export const forbidden = (user: Authentication.User, request: Request): Status.ApiError => {
  if (request._tag === "NonResource") {
    return Status.forbiddenRequest(`forbidden: User "${user.username}" cannot ${request.verb} path "${request.path}"`)
  }
  const resource = request.subresource === undefined || request.subresource === "" ? request.resource : `${request.resource}/${request.subresource}`
  const where = request.namespace === undefined || request.namespace === ""
    ? "at the cluster scope"
    : `in the namespace "${request.namespace}"`
  const why = `User "${user.username}" cannot ${request.verb} resource "${resource}" in API group "${request.group}" ${where}`
  return Status.forbidden({ group: request.group, plural: request.resource }, request.name ?? "", why)
}

const serviceAccountPrefix = "system:serviceaccount:"

const listHeader = (value: string | undefined): ReadonlyArray<string> =>
  value === undefined ? [] : value.split(",").map((v) => v.trim()).filter((v) => v !== "")

/**
 * The user a request acts as: `requester`, or the user its Impersonate-User and Impersonate-Group
 * headers name when RBAC lets `requester` impersonate them; the 403 otherwise, as kube-apiserver.
 *
 * @example
 * import * as Authentication from "./Authentication.ts"
 * import * as Authorization from "./Authorization.ts"
 * import * as Store from "./Store.ts"
 * const as = Authorization.impersonated(Authorization.make(Store.make()), Authentication.admin, { "impersonate-user": "jane" })
 * // { username: "jane", groups: ["system:authenticated"] }
 */
export const impersonated = (
  authorization: Authorization,
  requester: Authentication.User,
  headers: Readonly<Record<string, string | undefined>>
): Authentication.User | Status.ApiError => {
  const username = headers["impersonate-user"]
  const groups = listHeader(headers["impersonate-group"])
  if (username === undefined || username === "") {
    return groups.length === 0
      ? requester
      : Status.badRequest(`requested [${groups.map((g) => `{Group  ${g}  authentication.k8s.io/v1  }`).join(" ")}] without impersonating a user`)
  }
  const serviceAccount = username.startsWith(serviceAccountPrefix) ? username.slice(serviceAccountPrefix.length).split(":") : undefined
  const asked: Array<ResourceRequest> = [
    serviceAccount !== undefined && serviceAccount.length === 2
      ? { _tag: "Resource", verb: "impersonate", group: "", resource: "serviceaccounts", namespace: serviceAccount[0], name: serviceAccount[1] }
      : { _tag: "Resource", verb: "impersonate", group: "", resource: "users", name: username },
    ...groups.map((group): ResourceRequest => ({ _tag: "Resource", verb: "impersonate", group: "", resource: "groups", name: group }))
  ]
  const denied = asked.find((request) => !authorization.allows(requester, request))
  if (denied !== undefined) return forbidden(requester, denied)
  const implied = serviceAccount !== undefined && serviceAccount.length === 2 && groups.length === 0
    ? ["system:serviceaccounts", `system:serviceaccounts:${serviceAccount[0]}`]
    : []
  const all = [...groups, ...implied]
  return { username, groups: all.includes("system:authenticated") ? all : [...all, "system:authenticated"] }
}
