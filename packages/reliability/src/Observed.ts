/**
 * A Kubernetes client that counts the failures its callers see, by kind, so a scenario can report
 * the faults that reached the operator (and the user) rather than the ones it meant to inject.
 */
import type { Kube, KubeError } from "@kubefx/kube"
import { Effect, Stream } from "effect"

/** Failure counts by kind: "5xx", "409", "410", "429", "transport", "other". */
export type Counts = Record<string, number>

/**
 * The kind a failure is counted under.
 *
 * @example
 * import { KubeError } from "@kubefx/kube"
 * import * as Observed from "./Observed.ts"
 * Observed.kind(KubeError.fromStatus(503, {})) // "5xx"
 */
export const kind = (error: KubeError.KubeError): string => {
  switch (error._tag) {
    case "ServerError":
    case "Timeout":
      return "5xx"
    case "Conflict":
      return "409"
    case "Gone":
      return "410"
    case "TooManyRequests":
      return "429"
    case "Transport":
      return "transport"
  }
  return "other"
}

const isKubeError = (error: unknown): error is KubeError.KubeError =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag !== "DecodeError"

/**
 * Wraps a client: every failure of a request or a watch adds one to `counts`.
 *
 * @example
 * import type { Kube } from "@kubefx/kube"
 * import * as Observed from "./Observed.ts"
 * declare const kube: Kube.Client
 * const counts: Observed.Counts = {}
 * const counted = Observed.client(kube, counts)
 */
export const client = (kube: Kube.Client, counts: Counts): Kube.Client => {
  const seen = (error: unknown) =>
    Effect.sync(() => {
      if (!isKubeError(error)) return
      const k = kind(error)
      counts[k] = (counts[k] ?? 0) + 1
    })
  const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.tapError(effect, seen)
  return {
    server: kube.server,
    request: (request) => counted(kube.request(request)),
    get: (resource, name, namespace) => counted(kube.get(resource, name, namespace)),
    list: (resource, options) => counted(kube.list(resource, options)),
    listAll: (resource, options) => counted(kube.listAll(resource, options)),
    watch: (resource, options) => Stream.tapError(kube.watch(resource, options), seen),
    create: (resource, object, options) => counted(kube.create(resource, object, options)),
    replace: (resource, object, options) => counted(kube.replace(resource, object, options)),
    delete: (resource, name, namespace, options) => counted(kube.delete(resource, name, namespace, options)),
    apply: (resource, body, options) => counted(kube.apply(resource, body, options)),
    patch: (resource, name, namespace, patch, options) => counted(kube.patch(resource, name, namespace, patch, options))
  }
}
