/**
 * Waiting for caches to sync, with a deadline: a controller whose informers cannot list (its
 * ServiceAccount lacks the RBAC to, the server keeps failing) fails to start after the deadline
 * instead of waiting for ever, and says which caches and why, as controller-runtime's
 * `CacheSyncTimeout` does.
 *
 * @since 0.1.0
 */
import { Duration, Effect, Metric, Schema } from "effect"
import * as Informer from "./Informer.ts"
import type * as ObjectMeta from "../client/ObjectMeta.ts"

/**
 * `kubefx_informer_failing{controller,kind}`: 1 while the list or watch of a running controller's
 * cache of that kind keeps failing (its view may be going stale), else 0: what to alert on.
 */
export const failingGauge = Metric.gauge("kubefx_informer_failing", {
  description: "1 while the list or watch of a controller's cache of the kind keeps failing, else 0"
})

/** What a controller waits for unless told otherwise: two minutes, controller-runtime's default. */
export const defaultTimeout: Duration.Duration = Duration.minutes(2)

/**
 * Caches still not synced at the deadline: each one's kind and namespace, and why its list last
 * failed, when it did.
 *
 * @example
 * import { Duration } from "effect"
 * import { CacheSync } from "@kubefx/kube"
 * new CacheSync.Timeout({
 *   controller: "widgets",
 *   after: Duration.minutes(2),
 *   unsynced: [{ kind: "Widget", namespace: undefined, failure: "Forbidden: widgets.demo.kubefx.dev is forbidden" }]
 * }).message
 * // "controller widgets: caches not synced after 2m: Widget (Forbidden: widgets.demo.kubefx.dev is forbidden)"
 */
export class Timeout extends Schema.TaggedError<Timeout>()("CacheSyncTimeout", {
  controller: Schema.String,
  after: Schema.Duration,
  unsynced: Schema.Array(Schema.Struct({
    kind: Schema.String,
    namespace: Schema.UndefinedOr(Schema.String),
    failure: Schema.UndefinedOr(Schema.String)
  }))
}) {
  override get message(): string {
    const caches = this.unsynced.map(({ failure, kind, namespace }) =>
      `${kind}${namespace === undefined ? "" : ` in ${namespace}`}${failure === undefined ? "" : ` (${failure})`}`
    )
    return `controller ${this.controller}: caches not synced after ${Duration.format(this.after)}: ${caches.join(", ")}`
  }
}

const describe = (informer: Informer.Informer<ObjectMeta.KubeObject>) => ({
  kind: informer.resource.kind,
  namespace: informer.namespace,
  failure: Informer.failing(informer)
})

/**
 * Waits until every informer has synced, or fails with `Timeout` once `timeout` has passed.
 *
 * @example
 * import { Effect } from "effect"
 * import { Builtins, CacheSync, Informer, Kube } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const configMaps = yield* Informer.make(Builtins.ConfigMap, { namespace: "default" })
 *   yield* CacheSync.wait([configMaps], { controller: "config", timeout: "30 seconds" })
 * }).pipe(Effect.scoped, Effect.provide(Kube.layer({ _tag: "Default" })))
 */
export const wait = (
  informers: ReadonlyArray<Informer.Informer<ObjectMeta.KubeObject>>,
  options: { readonly controller: string; readonly timeout?: Duration.Input | undefined }
): Effect.Effect<void, Timeout> => {
  const after = options.timeout === undefined ? defaultTimeout : Duration.fromInputUnsafe(options.timeout)
  return Effect.all(informers.map((informer) => informer.awaitSynced), { concurrency: "unbounded", discard: true }).pipe(
    Effect.timeoutOrElse({
      duration: after,
      orElse: () =>
        Effect.fail(
          new Timeout({
            controller: options.controller,
            after,
            // A merged cache is told of by namespace: the one whose list fails.
            unsynced: informers.flatMap((informer) => informer.parts ?? [informer]).filter((informer) => !informer.hasSynced()).map(describe)
          })
        )
    })
  )
}
