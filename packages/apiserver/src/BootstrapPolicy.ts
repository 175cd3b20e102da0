/**
 * The RBAC objects kube-apiserver stores at its start (its bootstrap policy), those a cluster's
 * users and charts rely on: `cluster-admin` for `system:masters`; discovery, health, version and
 * self-reviews for every authenticated user; the user-facing `admin`, `edit` and `view` roles,
 * aggregated from the `system:aggregate-to-*` roles and from any ClusterRole a chart labels
 * `rbac.authorization.k8s.io/aggregate-to-{admin,edit,view}: "true"`; and `system:auth-delegator`
 * for servers that delegate authentication and authorization to the API server, with
 * `extension-apiserver-authentication-reader` in `kube-system`, which such servers' charts bind. The
 * roles of kube-apiserver's own components (nodes, the scheduler, controllers) and their bindings
 * are not stored: nothing here runs as them.
 */
import type * as Authorization from "./Authorization.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** A stored object of the bootstrap policy, with the storage it goes in. */
export interface Stored {
  readonly storage: string
  readonly object: KubeObject.KubeObject
}

const apiVersion = "rbac.authorization.k8s.io/v1"
const clusterRoles = "clusterroles.rbac.authorization.k8s.io"
const clusterRoleBindings = "clusterrolebindings.rbac.authorization.k8s.io"

/** Every verb on everything: cluster-admin's rules, and what `system:masters` holds. */
export const everything: ReadonlyArray<Authorization.PolicyRule> = [
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] }
]

const read = ["get", "list", "watch"]
const write = ["create", "delete", "deletecollection", "patch", "update"]

const rule = (verbs: ReadonlyArray<string>, group: string, resources: ReadonlyArray<string>): Authorization.PolicyRule => ({
  verbs,
  apiGroups: [group],
  resources
})

const aggregateTo = (role: "admin" | "edit" | "view") => `rbac.authorization.k8s.io/aggregate-to-${role}`

const meta = (name: string, labels: Readonly<Record<string, string>> = {}): KubeObject.KubeObject => ({
  name,
  uid: KubeObject.uid(),
  creationTimestamp: KubeObject.timestamp(),
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults", ...labels },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" }
})

const clusterRole = (name: string, rules: ReadonlyArray<Authorization.PolicyRule>, labels?: Readonly<Record<string, string>>): Stored => ({
  storage: clusterRoles,
  object: { apiVersion, kind: "ClusterRole", metadata: meta(name, labels), rules }
})

// A role whose rules the aggregation controller writes from the roles labelled for it.
const aggregated = (name: "admin" | "edit" | "view", labels?: Readonly<Record<string, string>>): Stored => ({
  storage: clusterRoles,
  object: {
    apiVersion,
    kind: "ClusterRole",
    metadata: meta(name, labels),
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateTo(name)]: "true" } }] },
    rules: []
  }
})

const boundToGroups = (name: string, groups: ReadonlyArray<string>): Stored => ({
  storage: clusterRoleBindings,
  object: {
    apiVersion,
    kind: "ClusterRoleBinding",
    metadata: meta(name),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects: groups.map((group) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }))
  }
})

const healthAndVersion = ["/healthz", "/livez", "/readyz", "/version", "/version/"]

// Reading what a namespace runs, without its Secrets or anything that would escalate.
const viewRules: ReadonlyArray<Authorization.PolicyRule> = [
  rule(read, "", [
    "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods", "replicationcontrollers",
    "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"
  ]),
  rule(read, "", [
    "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status",
    "resourcequotas", "resourcequotas/status"
  ]),
  rule(read, "", ["namespaces"]),
  rule(read, "discovery.k8s.io", ["endpointslices"]),
  rule(read, "apps", [
    "controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
    "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"
  ]),
  rule(read, "autoscaling", ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
  rule(read, "batch", ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
  rule(read, "extensions", [
    "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "ingresses",
    "ingresses/status", "networkpolicies", "replicasets", "replicasets/scale", "replicasets/status",
    "replicationcontrollers/scale"
  ]),
  rule(read, "policy", ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
  rule(read, "networking.k8s.io", ["ingresses", "ingresses/status", "networkpolicies"])
]

// Changing what a namespace runs, its Secrets included; not its roles and bindings.
const editRules: ReadonlyArray<Authorization.PolicyRule> = [
  rule(read, "", ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"]),
  rule(["impersonate"], "", ["serviceaccounts"]),
  rule(write, "", ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
  rule(["create"], "", ["pods/eviction"]),
  rule(write, "", [
    "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale", "secrets",
    "serviceaccounts", "services", "services/proxy"
  ]),
  rule(["create"], "", ["serviceaccounts/token"]),
  rule(write, "apps", [
    "daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets", "replicasets/scale",
    "statefulsets", "statefulsets/scale"
  ]),
  rule(write, "autoscaling", ["horizontalpodautoscalers"]),
  rule(write, "batch", ["cronjobs", "jobs"]),
  rule(write, "extensions", [
    "daemonsets", "deployments", "deployments/rollback", "deployments/scale", "ingresses", "networkpolicies",
    "replicasets", "replicasets/scale", "replicationcontrollers/scale"
  ]),
  rule(write, "policy", ["poddisruptionbudgets"]),
  rule(write, "networking.k8s.io", ["ingresses", "networkpolicies"]),
  rule([...read, ...write], "coordination.k8s.io", ["leases"])
]

// A namespace's roles and bindings, and reviews of others' access in it.
const adminRules: ReadonlyArray<Authorization.PolicyRule> = [
  rule(["create"], "authorization.k8s.io", ["localsubjectaccessreviews"]),
  rule([...read, ...write], "rbac.authorization.k8s.io", ["rolebindings", "roles"])
]

/**
 * kube-apiserver's bootstrap ClusterRoles and ClusterRoleBindings that a cluster's users rely on,
 * as the server stores them at its start when they are missing.
 *
 * @example
 * import * as BootstrapPolicy from "./BootstrapPolicy.ts"
 * BootstrapPolicy.objects().map((o) => o.object.metadata.name)
 * // ["cluster-admin", "cluster-admin", "system:discovery", "system:discovery", ...]
 */
export const objects = (): ReadonlyArray<Stored> => [
  clusterRole("cluster-admin", everything),
  boundToGroups("cluster-admin", ["system:masters"]),
  clusterRole("system:discovery", [{
    verbs: ["get"],
    nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", ...healthAndVersion]
  }]),
  boundToGroups("system:discovery", ["system:authenticated"]),
  clusterRole("system:public-info-viewer", [{ verbs: ["get"], nonResourceURLs: healthAndVersion }]),
  boundToGroups("system:public-info-viewer", ["system:authenticated", "system:unauthenticated"]),
  clusterRole("system:basic-user", [
    rule(["create"], "authorization.k8s.io", ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
    rule(["create"], "authentication.k8s.io", ["selfsubjectreviews"])
  ]),
  boundToGroups("system:basic-user", ["system:authenticated"]),
  aggregated("admin"),
  aggregated("edit", { [aggregateTo("admin")]: "true" }),
  aggregated("view", { [aggregateTo("edit")]: "true" }),
  clusterRole("system:aggregate-to-admin", adminRules, { [aggregateTo("admin")]: "true" }),
  clusterRole("system:aggregate-to-edit", editRules, { [aggregateTo("edit")]: "true" }),
  clusterRole("system:aggregate-to-view", viewRules, { [aggregateTo("view")]: "true" }),
  clusterRole("system:auth-delegator", [
    rule(["create"], "authentication.k8s.io", ["tokenreviews"]),
    rule(["create"], "authorization.k8s.io", ["subjectaccessreviews"])
  ]),
  {
    storage: "roles.rbac.authorization.k8s.io",
    object: {
      apiVersion,
      kind: "Role",
      metadata: { ...meta("extension-apiserver-authentication-reader"), namespace: "kube-system" },
      rules: [{ ...rule(read, "", ["configmaps"]), resourceNames: ["extension-apiserver-authentication"] }]
    }
  }
]
