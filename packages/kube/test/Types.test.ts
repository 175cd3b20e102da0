/**
 * The types users see, checked by the compiler (this file is type-checked with the suite): what
 * reaches `onError` and `retryPolicy` is inferred from the reconciler without annotations, and is
 * exactly its errors plus the client's.
 */
import { ErrorAction, type Failure, type ReconcileError, RetryPolicy } from "@kubefx/core"
import { Builtins, Controller, type KubeError, type Resource } from "@kubefx/kube"
import { Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"

class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", { message: Schema.String }) {}

type ErrorOf<D> = D extends Controller.Definition<infer _A, infer E, infer _R> ? E : never

type Expected = QuotaExceeded | KubeError.KubeError | Resource.DecodeError | ReconcileError.Timeout

describe("Controller.define", () => {
  it("infers the reconciler's error for onError and retryPolicy, with the client's errors named beside it", () => {
    const seen: Array<Failure.Failure<Expected>> = []
    const definition = Controller.define({
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
    // The definition keeps the kind and the error; an operator and the test kit take it as it is.
    expectTypeOf<ErrorOf<typeof definition>>().toEqualTypeOf<QuotaExceeded>()
    expectTypeOf(definition.options.for).toEqualTypeOf(Builtins.ConfigMap)
    expectTypeOf(definition).toExtend<Controller.Any>()
    // A watch's map sees the watched kind, and any watch fits a controller of any kind.
    const sameName = Controller.watch(Builtins.ConfigMap, (cm) => {
      expectTypeOf(cm).toEqualTypeOf<typeof Builtins.ConfigMap.schema.Type>()
      return [`${cm.metadata.namespace}/${cm.metadata.name}`]
    })
    expectTypeOf(sameName).toExtend<Controller.Watch>()
    expectTypeOf<Controller.RunError<QuotaExceeded>>().toEqualTypeOf<QuotaExceeded | KubeError.KubeError | Resource.DecodeError>()
  })
})
