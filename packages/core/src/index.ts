/**
 * @kubefx/core: the cluster-agnostic reconciliation engine.
 *
 * @since 0.1.0
 */
export * as Controller from "./Controller.ts"
export * as EngineMetrics from "./EngineMetrics.ts"
export * as ErrorAction from "./ErrorAction.ts"
export * as Failure from "./Failure.ts"
export * as Health from "./Health.ts"
export * as KeyState from "./KeyState.ts"
export * as Outcome from "./Outcome.ts"
export * as ReconcileError from "./ReconcileError.ts"
export * as RetryInfo from "./RetryInfo.ts"
export * as RetryPolicy from "./RetryPolicy.ts"
export * as Shards from "./Shards.ts"
export * as TokenBucket from "./TokenBucket.ts"
export * as Trigger from "./Trigger.ts"
export * as WorkQueue from "./WorkQueue.ts"
