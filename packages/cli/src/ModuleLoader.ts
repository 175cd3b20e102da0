/**
 * Loading a user's operator module, as `kubefx crd|rbac|dev` do: a file, or a package directory
 * resolved through its package.json. Whatever goes wrong is one line a user can act on: the path
 * that does not exist, `file:line:column` of a syntax error, or a module that never finishes loading
 * because it starts the operator at top level.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Schema } from "effect"
import { CliError } from "effect/cli"
import { execFile } from "node:child_process"
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

/** A module could not be found, parsed or loaded; `message` is one line for the user. */
export class ModuleLoadError extends Schema.TaggedError<ModuleLoadError>()("ModuleLoadError", {
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
}

/** How long a module may take to load before kubefx gives up on it. */
export const loadTimeout = Duration.seconds(10)

const packageEntry = (dir: string): string | undefined => {
  const manifestPath = path.join(dir, "package.json")
  if (!existsSync(manifestPath)) return undefined
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { exports?: unknown; main?: unknown }
  const root = typeof manifest.exports === "object" && manifest.exports !== null && "." in manifest.exports
    ? (manifest.exports as Record<string, unknown>)["."]
    : manifest.exports
  const entry = typeof root === "string"
    ? root
    : typeof root === "object" && root !== null
    ? [(root as Record<string, unknown>).import, (root as Record<string, unknown>).default].find((e) => typeof e === "string")
    : undefined
  const chosen = entry ?? (typeof manifest.main === "string" ? manifest.main : undefined)
  return chosen === undefined ? undefined : path.resolve(dir, chosen)
}

/**
 * The file a module argument names: the file itself, or for a directory the entry its
 * package.json declares (`exports["."]`, else `main`), or its `src/index.ts`.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ModuleLoader from "./ModuleLoader.ts"
 * Effect.runSync(ModuleLoader.resolve("examples/widgets")) // "/repo/examples/widgets/src/index.ts"
 */
export const resolve = (module: string): Effect.Effect<string, ModuleLoadError> =>
  Effect.suspend(() => {
    const absolute = path.resolve(module)
    if (!existsSync(absolute)) return Effect.fail(new ModuleLoadError({ message: `${module} does not exist` }))
    if (!statSync(absolute).isDirectory()) return Effect.succeed(absolute)
    const entry = packageEntry(absolute) ?? path.join(absolute, "src", "index.ts")
    return existsSync(entry)
      ? Effect.succeed(entry)
      : Effect.fail(new ModuleLoadError({
        message: `${module} is a directory without an entry: its package.json names no main or exports, and it has no src/index.ts`
      }))
  })

// Node reports where a syntax error is only through `--check` (an ESM import says what, not where).
const syntaxLocation = (file: string): Effect.Effect<string | undefined> =>
  Effect.callback<string | undefined>((resume) => {
    execFile(process.execPath, ["--check", file], { timeout: 10_000 }, (_, __, stderr) => {
      const match = /^(.+):(\d+)\n(.*)\n(\s*)\^/m.exec(stderr)
      resume(Effect.succeed(match === null ? undefined : `${match[1]}:${match[2]}:${match[4]!.length + 1}`))
    })
  })

const failure = Effect.fnUntraced(function*(module: string, file: string, cause: unknown) {
  const error = cause instanceof Error ? cause : new Error(String(cause))
  if (error.name === "SyntaxError") {
    const location = yield* syntaxLocation(file)
    return new ModuleLoadError({ message: `${location ?? module}: SyntaxError: ${error.message}` })
  }
  return new ModuleLoadError({ message: `cannot load ${module}: ${error.message.split("\n")[0]}` })
})

// The packages whose classes and tags must be one copy for kubefx and the user's code: with two
// copies a Schema decodes nothing and a service is never found, silently.
const shared = ["effect", "@effect/platform-node"] as const

const copyOf = (pkg: string, from: string): string | undefined => {
  try {
    return realpathSync(createRequire(from).resolve(pkg))
  } catch {
    return undefined
  }
}

/**
 * Fails when the module at `file` would use another copy of `effect` or `@effect/platform-node`
 * than kubefx itself (`from`, default: this module), naming both.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ModuleLoader from "./ModuleLoader.ts"
 * Effect.runSync(ModuleLoader.checkSingleCopies("examples/widgets/src/index.ts"))
 */
export const checkSingleCopies = (file: string, from: string = import.meta.url): Effect.Effect<void, ModuleLoadError> =>
  Effect.suspend(() => {
    for (const pkg of shared) {
      const theirs = copyOf(pkg, file)
      const ours = copyOf(pkg, from)
      if (theirs !== undefined && ours !== undefined && theirs !== ours) {
        return Effect.fail(new ModuleLoadError({
          message: `two copies of ${pkg}: ${file} would use ${packageDir(theirs, pkg)}, kubefx uses ` +
            `${packageDir(ours, pkg)}; install ${pkg} once, in the project (\`npm dedupe\`), as a peer of the @kubefx packages`
        }))
      }
    }
    return Effect.void
  })

const packageDir = (resolved: string, pkg: string): string => {
  const marker = `${path.sep}node_modules${path.sep}${pkg.split("/").join(path.sep)}${path.sep}`
  const at = resolved.lastIndexOf(marker)
  return at === -1 ? resolved : resolved.slice(0, at + marker.length - 1)
}

/**
 * Imports a module (a file, or a package directory) relative to the working directory, within
 * {@link loadTimeout}.
 *
 * @example
 * import * as ModuleLoader from "./ModuleLoader.ts"
 * const exports = ModuleLoader.load("src/operator.ts")
 */
export const load = Effect.fn("ModuleLoader.load")(function*(module: string) {
  const file = yield* resolve(module)
  yield* checkSingleCopies(file)
  const imported = yield* Effect.tryPromise({
    try: () => import(pathToFileURL(file).href) as Promise<Record<string, unknown>>,
    catch: (cause) => cause
  }).pipe(
    Effect.catch((cause) => Effect.flatMap(failure(module, file, cause), Effect.fail)),
    Effect.timeoutOrElse({
      duration: loadTimeout,
      orElse: () =>
        Effect.fail(new ModuleLoadError({
          message: `${module} did not finish loading within ${Duration.format(loadTimeout)}: a module kubefx reads must not ` +
            "start the operator when imported; run Operator.main from a separate main module, or guard it with " +
            "`if (import.meta.main)`"
        }))
    })
  )
  return imported as Readonly<Record<string, unknown>>
})
