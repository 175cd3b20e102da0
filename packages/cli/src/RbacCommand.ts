/**
 * `kubefx rbac <module> [--export NAME] [--name ROLE]`: loads a TypeScript or JavaScript module,
 * finds the operators it exports (or, failing that, its controller definitions) and prints the
 * least-privilege ClusterRole each needs, with a Role per namespace its namespaced rules name, as a
 * YAML stream, ready for `kubectl apply -f -`.
 *
 * @since 0.1.0
 */
import { Controller, Operator, Rbac } from "@kubefx/kube"
import { Console, Effect, Option, Schema } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import * as ModuleLoader from "./ModuleLoader.ts"

/** The module could not be loaded or exports no (such) operator or controller. */
export class RbacCommandError extends Schema.TaggedError<RbacCommandError>()("RbacCommandError", {
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
}

/**
 * The ClusterRoles for a module's exports, each followed by the Roles of its namespaced rules: one
 * per exported operator (in export-name order, each once), or one for all its exported controllers
 * when it exports no operator; or for the one exported as `name`. `roleName` renames the role of
 * controllers (an operator's is its name).
 *
 * @example
 * import { Option } from "effect"
 * import * as RbacCommand from "./RbacCommand.ts"
 * const roles = RbacCommand.clusterRoles(await import("./operator.ts"), Option.none(), Option.none())
 */
export const clusterRoles = (
  exports: Readonly<Record<string, unknown>>,
  name: Option.Option<string>,
  roleName: Option.Option<string>
): Effect.Effect<ReadonlyArray<Rbac.ClusterRole | Rbac.Role>, RbacCommandError> => {
  const named = { name: Option.getOrUndefined(roleName) }
  if (Option.isSome(name)) {
    const value = exports[name.value]
    if (Operator.isOperator(value)) return Effect.succeed(rolesOf(value, named))
    if (Controller.isDefinition(value)) return Effect.succeed(rolesOf([value], { name: named.name ?? value.name }))
    return Effect.fail(new RbacCommandError({ message: `the module exports no operator or controller named ${name.value}` }))
  }
  const values = [...new Set(Object.values(exports))]
  const operators = values.filter(Operator.isOperator)
  if (operators.length > 0) return Effect.succeed(operators.flatMap((operator) => rolesOf(operator, named)))
  const controllers = values.filter(Controller.isDefinition)
  return controllers.length === 0
    ? Effect.fail(new RbacCommandError({ message: "the module exports no operator (Operator.make) or controller (Controller.define)" }))
    : Effect.succeed(rolesOf(controllers, named))
}

const rolesOf = (source: Parameters<typeof Rbac.roles>[0], named: { readonly name?: string | undefined }) =>
  [Rbac.clusterRole(source, named), ...Rbac.roles(source, named)]

/**
 * The YAML stream of the ClusterRoles a module's operators need.
 *
 * @example
 * import { Option } from "effect"
 * import * as RbacCommand from "./RbacCommand.ts"
 * const yaml = RbacCommand.render("src/operator.ts", Option.none(), Option.none())
 */
export const render = Effect.fn("RbacCommand.render")(function*(
  module: string,
  name: Option.Option<string>,
  roleName: Option.Option<string>
) {
  const exports = yield* ModuleLoader.load(module)
  return Rbac.toYaml(yield* clusterRoles(exports, name, roleName))
})

/**
 * The `rbac` subcommand, for the `kubefx` root command.
 *
 * @example
 * import { Command } from "effect/cli"
 * import * as RbacCommand from "./RbacCommand.ts"
 * const kubefx = Command.make("kubefx").pipe(Command.withSubcommands([RbacCommand.command]))
 */
export const command = Command.make(
  "rbac",
  {
    module: Argument.String("module").pipe(
      Argument.withDescription("Path of a module exporting an Operator.make operator or Controller.define definitions")
    ),
    export: Flag.String("export").pipe(
      Flag.withDescription("Print only the role of the operator or controller exported under this name"),
      Flag.optional
    ),
    name: Flag.String("name").pipe(
      Flag.withDescription("Name of the ClusterRole and Roles (default: the operator's name)"),
      Flag.optional
    )
  },
  ({ export: exported, module, name }) =>
    render(module, exported, name).pipe(Effect.flatMap((yaml) => Console.log(yaml.trimEnd())))
).pipe(
  Command.withDescription("Print the least-privilege ClusterRole (and namespaced Roles) an operator's controllers need, as YAML"),
  Command.withExamples([
    { command: "kubefx rbac src/operator.ts | kubectl apply -f -", description: "Install the operator's ClusterRole" },
    { command: "kubefx rbac src/operator.ts --export widgets", description: "Print one controller's role" }
  ])
)
