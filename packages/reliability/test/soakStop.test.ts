/**
 * `npm run soak` stopped part-way: SIGTERM ends it, and the API server process it started goes
 * with it (its port refuses connections, its process is gone).
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const runSoak = fileURLToPath(new URL("../src/runSoak.ts", import.meta.url))

// An exited process whose parent is gone may stay a zombie (state Z) until init reads its status.
const running = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

describe("npm run soak, stopped", () => {
  it("by SIGTERM after its first sample, stops the API server it started", async () => {
    // Its temporary files go in a directory of the test's, where none of them is left once the soak
    // has stopped as it should.
    const tmp = mkdtempSync(join(tmpdir(), "kubefx-soak-stop-"))
    const soak = spawn(process.execPath, ["--conditions=@kubefx/source", runSoak, "--minutes", "5", "--sample", "2"], {
      env: { ...process.env, TMPDIR: tmp },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    soak.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    soak.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => soak.once("exit", (code) => resolve(code)))
    let server: { readonly url: string; readonly pid: number } | undefined
    try {
      // The server line, then a first sample: the churn is under way.
      for (let waited = 0; waited < 1200; waited++) {
        const found = /API server (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)[\s\S]*\n\s+\d+\s+\d+/.exec(output)
        if (found !== null) {
          server = { url: found[1]!, pid: Number(found[2]) }
          break
        }
        if (soak.exitCode !== null) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.isDefined(server, `no server line and sample in:\n${output}`)
      assert.isTrue(running(server!.pid))
      soak.kill("SIGTERM")
      assert.strictEqual(await exited, 130, output)
      assert.isFalse(running(server!.pid), "the API server outlived the soak")
      const refused = await fetch(`${server!.url}/healthz`).then(() => false, () => true)
      assert.isTrue(refused, `${server!.url} still answers`)
      // Node's compile cache, which the kubefx bin keeps there, is meant to outlive the soak.
      assert.deepStrictEqual(readdirSync(tmp).filter((name) => name !== "node-compile-cache"), [], "the soak left files behind")
    } finally {
      soak.kill("SIGKILL")
      if (server !== undefined && running(server.pid)) process.kill(server.pid, "SIGKILL")
      rmSync(tmp, { recursive: true, force: true })
    }
  })
})
