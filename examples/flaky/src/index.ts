/**
 * Flaky: fails on purpose, to show the retry rules live. A Flaky fails transiently `failTimes` times
 * with `message` (of any length: status keeps 256 characters, the log all of it), then succeeds; with
 * `permanent: true` it fails with a permanent error and is not retried until its spec changes. Its
 * retry policy is short (100 ms doubling, 6 retries) so the demo moves.
 */
import { Outcome, ReconcileError, RetryInfo, RetryPolicy } from "@kubefx/core"
import { Conditions, Controller, Resource } from "@kubefx/kube"
import { Effect, Schema } from "effect"

export const Flaky = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Flaky",
  plural: "flakies",
  singular: "flaky",
  spec: Schema.Struct({
    failTimes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    permanent: Schema.optionalKey(Schema.Boolean),
    message: Schema.optionalKey(Schema.String)
  }),
  status: Schema.Struct(Conditions.statusFields),
  printerColumns: [
    { name: "FailTimes", type: "integer", jsonPath: ".spec.failTimes" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" },
    { name: "Reason", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].reason" }
  ]
})
export type Flaky = typeof Flaky.schema.Type

export const retryPolicy = RetryPolicy.exponential({ initial: "100 millis", factor: 2, maxAttempts: 6 })

/** Fails `failTimes` times per generation (the retry attempt counts them), then succeeds. */
export const reconcile = Effect.fnUntraced(function*(flaky: Flaky) {
  const message = flaky.spec.message ?? "flaky by design"
  if (flaky.spec.permanent === true) return yield* new ReconcileError.Permanent({ message })
  // Once a generation has succeeded, later events (labels, resync) leave it alone.
  if (flaky.status?.observedGeneration === flaky.metadata.generation) return Outcome.done
  const { attempt } = yield* RetryInfo.RetryInfo
  if (attempt < flaky.spec.failTimes) return yield* new ReconcileError.Transient({ message })
  return Outcome.done
})

export const definition = Controller.define({ name: "flaky", for: Flaky, retryPolicy, reconcile })
export const resources = [Flaky]
export const samples = new URL("../samples/", import.meta.url)
