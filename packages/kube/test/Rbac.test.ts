/**
 * The ClusterRole derived from an operator's declarations: verbs per resource from for, owns,
 * watches, cleanup (finalizers), status, the leader Lease and Events, merged and sorted.
 */
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Dependent, Operator, Rbac, Resource, Workflow } from "@kubefx/kube"
import { Yaml } from "effect/encoding"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"

const Widget = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  spec: Schema.Struct({ message: Schema.String }),
  status: Schema.Struct({ conditions: Schema.optionalKey(Conditions.Conditions) })
})

const Gizmo = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Gizmo",
  plural: "gizmos",
  spec: Schema.Struct({ size: Schema.Int }),
})

const done = () => Effect.succeed(Outcome.done)

const widgets = Controller.define({
  name: "widgets",
  for: Widget,
  owns: [Builtins.ConfigMap, Builtins.Deployment],
  watches: [Controller.watch(Builtins.Secret, () => [])],
  cleanup: () => Effect.void,
  reconcile: done
})
const gizmos = Controller.define({
  name: "gizmos",
  for: Gizmo,
  dependsOn: [widgets],
  reconcile: done,
  rbac: [{ apiGroups: [""], resources: ["pods"], verbs: ["list", "get"] }]
})

describe("Rbac", () => {
  it("derives least-privilege rules from each controller's declarations", () => {
    expect(Rbac.normalize(Rbac.controllerRules(widgets))).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "create", "patch"] },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch", "create", "patch"] },
      // cleanup: the finalizer is added and removed with patches
      { apiGroups: ["demo.kubefx.dev"], resources: ["widgets"], verbs: ["get", "list", "watch", "patch"] },
      // owned objects' blockOwnerDeletion references
      { apiGroups: ["demo.kubefx.dev"], resources: ["widgets/finalizers"], verbs: ["update"] },
      { apiGroups: ["demo.kubefx.dev"], resources: ["widgets/status"], verbs: ["patch"] }
    ])
    // No status, no cleanup, nothing owned: read only, plus Events and the declared extra rule.
    expect(Rbac.normalize(Rbac.controllerRules(gizmos))).toEqual([
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
      { apiGroups: ["demo.kubefx.dev"], resources: ["gizmos"], verbs: ["get", "list", "watch"] }
    ])
  })

  it("an operator's ClusterRole adds its dependencies' rules and the leader Lease, by name where Kubernetes allows", () => {
    const operator = Operator.make({
      name: "demo-operator",
      controllers: [gizmos],
      leaderElection: { namespace: "demo-system" },
      rbac: [{ apiGroups: ["demo.kubefx.dev"], resources: ["widgets"], verbs: ["delete"] }]
    })
    const role = Rbac.clusterRole(operator)
    expect(role.metadata.name).toBe("demo-operator")
    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "create", "patch"] },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch", "create", "patch"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: ["demo-operator-leader"], verbs: ["get", "update"] },
      { apiGroups: ["demo.kubefx.dev"], resources: ["gizmos"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["demo.kubefx.dev"], resources: ["widgets"], verbs: ["get", "list", "watch", "patch", "delete"] },
      { apiGroups: ["demo.kubefx.dev"], resources: ["widgets/finalizers"], verbs: ["update"] },
      { apiGroups: ["demo.kubefx.dev"], resources: ["widgets/status"], verbs: ["patch"] }
    ])
  })

  it("a workflow's controller may apply and delete its dependents, with the extra rules its rbac option gives", () => {
    const config = Dependent.make({
      name: "config",
      resource: Builtins.ConfigMap,
      desired: (gizmo: typeof Gizmo.schema.Type) => ({ metadata: { name: `${gizmo.metadata.name}-config` }, data: {} })
    })
    const defined = Controller.define({
      name: "gizmo-workflow",
      for: Gizmo,
      ...Workflow.controller(Workflow.sequence(config), { rbac: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }] })
    })
    const rules = Rbac.controllerRules(defined)
    expect(rules).toContainEqual({ apiGroups: [""], resources: ["configmaps"], verbs: ["create", "patch", "delete"] })
    expect(rules).toContainEqual({ apiGroups: [""], resources: ["secrets"], verbs: ["get"] })
  })

  it("normalize unites verbs, shares rules between resources with the same verbs, and keeps * alone", () => {
    expect(Rbac.normalize([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["watch", "get"] },
      { apiGroups: [""], resources: ["secrets", "configmaps"], verbs: ["list"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch"] },
      { apiGroups: ["x.io"], resources: ["things"], verbs: ["get", "*"] }
    ])).toEqual([
      { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["x.io"], resources: ["things"], verbs: ["*"] }
    ])
  })

  it("renders a YAML stream that reads back as the same roles", () => {
    const roles = [Rbac.clusterRole([widgets]), Rbac.clusterRole([gizmos], { name: "gizmos" })]
    const yaml = Rbac.toYaml(roles)
    expect(yaml.split(/^---$/m).map((document) => Yaml.parse(document))).toEqual(JSON.parse(JSON.stringify(roles)))
    expect(yaml).toContain("kind: ClusterRole")
  })
})

describe("where the ClusterRole is bound", () => {
  const inNamespaces = (namespaces: ReadonlyArray<string>, more: Partial<Parameters<typeof Controller.define>[0]> = {}) =>
    Controller.define({ name: `widgets-${namespaces.join("-")}`, for: Widget, namespaces, owns: [Builtins.ConfigMap], reconcile: done, ...more })
  const account = { name: "widgets", namespace: "widgets-system" }

  it("in each namespace an operator works in, with its Lease's, when every controller watches some and touches namespaced kinds only", () => {
    const operator = Operator.make({
      name: "widgets",
      leaderElection: { namespace: "widgets-system" },
      controllers: [inNamespaces(["team-b", "team-a"]), Controller.define({ name: "gizmos", for: Gizmo, namespace: "team-c", reconcile: done })]
    })
    expect(Rbac.namespaces(operator)).toEqual(["team-a", "team-b", "team-c", "widgets-system"])
    const bindings = Rbac.bindings(operator, Rbac.clusterRole(operator), account)
    expect(bindings.map((b) => [b.kind, "namespace" in b.metadata ? b.metadata.namespace : undefined])).toEqual([
      ["RoleBinding", "team-a"],
      ["RoleBinding", "team-b"],
      ["RoleBinding", "team-c"],
      ["RoleBinding", "widgets-system"]
    ])
    expect(bindings[0]).toMatchObject({
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "widgets" },
      subjects: [{ kind: "ServiceAccount", name: "widgets", namespace: "widgets-system" }]
    })
  })

  it("across the cluster when a controller watches every namespace, touches a cluster-scoped kind, or declares rules of its own", () => {
    const cases = [
      [inNamespaces(["team-a"]), widgets],
      [inNamespaces(["team-a"], { owns: [Builtins.Namespace] })],
      [inNamespaces(["team-a"], { rbac: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }] })],
      // One rule naming no namespace is enough, beside rules that do.
      [inNamespaces(["team-a"], { rbac: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"], namespace: "vault" }, { apiGroups: [""], resources: ["nodes"], verbs: ["get"] }] })]
    ]
    for (const controllers of cases) {
      const operator = Operator.make({ name: "widgets", controllers })
      expect(Rbac.namespaces(operator)).toBeUndefined()
      expect(Rbac.bindings(operator, Rbac.clusterRole(operator), account).filter((b) => b.roleRef.kind === "ClusterRole").map((b) => b.kind))
        .toEqual(["ClusterRoleBinding"])
    }
    const withRules = Operator.make({ name: "widgets", controllers: [inNamespaces(["team-a"])], rbac: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }] })
    expect(Rbac.namespaces(withRules)).toBeUndefined()
  })

  it("rules naming a namespace are granted there by a Role, and keep an operator of some namespaces bound there only", () => {
    const secrets = { apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch"], namespace: "vault" }
    const operator = Operator.make({
      name: "widgets",
      controllers: [inNamespaces(["team-a"], { rbac: [secrets, { ...secrets, verbs: ["list"] }] })],
      rbac: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get"], namespace: "kube-system" }]
    })
    const role = Rbac.clusterRole(operator)
    expect(role.rules.some((rule) => rule.resources.includes("secrets") || rule.resources.includes("leases"))).toBe(false)
    expect(role.rules.every((rule) => !("namespace" in rule))).toBe(true)
    expect(Rbac.roles(operator)).toEqual([
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "widgets", namespace: "kube-system" },
        rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get"] }]
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "widgets", namespace: "vault" },
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] }]
      }
    ])
    // The rules' namespaces are the Roles', not ones the operator works in.
    expect(Rbac.namespaces(operator)).toEqual(["team-a"])
    const bindings = Rbac.bindings(operator, role, account) as ReadonlyArray<Rbac.RoleBinding>
    expect(bindings.map((b) => [b.metadata.name, b.metadata.namespace, b.roleRef.kind])).toEqual([
      ["widgets", "team-a", "ClusterRole"],
      ["widgets-role", "kube-system", "Role"],
      ["widgets-role", "vault", "Role"]
    ])
    // Across the cluster, the Roles are bound beside the ClusterRole.
    const everywhere = Operator.make({ name: "widgets", controllers: [inNamespaces(["team-a"], { rbac: [secrets] }), widgets] })
    expect(Rbac.bindings(everywhere, Rbac.clusterRole(everywhere), account).map((b) => [b.kind, b.roleRef.kind])).toEqual([
      ["ClusterRoleBinding", "ClusterRole"],
      ["RoleBinding", "Role"]
    ])
    expect(Rbac.toYaml([role, ...Rbac.roles(operator)])).toContain("kind: Role\n")
  })
})
