/**
 * Runs `connect.ts` in a process of its own, as an operator starts, and reads the line it prints:
 * for the start bench (its times and RSS) and the KubeConfig tests (what it listed and loaded).
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

/** What `connect.ts` prints. */
export interface Connected {
  readonly names: ReadonlyArray<string>
  /** Whether `@kubernetes/client-node` was ever imported. */
  readonly clientNode: boolean
  /** Whether the CEL interpreter (`@bufbuild/cel`) was ever imported. */
  readonly cel: boolean
  /** From the process's start to the list's answer. */
  readonly readyMs: number
  readonly rssMb: number
}

const script = fileURLToPath(new URL("./connect.ts", import.meta.url))

/**
 * Starts `connect.ts` with `args` (`InCluster <directory>`, `File <kubeconfig>`, `Default`) in
 * `env`; fails when it exits with an error, and kills it when interrupted. It loads the packages'
 * TypeScript sources, or with `compiled` their built JavaScript (`npm run build`), as a packed
 * install does.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Connected from "./connected.ts"
 * const started = Effect.runPromise(Connected.run(["File", ".kubefx/kubeconfig"]))
 */
export const run = (
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = process.env,
  options: { readonly compiled?: boolean } = {}
): Effect.Effect<Connected, Error> =>
  Effect.callback<Connected, Error>((resume) => {
    const conditions = options.compiled === true ? [] : ["--conditions=@kubefx/source"]
    const child = execFile(process.execPath, [...conditions, script, ...args], { env }, (error, stdout) =>
      resume(error === null ? Effect.succeed(JSON.parse(stdout.trim().split("\n").pop()!)) : Effect.fail(error)))
    return Effect.sync(() => child.kill("SIGKILL"))
  })
