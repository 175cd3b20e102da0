/**
 * The types users see, checked by the compiler (this file is type-checked with the suite): what
 * reaches `onError` and `retryPolicy` is inferred from the reconciler without annotations, and is
 * exactly its errors plus the client's.
 */
import { ErrorAction, type Failure, type ReconcileError, RetryPolicy } from "@kubefx/core"
import { Builtins, type Controller, type KubeError, Operator, type Resource } from "@kubefx/kube"
import { Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"

class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { message: Schema.String }) {}

type Expected = QuotaExceeded | KubeError.KubeError | Resource.DecodeError | ReconcileError.Timeout

describe("Operator.controller", () => {
  it("infers the reconciler's error for onError and retryPolicy, with the client's errors named beside it", () => {
    const seen: Array<Failure.Failure<Expected>> = []
    const definition = Operator.controller({
      name: "typed",
      for: Builtins.ConfigMap,
      reconcile: () => Effect.fail(new QuotaExceeded({ message: "no quota left" })),
      onError: (_, failure) => {
        expectTypeOf(failure).toEqualTypeOf<Failure.Failure<Expected>>()
        seen.push(failure)
        return Effect.succeed(ErrorAction.retry)
      },
      retryPolicy: RetryPolicy.gradual
    })
    expectTypeOf(definition).toEqualTypeOf<Operator.ControllerDefinition<never>>()
    expectTypeOf<Controller.RunError<QuotaExceeded>>().toEqualTypeOf<QuotaExceeded | KubeError.KubeError | Resource.DecodeError>()
  })
})
