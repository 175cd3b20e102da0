/**
 * Child processes of a scenario: `kubefx apiserver`, `kubefx dev` and operator scripts, run by this
 * Node with the `@kubefx/source` condition. Each is killed by its recorded PID only, and whatever
 * is still running when the scope closes is SIGKILLed, so a test never leaves a process behind;
 * each also has an IPC channel to this process, whose closing stops it should the test runner
 * itself be killed.
 */
import { Deferred, Duration, Effect, Schema, type Scope } from "effect"
import { spawn as spawnProcess } from "node:child_process"
import { fileURLToPath } from "node:url"

/** A child did not print what was awaited, or exited first. */
export class ChildError extends Schema.TaggedError<ChildError>()("ChildError", { message: Schema.String }) {}

export interface Exit {
  readonly code: number | null
  readonly signal: string | null
  /** `Date.now()` when the exit was seen. */
  readonly at: number
}

export interface Child {
  readonly name: string
  readonly pid: number
  /** The output so far (stdout and stderr interleaved; the last 256 KiB). */
  readonly output: () => string
  /** Waits until the output matches `pattern`; fails if the child exits first or `within` passes. */
  readonly waitFor: (pattern: RegExp, within?: Duration.Input) => Effect.Effect<RegExpExecArray, ChildError>
  readonly exited: Effect.Effect<Exit>
  readonly isRunning: () => boolean
  /** Sends `signal` to the recorded PID and waits for the exit. */
  readonly kill: (signal?: NodeJS.Signals) => Effect.Effect<Exit>
}

const outputLimit = 256 * 1024

/** The `kubefx` bin of this checkout. */
export const kubefxBin = fileURLToPath(new URL("../../cli/bin/kubefx.js", import.meta.url))

/** The repository root, where `kubefx dev` finds the examples. */
export const root = fileURLToPath(new URL("../../..", import.meta.url))

/**
 * Starts `node --conditions=@kubefx/source ...args`; SIGKILLed when the scope closes if still running.
 *
 * @example
 * import * as Processes from "./Processes.ts"
 * const server = Processes.node("apiserver", [Processes.kubefxBin, "apiserver", "--port", "0"])
 */
export const node = (
  name: string,
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string>> | undefined; readonly nodeOptions?: ReadonlyArray<string> } = {}
): Effect.Effect<Child, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawnProcess(process.execPath, ["--conditions=@kubefx/source", ...(options.nodeOptions ?? []), ...args], {
        cwd: root,
        env: { ...process.env, ...options.env },
        // kubefx and Operator.main stop when this channel closes: when this process ends, however it ends.
        stdio: ["ignore", "pipe", "pipe", "ipc"]
      })
      const pid = child.pid!
      let output = ""
      const listeners = new Set<() => void>()
      const append = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-outputLimit)
        for (const listener of [...listeners]) listener()
      }
      child.stdout!.on("data", append)
      child.stderr!.on("data", append)
      const exited = Deferred.makeUnsafe<Exit>()
      let running = true
      child.on("exit", (code, signal) => {
        running = false
        Deferred.doneUnsafe(exited, Effect.succeed({ code, signal, at: Date.now() }))
        for (const listener of [...listeners]) listener()
      })

      const waitFor = (pattern: RegExp, within: Duration.Input = "60 seconds") =>
        Effect.callback<RegExpExecArray, ChildError>((resume) => {
          const check = () => {
            const match = pattern.exec(output)
            if (match !== null) resume(Effect.succeed(match))
            else if (!running) resume(Effect.fail(new ChildError({ message: `${name} exited before printing ${pattern}:\n${output}` })))
            else return
            listeners.delete(check)
          }
          listeners.add(check)
          check()
          return Effect.sync(() => listeners.delete(check))
        }).pipe(
          Effect.timeoutOrElse({
            duration: within,
            orElse: () => Effect.fail(new ChildError({ message: `${name} did not print ${pattern}:\n${output.slice(-4000)}` }))
          })
        )

      const kill = (signal: NodeJS.Signals = "SIGKILL") =>
        Effect.suspend(() => {
          try {
            if (running) process.kill(pid, signal)
          } catch (error) {
            // Gone already, its exit not yet reported (ESRCH): nothing left to signal.
            if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
          }
          return Deferred.await(exited)
        })

      return {
        name,
        pid,
        output: () => output,
        waitFor,
        exited: Deferred.await(exited),
        isRunning: () => running,
        kill
      } satisfies Child
    }),
    (child) => child.kill("SIGKILL")
  )

/**
 * Starts `kubefx apiserver` on `port` (0: a free one) with a fixed token, and a data directory
 * unless none is given (the store then lives in memory), and waits until it listens.
 *
 * @example
 * import * as Processes from "./Processes.ts"
 * const server = Processes.apiserver({ port: 0, kubeconfig: "/tmp/k/kubeconfig", dataDir: "/tmp/k/data", token: "t" })
 */
export const apiserver = (options: {
  readonly port: number
  readonly kubeconfig: string
  readonly dataDir?: string | undefined
  readonly token: string
}) =>
  Effect.gen(function*() {
    const child = yield* node("kubefx apiserver", [
      kubefxBin,
      "apiserver",
      "--port",
      String(options.port),
      "--kubeconfig",
      options.kubeconfig,
      ...(options.dataDir === undefined ? [] : ["--data-dir", options.dataDir]),
      "--token",
      options.token
    ])
    const match = yield* child.waitFor(/listening on (http:\/\/127\.0\.0\.1:(\d+))/)
    return { child, url: match[1]!, port: Number(match[2]) }
  })

/**
 * Starts `kubefx dev --kubeconfig` with `modules` and waits until its operator runs.
 *
 * @example
 * import * as Processes from "./Processes.ts"
 * const dev = Processes.dev({ kubeconfig: "/tmp/k/kubeconfig", dir: "/tmp/k/dev", storePort: 8090, modules: ["m.ts"] })
 */
export const dev = (options: {
  readonly kubeconfig: string
  readonly dir: string
  readonly storePort: number
  readonly modules: ReadonlyArray<string>
}) =>
  Effect.gen(function*() {
    const child = yield* node("kubefx dev", [
      kubefxBin,
      "dev",
      "--kubeconfig",
      options.kubeconfig,
      "--http-port",
      "0",
      "--store-port",
      String(options.storePort),
      "--dir",
      options.dir,
      ...options.modules
    ])
    yield* child.waitFor(/applied \d+ samples/)
    return child
  })
