/**
 * The compact live view `kubefx dev` prints: per controller, its objects, how many are Ready, queue
 * depth, failures and state. In a terminal the table is redrawn in place; otherwise a plain line is
 * printed for each controller whose figures changed.
 */
import type { Operator } from "@kubefx/kube"
import { Effect } from "effect"

export interface Row {
  readonly controller: string
  readonly objects: number
  readonly ready: number
  readonly queue: number
  readonly failures: number
  readonly state: string
}

interface Conditioned {
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }> }
}

/**
 * The current rows of a running operator.
 *
 * @example
 * import * as Summary from "./Summary.ts"
 * declare const running: import("@kubefx/kube").Operator.Running
 * const rows = Summary.rows(running)
 */
export const rows = (running: Operator.Running): Effect.Effect<ReadonlyArray<Row>> =>
  Effect.forEach(running.controllers, (handle) => {
    const controller = handle.controller()
    if (controller === undefined) {
      // A controller that failed to start says why (its caches did not sync, say) in its state.
      const failure = handle.phase() === "Failed" ? handle.failure() : undefined
      const state = failure === undefined ? handle.phase() : `Failed: ${failure}`
      return Effect.succeed({ controller: handle.name, objects: 0, ready: 0, queue: 0, failures: 0, state })
    }
    return Effect.map(controller.inspect, (inspection): Row => {
      const objects = controller.informer.list() as ReadonlyArray<Conditioned>
      return {
        controller: handle.name,
        objects: objects.length,
        ready: objects.filter((o) => o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).length,
        queue: inspection.queueDepth,
        failures: inspection.health.failed,
        state: inspection.held ? "Held" : inspection.status
      }
    })
  })

/**
 * One plain line for a row.
 *
 * @example
 * import * as Summary from "./Summary.ts"
 * Summary.line({ controller: "widgets", objects: 1, ready: 1, queue: 0, failures: 0, state: "Healthy" })
 * // "widgets: 1 objects, 1 Ready, queue 0, 0 failures, Healthy"
 */
export const line = (row: Row): string =>
  `${row.controller}: ${row.objects} objects, ${row.ready} Ready, queue ${row.queue}, ${row.failures} failures, ${row.state}`

const headers = ["CONTROLLER", "OBJECTS", "READY", "QUEUE", "FAILURES", "STATE"] as const

/**
 * The rows as an aligned table, like `kubectl get`.
 *
 * @example
 * import * as Summary from "./Summary.ts"
 * Summary.table([{ controller: "widgets", objects: 1, ready: 1, queue: 0, failures: 0, state: "Healthy" }])
 */
export const table = (values: ReadonlyArray<Row>): string => {
  const cells = [
    headers as ReadonlyArray<string>,
    ...values.map((row) => [row.controller, `${row.objects}`, `${row.ready}`, `${row.queue}`, `${row.failures}`, row.state])
  ]
  const widths = headers.map((_, column) => Math.max(...cells.map((cell) => cell[column]!.length)))
  return cells.map((cell) => cell.map((text, column) => text.padEnd(widths[column]!)).join("   ").trimEnd()).join("\n")
}

/**
 * Prints the summary every `intervalMillis` until interrupted: redrawn in a terminal, as changed
 * lines otherwise.
 *
 * @example
 * import * as Summary from "./Summary.ts"
 * declare const running: import("@kubefx/kube").Operator.Running
 * const printing = Summary.follow(running, { tty: process.stdout.isTTY === true, write: (s) => process.stdout.write(s) })
 */
export const follow = (
  running: Operator.Running,
  options: { readonly tty: boolean; readonly write: (text: string) => void; readonly intervalMillis?: number }
): Effect.Effect<never> =>
  Effect.gen(function*() {
    let drawnLines = 0
    const last = new Map<string, string>()
    while (true) {
      const current = yield* rows(running)
      if (options.tty) {
        const text = table(current)
        // Move up over the previous table and clear it, then draw the new one.
        options.write((drawnLines > 0 ? `\x1b[${drawnLines}A\x1b[J` : "") + text + "\n")
        drawnLines = text.split("\n").length
      } else {
        for (const row of current) {
          const text = line(row)
          if (last.get(row.controller) !== text) options.write(text + "\n")
          last.set(row.controller, text)
        }
      }
      yield* Effect.sleep(options.intervalMillis ?? 1000)
    }
  })
