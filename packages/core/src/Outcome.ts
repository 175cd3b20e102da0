/**
 * What a successful reconcile says about the object: converged, or converged for now and to be looked
 * at again at the latest after some time. A failure is the error channel, so "requeue with an error"
 * cannot be expressed.
 *
 * @since 0.1.0
 */
import { Duration } from "effect"

/** Converged: nothing to do until the next event. */
export interface Done {
  readonly _tag: "Done"
}

/** Converged for now: reconcile again at the latest after `after` (an event may come first). */
export interface RequeueAfter {
  readonly _tag: "RequeueAfter"
  readonly after: Duration.Duration
}

export type Outcome = Done | RequeueAfter

/**
 * The object has converged.
 *
 * @example
 * import { Effect } from "effect"
 * import { Outcome } from "@kubefx/core"
 * const reconcile = (_key: string) => Effect.succeed(Outcome.done)
 */
export const done: Outcome = { _tag: "Done" }

/**
 * Reconcile again at the latest after `after`. An event in the meantime reconciles at once and
 * cancels this reschedule (it never adds a run beside the event's).
 *
 * @example
 * import { Outcome } from "@kubefx/core"
 * Outcome.requeueAfter("30 seconds")
 */
export const requeueAfter = (after: Duration.Input): Outcome => ({
  _tag: "RequeueAfter",
  after: Duration.fromInputUnsafe(after)
})

/**
 * Combines the outcomes of several steps of one reconcile: done only if all are done, otherwise
 * requeue after the earliest of the requested delays.
 *
 * @example
 * import { Outcome } from "@kubefx/core"
 * Outcome.combine([Outcome.done, Outcome.requeueAfter("1 minute"), Outcome.requeueAfter("5 seconds")])
 * // requeueAfter 5 seconds
 */
export const combine = (outcomes: Iterable<Outcome>): Outcome => {
  let earliest: RequeueAfter | undefined
  for (const outcome of outcomes) {
    if (
      outcome._tag === "RequeueAfter" &&
      (earliest === undefined || Duration.isLessThan(outcome.after, earliest.after))
    ) {
      earliest = outcome
    }
  }
  return earliest ?? done
}

/**
 * Folds an outcome.
 *
 * @example
 * import { Outcome } from "@kubefx/core"
 * Outcome.match(Outcome.done, { onDone: () => "done", onRequeueAfter: (d) => `after ${d}` }) // "done"
 */
export const match = <A>(
  self: Outcome,
  cases: { readonly onDone: () => A; readonly onRequeueAfter: (after: Duration.Duration) => A }
): A => self._tag === "Done" ? cases.onDone() : cases.onRequeueAfter(self.after)
