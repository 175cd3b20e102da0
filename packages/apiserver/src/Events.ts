/**
 * Events are stored once, as core/v1 Events, and served twice: as core/v1 and as
 * events.k8s.io/v1, which renames fields (`involvedObject` is `regarding`, `message` is `note`,
 * the legacy counters become `deprecated*`) and requires the fields of the new API.
 */
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const renames: ReadonlyArray<readonly [core: string, events: string]> = [
  ["involvedObject", "regarding"],
  ["message", "note"],
  ["reportingComponent", "reportingController"],
  ["firstTimestamp", "deprecatedFirstTimestamp"],
  ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"],
  ["source", "deprecatedSource"]
]

const rename = (
  object: KubeObject.KubeObject,
  pairs: ReadonlyArray<readonly [from: string, to: string]>,
  apiVersion: string
): KubeObject.KubeObject => {
  const out: KubeObject.KubeObject = { ...object, apiVersion, kind: "Event" }
  for (const [from, to] of pairs) {
    delete out[to]
    if (object[from] !== undefined) out[to] = object[from]
    delete out[from]
  }
  return out
}

/**
 * A stored core/v1 Event as events.k8s.io/v1 serves it.
 *
 * @example
 * import * as Events from "./Events.ts"
 * Events.toEventsV1({ apiVersion: "v1", kind: "Event", message: "hi" }).note // "hi"
 */
export const toEventsV1 = (core: KubeObject.KubeObject): KubeObject.KubeObject =>
  rename(core, renames, "events.k8s.io/v1")

/**
 * An events.k8s.io/v1 Event as it is stored (core/v1).
 *
 * @example
 * import * as Events from "./Events.ts"
 * Events.toCore({ apiVersion: "events.k8s.io/v1", kind: "Event", note: "hi" }).message // "hi"
 */
export const toCore = (events: KubeObject.KubeObject): KubeObject.KubeObject =>
  rename(events, renames.map(([core, ev]) => [ev, core] as const), "v1")

/**
 * Validation of an events.k8s.io/v1 Event: eventTime, reportingController, reportingInstance,
 * action and reason are required; reason and action at most 128 characters, note at most 1024.
 *
 * @example
 * import * as Events from "./Events.ts"
 * Events.validateEventsV1({ note: "x" }).map((c) => c.field) // ["eventTime", "reportingController", "reportingInstance", "action", "reason"]
 */
export const validateEventsV1 = (event: KubeObject.KubeObject): ReadonlyArray<Status.StatusCause> => {
  const causes: Array<Status.StatusCause> = []
  for (const field of ["eventTime", "reportingController", "reportingInstance", "action", "reason"]) {
    const value = event[field]
    if (value === undefined || value === null || value === "") causes.push(Status.fieldRequired(field))
  }
  for (const [field, max] of [["reason", 128], ["action", 128], ["note", 1024]] as const) {
    const value = event[field]
    if (typeof value === "string" && value.length > max) {
      causes.push({ reason: "FieldValueTooLong", message: `Too long: may not be more than ${max} bytes`, field })
    }
  }
  return causes
}

const times = (event: KubeObject.KubeObject): ReadonlyArray<unknown> => [
  event.lastTimestamp,
  event.eventTime,
  KubeObject.record(event.series).lastObservedTime,
  KubeObject.meta(event).creationTimestamp,
  ...KubeObject.records(KubeObject.meta(event).managedFields).map((f) => f.time)
]

/**
 * When an Event was last written (milliseconds): the latest of its times, as kube-apiserver renews
 * an Event's time to live on every write.
 *
 * @example
 * import * as Events from "./Events.ts"
 * Events.lastWritten({ metadata: { creationTimestamp: "2026-01-01T00:00:00Z" }, lastTimestamp: "2026-01-01T00:05:00Z" }) === Date.parse("2026-01-01T00:05:00Z") // true
 */
export const lastWritten = (event: KubeObject.KubeObject): number =>
  Math.max(0, ...times(event).map((t) => (typeof t === "string" ? Date.parse(t) : Number.NaN)).filter((t) => !Number.isNaN(t)))
