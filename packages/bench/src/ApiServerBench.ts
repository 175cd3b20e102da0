/**
 * The apiserver scenario is `packages/apiserver/bench/apiserver.ts` (creates/s, server-side
 * applies/s, watch fan-out, RSS with the objects stored), run as it is; its figures are read back
 * from the markdown table it prints, row by row.
 */
import { Effect } from "effect"
import * as Child from "./Child.ts"

/** The apiserver bench's figures. */
export interface Figures {
  readonly objects: number
  readonly creates_s: number
  readonly applies_s: number
  readonly watch_events_s: number
  /** RSS in MiB of the server process with `objects` stored. */
  readonly rss_mb_at_10k: number
  /** RSS one more stored object costs on a warm server, after memory-reducing collections. */
  readonly rss_bytes_per_object: number
}

const number = (text: string) => Number(text.replaceAll(",", ""))

/**
 * The figures in the apiserver bench's output; fails naming the row it could not find.
 *
 * @example
 * import * as ApiServerBench from "./ApiServerBench.ts"
 * ApiServerBench.parse([
 *   "| measure (full: 10,000 objects, 32 concurrent requests) | result |",
 *   "| creates/s | 2,000 |", "| server-side applies/s | 1,500 |",
 *   "| watch events/s delivered to 10 watchers (2,000 held writes, drained) | 90,000 |",
 *   "| server RSS with 10,000 objects stored (MiB; 80 when idle and empty) | 300 |",
 *   "| server RSS per stored object, 10,000 more on the warm server, median of 3 rounds (bytes; rounds 2,100, 2,900, 3,000; heap 1,500) | 2,900 |"
 * ].join("\n")).objects // 10000
 */
export const parse = (output: string): Figures => {
  const rows = output.split("\n").filter((line) => line.startsWith("|"))
  const find = (label: RegExp): RegExpMatchArray => {
    for (const row of rows) {
      const match = row.match(label)
      if (match !== null) return match
    }
    throw new Error(`the apiserver bench printed no row matching ${label}; its output:\n${output}`)
  }
  return {
    objects: number(find(/^\| measure \(\S+: ([\d,]+) objects/)[1]!),
    creates_s: number(find(/^\| creates\/s \| ([\d,.]+) \|/)[1]!),
    applies_s: number(find(/^\| server-side applies\/s \| ([\d,.]+) \|/)[1]!),
    watch_events_s: number(find(/^\| watch events\/s [^|]*\| ([\d,.]+) \|/)[1]!),
    rss_mb_at_10k: number(find(/^\| server RSS with [^|]*\| ([\d,.]+) \|/)[1]!),
    rss_bytes_per_object: number(find(/^\| server RSS per stored object[^|]*\| ([\d,.-]+) \|/)[1]!)
  }
}

/**
 * Runs the apiserver bench (with `--quick` when `quick`).
 *
 * @example
 * import { Effect } from "effect"
 * import * as ApiServerBench from "./ApiServerBench.ts"
 * const figures = Effect.runPromise(ApiServerBench.run({ quick: true }))
 */
export const run = (options: { readonly quick: boolean }) =>
  Child.exec(new URL("../../apiserver/bench/apiserver.ts", import.meta.url), options.quick ? ["--quick"] : [], ["--expose-gc"]).pipe(
    Effect.flatMap((output) => Effect.try({ try: () => parse(output), catch: (error) => error as Error }))
  )
