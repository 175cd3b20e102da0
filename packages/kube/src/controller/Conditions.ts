/**
 * metav1.Condition as a Schema, and pure helpers to read and update a list of conditions the
 * way apimachinery's `meta.SetStatusCondition` does: a condition's lastTransitionTime moves only
 * when its status changes.
 *
 * @since 0.1.0
 */
import { Failure } from "@kubefx/core"
import { Effect, Schema } from "effect"
import * as Builtins from "../client/Builtins.ts"
import * as Crd from "../client/Crd.ts"
import * as KubeError from "../client/KubeError.ts"

export const Status = Schema.Literals(["True", "False", "Unknown"])
export type Status = typeof Status.Type

/** metav1.Condition, with the API server's own limits on each field. */
export const Condition = Schema.Struct({
  type: Schema.String.check(Schema.isBetweenLength(1, 316)),
  status: Status,
  observedGeneration: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  lastTransitionTime: Builtins.Time,
  reason: Schema.String.check(
    Schema.isBetweenLength(1, 1024),
    Schema.isPattern(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
  ),
  message: Schema.String.check(Schema.isMaxLength(32768))
})
export type Condition = typeof Condition.Type

/** A status's conditions: one per type, merged per type by server-side apply. */
export const Conditions = Schema.Array(Condition).annotate(Crd.listMap("type"))

/** What a writer says about a condition; the transition time is worked out by {@link set}. */
/**
 * The status fields kubefx's controllers write: `conditions` (a list keyed by type) and
 * `observedGeneration`. Spread them into a custom resource's status Struct.
 *
 * @example
 * import { Schema } from "effect"
 * import { Conditions } from "@kubefx/kube"
 * const status = Schema.Struct({ ...Conditions.statusFields, bucketId: Schema.optionalKey(Schema.String) })
 */
export const statusFields = {
  conditions: Schema.optionalKey(Conditions),
  observedGeneration: Schema.optionalKey(Schema.Int)
}

export interface Update {
  readonly type: string
  readonly status: Status
  readonly reason: string
  readonly message?: string | undefined
  readonly observedGeneration?: number | undefined
}

/** The type of kubefx's own condition. */
export const ReadyType = "Ready"

/** The longest message kubefx writes in its Ready condition. */
export const readyMessageLength = 256

/**
 * Cuts a condition's message to `max` characters (default 256) with an ellipsis, keeping whole the
 * RBAC rule a 403's message ends with, so a long namespace or name does not cut what to add.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * const denied = `configmaps "${"x".repeat(200)}" is forbidden: User "u" cannot get resource "configmaps" in API group "" in the namespace "n"`
 * Conditions.cut(`${denied} (rbac: {"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]})`).endsWith('"verbs":["get"]})') // true
 */
export const cut = (message: string, max: number = readyMessageLength): string => {
  if (message.length <= max) return message
  const rule = KubeError.ruleEnding(message)
  return rule === undefined || rule.length >= max / 2
    ? Failure.truncate(message, max)
    : Failure.truncate(message.slice(0, message.length - rule.length), max - rule.length) + rule
}

/**
 * The condition of a type, if present.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * Conditions.get(widget.status?.conditions ?? [], "Ready")?.status // "True" | "False" | "Unknown" | undefined
 */
export const get = (conditions: ReadonlyArray<Condition>, type: string): Condition | undefined =>
  conditions.find((c) => c.type === type)

/**
 * Whether the condition of a type is present with status True.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * Conditions.isTrue([], "Ready") // false
 */
export const isTrue = (conditions: ReadonlyArray<Condition>, type: string): boolean => get(conditions, type)?.status === "True"

/**
 * Whether the condition of a type is present with status False.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * Conditions.isFalse([], "Ready") // false: absent is neither True nor False
 */
export const isFalse = (conditions: ReadonlyArray<Condition>, type: string): boolean => get(conditions, type)?.status === "False"

/**
 * Sets a condition: added if its type is absent; otherwise reason, message and
 * observedGeneration are replaced, and lastTransitionTime moves to `now` only if the status
 * changed. Returns the same array when nothing changed.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * const next = Conditions.set([], Conditions.ready({ observedGeneration: 2 }), Date.now())
 */
export const set = (
  conditions: ReadonlyArray<Condition>,
  update: Update,
  now: Date | number
): ReadonlyArray<Condition> => {
  const index = conditions.findIndex((c) => c.type === update.type)
  const existing = conditions[index]
  const transitioned = existing === undefined || existing.status !== update.status
  const next: Condition = {
    type: update.type,
    status: update.status,
    ...(update.observedGeneration === undefined ? {} : { observedGeneration: update.observedGeneration }),
    lastTransitionTime: transitioned ? Builtins.formatTime(now) : existing.lastTransitionTime,
    reason: update.reason,
    message: Failure.truncate(update.message ?? "", 32768)
  }
  if (existing === undefined) return [...conditions, next]
  if (same(existing, next)) return conditions
  return conditions.map((c, i) => (i === index ? next : c))
}

const same = (a: Condition, b: Condition): boolean =>
  a.status === b.status && a.reason === b.reason && a.message === b.message &&
  a.observedGeneration === b.observedGeneration && a.lastTransitionTime === b.lastTransitionTime

/**
 * {@link set} at the current time of the `Clock` (virtual under TestClock).
 *
 * @example
 * import { Effect } from "effect"
 * import { Conditions } from "@kubefx/kube"
 * const program = Conditions.setNow([], Conditions.notReady("connection refused"))
 */
export const setNow = (conditions: ReadonlyArray<Condition>, update: Update): Effect.Effect<ReadonlyArray<Condition>> =>
  Effect.clockWith((clock) => Effect.succeed(set(conditions, update, clock.currentTimeMillisUnsafe())))

/**
 * Sets each update in turn (see {@link set}); conditions of other types are kept.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * Conditions.merge(existing, [Conditions.ready(), { type: "Synced", status: "True", reason: "Applied" }], Date.now())
 */
export const merge = (
  conditions: ReadonlyArray<Condition>,
  updates: ReadonlyArray<Update>,
  now: Date | number
): ReadonlyArray<Condition> => updates.reduce((acc, update) => set(acc, update, now), conditions)

/**
 * Removes the condition of a type (the same array if absent).
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * Conditions.remove(conditions, "Progressing")
 */
export const remove = (conditions: ReadonlyArray<Condition>, type: string): ReadonlyArray<Condition> =>
  conditions.some((c) => c.type === type) ? conditions.filter((c) => c.type !== type) : conditions

/**
 * kubefx's success condition: `Ready=True`, reason `Reconciled` unless given.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * Conditions.ready({ observedGeneration: 3 }) // { type: "Ready", status: "True", reason: "Reconciled", message: "", observedGeneration: 3 }
 */
export const ready = (options: {
  readonly reason?: string
  readonly message?: string
  readonly observedGeneration?: number | undefined
  readonly maxMessageLength?: number
} = {}): Update => ({
  type: ReadyType,
  status: "True",
  reason: options.reason ?? "Reconciled",
  message: cut(options.message ?? "", options.maxMessageLength),
  observedGeneration: options.observedGeneration
})

/**
 * kubefx's failure condition: `Ready=False`, reason `ReconcileError` unless given, the message
 * cut to 256 characters (or `maxMessageLength`) by `cut`.
 *
 * @example
 * import { Conditions } from "@kubefx/kube"
 * Conditions.notReady("x".repeat(1000)).message?.length // 256
 */
export const notReady = (
  message: string,
  options: {
    readonly reason?: string
    readonly observedGeneration?: number | undefined
    readonly maxMessageLength?: number
  } = {}
): Update => ({
  type: ReadyType,
  status: "False",
  reason: options.reason ?? "ReconcileError",
  message: cut(message, options.maxMessageLength),
  observedGeneration: options.observedGeneration
})
