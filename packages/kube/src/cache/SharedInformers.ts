/**
 * Where controllers get their informers. By default each controller starts its own; inside an
 * operator, controllers that watch the same resource with the same namespace and selectors share
 * one informer (one watch, one cache), as controller-runtime's manager does.
 *
 * Internal to the operator: not exported from `@kubefx/kube`.
 *
 * @since 0.1.0
 */
import { Context, Deferred, Effect, Scope } from "effect"
import * as Informer from "./Informer.ts"
import type * as Kube from "../client/Kube.ts"
import type * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"

export interface SharedInformers {
  /** An informer for the resource, started in the caller's scope or shared from an earlier request. */
  readonly get: <A extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<A>,
    options: Informer.Options<A>
  ) => Effect.Effect<Informer.Informer<A>, never, Kube.Kube | Scope.Scope>
}

/** No sharing: a fresh informer per request. */
export const unshared: SharedInformers = { get: Informer.make }

/**
 * The informer source controllers use; `unshared` unless an operator provides `make`'s.
 *
 * @example
 * import { Effect } from "effect"
 * import { Builtins } from "@kubefx/kube"
 * import * as SharedInformers from "./SharedInformers.ts"
 * const informer = Effect.flatMap(SharedInformers.SharedInformers, (shared) =>
 *   shared.get(Builtins.ConfigMap, { namespace: "default" }))
 */
export const SharedInformers = Context.Reference<SharedInformers>("@kubefx/kube/SharedInformers", {
  defaultValue: () => unshared
})

// Only informers that differ in nothing but namespace and selectors are shared; a transform, an
// index or watch tuning makes a private one.
const sharingKey = (options: Informer.Options<any>): string | undefined => {
  const { fieldSelector, labelSelector, namespace, ...rest } = options
  if (Object.values(rest).some((value) => value !== undefined)) return undefined
  return JSON.stringify([namespace ?? "", labelSelector ?? "", fieldSelector ?? ""])
}

/**
 * Informers shared for as long as the current scope is open (they stop with it, not with the
 * controllers that asked for them).
 *
 * @example
 * import { Effect } from "effect"
 * import { SharedInformers } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const shared = yield* SharedInformers.make
 *   // controllers made here share informers
 *   return yield* Effect.never.pipe(Effect.provideService(SharedInformers.SharedInformers, shared))
 * })
 */
export const make: Effect.Effect<SharedInformers, never, Kube.Kube | Scope.Scope> = Effect.gen(function*() {
  const scope = yield* Scope.Scope
  const context = yield* Effect.context<Kube.Kube>()
  // Keyed by the very Resource value, so each entry's informer is of that resource's type.
  const started = new Map<Resource.Resource, Map<string, Deferred.Deferred<Informer.Informer<any>>>>()
  const get = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, options: Informer.Options<A>) =>
    Effect.suspend(() => {
      const key = sharingKey(options)
      if (key === undefined) return Informer.make(resource, options)
      let byKey = started.get(resource)
      if (byKey === undefined) started.set(resource, byKey = new Map())
      const existing = byKey.get(key)
      if (existing !== undefined) return Deferred.await(existing as Deferred.Deferred<Informer.Informer<A>>)
      const informer = Deferred.makeUnsafe<Informer.Informer<A>>()
      byKey.set(key, informer)
      // Uninterruptible, so a requester stopped half-way never leaves the others waiting.
      return Informer.make(resource, options).pipe(
        Effect.provideContext(Context.add(context, Scope.Scope, scope)),
        Effect.tap((made) => Deferred.succeed(informer, made)),
        Effect.uninterruptible
      )
    })
  return { get }
})
