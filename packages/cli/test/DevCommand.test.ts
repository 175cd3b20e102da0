import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Testing } from "@kubefx/apiserver"
import { type Dev, eventually, startDev } from "./dev.ts"
import { kubefx } from "./run.ts"

const dir = mkdtempSync(join(tmpdir(), "kubefx-dev-test-"))
let dev: Dev


interface Listed {
  readonly items: ReadonlyArray<{
    readonly metadata: { readonly name: string; readonly uid: string }
    readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string; readonly reason: string }> }
  }>
}
const ready = (item: Listed["items"][number]) => item.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true
const kubectlJson = async (...args: ReadonlyArray<string>) => JSON.parse(await dev.kubectl([...args, "-o", "json"]))

const metric = async (name: string) => {
  const text = await (await fetch(`${dev.operatorUrl}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith(name))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

beforeAll(async () => {
  dev = await startDev(dir, { args: ["--load-balancer-addresses", "172.18.255.200/30", "--node-capacity", "cpu=16, memory=32Gi,example.com/gpu=2"] })
}, 90_000)

afterAll(async () => {
  await dev?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe("kubefx dev", () => {
  it("brings every example's samples to Ready=True", async () => {
    for (const plural of ["widgets", "buckets", "flakies", "releases", "websites", "volumes"]) {
      await eventually(async () => {
        const list: Listed = await kubectlJson("get", plural, "-A")
        assert.isAbove(list.items.length, 0, plural)
        assert.isTrue(list.items.every(ready), `${plural} not all Ready`)
      })
    }
  }, 60_000)

  it("serves the volumes example's webhooks and registers them: mutation, conversion to v1, a denial", async () => {
    const data = await kubectlJson("get", "volumes", "data", "-n", "default")
    assert.strictEqual(data.spec.storageClass, "standard")
    const legacy = await kubectlJson("get", "volumes.v1.demo.kubefx.dev", "legacy", "-n", "default")
    assert.deepStrictEqual([legacy.apiVersion, legacy.spec.size], ["demo.kubefx.dev/v1", "512Mi"])
    const denied = await dev.kubectl(["delete", "volume", "data", "-n", "default"]).then(() => "", (error: { stderr?: string }) => error.stderr ?? String(error))
    assert.include(denied, 'admission webhook "vvolume.demo.kubefx.dev" denied the request: volume data is protected')
  })

  it("shows a Flaky with failTimes 3 as Ready=False/ReconcileError, then Ready=True, counting 3 errors", async () => {
    const watcher = spawn("kubectl", [
      "--kubeconfig", dev.kubeconfig, "get", "flakies", "-n", "default", "--field-selector", "metadata.name=three", "-w",
      "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}/{.status.conditions[?(@.type==\"Ready\")].reason}{\"\\n\"}"
    ])
    let seen = ""
    watcher.stdout.on("data", (chunk: Buffer) => void (seen += chunk.toString()))
    await new Promise((resolve) => setTimeout(resolve, 500)) // the watch is open before the Flaky exists
    const errorsBefore = await metric("controller_runtime_reconcile_errors_total{controller=\"flaky\"}")
    await dev.kubectl(["apply", "-f", "-"],
      "apiVersion: demo.kubefx.dev/v1\nkind: Flaky\nmetadata:\n  name: three\n  namespace: default\nspec:\n  failTimes: 3\n  message: not yet\n")
    await eventually(async () => assert.include(seen, "True/Reconciled"))
    watcher.kill()
    const lines = seen.split("\n").filter((l) => l.length > 0)
    assert.isTrue(lines.indexOf("False/ReconcileError") >= 0, `saw ${lines.join(", ")}`)
    assert.isBelow(lines.indexOf("False/ReconcileError"), lines.indexOf("True/Reconciled"))
    assert.strictEqual(await metric("controller_runtime_reconcile_errors_total{controller=\"flaky\"}") - errorsBefore, 3)
  }, 60_000)

  it("keeps a permanent Flaky Ready=False with no further attempt scheduled", async () => {
    await dev.kubectl(["apply", "-f", "-"],
      "apiVersion: demo.kubefx.dev/v1\nkind: Flaky\nmetadata:\n  name: broken\n  namespace: default\nspec:\n  failTimes: 0\n  permanent: true\n  message: fix me\n")
    const key = await eventually(async () => {
      const view = await (await fetch(`${dev.operatorUrl}/controllers/flaky`)).json() as {
        readonly keys: ReadonlyArray<{
          readonly key: string
          readonly next: unknown
          readonly nextRetryAt: unknown
          readonly last: { readonly result: { readonly _tag: string } } | null
        }>
      }
      const found = view.keys.find((k) => k.key === "default/broken")
      assert.strictEqual(found?.last?.result._tag, "Permanent")
      return found!
    })
    assert.isNull(key.next)
    assert.isNull(key.nextRetryAt)
    const flaky = await kubectlJson("get", "flaky", "broken", "-n", "default")
    const condition = flaky.status.conditions.find((c: { type: string }) => c.type === "Ready")
    assert.strictEqual(condition.status, "False")
    assert.strictEqual(condition.message, "fix me")
  }, 60_000)

  it("50 Buckets created and relabelled in a burst give exactly 50 external buckets, and 0 after deleting them", async () => {
    await dev.kubectl(["create", "namespace", "burst"])
    await dev.kubectl(["apply", "-f", "-"], Array.from({ length: 50 }, (_, i) =>
      `apiVersion: demo.kubefx.dev/v1\nkind: Bucket\nmetadata:\n  name: b-${i}\n  namespace: burst\nspec: {}\n`).join("---\n"))
    for (let round = 0; round < 3; round++) {
      await dev.kubectl(["label", "buckets", "--all", "-n", "burst", `round=${round}`, "--overwrite"])
    }
    const buckets: Listed = await eventually(async () => {
      const list: Listed = await kubectlJson("get", "buckets", "-n", "burst")
      assert.strictEqual(list.items.filter(ready).length, 50)
      return list
    })
    const owners = new Set(buckets.items.map((b) => b.metadata.uid))
    const external = async () =>
      ((await (await fetch(`${dev.storeUrl}/buckets`)).json()) as ReadonlyArray<{ readonly owner: string }>).filter((b) => owners.has(b.owner))
    const allocated = await external()
    assert.strictEqual(allocated.length, 50)
    assert.strictEqual(new Set(allocated.map((b) => b.owner)).size, 50)

    await dev.kubectl(["delete", "buckets", "--all", "-n", "burst", "--wait=true", "--timeout=60s"])
    await eventually(async () => assert.strictEqual((await external()).length, 0))
  }, 90_000)

  it("runs the operator as the ServiceAccount kubefx-dev, holding only its derived ClusterRole", async () => {
    assert.include(dev.output(), "kubefx dev: operator as system:serviceaccount:kubefx-dev:kubefx-dev, holding only ClusterRole kubefx-dev")
    const operatorKubeconfig = join(dir, "operator-kubeconfig")
    assert.strictEqual(statSync(operatorKubeconfig).mode & 0o777, 0o600)
    const who = JSON.parse(await dev.kubectl(["auth", "whoami", "-o", "json", "--kubeconfig", operatorKubeconfig]))
    assert.strictEqual(who.status.userInfo.username, "system:serviceaccount:kubefx-dev:kubefx-dev")
    const can = (...args: ReadonlyArray<string>) =>
      dev.kubectl(["auth", "can-i", ...args, "--as", "system:serviceaccount:kubefx-dev:kubefx-dev"]).then((out) => out.trim(), () => "no")
    // What the examples' controllers declare (the websites workflow deletes its Deployments)...
    assert.strictEqual(await can("patch", "widgets.demo.kubefx.dev", "--subresource=status", "-n", "default"), "yes")
    assert.strictEqual(await can("delete", "deployments.apps", "-n", "default"), "yes")
    // ...and nothing else.
    assert.strictEqual(await can("list", "secrets", "-A"), "no")
    assert.strictEqual(await can("delete", "widgets.demo.kubefx.dev", "-n", "default"), "no")
    // The websites workflow's cleanup deletes what it made, then lets the Website go.
    await dev.kubectl(["delete", "website", "hello", "-n", "default", "--wait=true", "--timeout=30s"])
    const left = await kubectlJson("get", "deployments,services,configmaps", "-n", "default", "-l", "app.kubernetes.io/instance=hello")
    assert.deepStrictEqual(left.items.map((item: { kind: string }) => item.kind), [])
  }, 60_000)

  it("a second kubefx dev on its ports names every busy port and leaves its kubeconfig and log alone", async () => {
    const apiPort = /API server https:\/\/127\.0\.0\.1:(\d+)/.exec(dev.output())![1]!
    const httpPort = new URL(dev.operatorUrl).port
    const kubeconfigBefore = readFileSync(dev.kubeconfig, "utf8")
    const logBefore = statSync(join(dir, "dev.log")).size
    const buckets = fileURLToPath(new URL("../../../examples/buckets/src/index.ts", import.meta.url))
    const second = await kubefx("dev", buckets, "--port", apiPort, "--http-port", httpPort, "--store-port", new URL(dev.storeUrl).port, "--dir", dir)
    assert.deepStrictEqual([second.code, second.stdout], [1, ""])
    assert.strictEqual(second.stderr, `kubefx dev: port ${apiPort} is in use (--port), port ${httpPort} is in use (--http-port)\n`)
    assert.strictEqual(readFileSync(dev.kubeconfig, "utf8"), kubeconfigBefore)
    assert.isAtLeast(statSync(join(dir, "dev.log")).size, logBefore)
  }, 60_000)

  it("--load-balancer-addresses: a LoadBalancer Service gets an address of the pool; a pool that is not one is refused", async () => {
    await dev.kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "front", namespace: "default" },
      spec: { type: "LoadBalancer", selector: { app: "front" }, ports: [{ port: 80 }] }
    }))
    await eventually(async () => {
      const service = await kubectlJson("get", "service", "front", "-n", "default")
      assert.deepStrictEqual(service.status?.loadBalancer?.ingress, [{ ip: "172.18.255.201", ipMode: "VIP" }])
    })
    await dev.kubectl(["delete", "service", "front", "-n", "default"])
    const refusedDir = mkdtempSync(join(tmpdir(), "kubefx-dev-pool-"))
    const buckets = fileURLToPath(new URL("../../../examples/buckets/src/index.ts", import.meta.url))
    const refused = await kubefx("dev", buckets, "--port", "0", "--http-port", "0", "--store-port", "0", "--dir", refusedDir, "--load-balancer-addresses", "172.18.300.0/24")
    rmSync(refusedDir, { recursive: true, force: true })
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, "--load-balancer-addresses takes an IPv4 pool such as 172.18.255.200/29, not 172.18.300.0/24")
  }, 60_000)

  it("--node-capacity: the node has what it says, and pods wait for room; a capacity that is not one is refused", async () => {
    const node = await kubectlJson("get", "node", "kubefx-node")
    assert.include(node.status.allocatable, { cpu: "16", memory: "32Gi", "example.com/gpu": "2", pods: "110" })
    await dev.kubectl(["apply", "-f", "-"], JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "three-gpus", namespace: "default" },
      spec: { containers: [{ name: "train", image: "trainer", resources: { limits: { "example.com/gpu": "3" } } }] }
    }))
    await eventually(async () => {
      const pod = await kubectlJson("get", "pod", "three-gpus", "-n", "default")
      const scheduled = pod.status?.conditions?.find((c: { type: string }) => c.type === "PodScheduled")
      assert.include(scheduled?.message ?? "", "1 Insufficient example.com/gpu")
    })
    await dev.kubectl(["delete", "pod", "three-gpus", "-n", "default", "--wait=false"])
    const buckets = fileURLToPath(new URL("../../../examples/buckets/src/index.ts", import.meta.url))
    for (const [capacity, said] of [
      ["cpu=lots", "--node-capacity cpu=lots: quantities must match the regular expression"],
      ["cpu", "--node-capacity takes resource=quantity pairs such as cpu=4,memory=8Gi, not cpu"]
    ] as const) {
      const refusedDir = mkdtempSync(join(tmpdir(), "kubefx-dev-capacity-"))
      const refused = await kubefx("dev", buckets, "--port", "0", "--http-port", "0", "--store-port", "0", "--dir", refusedDir, "--node-capacity", capacity)
      rmSync(refusedDir, { recursive: true, force: true })
      assert.strictEqual(refused.code, 1)
      assert.include(refused.stderr, said)
    }
  }, 60_000)

  it("exits 0 on SIGTERM", async () => {
    const exited = new Promise<number | null>((resolve) => dev.process.on("exit", (code) => resolve(code)))
    dev.process.kill("SIGTERM")
    assert.strictEqual(await exited, 0)
  }, 60_000)
})

describe("kubefx dev with a controller that does not start", () => {
  it("runs the others and says why it failed in its summary line", async () => {
    const session = mkdtempSync(join(tmpdir(), "kubefx-dev-unsyncable-test-"))
    const unsyncable = fileURLToPath(new URL("./fixtures/unsyncable.ts", import.meta.url))
    const run = await startDev(session, { modules: [unsyncable] })
    try {
      const line = await eventually(async () => {
        const found = run.output().split("\n").find((l) => l.startsWith("mistyped: ") && l.includes("Failed"))
        if (found === undefined) throw new Error(`no failed summary line yet:\n${run.output()}`)
        return found
      })
      assert.match(
        line,
        /^mistyped: 0 objects, 0 Ready, queue 0, 0 failures, Failed: controller mistyped: caches not synced after 500ms: ConfigMap in default \(BadRequest: .*data\.name.*\)$/
      )
      // fine's one ConfigMap, the namespace's kube-root-ca.crt, reconciled.
      await eventually(async () => assert.match(run.output(), /^fine: 1 objects, 0 Ready, queue 0, 0 failures, Healthy$/m))
    } finally {
      await run.stop()
      rmSync(session, { recursive: true, force: true })
    }
  }, 90_000)
})

describe("kubefx dev --data-dir", () => {
  it("keeps the cluster's objects across restarts", async () => {
    const session = mkdtempSync(join(tmpdir(), "kubefx-dev-data-test-"))
    const widgets = fileURLToPath(new URL("../../../examples/widgets/src/index.ts", import.meta.url))
    const options = { modules: [widgets], args: ["--data-dir", join(session, "data")] }
    try {
      const first = await startDev(join(session, "run"), options)
      await first.kubectl(["create", "configmap", "kept", "-n", "default", "--from-literal=a=1"])
      await first.stop()
      const second = await startDev(join(session, "run"), options)
      const kept = JSON.parse(await second.kubectl(["get", "configmap", "kept", "-n", "default", "-o", "json"]))
      await second.stop()
      assert.deepStrictEqual(kept.data, { a: "1" })
    } finally {
      rmSync(session, { recursive: true, force: true })
    }
  }, 120_000)
})

describe("kubefx dev --kubeconfig", () => {
  it("runs the operator with the kubeconfig's user, or as the ServiceAccount kubefx-dev with --service-account; --administrator keeps the administrator's", async () => {
    const session = mkdtempSync(join(tmpdir(), "kubefx-dev-cluster-test-"))
    const server = await Testing.start()
    const widgets = fileURLToPath(new URL("../../../examples/widgets/src/index.ts", import.meta.url))
    const whoami = (kubeconfig: string) =>
      new Promise<string>((resolve, reject) =>
        execFile("kubectl", ["--kubeconfig", kubeconfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"], (error, stdout, stderr) =>
          error === null ? resolve(stdout) : reject(new Error(stderr))))
    try {
      const asUser = await startDev(join(session, "user"), { modules: [widgets], args: ["--kubeconfig", server.kubeconfigPath] })
      await asUser.stop()
      assert.notInclude(asUser.output(), "operator as")
      assert.isFalse(existsSync(join(session, "user", "operator-kubeconfig")))
      // --administrator: so on the embedded server too.
      const asAdministrator = await startDev(join(session, "administrator"), { modules: [widgets], args: ["--administrator"] })
      await asAdministrator.stop()
      assert.notInclude(asAdministrator.output(), "operator as")
      assert.isFalse(existsSync(join(session, "administrator", "operator-kubeconfig")))
      const asServiceAccount = await startDev(join(session, "sa"), { modules: [widgets], args: ["--kubeconfig", server.kubeconfigPath, "--service-account"] })
      await asServiceAccount.stop()
      assert.include(asServiceAccount.output(), "kubefx dev: operator as system:serviceaccount:kubefx-dev:kubefx-dev")
      assert.strictEqual(await whoami(join(session, "sa", "operator-kubeconfig")), "system:serviceaccount:kubefx-dev:kubefx-dev")
    } finally {
      await server.close()
      rmSync(session, { recursive: true, force: true })
    }
  }, 120_000)
})
