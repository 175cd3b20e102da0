/**
 * ValidatingAdmissionPolicies and their bindings enforced as kube-apiserver 1.32 enforces them,
 * through the real kubectl and raw requests.
 */
import { describe, expect, it } from "vitest"
import { createNamespace } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

const { file, kubectl, ok, server } = Kubectl.withServer({ namespace: null })

const policies = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
const bindings = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"

const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
  }
})

const deploymentRules = (operations: ReadonlyArray<string> = ["CREATE", "UPDATE"], resources: ReadonlyArray<string> = ["deployments"]) => ({
  resourceRules: [{ apiGroups: ["apps"], apiVersions: ["v1"], operations, resources }]
})

const install = async (name: string, policySpec: Record<string, unknown>, bindingSpec: Record<string, unknown>) => {
  const policy = await server().request("POST", policies, { body: { metadata: { name }, spec: policySpec } })
  expect(policy.status, policy.text).toBe(201)
  const binding = await server().request("POST", bindings, { body: { metadata: { name: `${name}-binding` }, spec: { policyName: name, ...bindingSpec } } })
  expect(binding.status, binding.text).toBe(201)
}

const post = (namespace: string, body: unknown) => server().request("POST", `/apis/apps/v1/namespaces/${namespace}/deployments`, { body })

describe("ValidatingAdmissionPolicy", () => {
  it("denies what a bound validation fails, in the namespaces the binding selects, as kubectl shows it", async () => {
    await install("replicas.example.com", {
      matchConstraints: deploymentRules(),
      validations: [
        { expression: "object.spec.replicas <= 5" },
        { expression: "object.metadata.name.startsWith('ok-')", message: "names start with ok-", reason: "Forbidden" }
      ]
    }, { validationActions: ["Deny"], matchResources: { namespaceSelector: { matchLabels: { environment: "test" } } } })
    await createNamespace(server(), "tested")
    await ok("label", "namespace", "tested", "environment=test")
    await createNamespace(server(), "free")

    const path = file("big.json", { ...deployment("big", 7), metadata: { name: "big", namespace: "tested" } })
    const refused = await kubectl("apply", "-f", path)
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toBe(
      `The deployments "big" is invalid: : ValidatingAdmissionPolicy 'replicas.example.com' with binding 'replicas.example.com-binding' denied request: failed expression: object.spec.replicas <= 5`
    )
    // The first failed validation decides; its reason is the status.
    const named = await post("tested", deployment("small", 1))
    expect(named.status).toBe(403)
    expect(named.json).toMatchObject({
      reason: "Forbidden",
      message: `deployments.apps "small" is forbidden: ValidatingAdmissionPolicy 'replicas.example.com' with binding 'replicas.example.com-binding' denied request: names start with ok-`
    })
    expect((await post("tested", deployment("ok-small", 1))).status).toBe(201)
    // Outside the binding's namespaces nothing is checked.
    expect((await post("free", deployment("big", 7))).status).toBe(201)
  })

  it("warns under Warn, reads its params object, and honours matchConditions, variables and messageExpression", async () => {
    await createNamespace(server(), "limited")
    await install("limits.example.com", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      matchConstraints: deploymentRules(),
      matchConditions: [{ name: "not-exempt", expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)" }],
      variables: [{ name: "max", expression: "int(params.data.max)" }],
      validations: [{
        expression: "object.spec.replicas <= variables.max",
        messageExpression: "'at most ' + string(variables.max) + ' replicas, not ' + string(object.spec.replicas)"
      }]
    }, {
      validationActions: ["Warn"],
      paramRef: { name: "limits", parameterNotFoundAction: "Deny" },
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "limited" } } }
    })
    // No parameter object yet: the binding denies, even when it only warns about failed validations.
    const missing = await post("limited", deployment("a", 1))
    expect(missing.status).toBe(422)
    expect(missing.json.message).toBe(
      `deployments.apps "a" is forbidden: ValidatingAdmissionPolicy 'limits.example.com' with binding 'limits.example.com-binding' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`
    )
    const limits = await server().request("POST", "/api/v1/namespaces/limited/configmaps", { body: { metadata: { name: "limits" }, data: { max: "3" } } })
    expect(limits.status).toBe(201)
    const warned = await post("limited", deployment("b", 4))
    expect(warned.status).toBe(201)
    expect(warned.headers.get("warning")).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy 'limits.example.com' with binding 'limits.example.com-binding': at most 3 replicas, not 4"`
    )
    expect((await post("limited", deployment("c", 2))).headers.get("warning")).toBeNull()
    expect((await post("limited", deployment("d", 9, { exempt: "yes" }))).headers.get("warning")).toBeNull()
  })

  it("runs once per parameter object a selector finds, and sees the namespace", async () => {
    await createNamespace(server(), "selected")
    await ok("label", "namespace", "selected", "tier=gold")
    await install("floors.example.com", {
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      matchConstraints: deploymentRules(),
      validations: [{
        expression: "object.spec.replicas >= int(params.data.min)",
        messageExpression: "params.metadata.name + ' wants ' + params.data.min + ' replicas in a ' + namespaceObject.metadata.labels.tier + ' namespace'"
      }]
    }, {
      validationActions: ["Warn"],
      paramRef: { selector: { matchLabels: { floor: "yes" } } },
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "selected" } } }
    })
    for (const [name, min] of [["two", "2"], ["three", "3"]]) {
      await server().request("POST", "/api/v1/namespaces/selected/configmaps", { body: { metadata: { name, labels: { floor: "yes" } }, data: { min } } })
    }
    await server().request("POST", "/api/v1/namespaces/selected/configmaps", { body: { metadata: { name: "ignored" }, data: { min: "9" } } })
    const created = await post("selected", deployment("one", 1))
    expect(created.status).toBe(201)
    expect(created.headers.get("warning")).toBe([
      `299 - "Validation failed for ValidatingAdmissionPolicy 'floors.example.com' with binding 'floors.example.com-binding': three wants 3 replicas in a gold namespace"`,
      `299 - "Validation failed for ValidatingAdmissionPolicy 'floors.example.com' with binding 'floors.example.com-binding': two wants 2 replicas in a gold namespace"`
    ].join(", "))
  })

  it("fails closed on an expression that errors unless failurePolicy is Ignore", async () => {
    await createNamespace(server(), "strict")
    await createNamespace(server(), "lenient")
    const checksTier = { validations: [{ expression: "object.metadata.labels.tier == 'web'" }] }
    await install("tier-strict.example.com", { matchConstraints: deploymentRules(), ...checksTier }, {
      validationActions: ["Deny"],
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "strict" } } }
    })
    await install("tier-lenient.example.com", { failurePolicy: "Ignore", matchConstraints: deploymentRules(), ...checksTier }, {
      validationActions: ["Deny"],
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "lenient" } } }
    })
    const strict = await post("strict", deployment("unlabelled", 1))
    expect(strict.status).toBe(422)
    expect(strict.json.message).toMatch(
      /denied request: expression 'object\.metadata\.labels\.tier == 'web'' resulted in error: no such key: labels$/
    )
    expect((await post("lenient", deployment("unlabelled", 1))).status).toBe(201)
  })

  it("sees a scale write as the scale subresource, and deletions with the old object", async () => {
    await createNamespace(server(), "scaled")
    const inScaled = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "scaled" } } }
    await install("scale.example.com", {
      matchConstraints: deploymentRules(["UPDATE"], ["deployments/scale"]),
      validations: [{ expression: "object.spec.replicas <= 3", message: "scale to at most 3" }]
    }, { validationActions: ["Deny"], matchResources: inScaled })
    await install("keep.example.com", {
      matchConstraints: deploymentRules(["DELETE"]),
      validations: [{ expression: "!('keep' in oldObject.metadata.labels)", message: "kept" }]
    }, { validationActions: ["Deny"], matchResources: inScaled })
    expect((await post("scaled", deployment("web", 1, { keep: "yes" }))).status).toBe(201)
    const scaled = await kubectl("-n", "scaled", "scale", "deployment", "web", "--replicas=5")
    expect(scaled.code).toBe(1)
    expect(scaled.stderr).toContain("denied request: scale to at most 3")
    // A write of the deployment itself is no scale write: the rule on deployments/scale does not see it.
    const patched = await kubectl("-n", "scaled", "patch", "deployment", "web", "--type=merge", "-p", '{"spec":{"replicas":5}}')
    expect(patched.code, patched.stderr).toBe(0)
    const deleted = await kubectl("-n", "scaled", "delete", "deployment", "web")
    expect(deleted.code).toBe(1)
    expect(deleted.stderr).toContain("ValidatingAdmissionPolicy 'keep.example.com' with binding 'keep.example.com-binding' denied request: kept")
  })
})
