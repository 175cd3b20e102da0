/**
 * Where the cluster is and how to authenticate: a kubeconfig loaded with `@kubernetes/client-node`
 * (default locations, an explicit file, or in-cluster service account), turned into what the Effect
 * HTTP client needs: the server URL, the undici dispatcher carrying TLS settings, and the auth headers
 * (refreshed for exec plugins and OIDC, whose tokens expire).
 *
 * @since 0.1.0
 */
import * as k8s from "@kubernetes/client-node"
import { Clock, Effect, Schema, Scope } from "effect"
import type * as Undici from "undici"

/** The kubeconfig could not be loaded or has no usable cluster. */
export class KubeConfigError extends Schema.TaggedError<KubeConfigError>()("KubeConfigError", {
  message: Schema.String
}) {}

/** Where to find the kubeconfig. */
export type Source =
  /** $KUBECONFIG, ~/.kube/config, or the in-cluster service account, as kubectl looks. */
  | { readonly _tag: "Default"; readonly context?: string | undefined }
  /** One kubeconfig file. */
  | { readonly _tag: "File"; readonly path: string; readonly context?: string | undefined }
  /** The pod's service account (KUBERNETES_SERVICE_HOST, /var/run/secrets/kubernetes.io/serviceaccount). */
  | { readonly _tag: "InCluster" }
  /** A kubeconfig already loaded by the caller. */
  | { readonly _tag: "Loaded"; readonly config: k8s.KubeConfig }

/**
 * Loads a kubeconfig.
 *
 * @example
 * import { KubeConfig } from "@kubefx/kube"
 * const config = KubeConfig.load({ _tag: "File", path: ".kubefx/kubeconfig" })
 */
export const load = (source: Source): Effect.Effect<k8s.KubeConfig, KubeConfigError> =>
  Effect.try({
    try: () => {
      if (source._tag === "Loaded") return source.config
      const config = new k8s.KubeConfig()
      if (source._tag === "File") config.loadFromFile(source.path)
      else if (source._tag === "InCluster") config.loadFromCluster()
      else config.loadFromDefault()
      if (source._tag !== "InCluster" && source.context !== undefined) config.setCurrentContext(source.context)
      if (config.getCurrentCluster() === null) throw new Error("the kubeconfig names no current cluster")
      return config
    },
    catch: (error) => new KubeConfigError({ message: `cannot load kubeconfig: ${error instanceof Error ? error.message : String(error)}` })
  })

/** What every request needs. */
export interface Connection {
  /** The API server URL, without a trailing slash. */
  readonly server: string
  /** TLS and proxy settings; undefined for the default agent. */
  readonly dispatcher: Undici.Dispatcher | undefined
  /** Authentication headers for the next request. */
  readonly headers: Effect.Effect<Readonly<Record<string, string>>, KubeConfigError>
}

// Tokens from exec plugins and OIDC providers expire; static credentials never change.
const refreshEveryMillis = 30_000

/**
 * Resolves a kubeconfig into a connection. The dispatcher is created once and closed with the scope.
 *
 * @example
 * import { Effect } from "effect"
 * import { KubeConfig } from "@kubefx/kube"
 * const connection = Effect.flatMap(KubeConfig.load({ _tag: "Default" }), KubeConfig.connect)
 */
export const connect = (config: k8s.KubeConfig): Effect.Effect<Connection, KubeConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const cluster = config.getCurrentCluster()
    if (cluster === null) return yield* new KubeConfigError({ message: "the kubeconfig names no current cluster" })
    const server = cluster.server.replace(/\/+$/, "")
    const authConfig = isLoopbackHttp(server) ? withoutTls(config) : config
    const authenticate = Effect.tryPromise({
      try: async () => {
        const context = new k8s.RequestContext(server, k8s.HttpMethod.GET)
        await authConfig.applySecurityAuthentication(context)
        return { headers: context.getHeaders() as Record<string, string>, dispatcher: context.getDispatcher() }
      },
      catch: (error) =>
        new KubeConfigError({ message: `authentication failed: ${error instanceof Error ? error.message : String(error)}` })
    })
    const first = yield* authenticate
    const dispatcher = first.dispatcher as Undici.Dispatcher | undefined
    if (dispatcher !== undefined) {
      // destroy, not close: close waits for open watches, which never end on their own.
      yield* Effect.addFinalizer(() => Effect.promise(() => dispatcher.destroy().catch(() => undefined)))
    }
    const user = config.getCurrentUser()
    const dynamic = user !== null && (user.exec !== undefined || user.authProvider !== undefined)
    if (!dynamic) return { server, dispatcher, headers: Effect.succeed(first.headers) }
    let cached = first.headers
    let fetchedAt = yield* Clock.currentTimeMillis
    const headers = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now - fetchedAt < refreshEveryMillis) return cached
      const fresh = yield* authenticate
      // Only the headers are wanted; the dispatcher made for them is never used.
      void (fresh.dispatcher as Undici.Dispatcher | undefined)?.close().catch(() => undefined)
      cached = fresh.headers
      fetchedAt = now
      return cached
    })
    return { server, dispatcher, headers }
  })

/**
 * Whether the server is plain HTTP on a loopback address, like the embedded API server. client-node
 * refuses plain HTTP (a bearer token would cross the network in clear); on loopback it never leaves
 * the machine, so kubefx allows it there and nowhere else.
 *
 * @example
 * import { KubeConfig } from "@kubefx/kube"
 * KubeConfig.isLoopbackHttp("http://127.0.0.1:6443") // true
 * KubeConfig.isLoopbackHttp("http://10.0.0.1:6443") // false
 */
export const isLoopbackHttp = (server: string): boolean => {
  try {
    const url = new URL(server)
    return url.protocol === "http:" &&
      (url.hostname === "localhost" || url.hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(url.hostname))
  } catch {
    return false
  }
}

// A copy whose current cluster skips TLS verification, which is how client-node accepts http://.
const withoutTls = (config: k8s.KubeConfig): k8s.KubeConfig => {
  const copy = new k8s.KubeConfig()
  copy.loadFromOptions({
    clusters: config.clusters.map((cluster) => cluster.name === config.getCurrentCluster()?.name ? { ...cluster, skipTLSVerify: true } : cluster),
    users: config.users,
    contexts: config.contexts,
    currentContext: config.currentContext
  })
  return copy
}
