/**
 * What `kubefx dev` runs: TypeScript modules, each exporting the pieces of an operator.
 *
 * - `definition` (or `definitions`): controllers declared with `Controller.define`;
 * - custom resources (any export declared with `Resource.custom`): their CRDs are installed;
 * - `samples`: a directory URL whose `*.yaml` files are applied once everything runs;
 * - `webhooks` (optional): admission webhooks (`Webhook.validating`, `Webhook.mutating`) and the
 *   conversion webhook of resources with several versions (`Webhook.conversion`), served over
 *   HTTPS and registered with the embedded API server for the session;
 * - `layer` (optional): services the controllers need, built for the life of the session.
 *
 * Without module arguments, `kubefx dev` runs every `examples/<name>/src/index.ts` under the
 * current directory.
 */
import { Controller, type Crd, Webhook, Yaml } from "@kubefx/kube"
import { Effect, Layer, Option, Schema } from "effect"
import { CliError } from "effect/cli"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as CrdCommand from "./CrdCommand.ts"
import * as ModuleLoader from "./ModuleLoader.ts"

/** A module could not be loaded or does not export what `kubefx dev` needs. */
export class DevModuleError extends Schema.TaggedError<DevModuleError>()("DevModuleError", {
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
}

export interface DevModule {
  readonly path: string
  readonly definitions: ReadonlyArray<Controller.Any<unknown>>
  readonly resources: ReadonlyArray<Crd.CustomResource>
  /** The sample documents, parsed, in file order. */
  readonly samples: ReadonlyArray<{ readonly file: string; readonly document: Record<string, unknown> }>
  readonly webhooks: ReadonlyArray<Webhook.Webhook<unknown> | Webhook.Conversion>
  readonly layer: Layer.Layer<any, unknown> | undefined
}

/**
 * The example modules under `root`: every `examples/<name>/src/index.ts`.
 *
 * @example
 * import * as DevModule from "./DevModule.ts"
 * DevModule.discover(process.cwd()) // ["/repo/examples/buckets/src/index.ts", ...]
 */
export const discover = (root: string): ReadonlyArray<string> => {
  const examples = path.join(root, "examples")
  if (!existsSync(examples)) return []
  return readdirSync(examples, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(examples, entry.name, "src", "index.ts"))
    .filter(existsSync)
    .sort()
}

/**
 * Loads one module and reads its exports.
 *
 * @example
 * import * as DevModule from "./DevModule.ts"
 * const widgets = DevModule.load("examples/widgets/src/index.ts")
 */
export const load = (file: string): Effect.Effect<DevModule, DevModuleError | ModuleLoader.ModuleLoadError> =>
  Effect.gen(function*() {
    const exports = yield* ModuleLoader.load(file)
    const definitions = [
      ...(Controller.isDefinition(exports.definition) ? [exports.definition] : []),
      ...(Array.isArray(exports.definitions) ? exports.definitions.filter(Controller.isDefinition) : [])
    ]
    if (definitions.length === 0) {
      return yield* new DevModuleError({ message: `${file} exports no controller: export a \`definition\` made with Controller.define` })
    }
    const resources = yield* CrdCommand.customResources(exports, Option.none()).pipe(Effect.orElseSucceed(() => []))
    const samples = exports.samples instanceof URL ? yield* readSamples(exports.samples) : []
    return {
      path: path.resolve(file),
      definitions,
      resources,
      samples,
      webhooks: Array.isArray(exports.webhooks)
        ? exports.webhooks.filter((w: unknown) => Webhook.isWebhook(w) || Webhook.isConversion(w))
        : [],
      layer: Layer.isLayer(exports.layer) ? exports.layer as Layer.Layer<any, unknown> : undefined
    }
  })

const readSamples = (directory: URL) =>
  Effect.try({
    try: () => {
      const dir = fileURLToPath(directory)
      if (!existsSync(dir)) return []
      return readdirSync(dir)
        .filter((name) => /\.ya?ml$/.test(name))
        .sort()
        .flatMap((name) => {
          const file = path.join(dir, name)
          return Yaml.parseObjects(readFileSync(file, "utf8")).map((document) => ({ file, document }))
        })
    },
    catch: (error) => new DevModuleError({ message: `cannot read samples in ${directory.href}: ${error instanceof Error ? error.message : String(error)}` })
  })
