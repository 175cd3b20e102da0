/**
 * Why a run ran: for logs, the `trigger` metric label, the dashboard, and the retry rules (only a
 * run the retry timer triggered counts as a retry attempt).
 *
 * @since 0.1.0
 */

export type Trigger =
  /** The object itself changed (or appeared). */
  | { readonly _tag: "Event"; readonly detail?: string }
  /** An owned or watched object changed and was mapped to this key. */
  | { readonly _tag: "Related"; readonly source: string }
  /** The retry timer of a failure streak fired. */
  | { readonly _tag: "Retry" }
  /** A `requeueAfter` outcome came due. */
  | { readonly _tag: "Reschedule" }
  /** The periodic resync enqueued every known key. */
  | { readonly _tag: "Resync" }

/**
 * The object changed.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.event("spec changed")
 */
export const event = (detail?: string): Trigger => detail === undefined ? eventTrigger : { _tag: "Event", detail }

const eventTrigger: Trigger = { _tag: "Event" }

/**
 * A related object changed.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.related("ConfigMap default/web")
 */
export const related = (source: string): Trigger => ({ _tag: "Related", source })

/** The retry timer fired. */
export const retry: Trigger = { _tag: "Retry" }

/** A requeue-after came due. */
export const reschedule: Trigger = { _tag: "Reschedule" }

/** The periodic resync. */
export const resync: Trigger = { _tag: "Resync" }

/**
 * The lowercase label used in metrics and logs.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.label(Trigger.retry) // "retry"
 */
export const label = (trigger: Trigger): "event" | "related" | "retry" | "reschedule" | "resync" =>
  trigger._tag === "Event"
    ? "event"
    : trigger._tag === "Related"
    ? "related"
    : trigger._tag === "Retry"
    ? "retry"
    : trigger._tag === "Reschedule"
    ? "reschedule"
    : "resync"

/**
 * Adds a trigger to those merged into one queued run, keeping the first of each kind.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.merge([Trigger.event()], Trigger.event("again")).length // 1
 */
export const merge = (triggers: ReadonlyArray<Trigger>, trigger: Trigger): ReadonlyArray<Trigger> =>
  triggers.some((t) => t._tag === trigger._tag) ? triggers : [...triggers, trigger]

/**
 * Whether the merged triggers include the retry timer: such a run counts as a retry attempt.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.isRetry([Trigger.event(), Trigger.retry]) // true
 */
export const isRetry = (triggers: ReadonlyArray<Trigger>): boolean => triggers.some((t) => t._tag === "Retry")
