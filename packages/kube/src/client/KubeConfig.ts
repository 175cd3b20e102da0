/**
 * Where the cluster is and how to authenticate, turned into what the client needs: the server URL,
 * the undici dispatcher carrying TLS settings, and the auth headers (refreshed where tokens expire).
 * A pod's own service account is read directly, as client-go's in-cluster config reads it, and so
 * is a kubeconfig file that needs only a server, its CA and a token or client certificate; any
 * other kubeconfig is loaded with `@kubernetes/client-node`, imported only then: it costs a process
 * about half a second and 60 MB.
 *
 * @since 0.1.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type * as k8s from "@kubernetes/client-node"
import { Clock, Effect, Ref, Schema, type Scope } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { isIPv6 } from "node:net"
import type * as https from "node:https"
import { delimiter, join } from "node:path"
import type * as Undici from "undici"
import * as KubeconfigFile from "./KubeconfigFile.ts"
import * as ProxyEnvironment from "./ProxyEnvironment.ts"

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
  /**
   * The pod's service account: the API server from KUBERNETES_SERVICE_HOST and
   * KUBERNETES_SERVICE_PORT, its token and CA from `directory` (default `serviceAccountDirectory`).
   */
  | { readonly _tag: "InCluster"; readonly directory?: string | undefined }
  /** A kubeconfig already loaded by the caller. */
  | { readonly _tag: "Loaded"; readonly config: k8s.KubeConfig }

/** Where Kubernetes mounts a pod's service account token, CA certificate and namespace. */
export const serviceAccountDirectory = "/var/run/secrets/kubernetes.io/serviceaccount"

const clientNode = Effect.promise(() => import("@kubernetes/client-node"))

/**
 * Loads a kubeconfig with `@kubernetes/client-node`.
 *
 * @example
 * import { KubeConfig } from "@kubefx/kube"
 * const config = KubeConfig.load({ _tag: "File", path: ".kubefx/kubeconfig" })
 */
export const load = (source: Source): Effect.Effect<k8s.KubeConfig, KubeConfigError> =>
  source._tag === "Loaded" ? Effect.succeed(source.config) : Effect.flatMap(clientNode, (module) =>
    Effect.try({
      try: () => {
        const config = new module.KubeConfig()
        if (source._tag === "File") config.loadFromFile(source.path)
        else if (source._tag === "InCluster") loadInCluster(config, source.directory ?? serviceAccountDirectory)
        else config.loadFromDefault()
        if (source._tag !== "InCluster" && source.context !== undefined) {
          if (config.getContextObject(source.context) === null) throw new Error(`the kubeconfig has no context "${source.context}"`)
          config.setCurrentContext(source.context)
        }
        if (config.getCurrentCluster() === null) throw new Error("the kubeconfig names no current cluster")
        return config
      },
      catch: (error) => new KubeConfigError({ message: `cannot load kubeconfig: ${error instanceof Error ? error.message : String(error)}` })
    }))

// client-node's `loadFromCluster`, from any directory, with the server as client-go makes it.
const loadInCluster = (config: k8s.KubeConfig, directory: string): void => {
  const server = inClusterServer()
  if (server === undefined) throw new Error(notInCluster)
  const namespaceFile = join(directory, "namespace")
  config.loadFromOptions({
    clusters: [{ name: "inCluster", server, caFile: join(directory, "ca.crt"), skipTLSVerify: false }],
    users: [{ name: "inClusterUser", authProvider: { name: "tokenFile", config: { tokenFile: join(directory, "token") } } }],
    contexts: [{
      name: "inClusterContext",
      cluster: "inCluster",
      user: "inClusterUser",
      ...(existsSync(namespaceFile) ? { namespace: readFileSync(namespaceFile, "utf8").trim() } : {})
    }],
    currentContext: "inClusterContext"
  })
}

/** What every request needs. */
export interface Connection {
  /** The API server URL, without a trailing slash. */
  readonly server: string
  /** TLS and proxy settings; undefined for the default agent. */
  readonly dispatcher: Undici.Dispatcher | undefined
  /** Authentication headers for the next request. */
  readonly headers: Effect.Effect<Readonly<Record<string, string>>, KubeConfigError>
  /**
   * Whether answers are not asked for gzipped (the kubeconfig cluster's `disable-compression`,
   * client-go's `DisableCompression`). Unset, they are asked for unless the server is on a loopback
   * address, where the bytes cross no network and compressing them would only cost CPU.
   */
  readonly disableCompression?: boolean | undefined
}

/**
 * The connection `source` leads to. A pod's service account (`InCluster`, and `Default` where
 * neither $KUBECONFIG nor ~/.kube/config is there and the service account is) and a kubeconfig file
 * whose context needs only a server, its CA and a token or client certificate (the embedded API
 * server's, kind's, minikube's) are read directly; anything else goes through `load` and `connect`.
 *
 * @example
 * import { Effect } from "effect"
 * import { Kube, KubeConfig } from "@kubefx/kube"
 * const client = Effect.flatMap(KubeConfig.connection({ _tag: "Default" }), Kube.make)
 */
export const connection = (source: Source): Effect.Effect<Connection, KubeConfigError, Scope.Scope> => {
  if (source._tag === "InCluster") return inCluster(source.directory)
  if (source._tag === "Loaded") return Effect.flatMap(load(source), connect)
  const file = source._tag === "File" ? source.path : defaultFile()
  if (file === inPod) return source.context === undefined ? inCluster() : Effect.flatMap(load(source), connect)
  const { disableCompression, plain } = file === undefined ? { plain: undefined, disableCompression: undefined } : KubeconfigFile.read(file, source.context)
  if (plain !== undefined && (plain.server.startsWith("https://") || isLoopbackHttp(plain.server))) return fromPlain(plain, disableCompression)
  const loaded = Effect.flatMap(load(source), connect)
  // client-node's clusters drop `disable-compression`: it is taken from kubefx's reading of the file.
  return disableCompression === undefined ? loaded : Effect.map(loaded, (connection) => ({ ...connection, disableCompression }))
}

const inPod = Symbol("inPod")

// Where client-node's `loadFromDefault` looks, outside Windows (where it also asks WSL): the one
// file of $KUBECONFIG (several are merged, by client-node), ~/.kube/config, the service account.
const defaultFile = (): string | typeof inPod | undefined => {
  if (process.platform === "win32") return undefined
  const files = (process.env.KUBECONFIG ?? "").split(delimiter).filter((file) => file !== "")
  if (files.length > 0) return files.length === 1 ? files[0] : undefined
  const home = process.env.HOME
  const config = home === undefined || home === "" ? undefined : join(home, ".kube", "config")
  if (config !== undefined && existsSync(config)) return config
  return existsSync(join(serviceAccountDirectory, "token")) ? inPod : undefined
}

// HTTP/1.1, even to a server that offers HTTP/2 (kube-apiserver does; undici offers both by
// default): with the whole test suite over HTTP/2, undici's client once threw its ClientDestroyedError
// past every handler as an operator's connection was torn down (an emitter with no error listener),
// which would crash an operator at shutdown. Over HTTP/1.1 an operator holds a connection per watch
// and per request in flight, as client-node's and kube-rs's clients do.
const allowH2 = false

// TCP keepalive after 30 s idle, as client-go and client-node: undici's 60 s default races the
// 60 s idle timeout of cloud load balancers (AWS's), which could drop a quiet watch's connection.
const keepAlive = { keepAlive: true, keepAliveInitialDelay: 30_000 } as const

// Kubefx's dispatcher for an HTTPS server with `tls`: through `proxy` when there is one, else
// straight, each connection made by `connector` when given (a rotating certificate's).
const httpsDispatcher = (
  proxy: string | undefined,
  tls: ConnectOptions,
  connector?: Undici.buildConnector.connector
): Effect.Effect<Undici.Dispatcher, never, Scope.Scope> =>
  proxy === undefined
    ? NodeHttpClient.makeDispatcherOptions({ allowH2, connect: connector ?? { ...keepAlive, ...tls } })
    : proxyDispatcher(proxy, tls)

const authenticationFailed = (error: unknown) =>
  new KubeConfigError({ message: `authentication failed: ${error instanceof Error ? error.message : String(error)}` })

const fromPlain = (plain: KubeconfigFile.Plain, disableCompression: boolean | undefined): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const dispatcher = plain.server.startsWith("https://")
      ? yield* httpsDispatcher(ProxyEnvironment.proxyFor(plain.server), {
        rejectUnauthorized: !plain.insecureSkipTlsVerify,
        ...(plain.certificateAuthority === undefined ? {} : { ca: plain.certificateAuthority }),
        ...(plain.clientCertificate === undefined ? {} : { cert: plain.clientCertificate, key: plain.clientKey! }),
        ...(plain.tlsServerName === undefined ? {} : { servername: plain.tlsServerName })
      })
      : undefined
    const headers = plain.token === undefined ? {} : bearer(plain.token)
    return { server: plain.server, dispatcher, headers: Effect.succeed(headers), disableCompression }
  })

const notInCluster = "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set"

const inClusterServer = (): string | undefined => {
  const host = process.env.KUBERNETES_SERVICE_HOST
  const port = process.env.KUBERNETES_SERVICE_PORT
  if (host === undefined || host === "" || port === undefined || port === "") return undefined
  return `https://${isIPv6(host) ? `[${host}]` : host}:${port}`
}

// The kubelet rotates projected tokens well before they expire; client-go reads the file again
// at most once a minute, and so does this.
const tokenLifeMillis = 60_000

const readText = (path: string, what: string) =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (error) =>
      new KubeConfigError({ message: `cannot read the service account's ${what}: ${error instanceof Error ? error.message : String(error)}` })
  })

/**
 * The pod's own connection, as client-go's in-cluster config makes it: HTTPS to
 * KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, trusting the service account's `ca.crt`, with
 * its `token` as the bearer token, read again once it is a minute old (a token that cannot be
 * read then leaves the last one in use, as client-go does). The dispatcher closes with the scope.
 *
 * @example
 * import { Effect } from "effect"
 * import { Kube, KubeConfig } from "@kubefx/kube"
 * const client = Effect.flatMap(KubeConfig.inCluster(), Kube.make)
 */
export const inCluster = (directory: string = serviceAccountDirectory): Effect.Effect<Connection, KubeConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const server = inClusterServer()
    if (server === undefined) {
      return yield* new KubeConfigError({ message: notInCluster })
    }
    const ca = yield* readText(join(directory, "ca.crt"), "CA certificate")
    const tokenPath = join(directory, "token")
    const readToken = Effect.map(readText(tokenPath, "token"), (text) => text.trim())
    const dispatcher = yield* httpsDispatcher(ProxyEnvironment.proxyFor(server), { ca })
    // Every request asks for the headers: the usual answer is the held object, made when read.
    const held = yield* Ref.make({ headers: bearer(yield* readToken), readAt: yield* Clock.currentTimeMillis })
    const reread = (now: number, last: Readonly<Record<string, string>>) =>
      readToken.pipe(
        Effect.map(bearer),
        Effect.tapError((error) => Effect.logWarning(`${error.message}; keeping the last token`)),
        Effect.orElseSucceed(() => last),
        Effect.tap((headers) => Ref.set(held, { headers, readAt: now }))
      )
    const headers = Effect.clockWith((clock) => {
      const now = clock.currentTimeMillisUnsafe()
      const current = Ref.getUnsafe(held)
      return now - current.readAt < tokenLifeMillis ? Effect.succeed(current.headers) : reread(now, current.headers)
    })
    return { server, dispatcher, headers }
  })

const bearer = (token: string): Readonly<Record<string, string>> => ({ Authorization: `Bearer ${token}` })

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
    const module = yield* clientNode
    const cluster = config.getCurrentCluster()
    if (cluster === null) return yield* new KubeConfigError({ message: "the kubeconfig names no current cluster" })
    const server = cluster.server.replace(/\/+$/, "")
    const authConfig = isLoopbackHttp(server) ? withoutTls(module, config) : config
    const authenticate = Effect.tryPromise({
      try: async () => {
        const context = new module.RequestContext(server, module.HttpMethod.GET)
        await authConfig.applySecurityAuthentication(context)
        return { headers: context.getHeaders() as Record<string, string>, dispatcher: context.getDispatcher() }
      },
      catch: authenticationFailed
    })
    const first = yield* authenticate
    const fromClientNode = first.dispatcher as Undici.Dispatcher | undefined
    const user = config.getCurrentUser()
    const dynamic = user !== null && (user.exec !== undefined || user.authProvider !== undefined)
    // An HTTPS server gets a dispatcher of kubefx's, with the TLS options client-node resolved (an
    // exec plugin's client certificate included), speaking HTTP/1.1 as every other, through the
    // HTTP proxy the cluster or the environment names (a SOCKS one keeps client-node's connector).
    const tlsOptions = Effect.tryPromise({
      try: async () => {
        const options: https.RequestOptions = {}
        await authConfig.applyToHTTPSOptions(options)
        return connectOptions(options)
      },
      catch: authenticationFailed
    })
    const proxy = cluster.proxyUrl ?? ProxyEnvironment.proxyFor(server)
    const ownTls = server.startsWith("https://") && proxy?.startsWith("socks") !== true ? yield* tlsOptions : undefined
    if (ownTls !== undefined) void fromClientNode?.destroy().catch(() => undefined)
    // An exec plugin's client certificate expires, and the plugin gives a new one: each new
    // connection is made with the latest (client-go's rotating dialer), while open ones, already
    // authenticated, go on.
    const rotating = dynamic && ownTls?.cert !== undefined && proxy === undefined ? yield* rotatingConnector(ownTls) : undefined
    const dispatcher = ownTls === undefined ? fromClientNode : yield* httpsDispatcher(proxy, ownTls, rotating?.connect)
    if (ownTls === undefined && dispatcher !== undefined) {
      // destroy, not close: close waits for open watches, which never end on their own.
      yield* Effect.addFinalizer(() => Effect.promise(() => dispatcher.destroy().catch(() => undefined)))
    }
    if (!dynamic) return { server, dispatcher, headers: Effect.succeed(first.headers) }
    const held = yield* Ref.make({ headers: first.headers, fetchedAt: yield* Clock.currentTimeMillis })
    const headers = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const current = yield* Ref.get(held)
      if (now - current.fetchedAt < refreshEveryMillis) return current.headers
      const fresh = yield* authenticate
      // Only the headers are wanted; the dispatcher made for them is never used.
      void (fresh.dispatcher as Undici.Dispatcher | undefined)?.close().catch(() => undefined)
      if (rotating !== undefined) yield* rotating.use(yield* tlsOptions)
      yield* Ref.set(held, { headers: fresh.headers, fetchedAt: now })
      return fresh.headers
    })
    return { server, dispatcher, headers }
  })

type ConnectOptions = Pick<https.RequestOptions, "ca" | "cert" | "key" | "rejectUnauthorized" | "servername">

// The TLS options an undici connector takes, of those client-node resolved.
const connectOptions = (options: https.RequestOptions): ConnectOptions => ({
  ...(options.ca === undefined ? {} : { ca: options.ca }),
  ...(options.cert === undefined ? {} : { cert: options.cert }),
  ...(options.key === undefined ? {} : { key: options.key }),
  ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized }),
  ...(options.servername === undefined ? {} : { servername: options.servername })
})

// client-node reads files and data into new Buffers on every call: compared by content.
const sameTls = (a: unknown, b: unknown): boolean =>
  a === b || (Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b)) ||
  (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameTls(item, b[i])))

// An undici connector that makes each connection with the TLS options last given to `use`.
const rotatingConnector = Effect.fnUntraced(function*(initial: ConnectOptions) {
  const { buildConnector } = yield* Effect.promise(() => import("@effect/platform-node/Undici"))
  const build = (options: ConnectOptions) => ({ options, connect: buildConnector({ ...options, ...keepAlive, allowH2 }) })
  const current = yield* Ref.make(build(initial))
  return {
    connect: ((options, callback) => Ref.getUnsafe(current).connect(options, callback)) satisfies Undici.buildConnector.connector,
    use: (options: ConnectOptions): Effect.Effect<void> =>
      Ref.update(current, (held) =>
        sameTls(options.cert, held.options.cert) && sameTls(options.key, held.options.key) && sameTls(options.ca, held.options.ca)
          ? held
          : build(options))
  }
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
const withoutTls = (module: typeof k8s, config: k8s.KubeConfig): k8s.KubeConfig => {
  const copy = new module.KubeConfig()
  copy.loadFromOptions({
    clusters: config.clusters.map((cluster) => cluster.name === config.getCurrentCluster()?.name ? { ...cluster, skipTLSVerify: true } : cluster),
    users: config.users,
    contexts: config.contexts,
    currentContext: config.currentContext
  })
  return copy
}

// An HTTP(S) proxy's tunnel to the API server, the TLS inside it as every other connection's.
const proxyDispatcher = (uri: string, tls: ConnectOptions): Effect.Effect<Undici.Dispatcher, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.map(
      Effect.promise(() => import("@effect/platform-node/Undici")),
      ({ ProxyAgent }): Undici.Dispatcher => new ProxyAgent({ uri, requestTls: { ...keepAlive, ...tls }, proxyTls: keepAlive, allowH2 })
    ),
    (dispatcher) => Effect.promise(() => dispatcher.destroy().catch(() => undefined))
  )
