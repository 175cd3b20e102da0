/**
 * Conformance with the real kubectl binary, driven through the kubeconfig the server writes.
 */
import { writeFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { configMap, crontab, crontabCrd } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

const { background, file, kubectl, ok, server } = Kubectl.withServer()

describe("kubectl", () => {
  it("installs a CRD and waits for condition=Established", async () => {
    await ok("apply", "-f", file("crd.json", crontabCrd()))
    await ok("wait", "--for=condition=Established", "crd/crontabs.stable.example.com", "--timeout=20s")
  })

  it("lists built-in and custom resources in api-resources", async () => {
    const out = await ok("api-resources")
    for (const row of [/^configmaps\s+cm\s+v1\s+true\s+ConfigMap$/m, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m, /^crontabs\s+crx\s+stable\.example\.com\/v1\s+true\s+CronTab$/m]) {
      expect(out).toMatch(row)
    }
  })

  it("explains a built-in kind from the schema of its Go type", async () => {
    const out = await ok("explain", "deployment.spec.replicas")
    expect(out).toMatch(/^FIELD: replicas <integer>$/m)
    expect(await ok("explain", "pod.spec.containers")).toMatch(/^ {2}env\t<\[\]Object>$/m)
  })

  it("explains a custom resource from its schema", async () => {
    const out = await ok("explain", "crontabs.spec.cronSpec")
    expect(out).toContain("The schedule.")
  })

  it("applies client-side: created, unchanged, configured", async () => {
    const path = file("cm.json", configMap("applied", { a: "1" }))
    expect(await ok("apply", "-f", path)).toContain("configmap/applied created")
    expect(await ok("apply", "-f", path)).toContain("configmap/applied unchanged")
    writeFileSync(path, JSON.stringify(configMap("applied", { a: "2" })))
    expect(await ok("apply", "-f", path)).toContain("configmap/applied configured")
    expect(await ok("get", "cm", "applied", "-o", "jsonpath={.data.a}")).toBe("2")
  })

  it("re-applies a changed custom resource client-side and diffs it, with merge patches and no warnings", async () => {
    const path = file("ct-edit.json", crontab("edited", { replicas: 2, color: "red" }))
    expect(await ok("apply", "-f", path)).toContain("crontab.stable.example.com/edited created")
    expect((await kubectl("diff", "-f", path)).code).toBe(0)
    writeFileSync(path, JSON.stringify(crontab("edited", { replicas: 3 })))
    const diff = await kubectl("diff", "-f", path)
    expect(diff.code, diff.stderr).toBe(1)
    expect(diff.stdout).toMatch(/-\s+replicas: 2/)
    expect(diff.stdout).toMatch(/\+\s+replicas: 3/)
    const reapplied = await kubectl("apply", "-f", path)
    expect(reapplied.code, reapplied.stderr).toBe(0)
    expect(reapplied.stdout).toContain("crontab.stable.example.com/edited configured")
    expect(reapplied.stderr).toBe("")
    const live = JSON.parse(await ok("get", "crontab", "edited", "-o", "json"))
    expect(live.spec.replicas).toBe(3)
    // Dropped from the file, so dropped from the object (the last-applied annotation says so).
    expect(live.spec).not.toHaveProperty("color")
    // Moving to server-side apply with a changed value: kubectl takes over the fields client-side
    // apply last applied and that still hold those values, without a conflict (1.32's
    // lastAppliedManager), and the last-applied annotation then holds the server-side configuration.
    writeFileSync(path, JSON.stringify(crontab("edited", { replicas: 4 })))
    const moved = await kubectl("apply", "--server-side", "-f", path)
    expect(moved.code, moved.stderr).toBe(0)
    const annotated = JSON.parse(await ok("get", "crontab", "edited", "-o", "json"))
    expect(JSON.parse(annotated.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]).spec).toEqual({ cronSpec: "* * * * *", replicas: 4 })
    writeFileSync(path, JSON.stringify(crontab("edited", { replicas: 5 })))
    const serverSide = await kubectl("apply", "--server-side", "-f", path)
    expect(serverSide.code, serverSide.stderr).toBe(0)
    expect(await ok("get", "crontab", "edited", "-o", "jsonpath={.spec.replicas}")).toBe("5")
  })

  it("applies a Deployment twice with strategic merge patches, without warnings", async () => {
    const deployment = (image: string) => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "app", image }, { name: "sidecar", image: "busybox" }] }
        }
      }
    })
    await ok("apply", "-f", file("deploy.json", deployment("nginx:1")))
    const second = await kubectl("apply", "-f", file("deploy.json", deployment("nginx:2")))
    expect(second.code).toBe(0)
    expect(second.stderr).toBe("")
    expect(await ok("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[*].image} {.metadata.generation}")).toBe("nginx:2 busybox 2")
  })

  it("applies server-side, with a conflict unless --force-conflicts", async () => {
    const path = file("ct.json", crontab("ssa", { replicas: 2 }))
    expect(await ok("apply", "--server-side", "-f", path)).toContain("crontab.stable.example.com/ssa serverside-applied")
    writeFileSync(path, JSON.stringify(crontab("ssa", { replicas: 3 })))
    const conflict = await kubectl("apply", "--server-side", "--field-manager=rival", "-f", path)
    expect(conflict.code).not.toBe(0)
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas')
    await ok("apply", "--server-side", "--field-manager=rival", "--force-conflicts", "-f", path)
    const managed = JSON.parse(await ok("get", "crontab", "ssa", "-o", "json", "--show-managed-fields"))
    expect(managed.spec.replicas).toBe(3)
    expect(managed.metadata.managedFields.map((e: any) => e.manager).sort()).toEqual(["kubectl", "rival"])
  })

  it("creates with generateName and reads back as JSON and YAML", async () => {
    const out = await ok("create", "-f", file("gen.json", { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "gen-" }, data: { k: "v" } }), "-o", "name")
    const name = out.trim().replace("configmap/", "")
    expect(name).toMatch(/^gen-[a-z0-9]{5}$/)
    expect(JSON.parse(await ok("get", "cm", name, "-o", "json")).data).toEqual({ k: "v" })
    expect(await ok("get", "cm", name, "-o", "yaml")).toContain(`name: ${name}`)
  })

  it("patches with each patch type and labels", async () => {
    await ok("patch", "cm", "applied", "--type=merge", "-p", '{"data":{"m":"1"}}')
    await ok("patch", "cm", "applied", "--type=json", "-p", '[{"op":"add","path":"/data/j","value":"2"}]')
    await ok("patch", "cm", "applied", "--type=strategic", "-p", '{"data":{"s":"3"}}')
    await ok("label", "cm", "applied", "tier=front")
    const cm = JSON.parse(await ok("get", "cm", "applied", "-o", "json"))
    expect(cm.data).toMatchObject({ m: "1", j: "2", s: "3" })
    expect(cm.metadata.labels).toEqual({ tier: "front" })
    const smp = await kubectl("patch", "crontab", "ssa", "--type=strategic", "-p", '{"spec":{"replicas":1}}')
    expect(smp.code).not.toBe(0)
    expect(smp.stderr).toContain("the body of the request was in an unknown format")
  })

  it("runs the generator commands that send protobuf for simple kinds", async () => {
    await ok("create", "namespace", "generated")
    await ok("create", "configmap", "gen-cm", "--from-literal=a=b", "-n", "generated")
    await ok("create", "secret", "generic", "gen-secret", "--from-literal=k=v", "-n", "generated")
    await ok("create", "serviceaccount", "gen-sa", "-n", "generated")
    expect(await ok("get", "cm", "gen-cm", "-n", "generated", "-o", "jsonpath={.data.a}")).toBe("b")
    expect(await ok("get", "secret", "gen-secret", "-n", "generated", "-o", "jsonpath={.data.k}")).toBe(Buffer.from("v").toString("base64"))
    expect(await ok("create", "deployment", "gen-deploy", "--image=nginx", "-n", "generated")).toBe("deployment.apps/gen-deploy created\n")
  })

  it("prints printer columns and scales a custom resource", async () => {
    await ok("scale", "crontab", "ssa", "--replicas=4")
    const out = await ok("get", "crontabs")
    expect(out).toMatch(/^NAME\s+SPEC\s+REPLICAS\s*$/m)
    expect(out).toMatch(/^ssa\s+\* \* \* \* \*\s+4\s*$/m)
  })

  it("streams changes with get -w", async () => {
    const watch = background("get", "cm", "-w", "--output-watch-events", "-o", "jsonpath={.type} {.object.metadata.name}{\"\\n\"}")
    await watch.waitForLines(1)
    await ok("create", "-f", file("watched.json", configMap("watched")))
    await ok("label", "cm", "watched", "seen=yes")
    const lines = await watch.waitForLine((printed) => printed.includes("MODIFIED watched"))
    watch.child.kill("SIGTERM")
    await watch.exited
    expect(lines).toContain("ADDED watched")
    expect(lines).toContain("MODIFIED watched")
  })

  it("prints a built-in kind's server-side columns, in get and in get -w", async () => {
    await ok("create", "-f", file("two-keys.json", configMap("two-keys", { a: "1", b: "2" })))
    const out = await ok("get", "configmaps", "two-keys")
    expect(out).toMatch(/^NAME\s+DATA\s+AGE\s*$/m)
    expect(out).toMatch(/^two-keys\s+2\s+\d+s\s*$/m)
    const watch = background("get", "configmaps", "-w")
    await watch.waitForLines(2)
    await ok("create", "-f", file("three-keys.json", configMap("three-keys", { a: "1", b: "2", c: "3" })))
    // The initial listing may already print four lines or more: wait for the new object's own.
    const lines = await watch.waitForLine((printed) => printed.some((l) => l.startsWith("three-keys")))
    watch.child.kill("SIGTERM")
    await watch.exited
    expect(lines[0]).toMatch(/^NAME\s+DATA\s+AGE\s*$/)
    expect(lines.find((l) => l.startsWith("three-keys"))).toMatch(/^three-keys\s+3\s+\d+s\s*$/)
  })

  it("deletes with finalizers and --wait, returning once the finalizer is removed", async () => {
    await ok("create", "-f", file("held.json", configMap("held", {}, { finalizers: ["example.com/hold"] })))
    const deletion = background("delete", "cm", "held", "--wait=true", "--timeout=30s")
    for (let i = 0; i < 100; i++) {
      const cm = await server().request("GET", "/api/v1/namespaces/default/configmaps/held")
      if (cm.json.metadata?.deletionTimestamp !== undefined) break
      await new Promise((r) => setTimeout(r, 50))
    }
    expect((await server().request("GET", "/api/v1/namespaces/default/configmaps/held")).json.metadata.deletionTimestamp).toBeTruthy()
    await ok("patch", "cm", "held", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    expect(await deletion.exited).toBe(0)
    expect((await server().request("GET", "/api/v1/namespaces/default/configmaps/held")).status).toBe(404)
  })

  it("waits for a jsonpath condition", async () => {
    const waiting = background("wait", "--for=jsonpath={.status.phase}=Ready", "crontab/ssa", "--timeout=30s")
    await new Promise((r) => setTimeout(r, 300))
    await server().request("PATCH", "/apis/stable.example.com/v1/namespaces/default/crontabs/ssa/status", {
      body: { status: { phase: "Ready" } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(await waiting.exited).toBe(0)
    expect(waiting.lines.join("\n")).toContain("condition met")
  })

  it("sorts events by lastTimestamp with --sort-by, a field only the whole object has", async () => {
    const event = (name: string, lastTimestamp: string) => ({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name },
      involvedObject: { kind: "ConfigMap", name: "sorted", namespace: "default" },
      reason: "Sorted",
      message: `event ${name}`,
      type: "Normal",
      lastTimestamp
    })
    await ok("create", "-f", file("late.json", event("late", "2026-01-02T00:00:00Z")))
    await ok("create", "-f", file("early.json", event("early", "2026-01-01T00:00:00Z")))
    const sorted = await ok("get", "events", "--field-selector=reason=Sorted", "--sort-by=.lastTimestamp")
    expect(sorted.split("\n").filter((line) => line.includes("event ")).map((line) => line.match(/event (\w+)/)![1])).toEqual(["early", "late"])
  })

  it("reads a pod's logs as empty, no pod running here, and checks the container it names", async () => {
    await ok("run", "quiet", "--image=nginx")
    const logs = await kubectl("logs", "quiet")
    expect(logs.code, logs.stderr).toBe(0)
    expect(logs.stdout).toBe("")
    const wrong = await kubectl("logs", "quiet", "-c", "other")
    expect(wrong.code).toBe(1)
    expect(wrong.stderr.trim()).toBe("error: container other is not valid for pod quiet")
    await ok("create", "-f", file("pair.json", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "pair" },
      spec: { initContainers: [{ name: "setup", image: "busybox" }], containers: [{ name: "a", image: "nginx" }, { name: "b", image: "nginx" }] }
    }))
    const unnamed = await server().request("GET", "/api/v1/namespaces/default/pods/pair/log")
    expect(unnamed.status).toBe(400)
    expect(unnamed.json.message).toBe("a container name must be specified for pod pair, choose one of: [setup a b]")
    expect((await server().request("GET", "/api/v1/namespaces/default/pods/pair/log?container=setup")).status).toBe(200)
    expect((await server().request("GET", "/api/v1/namespaces/default/pods/pair/log?container=c")).json.message).toBe("container c is not valid for pod pair")
    expect((await server().request("GET", "/api/v1/namespaces/default/pods/gone/log")).status).toBe(404)
  })

  it("stores quantities in their canonical form, and a manifest that spells them otherwise applies without a change", async () => {
    const manifest = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "sized", namespace: "default" },
      spec: {
        containers: [{
          name: "app",
          image: "nginx",
          resources: { requests: { cpu: "0.5", memory: "1024Mi" }, limits: { cpu: "1000m", memory: "1.5Gi", "ephemeral-storage": "1e3" } }
        }]
      }
    }
    const path = file("sized.json", manifest)
    await ok("apply", "-f", path)
    expect(JSON.parse(await ok("get", "pod", "sized", "-o", "jsonpath={.spec.containers[0].resources}"))).toEqual({
      // A request left out takes its limit, as a pod's defaults give it.
      requests: { cpu: "500m", memory: "1Gi", "ephemeral-storage": "1e3" },
      limits: { cpu: "1", memory: "1536Mi", "ephemeral-storage": "1e3" }
    })
    // kubectl's three-way patch sees "0.5" against "500m" and sends it (it says "configured", as it
    // does against a cluster); the write changes nothing.
    const before = await ok("get", "pod", "sized", "-o", "jsonpath={.metadata.resourceVersion}")
    expect(await ok("apply", "-f", path)).toContain("pod/sized configured")
    expect(await ok("get", "pod", "sized", "-o", "jsonpath={.metadata.resourceVersion}")).toBe(before)
  })

  it("moves from client-side to server-side apply without conflicts, unless someone changed the field since", async () => {
    const configMap = (data: Record<string, string>) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "moved", namespace: "default" }, data })
    const path = file("moved.json", configMap({ a: "1", b: "1" }))
    await ok("apply", "-f", path)
    writeFileSync(path, JSON.stringify(configMap({ a: "2", b: "1" })))
    expect(await ok("apply", "--server-side", "-f", path)).toContain("configmap/moved serverside-applied")
    const moved = JSON.parse(await ok("get", "configmap", "moved", "-o", "json", "--show-managed-fields"))
    expect(moved.data).toEqual({ a: "2", b: "1" })
    const applier = moved.metadata.managedFields.find((entry: any) => entry.manager === "kubectl" && entry.operation === "Apply")
    expect(Object.keys(applier.fieldsV1["f:data"]).sort()).toEqual(["f:a", "f:b"])
    // A field another writer changed after the last client-side apply still conflicts.
    const other = file("other.json", configMap({ c: "1" }))
    await ok("apply", "-f", other)
    await ok("patch", "configmap", "moved", "--type=merge", "-p", JSON.stringify({ data: { c: "3" } }))
    writeFileSync(other, JSON.stringify(configMap({ c: "4" })))
    const conflicted = await kubectl("apply", "--server-side", "-f", other)
    expect(conflicted.code).toBe(1)
    expect(conflicted.stderr).toContain('conflict with "kubectl-patch"')
  })

  it("kubectl debug adds an ephemeral container through pods/ephemeralcontainers, which only adds", async () => {
    await ok("run", "debugged", "--image=nginx", "--restart=Never")
    const debugged = await kubectl("debug", "debugged", "--image=busybox", "--profile=general")
    expect(debugged.code, debugged.stderr).toBe(0)
    expect(debugged.stdout + debugged.stderr).toMatch(/Defaulting debug container name to debugger-[a-z0-9]{5}\./)
    const [ephemeral] = JSON.parse(await ok("get", "pod", "debugged", "-o", "jsonpath={.spec.ephemeralContainers}"))
    expect(ephemeral).toMatchObject({ image: "busybox", imagePullPolicy: "Always", terminationMessagePath: "/dev/termination-log" })
    const aimless = await kubectl("debug", "debugged", "--image=busybox", "--profile=general", "--target=nope")
    expect(aimless.code).toBe(1)
    expect(aimless.stderr).toContain('spec.ephemeralContainers[1].targetContainerName: Not found: "nope"')
    // An existing ephemeral container is never changed: not through the subresource, not through the pod.
    const path = "/api/v1/namespaces/default/pods/debugged"
    const changed = [{ ...ephemeral, image: "alpine" }]
    const merge = { "content-type": "application/merge-patch+json" }
    const viaSubresource = await server().request("PATCH", `${path}/ephemeralcontainers`, { body: { spec: { ephemeralContainers: changed } }, headers: merge })
    expect(viaSubresource.status).toBe(422)
    expect(viaSubresource.json.details.causes[0].message).toBe(`Forbidden: existing ephemeral containers "${ephemeral.name}" may not be changed\n`)
    const viaPod = await server().request("PATCH", path, { body: { spec: { ephemeralContainers: changed } }, headers: merge })
    expect(viaPod.status).toBe(422)
    expect(viaPod.json.details.causes[0].message).toMatch(/^Forbidden: pod updates may not change fields other than/)
    const created = await server().request("POST", "/api/v1/namespaces/default/pods", {
      body: { apiVersion: "v1", kind: "Pod", metadata: { name: "born-debugged" }, spec: { containers: [{ name: "a", image: "nginx" }], ephemeralContainers: [{ name: "d", image: "busybox" }] } }
    })
    expect(created.status).toBe(422)
    expect(created.json.message).toBe('Pod "born-debugged" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create')
  })

  it("applies server-side over a client-side apply an object too large for the last-applied annotation, dropping the annotation", async () => {
    const configMap = (data: Record<string, string>) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "grown", namespace: "default" }, data })
    const path = file("grown.json", configMap({ small: "1" }))
    await ok("apply", "-f", path)
    // A large CRD's schema, say: more than the annotations' 256 KiB, well within an object's size.
    const large = "x".repeat(300 * 1024)
    writeFileSync(path, JSON.stringify(configMap({ small: "1", large })))
    expect(await ok("apply", "--server-side", "-f", path)).toContain("configmap/grown serverside-applied")
    const grown = JSON.parse(await ok("get", "configmap", "grown", "-o", "json"))
    expect(grown.data.large).toBe(large)
    expect(grown.metadata.annotations ?? {}).not.toHaveProperty(["kubectl.kubernetes.io/last-applied-configuration"])
  })

  it("gets the deprecated componentstatuses, computed healthy at each read, with kube's warning; they cannot be written", async () => {
    const listed = await kubectl("get", "cs")
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stderr).toContain("Warning: v1 ComponentStatus is deprecated in v1.19+")
    expect(listed.stdout).toMatch(/^NAME\s+STATUS\s+MESSAGE\s+ERROR\s*$/m)
    expect(listed.stdout).toMatch(/^etcd-0\s+Healthy\s+ok\s*$/m)
    expect(JSON.parse(await ok("get", "componentstatus", "scheduler", "-o", "json")).conditions).toEqual([{ type: "Healthy", status: "True", message: "ok" }])
    expect((await kubectl("get", "cs", "nope")).stderr).toContain('componentstatuses "nope" not found')
    expect((await kubectl("delete", "cs", "scheduler")).stderr).toContain("MethodNotAllowed")
    expect((await server().request("GET", "/api/v1/componentstatuses?watch=true")).status).toBe(405)
  })
})
