/**
 * `kubefx init DIR [--from PACKS]`: creates a complete operator project in DIR (see
 * ProjectTemplate). With `--from`, the @kubefx packages come from a folder of `npm run pack`
 * tarballs, copied into the project's `vendor/` so it installs (and builds its image) on its own.
 * DIR must not exist or be empty; its name must be a DNS-1123 label. Nothing is written when a
 * check fails.
 *
 * @since 0.1.0
 */
import { Console, Effect, Option, Schema } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import * as ProjectTemplate from "./ProjectTemplate.ts"

/** The project cannot be created as asked; nothing was written. */
export class InitCommandError extends Schema.TaggedError<InitCommandError>()("InitCommandError", {
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
}

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/**
 * Why `name` cannot name a project (a DNS-1123 label: it becomes the operator's, the package's and
 * the API group's name), or undefined when it can.
 *
 * @example
 * import * as InitCommand from "./InitCommand.ts"
 * InitCommand.invalidName("my-operator") // undefined
 * InitCommand.invalidName("My_Operator") // "..."
 */
export const invalidName = (name: string): string | undefined =>
  name.length > 63
    ? `"${name}" is longer than 63 characters`
    : dns1123Label.test(name)
    ? undefined
    : `"${name}" is not a valid name: use lowercase letters, digits and '-', starting and ending with a letter or digit (DNS-1123)`

const packageNames = ["core", "schema", "apiserver", "kube", "cli", "testing"] as const

// The tarball of each @kubefx package in `from` (kubefx-<name>-<version>.tgz).
const tarballs = (from: string): Effect.Effect<Record<(typeof packageNames)[number], string>, InitCommandError> =>
  Effect.suspend(() => {
    if (!existsSync(from) || !statSync(from).isDirectory()) {
      return Effect.fail(new InitCommandError({ message: `--from ${from}: no such directory (run npm run pack in kubefx first)` }))
    }
    const entries = readdirSync(from)
    const found: Partial<Record<(typeof packageNames)[number], string>> = {}
    for (const name of packageNames) {
      const tarball = entries.filter((e) => new RegExp(`^kubefx-${name}-\\d+\\.\\d+\\.\\d+.*\\.tgz$`).test(e)).sort().at(-1)
      if (tarball === undefined) {
        return Effect.fail(new InitCommandError({ message: `--from ${from}: no kubefx-${name}-*.tgz in it (run npm run pack in kubefx)` }))
      }
      found[name] = tarball
    }
    return Effect.succeed(found as Record<(typeof packageNames)[number], string>)
  })

/**
 * Creates the project; returns the files written.
 *
 * @example
 * import { Option } from "effect"
 * import * as InitCommand from "./InitCommand.ts"
 * const created = InitCommand.init("my-operator", Option.none())
 */
export const init = Effect.fn("InitCommand.init")(function*(dir: string, from: Option.Option<string>) {
  const root = path.resolve(dir)
  const name = path.basename(root)
  const invalid = invalidName(name)
  if (invalid !== undefined) return yield* new InitCommandError({ message: invalid })
  if (existsSync(root) && (!statSync(root).isDirectory() || readdirSync(root).length > 0)) {
    return yield* new InitCommandError({ message: `${dir} exists and is not empty: nothing written` })
  }
  const packs = Option.isSome(from) ? yield* tarballs(path.resolve(from.value)) : undefined
  const kubefx = packs === undefined
    ? { core: "0.1.0", kube: "0.1.0", cli: "0.1.0", testing: "0.1.0" }
    : {
      core: `file:vendor/${packs.core}`,
      schema: `file:vendor/${packs.schema}`,
      apiserver: `file:vendor/${packs.apiserver}`,
      kube: `file:vendor/${packs.kube}`,
      cli: `file:vendor/${packs.cli}`,
      testing: `file:vendor/${packs.testing}`
    }
  const files = ProjectTemplate.files({ name, kubefx })
  for (const file of files) {
    mkdirSync(path.dirname(path.join(root, file.path)), { recursive: true })
    writeFileSync(path.join(root, file.path), file.text)
  }
  if (packs !== undefined && Option.isSome(from)) {
    for (const tarball of Object.values(packs)) copyFileSync(path.join(from.value, tarball), path.join(root, "vendor", tarball))
  }
  return files.map((file) => file.path)
})

/**
 * The `init` subcommand.
 *
 * @example
 * import { Command } from "effect/cli"
 * import * as InitCommand from "./InitCommand.ts"
 * const kubefx = Command.make("kubefx").pipe(Command.withSubcommands([InitCommand.command]))
 */
export const command = Command.make(
  "init",
  {
    dir: Argument.String("dir").pipe(Argument.withDescription("The project's directory (must not exist or be empty); its name names the operator")),
    from: Flag.String("from").pipe(
      Flag.withDescription("Take the @kubefx packages from this folder of `npm run pack` tarballs instead of the registry"),
      Flag.optional
    )
  },
  ({ dir, from }) =>
    init(dir, from).pipe(Effect.flatMap((written) =>
      Console.log([
        `kubefx init: created ${dir} (${written.length} files)`,
        "",
        `  cd ${dir}`,
        "  npm install && npm start   # the operator on the embedded API server",
        "  npm install && npm test    # its tests"
      ].join("\n"))
    ))
).pipe(
  Command.withDescription("Create a new operator project: a custom resource, its controller, a test, a Dockerfile"),
  Command.withExamples([
    { command: "kubefx init my-operator", description: "A project taking the @kubefx packages from the registry" },
    { command: "kubefx init my-operator --from ../kubefx/.packs", description: "From locally packed tarballs" }
  ])
)
