/**
 * kube-controller-manager's serviceaccount controller, running in the server: every namespace has
 * a `default` ServiceAccount, made with the namespace and made again when deleted. A namespace
 * being deleted gets none.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import type * as Status from "./Status.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** The ServiceAccount every namespace has, and pods without `serviceAccountName` run as. */
export const defaultName = "default"

/** The ConfigMap a pod's token volume projects the cluster's CA from. */
export const rootCaName = "kube-root-ca.crt"

const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "kube-controller-manager",
  fieldValidation: "Ignore"
}

export interface ServiceAccounts {
  /** Completes when nothing is queued. */
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
}

/**
 * Starts the controller over `env.store` in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ServiceAccounts from "./ServiceAccounts.ts"
 * declare const env: import("./Rest.ts").Env
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const controller = yield* ServiceAccounts.make(env)
 *   yield* controller.idle
 * }))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env) {
  const { store } = env
  const serviceAccounts = env.registry.byStorage("serviceaccounts")[0]!
  // Gone or taken meanwhile, or the namespace closing: nothing to do.
  const settled = (error: Status.ApiError) => error.code === 404 || error.code === 409 || error.code === 403

  const ensure = (namespace: string) =>
    Effect.suspend(() => {
      const ns = store.get("namespaces", "", namespace)
      if (ns === undefined || KubeObject.meta(ns).deletionTimestamp !== undefined) return Effect.void
      if (store.get("serviceaccounts", namespace, defaultName) !== undefined) return Effect.void
      return Rest.create(env, serviceAccounts, namespace, { metadata: { name: defaultName } }, writeOptions).pipe(
        Effect.asVoid,
        Effect.catchIf(settled, () => Effect.void)
      )
    })

  const worker = yield* Worker.perNamespace(store, "serviceaccounts", ensure, (event) =>
    event.storage === "serviceaccounts" && event.type === "DELETED" && KubeObject.meta(event.object).name === defaultName)
  return { idle: worker.idle, pending: worker.pending } satisfies ServiceAccounts
})
