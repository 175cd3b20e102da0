/**
 * Who may do what, as kube-apiserver's RBAC authorizer decides it: `system:masters` (the server's
 * own token) may do anything; every other user may do what the Roles and ClusterRoles bound to it,
 * to one of its groups or to its ServiceAccount allow, the bootstrap roles among them
 * (`BootstrapPolicy`, stored at start as kube-apiserver stores them). A ClusterRole named by a
 * binding but not stored allows nothing, as in a cluster. Impersonation (`kubectl --as`,
 * `--as-group`, `--as-uid`, `Impersonate-Extra-*` headers) is allowed to whom RBAC grants
 * `impersonate` on the users, groups, ServiceAccounts, uids and extras named. A role or binding
 * its writer writes grants no more than the writer holds, unless it may `escalate` the role or
 * `bind` the role referred to. An aggregated ClusterRole's rules are those the aggregation
 * controller (`Aggregation`) wrote.
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

/** An access review's answer: kube-apiserver's reason names the binding that allowed it. */
export interface Decision {
  readonly allowed: boolean
  /** `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "u"`; "" when denied or for `system:masters`. */
  readonly reason: string
}

export interface Authorization {
  /** Whether `user` may make `request`. */
  readonly allows: (user: Authentication.User, request: Request) => boolean
  /** `allows`, with the binding that allowed it. */
  readonly decide: (user: Authentication.User, request: Request) => Decision
  /** The rules RBAC grants `user` in `namespace` (a SelfSubjectRulesReview); `system:masters` has cluster-admin's by its binding. */
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

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

// A role's rules, read from its stored object once: a stored object is never changed (a write stores
// a new one), and every request of a user other than the administrator reads the roles bound to it.
const parsedRules = new WeakMap<KubeObject.KubeObject, ReadonlyArray<PolicyRule>>()

const rulesOf = (role: KubeObject.KubeObject | undefined): ReadonlyArray<PolicyRule> => {
  if (role === undefined || !Array.isArray(role.rules)) return []
  let parsed = parsedRules.get(role)
  if (parsed === undefined) {
    parsed = role.rules.filter(KubeObject.isObject).map((rule) => ({
      verbs: strings(rule.verbs),
      apiGroups: strings(rule.apiGroups),
      resources: strings(rule.resources),
      resourceNames: strings(rule.resourceNames),
      nonResourceURLs: strings(rule.nonResourceURLs)
    }))
    parsedRules.set(role, parsed)
  }
  return parsed
}

// The binding's subject that is `user`: a User by name, a Group the user is in, or the ServiceAccount the user is.
const subjectFor = (binding: KubeObject.KubeObject, user: Authentication.User, bindingNamespace: string): KubeObject.KubeObject | undefined =>
  Array.isArray(binding.subjects)
    ? binding.subjects.find((subject): subject is KubeObject.KubeObject => {
      if (!KubeObject.isObject(subject)) return false
      switch (subject.kind) {
        case "User":
          return subject.name === user.username
        case "Group":
          return typeof subject.name === "string" && user.groups.includes(subject.name)
        case "ServiceAccount":
          return user.username === `system:serviceaccount:${serviceAccountNamespace(subject, bindingNamespace)}:${String(subject.name)}`
        default:
          return false
      }
    })
    : undefined

const serviceAccountNamespace = (subject: KubeObject.KubeObject, bindingNamespace: string): string =>
  typeof subject.namespace === "string" && subject.namespace !== "" ? subject.namespace : bindingNamespace

// How kube-apiserver names the binding that allowed a request, in an access review's reason.
const describe = (binding: KubeObject.KubeObject, subject: KubeObject.KubeObject, bindingNamespace: string): string => {
  const ref = roleRefOf(binding)
  const meta = KubeObject.meta(binding)
  const who = subject.kind === "ServiceAccount"
    ? `${subject.kind} "${String(subject.name)}/${serviceAccountNamespace(subject, bindingNamespace)}"`
    : `${String(subject.kind)} "${String(subject.name)}"`
  const name = bindingNamespace === "" ? `ClusterRoleBinding "${meta.name}"` : `RoleBinding "${meta.name}/${bindingNamespace}"`
  return `${name} of ${ref?.kind} "${ref?.name}" to ${who}`
}

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
  // Each rule bound to `user` in `namespace` (the cluster's bindings first), with where it came from,
  // until `visit` answers true.
  const visitBound = (
    user: Authentication.User,
    namespace: string | undefined,
    visit: (rules: ReadonlyArray<PolicyRule>, binding: KubeObject.KubeObject, subject: KubeObject.KubeObject, bindingNamespace: string) => boolean
  ): boolean => {
    for (const binding of store.list(clusterRoleBindings, undefined)) {
      const ref = roleRefOf(binding)
      const subject = ref?.kind === "ClusterRole" ? subjectFor(binding, user, "") : undefined
      if (subject !== undefined && visit(rulesOf(store.get(clusterRoles, "", ref!.name)), binding, subject, "")) return true
    }
    if (namespace === undefined || namespace === "") return false
    for (const binding of store.list(roleBindings, namespace)) {
      const ref = roleRefOf(binding)
      const subject = ref === undefined ? undefined : subjectFor(binding, user, namespace)
      if (subject === undefined) continue
      const role = ref!.kind === "Role" ? store.get(roles, namespace, ref!.name) : store.get(clusterRoles, "", ref!.name)
      if (visit(rulesOf(role), binding, subject, namespace)) return true
    }
    return false
  }
  const namespaceOf = (request: Request) => request._tag === "Resource" ? request.namespace : undefined
  const allows = (user: Authentication.User, request: Request) =>
    isMaster(user) || visitBound(user, namespaceOf(request), (rules) => rules.some((rule) => ruleAllows(rule, request)))
  const decide = (user: Authentication.User, request: Request): Decision => {
    if (isMaster(user)) return { allowed: true, reason: "" }
    let reason = ""
    const allowed = visitBound(user, namespaceOf(request), (rules, binding, subject, bindingNamespace) => {
      if (!rules.some((rule) => ruleAllows(rule, request))) return false
      reason = `RBAC: allowed by ${describe(binding, subject, bindingNamespace)}`
      return true
    })
    return { allowed, reason }
  }
  // RBAC's rules alone, for system:masters too (kube's privileged group authorizer lists none).
  const rules = (user: Authentication.User, namespace: string) => {
    const found: Array<PolicyRule> = []
    visitBound(user, namespace, (bound) => (found.push(...bound), false))
    return found
  }
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
  return { allows, decide, rules, escalation }
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

const extraPrefix = "impersonate-extra-"

// The extras an Impersonate-Extra-<key> header each names: the key percent-decoded, in lower case.
const extrasOf = (headers: Readonly<Record<string, string | undefined>>): Record<string, ReadonlyArray<string>> => {
  const extra: Record<string, ReadonlyArray<string>> = {}
  for (const header of Object.keys(headers)) {
    if (!header.startsWith(extraPrefix)) continue
    let key = header.slice(extraPrefix.length)
    try {
      key = decodeURIComponent(key).toLowerCase()
    } catch {
      // Not percent-encoded as it should be: the key is taken as written.
    }
    extra[key] = listHeader(headers[header])
  }
  return extra
}

const impersonating = (verbOn: { readonly resource: string; readonly name: string; readonly subresource?: string }): ResourceRequest => ({
  _tag: "Resource",
  verb: "impersonate",
  group: "authentication.k8s.io",
  ...verbOn
})

/**
 * The user a request acts as: `requester`, or the user its Impersonate-User, Impersonate-Group,
 * Impersonate-Uid and Impersonate-Extra-* headers name when RBAC lets `requester` impersonate each
 * of them; the 403 for the first it may not, or a 400 for groups, a uid or extras without a user,
 * as kube-apiserver.
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
  const uid = headers["impersonate-uid"] === "" ? undefined : headers["impersonate-uid"]
  const extra = extrasOf(headers)
  const extraKeys = Object.keys(extra)
  if (username === undefined || username === "") {
    const asked = [
      ...groups.map((g) => `{Group  ${g}    }`),
      ...extraKeys.flatMap((key) => extra[key]!.map((value) => `{UserExtra  ${value}  authentication.k8s.io/v1  ${key}}`)),
      ...(uid === undefined ? [] : [`{UID  ${uid}  authentication.k8s.io/v1  }`])
    ]
    return asked.length === 0 ? requester : Status.badRequest(`requested [${asked.join(" ")}] without impersonating a user`)
  }
  const serviceAccount = username.startsWith(serviceAccountPrefix) ? username.slice(serviceAccountPrefix.length).split(":") : undefined
  const asked: Array<ResourceRequest> = [
    serviceAccount !== undefined && serviceAccount.length === 2
      ? { _tag: "Resource", verb: "impersonate", group: "", resource: "serviceaccounts", namespace: serviceAccount[0], name: serviceAccount[1] }
      : { _tag: "Resource", verb: "impersonate", group: "", resource: "users", name: username },
    ...groups.map((group): ResourceRequest => ({ _tag: "Resource", verb: "impersonate", group: "", resource: "groups", name: group })),
    ...extraKeys.flatMap((key) => extra[key]!.map((value) => impersonating({ resource: "userextras", subresource: key, name: value }))),
    ...(uid === undefined ? [] : [impersonating({ resource: "uids", name: uid })])
  ]
  const denied = asked.find((request) => !authorization.allows(requester, request))
  if (denied !== undefined) return forbidden(requester, denied)
  const implied = serviceAccount !== undefined && serviceAccount.length === 2 && groups.length === 0
    ? ["system:serviceaccounts", `system:serviceaccounts:${serviceAccount[0]}`]
    : []
  const all = [...groups, ...implied]
  const stated = all.includes("system:authenticated") || all.includes("system:unauthenticated") || username === "system:anonymous"
  return {
    username,
    ...(uid === undefined ? {} : { uid }),
    groups: stated ? all : [...all, "system:authenticated"],
    ...(extraKeys.length === 0 ? {} : { extra })
  }
}
