/**
 * PodSecurity admission as the real kubectl meets it: namespaces labelled with a level refuse and
 * warn as kube-apiserver 1.32 does.
 */
import { describe, expect, it } from "vitest"
import * as Kubectl from "./kubectl.ts"

const { file, kubectl, ok } = Kubectl.withServer({ namespace: null })

const restrictedDetail = (container: string) =>
  `allowPrivilegeEscalation != false (container "${container}" must set securityContext.allowPrivilegeEscalation=false), ` +
  `unrestricted capabilities (container "${container}" must set securityContext.capabilities.drop=["ALL"]), ` +
  `runAsNonRoot != true (pod or container "${container}" must set securityContext.runAsNonRoot=true), ` +
  `seccompProfile (pod or container "${container}" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

const compliantPod = (name: string, image = "app:1") => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    containers: [{ name: "app", image, securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } }]
  }
})

describe("PodSecurity admission through kubectl", () => {
  it("a restricted namespace refuses a pod that is not, warns about a workload's template, and takes a pod that is", async () => {
    await ok("create", "namespace", "locked")
    await ok("label", "namespace", "locked", "pod-security.kubernetes.io/enforce=restricted")
    const refused = await kubectl("-n", "locked", "run", "web", "--image=nginx")
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toBe(
      `Error from server (Forbidden): pods "web" is forbidden: violates PodSecurity "restricted:latest": ${restrictedDetail("web")}`
    )
    expect((await kubectl("-n", "locked", "get", "pod", "web")).code).toBe(1)
    // A server-side dry run is refused alike.
    const dryRun = await kubectl("-n", "locked", "run", "web", "--image=nginx", "--dry-run=server")
    expect(dryRun.stderr).toContain('pods "web" is forbidden: violates PodSecurity "restricted:latest"')

    const deployment = await kubectl("-n", "locked", "create", "deployment", "web", "--image=nginx")
    expect(deployment.code, deployment.stderr).toBe(0)
    expect(deployment.stderr.trim()).toBe(`Warning: would violate PodSecurity "restricted:latest": ${restrictedDetail("nginx")}`)
    // Scaling does not change what the pods run: no warning, and the write is the scale subresource's.
    const scaled = await kubectl("-n", "locked", "scale", "deployment", "web", "--replicas=3")
    expect(scaled.stderr).toBe("")
    const managed = JSON.parse(await ok("-n", "locked", "get", "deployment", "web", "-o", "json", "--show-managed-fields"))
    expect(managed.metadata.managedFields).toContainEqual(expect.objectContaining({
      manager: "kubectl",
      operation: "Update",
      subresource: "scale",
      fieldsV1: { "f:spec": { "f:replicas": {} } }
    }))

    const created = await kubectl("-n", "locked", "apply", "-f", file("compliant.json", compliantPod("good")))
    expect(created.code, created.stderr).toBe(0)
    expect(created.stderr).toBe("")
  })

  it("warn alone admits the pod and says what it would violate", async () => {
    await ok("create", "namespace", "noisy")
    await ok("label", "namespace", "noisy", "pod-security.kubernetes.io/warn=baseline")
    const run = await kubectl("-n", "noisy", "run", "root", "--image=nginx", "--privileged")
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr.trim()).toBe(
      `Warning: would violate PodSecurity "baseline:latest": privileged (container "root" must not set securityContext.privileged=true)`
    )
  })

  it("a stricter enforce level warns about the pods already there; later only image and container changes are checked", async () => {
    await ok("create", "namespace", "legacy")
    for (const name of ["p1", "p2", "p3"]) await ok("-n", "legacy", "run", name, "--image=nginx", "--privileged")
    await ok("-n", "legacy", "run", "host", "--image=nginx", "--overrides", JSON.stringify({ spec: { hostPID: true } }))
    await ok("-n", "legacy", "run", "plain", "--image=nginx")
    const labelled = await kubectl("label", "namespace", "legacy", "pod-security.kubernetes.io/enforce=baseline")
    expect(labelled.code, labelled.stderr).toBe(0)
    expect(labelled.stderr.trim().split("\n")).toEqual([
      `Warning: existing pods in namespace "legacy" violate the new PodSecurity enforce level "baseline:latest"`,
      "Warning: host: host namespaces",
      "Warning: p1 (and 2 other pods): privileged"
    ])
    // Relaxing it, or labelling anything else, checks nothing.
    expect((await kubectl("label", "namespace", "legacy", "team=a")).stderr).toBe("")
    // A label on a violating pod is no change to what it runs; a new image is.
    expect((await kubectl("-n", "legacy", "label", "pod", "p1", "tier=web")).code).toBe(0)
    const image = await kubectl("-n", "legacy", "set", "image", "pod/p1", "p1=nginx:2")
    expect(image.code).toBe(1)
    expect(image.stderr).toContain(
      `pods "p1" is forbidden: violates PodSecurity "baseline:latest": privileged (container "p1" must not set securityContext.privileged=true)`
    )
  })

  it("refuses a namespace label that is not a level or version, naming it", async () => {
    const created = await kubectl("apply", "-f", file("ns.json", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "typo", labels: { "pod-security.kubernetes.io/enforce": "restriced", "pod-security.kubernetes.io/warn-version": "1.32" } }
    }))
    expect(created.code).toBe(1)
    expect(created.stderr.trim()).toBe(
      `The Namespace "typo" is invalid: \n` +
        `* metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "restriced": must be one of privileged, baseline, restricted\n` +
        `* metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.32": must be "latest" or "v1.x"`
    )
    await ok("create", "namespace", "pinned")
    const versioned = await kubectl("label", "namespace", "pinned", "pod-security.kubernetes.io/enforce-version=latest-ish")
    expect(versioned.stderr.trim()).toBe(
      `The Namespace "pinned" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "latest-ish": must be "latest" or "v1.x"`
    )
  })
})
