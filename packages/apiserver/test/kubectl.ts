/**
 * The real kubectl against a test server: runs it with the server's kubeconfig and a private cache
 * and HOME, in namespace default unless the arguments say otherwise.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import type * as ApiServer from "../src/ApiServer.ts"
import * as Testing from "../src/Testing.ts"

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * kubectl bound to `server` (in namespace `default`, or `options.namespace`; null for the
 * kubeconfig's, as multi-namespace manifests need); `killAll` ends what `background` started.
 *
 * @example
 * const { ok } = forServer(server)
 * await ok("get", "namespaces")
 */
export const forServer = (server: () => Testing.TestServer, options: { readonly namespace?: string | null } = {}) => {
  const children = new Set<ChildProcess>()
  const namespace = options.namespace === undefined ? ["-n", "default"] : options.namespace === null ? [] : ["-n", options.namespace]
  const baseArgs = () => ["--kubeconfig", server().kubeconfigPath, "--cache-dir", join(server().dir, "cache"), ...namespace]
  const env = () => ({ ...process.env, HOME: server().dir })

  const kubectl = (...args: ReadonlyArray<string>): Promise<Run> =>
    new Promise((resolve) => {
      execFile("kubectl", [...baseArgs(), ...args], { timeout: 30_000, env: env() }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      })
    })

  const ok = async (...args: ReadonlyArray<string>) => {
    const run = await kubectl(...args)
    if (run.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${run.code}): ${run.stderr}`)
    return run.stdout
  }

  /** Starts kubectl in the background; resolves lines as they come and the exit when it ends. */
  const background = (...args: ReadonlyArray<string>) => {
    const child = spawn("kubectl", [...baseArgs(), ...args], { env: env() })
    children.add(child)
    const lines: Array<string> = []
    let buffer = ""
    child.stdout.on("data", (data: Buffer) => {
      buffer += data.toString()
      const parts = buffer.split("\n")
      buffer = parts.pop() ?? ""
      lines.push(...parts)
    })
    let stderr = ""
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()))
    const exited = new Promise<number>((resolve) =>
      child.on("exit", (code) => {
        children.delete(child)
        resolve(code ?? -1)
      })
    )
    // Up to 10 s for a printed line that `found` accepts; the lines so far either way.
    const waitForLine = async (found: (lines: ReadonlyArray<string>) => boolean) => {
      for (let i = 0; i < 200 && !found(lines); i++) await new Promise((r) => setTimeout(r, 50))
      return lines
    }
    const waitForLines = (n: number) => waitForLine((printed) => printed.length >= n)
    return { child, lines, exited, waitForLines, waitForLine, stderr: () => stderr }
  }

  /** Writes `content` (an object as JSON, or text such as YAML) into the server's directory. */
  const file = (name: string, content: unknown) => {
    const path = join(server().dir, name)
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
    return path
  }

  const killAll = () => {
    for (const child of children) child.kill("SIGKILL")
  }

  return { kubectl, ok, background, file, killAll }
}

/**
 * A server for the whole test file, started before its tests and closed after them (with every
 * kubectl it started), and kubectl bound to it.
 *
 * @example
 * const { ok, server } = withServer({ namespace: null })
 * it("lists", async () => { await ok("get", "namespaces"); server().request("GET", "/api") })
 */
export const withServer = (options: { readonly namespace?: string | null; readonly server?: ApiServer.Options } = {}) => {
  let current: Testing.TestServer | undefined
  const server = () => current!
  const bound = forServer(server, options.namespace === undefined ? {} : { namespace: options.namespace })
  beforeAll(async () => {
    current = await Testing.start(options.server)
  })
  afterAll(async () => {
    bound.killAll()
    await current?.close()
  })
  return { ...bound, server }
}
