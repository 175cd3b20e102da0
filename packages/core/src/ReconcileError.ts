/**
 * The two kinds of error a reconciler means on purpose. Any other typed error counts as transient.
 *
 * @since 0.1.0
 */
import { Duration, Schema } from "effect"

/**
 * Worth retrying: the world may change (a dependency not ready yet, a network blip, a conflict).
 *
 * @example
 * import { Effect } from "effect"
 * import { ReconcileError } from "@kubefx/core"
 * const check = Effect.fail(new ReconcileError.Transient({ message: "database not ready" }))
 */
export class Transient extends Schema.TaggedError<Transient>()("Transient", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * Needs a manual correction: no retry is scheduled; the next event reconciles again.
 *
 * @example
 * import { Effect } from "effect"
 * import { ReconcileError } from "@kubefx/core"
 * const check = Effect.fail(new ReconcileError.Permanent({ message: "spec.size must be positive" }))
 */
export class Permanent extends Schema.TaggedError<Permanent>()("Permanent", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

/**
 * The controller's reconcile timeout interrupted a run; recorded as a transient failure.
 *
 * @example
 * import { Duration } from "effect"
 * import { ReconcileError } from "@kubefx/core"
 * new ReconcileError.Timeout({ after: Duration.seconds(30) }).message // "reconcile timed out after 30s"
 */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", {
  after: Schema.Duration
}) {
  override get message(): string {
    return `reconcile timed out after ${Duration.format(this.after)}`
  }
}

/**
 * Marks an error class of your own as permanent (no retry until the next event) while it keeps its
 * type: give its instances this property, set to `true`.
 *
 * @example
 * import { ReconcileError } from "@kubefx/core"
 * import { Schema } from "effect"
 * class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { message: Schema.String }) {
 *   readonly [ReconcileError.permanent] = true
 * }
 * ReconcileError.isPermanent(new QuotaExceeded({ message: "no quota left" })) // true
 */
export const permanent: unique symbol = Symbol.for("@kubefx/core/ReconcileError/permanent")

/**
 * Whether an error asks for no retry: a `Permanent`, or an error marked with {@link permanent}.
 *
 * @example
 * import { ReconcileError } from "@kubefx/core"
 * ReconcileError.isPermanent(new ReconcileError.Permanent({ message: "bad spec" })) // true
 * ReconcileError.isPermanent(new Error("boom")) // false
 */
export const isPermanent = (error: unknown): boolean =>
  error instanceof Permanent ||
  (typeof error === "object" && error !== null && (error as { readonly [permanent]?: unknown })[permanent] === true)
