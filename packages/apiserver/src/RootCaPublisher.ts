/**
 * kube-controller-manager's root-ca-cert-publisher, running in the server: every active namespace
 * has the `kube-root-ca.crt` ConfigMap holding the cluster's CA as `ca.crt` (a pod's token volume
 * projects it), made with the namespace, made again when deleted and put back when changed.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import * as ServiceAccounts from "./ServiceAccounts.ts"
import type * as Status from "./Status.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

const descriptionAnnotation = "kubernetes.io/description"
const description = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints " +
  "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."

const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "kube-controller-manager",
  fieldValidation: "Ignore"
}

export interface RootCaPublisher {
  /** Completes when nothing is queued. */
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
}

/**
 * Starts the publisher over `env.store` in the current scope, publishing `certificateAuthority` (PEM).
 *
 * @example
 * import { Effect } from "effect"
 * import * as RootCaPublisher from "./RootCaPublisher.ts"
 * declare const env: import("./Rest.ts").Env
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const publisher = yield* RootCaPublisher.make(env, "-----BEGIN CERTIFICATE-----...")
 *   yield* publisher.idle
 * }))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env, certificateAuthority: string) {
  const { store } = env
  const configMaps = env.registry.byStorage("configmaps")[0]!
  const data = { "ca.crt": certificateAuthority }
  // Gone or taken meanwhile, or the namespace closing: nothing to do.
  const settled = (error: Status.ApiError) => error.code === 404 || error.code === 409 || error.code === 403
  const published = (configMap: KubeObject.KubeObject) =>
    KubeObject.equals(configMap.data, data) && (KubeObject.meta(configMap).annotations?.[descriptionAnnotation] ?? "") !== ""

  const ensure = (namespace: string) =>
    Effect.suspend(() => {
      const ns = store.get("namespaces", "", namespace)
      if (ns === undefined || KubeObject.meta(ns).deletionTimestamp !== undefined) return Effect.void
      const stored = store.get("configmaps", namespace, ServiceAccounts.rootCaName)
      if (stored !== undefined && published(stored)) return Effect.void
      const write: Effect.Effect<unknown, Status.ApiError> = stored === undefined
        ? Rest.create(env, configMaps, namespace, {
          metadata: { name: ServiceAccounts.rootCaName, annotations: { [descriptionAnnotation]: description } },
          data
        }, writeOptions)
        : Rest.update(env, { resource: configMaps, namespace, name: ServiceAccounts.rootCaName }, undefined, writeOptions, (current) =>
          Effect.succeed({
            ...KubeObject.withMeta(current, {
              annotations: { ...KubeObject.meta(current).annotations, [descriptionAnnotation]: description }
            }),
            data
          }))
      return write.pipe(Effect.asVoid, Effect.catchIf(settled, () => Effect.void))
    })

  const worker = yield* Worker.perNamespace(store, "root-ca-cert-publisher", ensure, (event) =>
    event.storage === "configmaps" && KubeObject.meta(event.object).name === ServiceAccounts.rootCaName)
  return { idle: worker.idle, pending: worker.pending } satisfies RootCaPublisher
})
