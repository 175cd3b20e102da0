/**
 * `kubefx apiserver`: runs the embedded Kubernetes API server until SIGINT or SIGTERM. The first
 * line on stdout is exactly `kubefx apiserver listening on http://HOST:PORT` (scripts wait for
 * it); the kubeconfig for kubectl and client libraries is written before that line.
 */
import { ApiServer } from "@kubefx/apiserver"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as path from "node:path"

/** Where the kubeconfig goes unless `--kubeconfig` says otherwise. */
export const defaultKubeconfig = ".kubefx/kubeconfig"

/**
 * The `apiserver` subcommand.
 *
 * @example
 * import { Command } from "effect/cli"
 * import * as ApiServerCommand from "./ApiServerCommand.ts"
 * const kubefx = Command.make("kubefx").pipe(Command.withSubcommands([ApiServerCommand.command]))
 */
export const command = Command.make(
  "apiserver",
  {
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on; 0 picks a free one"), Flag.withDefault(0)),
    host: Flag.String("host").pipe(Flag.withDescription("Address to bind"), Flag.withDefault("127.0.0.1")),
    kubeconfig: Flag.String("kubeconfig").pipe(
      Flag.withDescription("Where to write the kubeconfig (mode 0600)"),
      Flag.withDefault(defaultKubeconfig)
    ),
    dataDir: Flag.String("data-dir").pipe(
      Flag.withDescription("Persist every acknowledged write (and the token and certificate) here and recover from it on start"),
      Flag.optional
    ),
    token: Flag.String("token").pipe(
      Flag.withDescription("Bearer token clients must send (default: random per start, or the one kept in --data-dir)"),
      Flag.optional
    )
  },
  Effect.fn("ApiServerCommand")(function*(flags) {
    const kubeconfigPath = path.resolve(flags.kubeconfig)
    const server = yield* ApiServer.make({
      port: flags.port,
      host: flags.host,
      kubeconfigPath,
      publishRootCa: true,
      ...(Option.isSome(flags.dataDir) ? { dataDir: path.resolve(flags.dataDir.value) } : {}),
      ...(Option.isSome(flags.token) ? { token: flags.token.value } : {})
    })
    yield* Console.log(`kubefx apiserver listening on ${server.url}`)
    yield* Console.log(`kubeconfig: ${kubeconfigPath} (https on the same port; kubectl --kubeconfig ${kubeconfigPath} get ns)`)
    if (Option.isSome(flags.dataDir)) yield* Console.log(`data dir: ${path.resolve(flags.dataDir.value)}`)
    return yield* Effect.never
  }, Effect.scoped)
).pipe(Command.withDescription("Run the embedded Kubernetes API server"))
