/**
 * A controller's health (R11): reconciles counted in total, failed, and failed in a row; the last
 * error and reconcile time; degraded after `degradeAfter` consecutive failures, cleared by a success.
 *
 * @since 0.1.0
 */

export interface Health {
  readonly total: number
  readonly failed: number
  readonly consecutiveFailures: number
  readonly lastError: string | undefined
  /** When the last reconcile ended (ms). */
  readonly lastReconcileAt: number | undefined
  readonly degraded: boolean
  /** When the current degraded period began (ms). */
  readonly degradedSince: number | undefined
}

/**
 * How a controller is doing, as the dashboard and `/controllers/<name>/health` show it.
 * Pending: not started, or held by a degraded dependency; Started: running, nothing reconciled yet.
 */
export type Status = "Pending" | "Started" | "Healthy" | "Degraded"

/** No reconcile yet. */
export const initial: Health = {
  total: 0,
  failed: 0,
  consecutiveFailures: 0,
  lastError: undefined,
  lastReconcileAt: undefined,
  degraded: false,
  degradedSince: undefined
}

/**
 * Records a successful reconcile; clears the streak and degraded state.
 *
 * @example
 * import { Health } from "@kubefx/core"
 * Health.succeeded(Health.initial, 1000).total // 1
 */
export const succeeded = (health: Health, now: number): Health => ({
  ...health,
  total: health.total + 1,
  consecutiveFailures: 0,
  lastReconcileAt: now,
  degraded: false,
  degradedSince: undefined
})

/**
 * Records a failed reconcile; degraded once `degradeAfter` failures are in a row.
 *
 * @example
 * import { Health } from "@kubefx/core"
 * let health = Health.initial
 * for (let i = 0; i < 5; i++) health = Health.failed(health, "boom", i, 5)
 * health.degraded // true
 */
export const failed = (health: Health, error: string, now: number, degradeAfter: number): Health => {
  const consecutiveFailures = health.consecutiveFailures + 1
  const degraded = consecutiveFailures >= degradeAfter
  return {
    total: health.total + 1,
    failed: health.failed + 1,
    consecutiveFailures,
    lastError: error,
    lastReconcileAt: now,
    degraded,
    degradedSince: degraded ? health.degradedSince ?? now : undefined
  }
}

/**
 * The status shown for a controller.
 *
 * @example
 * import { Health } from "@kubefx/core"
 * Health.status(Health.initial, { started: true, held: false }) // "Started"
 */
export const status = (
  health: Health,
  options: { readonly started: boolean; readonly held: boolean }
): Status =>
  health.degraded
    ? "Degraded"
    : !options.started || options.held
    ? "Pending"
    : health.total === 0
    ? "Started"
    : "Healthy"
