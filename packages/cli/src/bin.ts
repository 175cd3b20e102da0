/**
 * The `kubefx` command. Each subcommand is a module exporting `command`; adding one is one line
 * in `subcommands`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Operator } from "@kubefx/kube"
import { Cause, Effect, Exit } from "effect"
import { CliOutput, Command } from "effect/cli"
import * as ApiServerCommand from "./ApiServerCommand.ts"
import * as CrdCommand from "./CrdCommand.ts"
import * as DevCommand from "./DevCommand.ts"
import * as InitCommand from "./InitCommand.ts"
import * as ManifestsCommand from "./ManifestsCommand.ts"
import * as RbacCommand from "./RbacCommand.ts"

const subcommands = [
  ApiServerCommand.command,
  CrdCommand.command,
  DevCommand.command,
  InitCommand.command,
  ManifestsCommand.command,
  RbacCommand.command
] as const

// A command's failure is one line naming the command (`kubefx crd: x.ts does not exist`), on stderr.
const invoked = subcommands.map((c) => c.name).find((name) => process.argv.slice(2).includes(name))
const oneLineErrors = CliOutput.layer({
  ...CliOutput.defaultFormatter(),
  formatError: (error) => `kubefx${invoked === undefined ? "" : ` ${invoked}`}: ${error.message}`
})

const kubefx = Command.make("kubefx").pipe(
  Command.withDescription("Kubernetes reconciliation engine for TypeScript teams who write Effect"),
  Command.withSubcommands(subcommands)
)

// Started with an IPC channel, kubefx ends with its parent however the parent ends, freeing its ports.
Operator.stopWithParent()

kubefx.pipe(
  Command.run({ version: "0.1.0" }),
  Effect.provide([NodeServices.layer, oneLineErrors]),
  // Stopped by SIGINT/SIGTERM is a normal end for a long-running command: exit 0.
  (program) =>
    NodeRuntime.runMain(program, {
      teardown: (exit, onExit) =>
        onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)
    })
)
