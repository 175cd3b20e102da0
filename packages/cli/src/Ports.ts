/**
 * Whether the ports a command is about to listen on are free, checked before it touches anything:
 * a start that would fail on a busy port must not first overwrite what another running instance
 * wrote (its kubeconfig, its log).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { createServer } from "node:net"

/**
 * True when nothing listens on `port` at `host` (port 0, "any free one", is always free).
 *
 * @example
 * import { Effect } from "effect"
 * import * as Ports from "./Ports.ts"
 * Effect.runPromise(Ports.isFree("127.0.0.1", 6443)) // true when nothing listens there
 */
export const isFree = (host: string, port: number): Effect.Effect<boolean> =>
  port === 0
    ? Effect.succeed(true)
    : Effect.callback<boolean>((resume) => {
      const probe = createServer()
      probe.once("error", () => resume(Effect.succeed(false)))
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resume(Effect.succeed(true))))
    })

/**
 * The named ports among `ports` that are in use, as "port N is in use (--flag)" lines.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Ports from "./Ports.ts"
 * Effect.runPromise(Ports.busy("127.0.0.1", [{ port: 6443, flag: "--port" }])) // [] or ["port 6443 is in use (--port)"]
 */
export const busy = (
  host: string,
  ports: ReadonlyArray<{ readonly port: number; readonly flag: string }>
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.forEach(ports, ({ flag, port }) =>
    Effect.map(isFree(host, port), (free) => (free ? [] : [`port ${port} is in use (${flag})`]))).pipe(
      Effect.map((lines) => lines.flat())
    )
