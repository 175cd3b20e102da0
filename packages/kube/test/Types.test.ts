/**
 * The types users see, checked by the compiler (this file is type-checked with the suite): what
 * reaches `onError` and `retryPolicy` is inferred from the reconciler without annotations, and is
 * exactly its errors plus the client's.
 */
import { ErrorAction, type Failure, type ReconcileError, RetryPolicy } from "@kubefx/core"
import { Builtins, Controller, Dependent, type KubeError, type Resource, Workflow } from "@kubefx/kube"
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

class DnsDown extends Schema.TaggedError<DnsDown>()("DnsDown", { zone: Schema.String }) {}

describe("Workflow", () => {
  it("joins dependents of several kinds and steps, keeping the primary, every error and the client's", () => {
    type Site = typeof Builtins.ConfigMap.schema.Type
    const content = Dependent.make({
      name: "content",
      resource: Builtins.ConfigMap,
      desired: (site: Site) => ({ metadata: { name: `${site.metadata.name}-content` } }),
      ready: (config) => {
        expectTypeOf(config).toEqualTypeOf<typeof Builtins.ConfigMap.schema.Type>()
        return true
      }
    })
    const deployment = Dependent.make({
      name: "deployment",
      resource: Builtins.Deployment,
      desired: (site: Controller.Stored<Site>) => ({ metadata: { name: site.metadata.name }, spec: {} }),
      ready: Dependent.deploymentReady
    })
    const dns = Workflow.step({ name: "dns", reconcile: (_: Site) => Effect.fail(new DnsDown({ zone: "example.org" })) })
    const site = Workflow.when((_: Site) => true, Workflow.sequence(Workflow.parallel(content, dns), deployment))
    expectTypeOf(site).toEqualTypeOf<Workflow.Workflow<Site, DnsDown | KubeError.KubeError | Resource.DecodeError, never>>()
    expectTypeOf(Dependent.reconcile(deployment, {} as Controller.Stored<Site>, {} as Controller.Context<Site>)).toEqualTypeOf<
      Effect.Effect<Dependent.Reconciled<Builtins.Deployment>, KubeError.KubeError | Resource.DecodeError>
    >()
  })
})

