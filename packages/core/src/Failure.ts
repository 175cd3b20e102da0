/**
 * Why a reconcile failed, classified for the retry rules: a transient error (retried per policy), a
 * permanent one (not retried until the next event), or a defect (a thrown exception or `Effect.die`,
 * recorded exactly like a transient failure and logged with its stack).
 *
 * @since 0.1.0
 */
import { Cause, Result } from "effect"
import * as ReconcileError from "./ReconcileError.ts"

export type Failure<E> =
  | { readonly _tag: "Transient"; readonly error: E }
  | { readonly _tag: "Permanent"; readonly error: E }
  | { readonly _tag: "Defect"; readonly defect: unknown; readonly cause: Cause.Cause<unknown> }

/**
 * Classifies the cause of a failed run. Typed errors win over defects; an error that is
 * `ReconcileError.Permanent` is permanent; a cause with only interruptions is a defect.
 *
 * @example
 * import { Cause } from "effect"
 * import { Failure, ReconcileError } from "@kubefx/core"
 * Failure.fromCause(Cause.fail(new ReconcileError.Permanent({ message: "bad spec" })))._tag // "Permanent"
 * Failure.fromCause(Cause.die(new Error("boom")))._tag // "Defect"
 */
export const fromCause = <E>(cause: Cause.Cause<E>): Failure<E> => {
  const error = Cause.findError(cause)
  if (Result.isSuccess(error)) {
    return ReconcileError.isPermanent(error.success)
      ? { _tag: "Permanent", error: error.success }
      : { _tag: "Transient", error: error.success }
  }
  const defect = Cause.findDefect(cause)
  return {
    _tag: "Defect",
    defect: Result.isSuccess(defect) ? defect.success : new Error("reconcile was interrupted"),
    cause
  }
}

/**
 * Whether the retry policy applies (transient errors and defects).
 *
 * @example
 * import { Failure } from "@kubefx/core"
 * Failure.isRetriable({ _tag: "Transient", error: "x" }) // true
 */
export const isRetriable = <E>(failure: Failure<E>): boolean => failure._tag !== "Permanent"

/**
 * The error's message, in full, for status conditions (cut there) and logs.
 *
 * @example
 * import { Failure } from "@kubefx/core"
 * Failure.message({ _tag: "Transient", error: new Error("connection refused") }) // "connection refused"
 */
export const message = <E>(failure: Failure<E>): string =>
  describe(failure._tag === "Defect" ? failure.defect : failure.error)

const describe = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value instanceof Error || (typeof value === "object" && value !== null && "message" in value)) {
    const message = (value as { readonly message: unknown }).message
    if (typeof message === "string" && message.length > 0) return message
  }
  if (typeof value === "object" && value !== null && "_tag" in value) return String(value._tag)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * Cuts a message to at most `max` characters (default 256, the limit for status conditions),
 * counted in code points and marking the cut with an ellipsis.
 *
 * @example
 * import { Failure } from "@kubefx/core"
 * Failure.truncate("x".repeat(1000)).length // 256
 */
export const truncate = (text: string, max = 256): string => {
  if (text.length <= max) return text
  // Count code points, not UTF-16 units, so a cut never splits a surrogate pair.
  let kept = ""
  let count = 0
  for (const char of text) {
    if (++count === max) return `${kept}…`
    kept += char
  }
  return kept
}
