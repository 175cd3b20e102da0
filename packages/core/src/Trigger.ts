/**
 * Why a run ran: for logs, the `trigger` metric label, the dashboard, and the retry rules (only a
 * run the retry timer triggered counts as a retry attempt).
 *
 * @since 0.1.0
 */

export type Trigger =
  /** The object itself changed (or appeared). `bulk`: one of many at once (a list), queued behind fresh changes. */
  | { readonly _tag: "Event"; readonly detail?: string; readonly bulk?: true }
  /** An owned or watched object changed and was mapped to this key. `bulk`: one of many re-enqueued at once. */
  | { readonly _tag: "Related"; readonly source: string; readonly bulk?: true }
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
 * The object came with a list (the first one, or a relist): one of many keys queued at once, which
 * wait behind fresh changes.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.priority(Trigger.listed) // "low"
 */
export const listed: Trigger = { _tag: "Event", detail: "listed", bulk: true }

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
 * The trigger a merged run is reported by (metrics, logs, the Control Center): the first fresh
 * change, or else the first trigger.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.reason([Trigger.resync, Trigger.event()]) // { _tag: "Event" }
 */
export const reason = (triggers: ReadonlyArray<Trigger>): Trigger =>
  triggers.find((t) => priority(t) === "high") ?? triggers[0]!

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
 * Where a queued run waits: fresh changes of the object or of related objects (`high`) go before
 * resyncs, requeue-afters, retries and bulk re-enqueues (`low`).
 */
export type Priority = "high" | "low"

/**
 * The priority a trigger queues its key with.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.priority(Trigger.event()) // "high"
 * Trigger.priority(Trigger.resync) // "low"
 */
export const priority = (trigger: Trigger): Priority =>
  (trigger._tag === "Event" || trigger._tag === "Related") && trigger.bulk !== true ? "high" : "low"

/**
 * The priority of a run merged from several triggers: its highest.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.priorityOf([Trigger.resync, Trigger.related("ConfigMap default/web")]) // "high"
 */
export const priorityOf = (triggers: ReadonlyArray<Trigger>): Priority =>
  triggers.some((t) => priority(t) === "high") ? "high" : "low"

/**
 * Adds a trigger to those merged into one queued run, keeping the first of each kind (a fresh one
 * replaces a bulk one of its kind, so the run keeps the priority of the fresh change).
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.merge([Trigger.event()], Trigger.event("again")).length // 1
 */
export const merge = (triggers: ReadonlyArray<Trigger>, trigger: Trigger): ReadonlyArray<Trigger> => {
  const index = triggers.findIndex((t) => t._tag === trigger._tag)
  if (index === -1) return [...triggers, trigger]
  const kept = triggers[index]!
  return priority(kept) === "low" && priority(trigger) === "high" ? triggers.with(index, trigger) : triggers
}

/**
 * Whether the merged triggers include the retry timer: such a run counts as a retry attempt.
 *
 * @example
 * import { Trigger } from "@kubefx/core"
 * Trigger.isRetry([Trigger.event(), Trigger.retry]) // true
 */
export const isRetry = (triggers: ReadonlyArray<Trigger>): boolean => triggers.some((t) => t._tag === "Retry")
