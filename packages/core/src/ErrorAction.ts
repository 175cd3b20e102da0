/**
 * What a controller's error handler answers after a failed run (R9): retry per the policy, or not
 * until the next event (JOSDK's `withNoRetry`).
 *
 * @since 0.1.0
 */

export interface ErrorAction {
  readonly retry: boolean
}

/**
 * Retry per the controller's policy (the default).
 *
 * @example
 * import { Effect } from "effect"
 * import { ErrorAction } from "@kubefx/core"
 * const onError = () => Effect.succeed(ErrorAction.retry)
 */
export const retry: ErrorAction = { retry: true }

/**
 * Do not retry; the next event reconciles again.
 *
 * @example
 * import { Effect } from "effect"
 * import { ErrorAction } from "@kubefx/core"
 * const onError = () => Effect.succeed(ErrorAction.noRetry)
 */
export const noRetry: ErrorAction = { retry: false }
