import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const bin = fileURLToPath(new URL("../bin/kubefx.js", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "kubefx-dev-test-"))
const kubeconfig = join(dir, "kubeconfig")

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const kubectl = async (...args: ReadonlyArray<string>) =>
  (await promisify(execFile)("kubectl", ["--kubeconfig", kubeconfig, ...args], { timeout: 30_000 })).stdout

const kubectlJson = async (...args: ReadonlyArray<string>) => JSON.parse(await kubectl(...args, "-o", "json"))

const eventually = async <A>(check: () => Promise<A>, within = 30_000): Promise<A> => {
  const deadline = Date.now() + within
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

interface Listed {
  readonly items: ReadonlyArray<{
    readonly metadata: { readonly name: string; readonly uid: string }
    readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string; readonly reason: string }> }
  }>
}
const ready = (item: Listed["items"][number]) => item.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true

let dev: ChildProcess
let operatorUrl = ""
let storeUrl = ""
let output = ""

beforeAll(async () => {
  const storePort = await freePort()
  storeUrl = `http://127.0.0.1:${storePort}`
  dev = spawn(process.execPath, [bin, "dev", "--port", "0", "--http-port", "0", "--store-port", `${storePort}`, "--dir", dir], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kubefx dev did not start:\n${output}`)), 60_000)
    dev.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      operatorUrl ||= /operator (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? ""
      if (/applied \d+ samples/.test(output)) {
        clearTimeout(timer)
        resolve()
      }
    })
    dev.stderr!.on("data", (chunk: Buffer) => void (output += chunk.toString()))
    dev.on("exit", (code) => reject(new Error(`kubefx dev exited with ${code}:\n${output}`)))
  })
}, 90_000)

afterAll(() => {
  if (dev.exitCode === null) dev.kill("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
})

const metric = async (name: string) => {
  const text = await (await fetch(`${operatorUrl}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith(name))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

describe("kubefx dev", () => {
  it("brings every example's samples to Ready=True", async () => {
    for (const plural of ["widgets", "buckets", "flakies", "releases", "websites"]) {
      await eventually(async () => {
        const list: Listed = await kubectlJson("get", plural, "-A")
        assert.isAbove(list.items.length, 0, plural)
        assert.isTrue(list.items.every(ready), `${plural} not all Ready`)
      })
    }
  }, 60_000)

  it("shows a Flaky with failTimes 3 as Ready=False/ReconcileError, then Ready=True, counting 3 errors", async () => {
    const watcher = spawn("kubectl", [
      "--kubeconfig", kubeconfig, "get", "flakies", "-n", "default", "--field-selector", "metadata.name=three", "-w",
      "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}/{.status.conditions[?(@.type==\"Ready\")].reason}{\"\\n\"}"
    ])
    let seen = ""
    watcher.stdout.on("data", (chunk: Buffer) => void (seen += chunk.toString()))
    await new Promise((resolve) => setTimeout(resolve, 500)) // the watch is open before the Flaky exists
    const errorsBefore = await metric("controller_runtime_reconcile_errors_total{controller=\"flaky\"}")
    const apply = spawn("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", "-"])
    apply.stdin.end(
      "apiVersion: demo.kubefx.dev/v1\nkind: Flaky\nmetadata:\n  name: three\n  namespace: default\nspec:\n  failTimes: 3\n  message: not yet\n"
    )
    await new Promise((resolve) => apply.on("exit", resolve))
    await eventually(async () => assert.include(seen, "True/Reconciled"))
    watcher.kill()
    const lines = seen.split("\n").filter((l) => l.length > 0)
    assert.isTrue(lines.indexOf("False/ReconcileError") >= 0, `saw ${lines.join(", ")}`)
    assert.isBelow(lines.indexOf("False/ReconcileError"), lines.indexOf("True/Reconciled"))
    assert.strictEqual(await metric("controller_runtime_reconcile_errors_total{controller=\"flaky\"}") - errorsBefore, 3)
  }, 60_000)

  it("keeps a permanent Flaky Ready=False with no further attempt scheduled", async () => {
    const apply = spawn("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", "-"])
    apply.stdin.end(
      "apiVersion: demo.kubefx.dev/v1\nkind: Flaky\nmetadata:\n  name: broken\n  namespace: default\nspec:\n  failTimes: 0\n  permanent: true\n  message: fix me\n"
    )
    await new Promise((resolve) => apply.on("exit", resolve))
    const key = await eventually(async () => {
      const view = await (await fetch(`${operatorUrl}/controllers/flaky`)).json() as {
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
    await kubectl("create", "namespace", "burst")
    const documents = Array.from({ length: 50 }, (_, i) =>
      `apiVersion: demo.kubefx.dev/v1\nkind: Bucket\nmetadata:\n  name: b-${i}\n  namespace: burst\nspec: {}\n`).join("---\n")
    const apply = spawn("kubectl", ["--kubeconfig", kubeconfig, "apply", "-f", "-"])
    apply.stdin.end(documents)
    await new Promise((resolve) => apply.on("exit", resolve))
    for (let round = 0; round < 3; round++) {
      await kubectl("label", "buckets", "--all", "-n", "burst", `round=${round}`, "--overwrite")
    }
    const buckets: Listed = await eventually(async () => {
      const list: Listed = await kubectlJson("get", "buckets", "-n", "burst")
      assert.strictEqual(list.items.filter(ready).length, 50)
      return list
    })
    const owners = new Set(buckets.items.map((b) => b.metadata.uid))
    const external = async () =>
      ((await (await fetch(`${storeUrl}/buckets`)).json()) as ReadonlyArray<{ readonly owner: string }>).filter((b) => owners.has(b.owner))
    const allocated = await external()
    assert.strictEqual(allocated.length, 50)
    assert.strictEqual(new Set(allocated.map((b) => b.owner)).size, 50)

    await kubectl("delete", "buckets", "--all", "-n", "burst", "--wait=true", "--timeout=60s")
    await eventually(async () => assert.strictEqual((await external()).length, 0))
  }, 90_000)

  it("exits 0 on SIGTERM", async () => {
    const exited = new Promise<number | null>((resolve) => dev.on("exit", (code) => resolve(code)))
    dev.kill("SIGTERM")
    assert.strictEqual(await exited, 0)
  }, 60_000)
})
