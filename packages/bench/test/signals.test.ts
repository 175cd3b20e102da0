/**
 * `npm run bench` stopped part-way: SIGTERM interrupts it, so its scopes close, its children are
 * killed and its temporary files removed before it exits; SIGKILL runs none of that, and its
 * children then end by themselves when their IPC channel to it closes.
 */
import { assert, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

// A process's parent and state from /proc (the fields after the parenthesised name); undefined once
// it is gone. A zombie (state Z) has exited and only waits for its parent to read its status.
// Its CPU seconds count user and system time in clock ticks of 1/100 s.
const stat = (pid: number): { readonly ppid: number; readonly state: string; readonly cpuSeconds: number } | undefined => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return { state: fields[0]!, ppid: Number(fields[1]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 }
  } catch {
    return undefined
  }
}
const running = (pid: number) => {
  const state = stat(pid)?.state
  return state !== undefined && state !== "Z"
}
const childrenOf = (parent: number, script: string) =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    if (stat(pid)?.ppid !== parent) return false
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(script)
    } catch {
      return false
    }
  })

const poll = async <A>(what: string, check: () => A | undefined, seconds: number): Promise<A> => {
  for (let waited = 0; waited < seconds * 10; waited++) {
    const found = check()
    if (found !== undefined) return found
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`waited ${seconds} s for ${what}`)
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode)
    else child.once("exit", (code) => resolve(code))
  })

// A bench run with `args`, once its child running `script` has used `cpuSeconds` (a child still
// starting dies of its first message to a parent gone, whatever ends it): the bench, the child's pid
// and the bench's temporary directory.
const withBusyChild = async (
  args: ReadonlyArray<string>,
  script: string,
  cpuSeconds: number,
  use: (bench: ChildProcess, child: number, tmp: string) => Promise<void>
) => {
  // Its temporary files go in a directory of the test's: a bench SIGKILLed cannot remove them.
  const tmp = mkdtempSync(join(tmpdir(), "kubefx-bench-signals-"))
  const bench = spawn(process.execPath, ["--conditions=@kubefx/source", main, ...args], {
    env: { ...process.env, TMPDIR: tmp },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  bench.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  let child: number | undefined
  try {
    child = await poll(script, () => childrenOf(bench.pid!, script)[0], 120)
    const pid = child
    await poll(`${script} at work`, () => (stat(pid)?.cpuSeconds ?? 0) >= cpuSeconds ? true : undefined, 60)
    await use(bench, child, tmp)
  } catch (error) {
    throw new Error(`${String(error)}\n${stderr}`)
  } finally {
    bench.kill("SIGKILL")
    if (child !== undefined && running(child)) process.kill(child, "SIGKILL")
    rmSync(tmp, { recursive: true, force: true })
  }
}

// The fleet's kubefx contestant is the child that outlives a dead parent if nothing ends it: its
// controller retries the vanished API server for ever. 6,000 Widgets keep it busy for seconds
// after its first 1.5 CPU s.
const withKubefxChild = (use: (bench: ChildProcess, kubefx: number, tmp: string) => Promise<void>) =>
  withBusyChild(["--only", "fleet", "--fleet", "6000", "--pairs", "1"], "children/FleetKubefx.ts", 1.5, use)

describe("npm run bench, stopped", () => {
  it("by SIGTERM, ends every process it started before it exits", async () => {
    await withKubefxChild(async (bench, kubefx, tmp) => {
      assert.isTrue(running(kubefx))
      bench.kill("SIGTERM")
      // Interrupted, as any Effect main stopped by a signal.
      assert.strictEqual(await exited(bench), 130)
      assert.isFalse(running(kubefx), "the kubefx contestant outlived the bench")
      assert.deepStrictEqual(readdirSync(tmp), [], "the bench left files behind")
    })
  })

  it("by SIGKILL, which runs none of its finalizers, leaves no child running", async () => {
    await withKubefxChild(async (bench, kubefx) => {
      bench.kill("SIGKILL")
      await exited(bench)
      await poll("the kubefx contestant to end", () => running(kubefx) ? undefined : true, 30)
    })
  })

  // The engine bench, the full run's first step, is a script run as it is (it is also run by hand);
  // at full size it works for more than ten seconds, well past the wait below.
  it("by SIGKILL, also ends the scripts it runs to completion", async () => {
    await withBusyChild([], "core/bench/engine.ts", 1, async (bench, engine) => {
      bench.kill("SIGKILL")
      await exited(bench)
      await poll("the engine bench to end", () => running(engine) ? undefined : true, 5)
    })
  })
})
