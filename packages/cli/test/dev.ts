/**
 * Runs `kubefx dev` in a child process on free ports, as users run it, for end-to-end tests.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { connect, createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const bin = fileURLToPath(new URL("../bin/kubefx.js", import.meta.url))

/** A free loopback port (for servers that cannot be told to pick one). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

export interface Dev {
  readonly process: ChildProcess
  /** The operator's HTTP server: dashboard, probes, metrics, controllers. */
  readonly operatorUrl: string
  /** The examples' fake object store. */
  readonly storeUrl: string
  readonly kubeconfig: string
  /** What it printed so far. */
  readonly output: () => string
  /** `kubectl --kubeconfig <its kubeconfig> ...args`, with `stdin` if given; resolves to stdout. */
  readonly kubectl: (args: ReadonlyArray<string>, stdin?: string) => Promise<string>
  /** SIGTERM, then SIGKILL if it has not exited within 20 s. */
  readonly stop: () => Promise<void>
}

export interface StartOptions {
  /** The `kubefx` to run (default: the repository's). */
  readonly bin?: string
  /** Where to run it (default: the repository root, whose examples it then runs). */
  readonly cwd?: string
  /** Operator modules to run instead of the examples. */
  readonly modules?: ReadonlyArray<string>
  /** More flags, such as `--data-dir`. */
  readonly args?: ReadonlyArray<string>
  /** Run `npm start -- <flags>` in `cwd` instead (a project whose start script is `kubefx dev`). */
  readonly npm?: boolean
}

/**
 * Starts `kubefx dev` (from the repository root with the examples, unless `options` say otherwise)
 * with the embedded API server and the operator on free ports, writing into `dir`; resolves once it
 * applied the samples.
 */
export const startDev = async (dir: string, options: StartOptions = {}): Promise<Dev> => {
  const storePort = await freePort()
  const flags = ["--port", "0", "--http-port", "0", "--store-port", `${storePort}`, "--dir", dir, ...(options.args ?? [])]
  const [command, args] = options.npm === true
    ? ["npm", ["start", "--", ...flags]]
    : [process.execPath, [options.bin ?? bin, "dev", ...(options.modules ?? []), ...flags]]
  // kubefx started with an IPC channel ends with this process, however this process ends.
  const child = spawn(command, args, {
    cwd: options.cwd ?? root,
    stdio: options.npm === true ? ["ignore", "pipe", "pipe"] : ["ignore", "pipe", "pipe", "ipc"]
  })
  let output = ""
  let operatorUrl = ""
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kubefx dev did not start:\n${output}`)), 60_000)
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      operatorUrl ||= /operator (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? ""
      if (/applied \d+ samples/.test(output)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.stderr!.on("data", (chunk: Buffer) => void (output += chunk.toString()))
    child.on("exit", (code) => reject(new Error(`kubefx dev exited with ${code}:\n${output}`)))
  })
  const kubeconfig = join(dir, "kubeconfig")
  const kubectl = (args: ReadonlyArray<string>, stdin?: string) =>
    new Promise<string>((resolve, reject) => {
      const run = execFile("kubectl", ["--kubeconfig", kubeconfig, ...args], { timeout: 30_000 }, (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`kubectl ${args.join(" ")}: ${stderr || error.message}`)))
      run.stdin?.end(stdin ?? "")
    })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    await exited
    clearTimeout(timer)
  }
  return { process: child, operatorUrl, storeUrl: `http://127.0.0.1:${storePort}`, kubeconfig, output: () => output, kubectl, stop }
}

/** Retries `check` every 200 ms until it resolves, for at most `within` ms; then rethrows its error. */
export const eventually = async <A>(check: () => Promise<A>, within = 30_000): Promise<A> => {
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

/** Whether nothing listens on the loopback `port` any more. */
export const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), resolve(false)))
    socket.once("error", () => resolve(true))
  })
