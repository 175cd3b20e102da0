/**
 * Custom resources and CRDs through the real kubectl as users drive them: re-applying and diffing a
 * changed custom resource (merge patches, since the served OpenAPI offers no strategic merge patch
 * for custom kinds), deleting a CRD (its instances go first, whatever the last apply of the CRD
 * omitted), and orphaning dependents; beside them, the empty fields kube-apiserver leaves out of
 * custom and built-in objects alike, as a chart's rendered manifests have them.
 */
import { writeFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as Kubectl from "./kubectl.ts"

let server: Testing.TestServer
const { file, kubectl, killAll, ok } = Kubectl.forServer(() => server)
const cluster = Kubectl.forServer(() => server, { namespace: null })
beforeAll(async () => {
  server = await Testing.start()
})
afterAll(async () => {
  killAll()
  cluster.killAll()
  await server.close()
})

const gadgetCrd = (description = "How big.") => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.kubectl.example.com" },
  spec: {
    group: "kubectl.example.com",
    scope: "Namespaced",
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: {
              type: "object",
              properties: { size: { type: "integer", description: description }, color: { type: "string" }, tags: { type: "array", items: { type: "string" } } }
            }
          }
        }
      }
    }]
  }
})

const gadget = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "kubectl.example.com/v1",
  kind: "Gadget",
  metadata: { name },
  spec
})

/** Runs kubectl and requires success with nothing on stderr. */
const clean = async (...args: ReadonlyArray<string>) => {
  const run = await kubectl(...args)
  expect(run.code, run.stderr).toBe(0)
  expect(run.stderr).toBe("")
  return run.stdout
}

describe("custom resources with kubectl", () => {
  it("installs the CRD", async () => {
    await ok("apply", "-f", file("gadget-crd.json", gadgetCrd()))
    await ok("wait", "--for=condition=Established", "crd/gadgets.kubectl.example.com", "--timeout=20s")
  })

  it("advertises no strategic merge patch (custom kinds take none; kubectl computes built-ins' from its own types)", async () => {
    const index = (await server.request("GET", "/openapi/v3")).json
    const custom = (await server.request("GET", index.paths["apis/kubectl.example.com/v1"].serverRelativeURL)).json
    const patch = custom.paths["/apis/kubectl.example.com/v1/namespaces/{namespace}/gadgets/{name}"].patch
    expect(Object.keys(patch.requestBody.content).sort()).toEqual([
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json"
    ])
    const apps = (await server.request("GET", index.paths["apis/apps/v1"].serverRelativeURL)).json
    expect(Object.keys(apps.paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].patch.requestBody.content))
      .not.toContain("application/strategic-merge-patch+json")
    // A built-in kind's schema is published, tagged with its kind, for kubectl explain.
    const deployment = apps.components.schemas["io.k8s.api.apps.v1.Deployment"]
    expect(deployment["x-kubernetes-group-version-kind"]).toEqual([{ group: "apps", kind: "Deployment", version: "v1" }])
    expect(deployment.properties.spec.properties.replicas).toMatchObject({ type: "integer" })
  })

  it("re-applies a changed custom resource client-side, diffs it, and applies it server-side, without warnings", async () => {
    const path = file("gadget.json", gadget("g1", { size: 1, color: "red", tags: ["a", "b"] }))
    expect(await clean("apply", "-f", path)).toBe("gadget.kubectl.example.com/g1 created\n")
    expect(await clean("diff", "-f", path)).toBe("")

    writeFileSync(path, JSON.stringify(gadget("g1", { size: 2, tags: ["b"] })))
    const diff = await kubectl("diff", "-f", path)
    expect(diff.code, diff.stderr).toBe(1)
    expect(diff.stderr).toBe("")
    expect(diff.stdout).toMatch(/^-\s+color: red$/m)
    expect(diff.stdout).toMatch(/^-\s+size: 1$/m)
    expect(diff.stdout).toMatch(/^\+\s+size: 2$/m)

    expect(await clean("apply", "-f", path)).toBe("gadget.kubectl.example.com/g1 configured\n")
    const live = JSON.parse(await ok("get", "gadget", "g1", "-o", "json"))
    expect(live.spec).toEqual({ size: 2, tags: ["b"] })
    expect(await clean("diff", "-f", path)).toBe("")
    expect(await clean("apply", "-f", path)).toBe("gadget.kubectl.example.com/g1 unchanged\n")

    writeFileSync(path, JSON.stringify(gadget("g1", { size: 2, tags: ["b"] })))
    expect(await clean("apply", "--server-side", "--force-conflicts", "-f", path)).toBe("gadget.kubectl.example.com/g1 serverside-applied\n")
    writeFileSync(path, JSON.stringify(gadget("g1", { size: 3 })))
    expect(await clean("apply", "--server-side", "-f", path)).toBe("gadget.kubectl.example.com/g1 serverside-applied\n")
    const applied = JSON.parse(await ok("get", "gadget", "g1", "-o", "json"))
    expect(applied.spec).toEqual({ size: 3 })
  })

  it("refuses a strategic merge patch on a custom resource with 1.32's 415", async () => {
    const run = await kubectl("patch", "gadget", "g1", "--type=strategic", "-p", "{\"spec\":{\"size\":4}}")
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
  })

  it("deletes a CRD last applied server-side with its custom resources, so a re-created CRD has none", async () => {
    await clean("apply", "-f", file("g2.json", gadget("g2", { size: 1 })))
    const crdPath = file("gadget-crd-2.json", gadgetCrd("How big, in cm."))
    const applied = await cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", crdPath)
    expect(applied.code, applied.stderr).toBe(0)
    const crd = await server.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.kubectl.example.com")
    expect(crd.json.metadata).not.toHaveProperty("finalizers")

    const deleted = await cluster.kubectl("delete", "crd", "gadgets.kubectl.example.com")
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toBe("customresourcedefinition.apiextensions.k8s.io \"gadgets.kubectl.example.com\" deleted\n")
    // kubectl returned only once the CRD was gone, which it is only after its instances were.
    expect((await server.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.kubectl.example.com")).status).toBe(404)

    await cluster.ok("apply", "-f", crdPath)
    await cluster.ok("wait", "--for=condition=Established", "crd/gadgets.kubectl.example.com", "--timeout=20s")
    const listed = await kubectl("get", "gadgets")
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stderr).toBe("No resources found in default namespace.\n")
  })
})

describe("orphaning with kubectl", () => {
  it("removes the ownerReferences key of an orphaned dependent", async () => {
    await ok("create", "configmap", "owner")
    const owner = JSON.parse(await ok("get", "configmap", "owner", "-o", "json"))
    const dependent = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "dependent", ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid }] },
      data: { a: "1" }
    }
    await ok("create", "-f", file("dependent.json", dependent))
    expect(await clean("delete", "configmap", "owner", "--cascade=orphan")).toBe("configmap \"owner\" deleted\n")
    const orphan = JSON.parse(await ok("get", "configmap", "dependent", "-o", "json"))
    expect(orphan.metadata).not.toHaveProperty("ownerReferences")
    expect(orphan.data).toEqual({ a: "1" })
  })
})

describe("empty metadata, as kube-apiserver's ObjectMeta keeps it", () => {
  const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { a: "1" } })

  it("diffs a custom resource and a ConfigMap created server-side as unchanged", async () => {
    await ok("apply", "-f", file("gadget-crd-3.json", gadgetCrd()))
    await ok("wait", "--for=condition=Established", "crd/gadgets.kubectl.example.com", "--timeout=20s")
    for (const object of [gadget("empty-meta", { size: 1 }), configMap("empty-meta")]) {
      const path = file(`empty-meta-${object.kind}.json`, object)
      await clean("apply", "--server-side", "-f", path)
      // kubectl diff sends the manifest's metadata with `annotations: {}`: nothing to show.
      expect(await clean("diff", "-f", path)).toBe("")
    }
  })

  it("keeps no empty labels, annotations, finalizers or ownerReferences, and a patch of them alone changes nothing", async () => {
    for (const [kind, body] of [["gadget", gadget("empty-lists", { size: 1 })], ["configmap", configMap("empty-lists")]] as const) {
      const empty = { labels: {}, annotations: {}, finalizers: [], ownerReferences: [], generateName: "" }
      await clean("create", "-f", file(`empty-lists-${kind}.json`, { ...body, metadata: { ...body.metadata, ...empty } }))
      const created = JSON.parse(await ok("get", kind, "empty-lists", "-o", "json"))
      for (const field of Object.keys(empty)) expect(created.metadata).not.toHaveProperty(field)

      const patch = JSON.stringify({ metadata: { labels: {}, annotations: {}, finalizers: [] } })
      expect(await clean("patch", kind, "empty-lists", "--type=merge", "-p", patch)).toMatch(/patched \(no change\)\n$/)
      const patched = JSON.parse(await ok("get", kind, "empty-lists", "-o", "json"))
      expect(patched.metadata.resourceVersion).toBe(created.metadata.resourceVersion)

      await clean("patch", kind, "empty-lists", "--type=merge", "-p", JSON.stringify({ metadata: { finalizers: ["example.com/hold"] } }))
      await clean("patch", kind, "empty-lists", "--type=json", "-p", JSON.stringify([{ op: "remove", path: "/metadata/finalizers/0" }]))
      const released = JSON.parse(await ok("get", kind, "empty-lists", "-o", "json"))
      expect(released.metadata).not.toHaveProperty("finalizers")
    }
  })
})

describe("empty fields of built-in kinds, as kube-apiserver's Go types write them", () => {
  // A chart's rendering: empty values left as `key:` (null), empty lists and maps, zero flags.
  const rendered = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: rendered
spec:
  replicas: 0
  paused: false
  strategy:
  selector:
    matchLabels: {app: rendered}
  template:
    metadata:
      labels: {app: rendered}
      annotations:
    spec:
      nodeSelector:
      affinity:
      tolerations: []
      hostNetwork: false
      containers:
      - name: app
        image: nginx
        env: []
        args:
        tty: false
        workingDir: ""
        resources:
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: rendered
data: {}
immutable: false
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: rendered
rules: []
`

  it("leaves out omitempty fields at their zero value, keeps pointers' zeros and fields Go always writes", async () => {
    const path = file("rendered.yaml", rendered)
    await clean("apply", "--server-side", "-f", path)
    const deployment = JSON.parse(await ok("get", "deployment", "rendered", "-o", "json"))
    expect(deployment.spec.replicas).toBe(0)
    expect(deployment.spec).not.toHaveProperty("paused")
    // A struct left null is Go's zero struct, which the defaults fill as if it were absent.
    expect(deployment.spec.strategy).toMatchObject({ type: "RollingUpdate" })
    const pod = deployment.spec.template.spec
    for (const field of ["nodeSelector", "affinity", "tolerations", "hostNetwork"]) expect(pod).not.toHaveProperty(field)
    expect(deployment.spec.template.metadata).not.toHaveProperty("annotations")
    expect(pod.containers[0]).toMatchObject({ name: "app", image: "nginx", resources: {} })
    for (const field of ["env", "args", "tty", "workingDir"]) expect(pod.containers[0]).not.toHaveProperty(field)
    const configMap = JSON.parse(await ok("get", "configmap", "rendered", "-o", "json"))
    expect(configMap).not.toHaveProperty("data")
    expect(configMap.immutable).toBe(false)
    const role = JSON.parse(await ok("get", "role", "rendered", "-o", "json"))
    expect(role.rules).toEqual([])
    // The manifest applied again, server-side or client-side, changes nothing that diff would show.
    expect(await clean("diff", "--server-side", "-f", path)).toBe("")
    // (kubectl warns that the objects it applies client-side were created without its annotation.)
    await ok("apply", "-f", path)
    expect(await clean("diff", "-f", path)).toBe("")
  })

  it("gives a created object the status Go writes for its type, owned by none of its writers", async () => {
    await clean("create", "job", "zero-status", "--image=busybox")
    await clean("create", "poddisruptionbudget", "zero-status", "--selector=app=zero", "--min-available=1")
    await clean("create", "ingress", "zero-status", "--rule=zero.example.com/=zero:80")
    await clean("create", "service", "clusterip", "zero-status", "--tcp=80:80")
    const statusOf = async (kind: string) => JSON.parse(await ok("get", kind, "zero-status", "-o", "json", "--show-managed-fields"))
    const expected: ReadonlyArray<readonly [string, unknown]> = [
      ["job", {}],
      ["poddisruptionbudget", { currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 }],
      ["ingress", { loadBalancer: {} }],
      ["service", { loadBalancer: {} }]
    ]
    for (const [kind, status] of expected) {
      const object = await statusOf(kind)
      expect(object.status, kind).toEqual(status)
      // As kube-apiserver's reset fields: the creator owns its spec, not the status the server wrote.
      for (const entry of object.metadata.managedFields) expect(entry.fieldsV1, kind).not.toHaveProperty("f:status")
    }
  })

  it("keeps no empty map after a patch empties it, and a merge patch of an empty map changes nothing", async () => {
    await clean("create", "configmap", "emptied", "--from-literal=a=1")
    await clean("patch", "configmap", "emptied", "--type=json", "-p", JSON.stringify([{ op: "remove", path: "/data/a" }]))
    const emptied = JSON.parse(await ok("get", "configmap", "emptied", "-o", "json"))
    expect(emptied).not.toHaveProperty("data")
    expect(await clean("patch", "configmap", "emptied", "--type=merge", "-p", JSON.stringify({ data: {} }))).toMatch(/patched \(no change\)\n$/)
    const again = JSON.parse(await ok("get", "configmap", "emptied", "-o", "json"))
    expect(again.metadata.resourceVersion).toBe(emptied.metadata.resourceVersion)
  })
})
