/**
 * The least-privilege ClusterRole an operator needs, derived from what its controllers declare:
 * read and watch the primary, owned and watched kinds; apply owned objects (create and patch);
 * patch the primary for finalizers and its status subresource; update `<primary>/finalizers` for
 * blocking owner references; write Events; take the leader Lease (create, and get and update by
 * name). Rules a reconciler needs beyond that are declared with `rbac` on the controller or the
 * operator and merged in.
 *
 * @since 0.1.0
 */
import type * as Controller from "../controller/Controller.ts"
import type * as Operator from "./Operator.ts"
import type * as Resource from "../client/Resource.ts"
import { Effect } from "effect"
import * as Builtins from "../client/Builtins.ts"
import * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import * as Yaml from "../client/Yaml.ts"

/**
 * rbac.authorization.k8s.io/v1 PolicyRule (resource rules), with where it applies: a rule with a
 * `namespace` (kubebuilder's `namespace=` marker) is granted in that namespace only, by a Role there;
 * one without, by the ClusterRole.
 */
export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  readonly resourceNames?: ReadonlyArray<string> | undefined
  /** Grant it in this namespace only (a Role), not across the cluster. */
  readonly namespace?: string | undefined
}

export interface ClusterRole {
  readonly apiVersion: "rbac.authorization.k8s.io/v1"
  readonly kind: "ClusterRole"
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> }
  readonly rules: ReadonlyArray<PolicyRule>
}

/** rbac.authorization.k8s.io/v1 Role: the rules granted in one namespace. */
export interface Role {
  readonly apiVersion: "rbac.authorization.k8s.io/v1"
  readonly kind: "Role"
  readonly metadata: { readonly name: string; readonly namespace: string; readonly labels?: Readonly<Record<string, string>> }
  readonly rules: ReadonlyArray<PolicyRule>
}

const read = ["get", "list", "watch"]

const on = (resource: Resource.Resource, verbs: ReadonlyArray<string>, subresource?: string): PolicyRule => ({
  apiGroups: [resource.group],
  resources: [subresource === undefined ? resource.plural : `${resource.plural}/${subresource}`],
  verbs
})

/**
 * What one controller needs.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const widgets: import("@kubefx/kube").Controller.Any
 * Rbac.controllerRules(widgets)
 */
export const controllerRules = (definition: Controller.Any<unknown>): ReadonlyArray<PolicyRule> => {
  const primary = definition.for
  return [
    on(primary, definition.finalizer === undefined ? read : [...read, "patch"]),
    ...(primary.custom?.status === undefined ? [] : [on(primary, ["patch"], "status")]),
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    ...(definition.owns.length === 0 ? [] : [on(primary, ["update"], "finalizers")]),
    ...definition.owns.map((kind) => on(kind, [...read, "create", "patch"])),
    ...definition.watches.map((kind) => on(kind, read)),
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    ...definition.rules
  ]
}

/**
 * What an operator needs: its controllers', the leader Lease's, and its own extra rules.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * Rbac.operatorRules(operator)
 */
export const operatorRules = (operator: Operator.Operator<unknown>): ReadonlyArray<PolicyRule> => {
  const election = operator.options.leaderElection
  const lease = election?.leaseName ?? `${operator.name}-leader`
  return [
    ...operator.controllers.flatMap(controllerRules),
    ...(election === undefined ? [] : [
      // create cannot be limited by name: the name is not known before the object exists.
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: [lease], verbs: ["get", "update"] }
    ]),
    ...(operator.options.sharding === undefined ? [] : [
      // Member Leases are named after replicas that do not exist yet; the sharder lists them all.
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "create", "update", "delete"] },
      // The sharder labels the primaries; their owners acknowledge drains in an annotation.
      ...operator.controllers.map((definition) => on(definition.for, ["patch"]))
    ]),
    ...(operator.options.rbac ?? [])
  ]
}

const verbOrder = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
const byVerbOrder = (a: string, b: string) => {
  const rank = (verb: string) => verbOrder.includes(verb) ? verbOrder.indexOf(verb) : verbOrder.length
  return rank(a) - rank(b) || a.localeCompare(b)
}

/**
 * Merges rules: verbs per group, resource and resource names are united, then resources of a group
 * with the same verbs (and names) share a rule. The result is sorted, so it is stable to diff.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * Rbac.normalize([
 *   { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
 *   { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: ["list", "get"] }
 * ])
 * // [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] },
 * //  { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }]
 */
export const normalize = (rules: ReadonlyArray<PolicyRule>): ReadonlyArray<PolicyRule> => {
  const verbs = new Map<string, { group: string; resource: string; names: ReadonlyArray<string>; verbs: Set<string> }>()
  for (const rule of rules) {
    const names = [...new Set(rule.resourceNames ?? [])].sort()
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const key = JSON.stringify([group, resource, names])
        let entry = verbs.get(key)
        if (entry === undefined) verbs.set(key, entry = { group, resource, names, verbs: new Set() })
        for (const verb of rule.verbs) entry.verbs.add(verb)
      }
    }
  }
  const merged = new Map<string, { group: string; names: ReadonlyArray<string>; verbs: ReadonlyArray<string>; resources: Array<string> }>()
  for (const entry of verbs.values()) {
    const sorted = entry.verbs.has("*") ? ["*"] : [...entry.verbs].sort(byVerbOrder)
    const key = JSON.stringify([entry.group, entry.names, sorted])
    const rule = merged.get(key)
    if (rule === undefined) merged.set(key, { group: entry.group, names: entry.names, verbs: sorted, resources: [entry.resource] })
    else rule.resources.push(entry.resource)
  }
  return [...merged.values()]
    .map((rule) => ({ ...rule, resources: rule.resources.sort() }))
    .sort((a, b) => a.group.localeCompare(b.group) || a.resources[0]!.localeCompare(b.resources[0]!) || a.names.length - b.names.length)
    .map((rule) => ({
      apiGroups: [rule.group],
      resources: rule.resources,
      ...(rule.names.length === 0 ? {} : { resourceNames: rule.names }),
      verbs: rule.verbs
    }))
}

type Source = Operator.Operator<unknown> | ReadonlyArray<Controller.Any<unknown>>

const rulesOf = (source: Source): ReadonlyArray<PolicyRule> =>
  Array.isArray(source) ? (source as ReadonlyArray<Controller.Any<unknown>>).flatMap(controllerRules) : operatorRules(source as Operator.Operator<unknown>)

const nameOf = (source: Source, options: { readonly name?: string | undefined }): string =>
  options.name ?? (Array.isArray(source) ? "kubefx-operator" : (source as Operator.Operator<unknown>).name)

/**
 * The ClusterRole of an operator (named after it), or of a set of controllers: every rule without
 * a `namespace`.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * const role = Rbac.clusterRole(operator)
 */
export const clusterRole = (source: Source, options: { readonly name?: string | undefined } = {}): ClusterRole => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: nameOf(source, options) },
  rules: normalize(rulesOf(source).filter((rule) => rule.namespace === undefined))
})

/**
 * The Roles of an operator's rules that name a namespace, one per namespace, named as its
 * {@link clusterRole}; none when no rule does.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * Rbac.roles(operator) // [{ kind: "Role", metadata: { name: "widgets", namespace: "vault" }, rules: [...] }]
 */
export const roles = (source: Source, options: { readonly name?: string | undefined } = {}): ReadonlyArray<Role> => {
  const byNamespace = new Map<string, Array<PolicyRule>>()
  for (const rule of rulesOf(source)) {
    if (rule.namespace === undefined) continue
    byNamespace.set(rule.namespace, [...(byNamespace.get(rule.namespace) ?? []), rule])
  }
  return [...byNamespace].sort(([a], [b]) => a.localeCompare(b)).map(([namespace, rules]): Role => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: nameOf(source, options), namespace },
    rules: normalize(rules)
  }))
}

/**
 * ClusterRoles and Roles as a YAML stream, ready for `kubectl apply -f -`.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * process.stdout.write(Rbac.toYaml([Rbac.clusterRole(operator), ...Rbac.roles(operator)]))
 */
export const toYaml = (roles: ReadonlyArray<ClusterRole | Role>): string =>
  Yaml.stringify(roles)

/** rbac.authorization.k8s.io/v1 ClusterRoleBinding of one ServiceAccount. */
export interface ClusterRoleBinding {
  readonly apiVersion: "rbac.authorization.k8s.io/v1"
  readonly kind: "ClusterRoleBinding"
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> }
  readonly roleRef: { readonly apiGroup: "rbac.authorization.k8s.io"; readonly kind: "ClusterRole"; readonly name: string }
  readonly subjects: ReadonlyArray<{ readonly kind: "ServiceAccount"; readonly name: string; readonly namespace: string }>
}

/**
 * The binding of `role` to the ServiceAccount `name` in `namespace`, named `name`.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * const binding = Rbac.clusterRoleBinding(Rbac.clusterRole(operator), { name: "widgets", namespace: "widgets-system" })
 */
export const clusterRoleBinding = (
  role: ClusterRole,
  serviceAccount: { readonly name: string; readonly namespace: string }
): ClusterRoleBinding => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name: serviceAccount.name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
  subjects: [{ kind: "ServiceAccount", name: serviceAccount.name, namespace: serviceAccount.namespace }]
})

/** rbac.authorization.k8s.io/v1 RoleBinding of one ServiceAccount to a ClusterRole or a Role, in one namespace. */
export interface RoleBinding {
  readonly apiVersion: "rbac.authorization.k8s.io/v1"
  readonly kind: "RoleBinding"
  readonly metadata: { readonly name: string; readonly namespace: string; readonly labels?: Readonly<Record<string, string>> }
  readonly roleRef: { readonly apiGroup: "rbac.authorization.k8s.io"; readonly kind: "ClusterRole" | "Role"; readonly name: string }
  readonly subjects: ReadonlyArray<{ readonly kind: "ServiceAccount"; readonly name: string; readonly namespace: string }>
}

/**
 * The namespaces an operator works in, when it works in some only: every controller watches one
 * namespace or several, every kind they touch is namespaced, and every rule beyond the derived ones
 * names its namespace (one without may name what no namespace holds); with the leader and member
 * Leases' namespaces. Undefined when the operator needs the cluster.
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * Rbac.namespaces(operator) // ["team-a", "team-b", "widgets-system"], or undefined
 */
export const namespaces = (operator: Operator.Operator<unknown>): ReadonlyArray<string> | undefined => {
  const found = new Set<string>()
  for (const definition of operator.controllers) {
    const watched = definition.namespaces ?? (definition.namespace === undefined ? [] : [definition.namespace])
    const kinds = [definition.for, ...definition.owns, ...definition.watches]
    const clusterRules = definition.rules.some((rule) => rule.namespace === undefined)
    if (watched.length === 0 || clusterRules || kinds.some((kind) => !kind.namespaced)) return undefined
    for (const namespace of watched) found.add(namespace)
  }
  if (found.size === 0 || (operator.options.rbac ?? []).some((rule) => rule.namespace === undefined)) return undefined
  for (const namespace of [operator.options.leaderElection?.namespace, operator.options.sharding?.namespace]) {
    if (namespace !== undefined) found.add(namespace)
  }
  return [...found].sort()
}

/**
 * How `role` is bound to the operator's ServiceAccount: in each of its {@link namespaces} when it
 * works in some only (a RoleBinding to the ClusterRole grants it there and nowhere else), else
 * across the cluster; and each of its {@link roles} in its namespace (a RoleBinding named
 * `<name>-role`).
 *
 * @example
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * const bindings = Rbac.bindings(operator, Rbac.clusterRole(operator), { name: "widgets", namespace: "widgets-system" })
 */
export const bindings = (
  operator: Operator.Operator<unknown>,
  role: ClusterRole,
  serviceAccount: { readonly name: string; readonly namespace: string }
): ReadonlyArray<ClusterRoleBinding | RoleBinding> => {
  const subjects = [{ kind: "ServiceAccount", name: serviceAccount.name, namespace: serviceAccount.namespace }] as const
  const scoped = namespaces(operator)
  const toRoles = roles(operator, { name: role.metadata.name }).map((own): RoleBinding => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: `${serviceAccount.name}-role`, namespace: own.metadata.namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: own.metadata.name },
    subjects
  }))
  if (scoped === undefined) return [clusterRoleBinding(role, serviceAccount), ...toRoles]
  return [
    ...scoped.map((namespace): RoleBinding => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: serviceAccount.name, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
      subjects
    })),
    ...toRoles
  ]
}

/** Where {@link serviceAccount} puts the operator's identity. */
export interface ServiceAccountOptions {
  readonly name: string
  readonly namespace: string
  /** The token's lifetime; default one hour. */
  readonly tokenSeconds?: number | undefined
  /** Default "kubefx". */
  readonly fieldManager?: string | undefined
}

const rbacPath = "/apis/rbac.authorization.k8s.io/v1"

const applyRbacObject = (kube: Kube.Client, plural: string, body: { readonly metadata: { readonly name: string } } & Record<string, unknown>, fieldManager: string) =>
  kube.request({
    method: "PATCH",
    path: `${rbacPath}/${plural}/${body.metadata.name}`,
    query: { fieldManager, force: "true" },
    contentType: "application/apply-patch+yaml",
    body
  })

interface RbacObject {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly managedFields?: ReadonlyArray<{ readonly manager?: string; readonly operation?: string }>
  }
  readonly subjects?: ReadonlyArray<{ readonly kind?: string; readonly name?: string; readonly namespace?: string }>
}

// An object this function applied for this ServiceAccount: its field manager applied it and, for a
// binding, it binds the ServiceAccount. Anything else of the same name (a user's own) is not ours to delete.
const appliedFor = (object: RbacObject, serviceAccount: { readonly name: string; readonly namespace: string }, fieldManager: string) =>
  (object.metadata.managedFields ?? []).some((entry) => entry.manager === fieldManager && entry.operation === "Apply") &&
  (object.subjects === undefined || object.subjects.some((subject) =>
    subject.kind === "ServiceAccount" && subject.name === serviceAccount.name && subject.namespace === serviceAccount.namespace
  ))

// What an earlier call applied that the operator no longer needs: the ClusterRoleBinding of an
// operator that now works in some namespaces, the RoleBindings of namespaces it left, the Roles (and
// their bindings) of namespaces its rules no longer name. Kept, they would grant in development
// what the cluster it is deployed to will not.
const withdrawStale = (
  kube: Kube.Client,
  kept: { readonly bindings: ReadonlyArray<ClusterRoleBinding | RoleBinding>; readonly roles: ReadonlyArray<Role> },
  serviceAccount: { readonly name: string; readonly namespace: string },
  fieldManager: string
) =>
  Effect.gen(function*() {
    const { name } = serviceAccount
    const gone = <A>(effect: Effect.Effect<A, KubeError.KubeError>) => Effect.catchTag(effect, "NotFound", () => Effect.void)
    if (!kept.bindings.some((binding) => binding.kind === "ClusterRoleBinding")) {
      const path = `${rbacPath}/clusterrolebindings/${name}`
      const existing = yield* kube.request({ method: "GET", path }).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
      if (existing !== undefined && appliedFor(existing as RbacObject, serviceAccount, fieldManager)) {
        yield* kube.request({ method: "DELETE", path }).pipe(gone)
      }
    }
    const keptIn = (objects: ReadonlyArray<{ readonly metadata: { readonly name: string; readonly namespace?: string } }>, named: string) =>
      new Set(objects.flatMap((object) => object.metadata.name === named && object.metadata.namespace !== undefined ? [object.metadata.namespace] : []))
    const namespaced = kept.bindings.filter((binding): binding is RoleBinding => binding.kind === "RoleBinding")
    for (const [plural, named, keep] of [
      ["rolebindings", name, keptIn(namespaced, name)],
      ["rolebindings", `${name}-role`, keptIn(namespaced, `${name}-role`)],
      ["roles", name, keptIn(kept.roles, name)]
    ] as const) {
      const found = (yield* kube.request({ method: "GET", path: `${rbacPath}/${plural}`, query: { fieldSelector: `metadata.name=${named}` } })) as {
        readonly items: ReadonlyArray<RbacObject>
      }
      for (const object of found.items) {
        const namespace = object.metadata.namespace
        if (namespace === undefined || keep.has(namespace) || !appliedFor(object, serviceAccount, fieldManager)) continue
        yield* kube.request({ method: "DELETE", path: `${rbacPath}/namespaces/${namespace}/${plural}/${named}` }).pipe(gone)
      }
    }
  })

/**
 * Gives an operator the identity it is deployed with, using the current client's (an
 * administrator's) rights: the ServiceAccount `name` in `namespace` (both created if missing), the
 * operator's {@link clusterRole} named `name`, its {@link roles} and its {@link bindings} (in each
 * namespace it works in, created if missing, or across the cluster); what an earlier call applied
 * for the same ServiceAccount that these replace (a binding across the cluster before, or in a
 * namespace it left; a Role its rules no longer name) is deleted, so it is granted what it would be
 * in a fresh cluster and no more. Answers a token of that
 * ServiceAccount and the role. A client with that token may do what the operator's controllers
 * declare and nothing else, as in a cluster: `kubefx dev` and the test kit run operators so.
 *
 * @example
 * import { Effect } from "effect"
 * import { Rbac } from "@kubefx/kube"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * const identity = Rbac.serviceAccount(operator, { name: "widgets", namespace: "widgets-system" }) // Effect<{ token, role }, ..., Kube>
 */
export const serviceAccount = (
  source: Operator.Operator<unknown>,
  options: ServiceAccountOptions
): Effect.Effect<{ readonly token: string; readonly role: ClusterRole }, KubeError.KubeError | Resource.DecodeError, Kube.Kube> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const fieldManager = options.fieldManager ?? "kubefx"
    const { name, namespace } = options
    yield* kube.apply(Builtins.Namespace, { metadata: { name: namespace } }, { fieldManager, force: true })
    yield* kube.apply(Builtins.ServiceAccount, { metadata: { name, namespace } }, { fieldManager, force: true })
    const role = clusterRole(source, { name })
    yield* applyRbacObject(kube, "clusterroles", { ...role }, fieldManager)
    const ensureNamespace = (ns: string) => kube.apply(Builtins.Namespace, { metadata: { name: ns } }, { fieldManager, force: true })
    const wantedRoles = roles(source, { name })
    for (const own of wantedRoles) {
      yield* ensureNamespace(own.metadata.namespace)
      yield* applyRbacObject(kube, `namespaces/${own.metadata.namespace}/roles`, { ...own }, fieldManager)
    }
    const wanted = bindings(source, role, { name, namespace })
    for (const binding of wanted) {
      if (binding.kind === "ClusterRoleBinding") {
        yield* applyRbacObject(kube, "clusterrolebindings", { ...binding }, fieldManager)
      } else {
        yield* ensureNamespace(binding.metadata.namespace)
        yield* applyRbacObject(kube, `namespaces/${binding.metadata.namespace}/rolebindings`, { ...binding }, fieldManager)
      }
    }
    yield* withdrawStale(kube, { bindings: wanted, roles: wantedRoles }, { name, namespace }, fieldManager)
    const issued = (yield* kube.request({
      method: "POST",
      path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: options.tokenSeconds === undefined ? {} : { expirationSeconds: options.tokenSeconds }
      }
    })) as { readonly status: { readonly token: string } }
    return { token: issued.status.token, role }
  })
