/**
 * `npm start` as a process manager or a container runtime stops it: SIGTERM to npm ends `kubefx dev`
 * itself, and every port it opened is free again.
 */
import { afterAll, describe, expect, it } from "vitest"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { refused } from "./dev.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "kubefx-npm-start-test-"))
afterAll(async () => {
  // Should the signal not have reached it, the test still leaves nothing running.
  await new Promise((resolve) => execFile("pkill", ["-KILL", "-f", dir], resolve))
  rmSync(dir, { recursive: true, force: true })
})


const processesMentioning = (text: string) =>
  new Promise<string>((resolve) => execFile("pgrep", ["-af", text], (_, stdout) => resolve(stdout.trim())))

describe("npm start", () => {
  it("stops kubefx dev and frees its ports on SIGTERM to npm", async () => {
    const npm = spawn("npm", ["start", "--", "--port", "0", "--http-port", "0", "--store-port", "0", "--dir", dir], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    npm.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not start:\n${output}`)), 90_000)
      npm.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        if (/applied \d+ samples/.test(output)) (clearTimeout(timer), resolve())
      })
    })
    const ports = [/API server https:\/\/127\.0\.0\.1:(\d+)/, /operator http:\/\/127\.0\.0\.1:(\d+)/].map((re) => Number(re.exec(output)![1]))
    expect(await Promise.all(ports.map(refused))).toEqual([false, false])

    const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)))
    npm.kill("SIGTERM")
    await exited
    // kubefx dev itself got the signal (not only the shell npm ran it in): nothing of it is left.
    const deadline = Date.now() + 20_000
    while ((await processesMentioning(dir)) !== "" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    expect(await processesMentioning(dir)).toBe("")
    expect(await Promise.all(ports.map(refused))).toEqual([true, true])
  }, 120_000)
})
