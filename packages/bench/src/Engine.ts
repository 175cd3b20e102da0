/**
 * The engine scenario is `packages/core/bench/engine.ts` (no-op reconciles
 * beside a bare Effect `Queue` worker loop, and merged events), run as it is, its JSON read back.
 */
import { Effect } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Child from "./Child.ts"

/** The core bench's figures, as it writes them. */
export interface Figures {
  readonly keys: number
  readonly kubefx_ops_s: number
  readonly bare_queue_ops_s: number
  /** kubefx over the bare queue, per side-by-side pair (three). */
  readonly ratio_median: number
  readonly ratio_min: number
  readonly ratio_max: number
  /** No-op reconciles with spans off (`References.TracerEnabled` false), in the same pairs. */
  readonly untraced_ops_s: number
  /** That over the bare queue, median of the three pairs. */
  readonly untraced_ratio_median: number
  /** The bare loop with what each run needs from Effect (gate, interruptible run, span, context). */
  readonly floor_ops_s: number
  /** That floor over the bare queue, median of the three pairs. */
  readonly floor_ratio_median: number
  readonly merge_events: number
  readonly merge_runs: number
  readonly merge_ops_s: number
  /** Keys per round of `workqueue_rounds_ns_per_op` (controller-runtime's benchmark: 1,000). */
  readonly workqueue_round_keys: number
  /** A bare work queue's add, take and done, per operation, in rounds of `workqueue_round_keys` keys. */
  readonly workqueue_rounds_ns_per_op: number
  /** The same with all `keys` in one round: a working set a hundred times larger. */
  readonly workqueue_ns_per_op: number
}

/**
 * Runs the core engine bench (with `--quick` when `quick`).
 *
 * @example
 * import { Effect } from "effect"
 * import * as Engine from "./Engine.ts"
 * const figures = Effect.runPromise(Engine.run({ quick: true }))
 */
export const run = (options: { readonly quick: boolean }) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "kubefx-bench-engine-"))),
    (dir) =>
      Child.exec(new URL("../../core/bench/engine.ts", import.meta.url), [
        ...(options.quick ? ["--quick"] : []),
        "--json",
        join(dir, "engine.json")
      ]).pipe(
        Effect.map(() => (JSON.parse(readFileSync(join(dir, "engine.json"), "utf8")) as { readonly engine: Figures }).engine)
      ),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
