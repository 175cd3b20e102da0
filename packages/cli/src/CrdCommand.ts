/**
 * `kubefx crd <module> [--export NAME]`: loads a TypeScript or JavaScript module, finds the custom
 * `Resource`s it exports (or the one named) and prints their CustomResourceDefinitions as a YAML
 * stream, ready for `kubectl apply -f -`.
 *
 * @since 0.1.0
 */
import { Crd, type Resource } from "@kubefx/kube"
import { Console, Effect, Option, Predicate, Schema } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import * as ModuleLoader from "./ModuleLoader.ts"

/** The module could not be loaded or exports no (such) custom resource. */
export class CrdCommandError extends Schema.TaggedError<CrdCommandError>()("CrdCommandError", {
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
}

const isResource = (value: unknown): value is Resource.Resource<any> =>
  Predicate.hasProperty(value, "kind") && typeof value.kind === "string" &&
  Predicate.hasProperty(value, "plural") && typeof value.plural === "string" &&
  Predicate.hasProperty(value, "apiVersion") && typeof value.apiVersion === "string" &&
  Predicate.hasProperty(value, "schema") && Schema.isSchema(value.schema) &&
  Predicate.hasProperty(value, "custom")

/**
 * The custom resources among a module's exports, in export-name order, each once; or the one
 * exported as `name`.
 *
 * @example
 * import { Option } from "effect"
 * import * as CrdCommand from "./CrdCommand.ts"
 * const resources = CrdCommand.customResources(await import("./widget.ts"), Option.none())
 */
export const customResources = (
  exports: Readonly<Record<string, unknown>>,
  name: Option.Option<string>
): Effect.Effect<ReadonlyArray<Crd.CustomResource>, CrdCommandError> => {
  if (Option.isSome(name)) {
    const value = exports[name.value]
    return isResource(value) && Crd.isCustom(value)
      ? Effect.succeed([value])
      : Effect.fail(new CrdCommandError({ message: `the module exports no custom Resource named ${name.value}` }))
  }
  const found = [...new Set(Object.values(exports).filter((v) => isResource(v) && Crd.isCustom(v)))] as Array<Crd.CustomResource>
  return found.length === 0
    ? Effect.fail(new CrdCommandError({ message: "the module exports no custom Resource (declared with Resource.custom)" }))
    : Effect.succeed(found)
}

/**
 * The YAML stream of the CRDs of a module's custom resources.
 *
 * @example
 * import { Option } from "effect"
 * import * as CrdCommand from "./CrdCommand.ts"
 * const yaml = CrdCommand.render("src/resources.ts", Option.some("Widget"))
 */
export const render = Effect.fn("CrdCommand.render")(function*(module: string, name: Option.Option<string>) {
  const resources = yield* customResources(yield* ModuleLoader.load(module), name)
  return Crd.toYaml(resources.map((resource) => Crd.make(resource)))
})

/**
 * The `crd` subcommand, for the `kubefx` root command.
 *
 * @example
 * import { Command } from "effect/cli"
 * import * as CrdCommand from "./CrdCommand.ts"
 * const kubefx = Command.make("kubefx").pipe(Command.withSubcommands([CrdCommand.command]))
 */
export const command = Command.make(
  "crd",
  {
    module: Argument.String("module").pipe(
      Argument.withDescription("Path of a module exporting Resource.custom declarations, relative to the working directory")
    ),
    export: Flag.String("export").pipe(
      Flag.withDescription("Print only the resource exported under this name"),
      Flag.optional
    )
  },
  ({ export: name, module }) => render(module, name).pipe(Effect.flatMap((yaml) => Console.log(yaml.trimEnd())))
).pipe(
  Command.withDescription("Print the CustomResourceDefinitions of a module's custom resources as YAML"),
  Command.withExamples([
    { command: "kubefx crd src/resources.ts | kubectl apply -f -", description: "Install every CRD of a module" },
    { command: "kubefx crd src/resources.ts --export Widget", description: "Print one resource's CRD" }
  ])
)
