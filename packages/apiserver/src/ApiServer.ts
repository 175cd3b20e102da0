/**
 * The embedded Kubernetes API server: starts in the current scope on 127.0.0.1 (port 0 picks a
 * free one), optionally durable in a data directory, optionally writing a kubeconfig, and serves
 * until the scope closes or `close` runs.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Duration, Effect, Exit, Layer, Schema, Scope } from "effect"
import * as Aggregation from "./Aggregation.ts"
import * as ApiServices from "./ApiServices.ts"
import * as Authentication from "./Authentication.ts"
import * as Authorization from "./Authorization.ts"
import * as BootstrapPolicy from "./BootstrapPolicy.ts"
import * as Builtins from "./Builtins.ts"
import * as Crds from "./Crds.ts"
import * as Events from "./Events.ts"
import * as Faults from "./Faults.ts"
import * as FlowSchemas from "./FlowSchemas.ts"
import * as GarbageCollector from "./GarbageCollector.ts"
import * as Http from "./Http.ts"
import * as Identity from "./Identity.ts"
import * as Kubeconfig from "./Kubeconfig.ts"
import * as LegacyTokens from "./LegacyTokens.ts"
import * as KubernetesService from "./KubernetesService.ts"
import * as Listener from "./Listener.ts"
import * as Namespaces from "./Namespaces.ts"
import * as Patching from "./Patching.ts"
import * as Persistence from "./Persistence.ts"
import * as PriorityAdmission from "./PriorityAdmission.ts"
import * as Registry from "./Registry.ts"
import * as ResourceQuotas from "./ResourceQuotas.ts"
import * as RequestMetrics from "./RequestMetrics.ts"
import * as Rest from "./Rest.ts"
import * as ServedOpenApi from "./ServedOpenApi.ts"
import * as RootCaPublisher from "./RootCaPublisher.ts"
import * as ServiceAccounts from "./ServiceAccounts.ts"
import * as Status from "./Status.ts"
import * as StorageProtection from "./StorageProtection.ts"
import * as Store from "./Store.ts"
import * as Watch from "./Watch.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

export class ApiServerError extends Schema.TaggedError<ApiServerError>()("ApiServerError", {
  message: Schema.String
}) {}

export interface Options {
  /** Port to listen on; 0 (the default) picks a free one. */
  readonly port?: number
  /** Address to bind (default 127.0.0.1). */
  readonly host?: string
  /** The bearer token every request must carry (default: random per start, or kept in `dataDir`). */
  readonly token?: string
  /**
   * Keep every acknowledged write in this directory and recover from it on start. The token and
   * serving certificate are kept there too, so clients' kubeconfigs stay valid across restarts.
   */
  readonly dataDir?: string
  /** Write a kubeconfig for the server here (mode 0600). */
  readonly kubeconfigPath?: string
  /** Recent events kept for watches and paginated lists (default 10,000). */
  readonly historySize?: number
  /** Interval of watch BOOKMARKs (default 5 s). */
  readonly bookmarkIntervalMs?: number
  /** Events a watch may fall behind before it is dropped with a 410 (default 10,000). */
  readonly watchBufferSize?: number
  /** Log records between snapshots of the data directory (default 10,000). */
  readonly snapshotEvery?: number
  /**
   * How long a deleted namespace keeps its content before the namespace controller empties it
   * (default 1,000 ms, about a cluster's; 0 empties it at once).
   */
  readonly namespaceCleanupDelayMs?: number
  /** How long an Event lives after it was last written, as kube-apiserver's `--event-ttl` (default 1 hour). */
  readonly eventTtlMs?: number
  /**
   * Publish the `kube-root-ca.crt` ConfigMap in every namespace, as kube-controller-manager does
   * (default false: tests that list ConfigMaps see only their own, as under envtest; `kubefx dev`
   * and `kubefx apiserver` publish it).
   */
  readonly publishRootCa?: boolean
  /**
   * Extra in-process controllers started with the server and stopped with it (for example a
   * workload simulator that sets Deployments' readyReplicas). Each runs in the server's scope.
   */
  readonly controllers?: ReadonlyArray<(server: ApiServer) => Effect.Effect<void, never, Scope.Scope>>
}

export interface ApiServer {
  /** "http://127.0.0.1:PORT" */
  readonly url: string
  /** "https://127.0.0.1:PORT": the same port, over TLS (the kubeconfig points here). */
  readonly httpsUrl: string
  /** The PEM certificate the HTTPS side serves, self-signed; trust it as a CA. */
  readonly certificateAuthority: string
  readonly host: string
  readonly port: number
  readonly token: string
  readonly kubeconfigPath: string | undefined
  readonly faults: Faults.Faults
  readonly store: Store.Store
  readonly registry: Registry.Registry
  /** The REST storage, for in-process controllers that write as clients would. */
  readonly env: Rest.Env
  /** Waits until the garbage collector and the namespace, CRD, ClusterRole aggregation, ServiceAccount and ResourceQuota controllers have nothing queued. */
  readonly settled: Effect.Effect<void>
  /** Stops the server (also done when the scope it was made in closes). */
  readonly close: Effect.Effect<void>
}

// What a cluster holds from its start: its namespaces, its bootstrap RBAC and its system priority
// classes, each stored once.
const seed = (store: Store.Store) => {
  for (const name of Namespaces.initial) {
    if (store.get("namespaces", "", name) === undefined) store.put("namespaces", Namespaces.object(name), 0)
  }
  for (const { object, storage } of [...BootstrapPolicy.objects(), ...PriorityAdmission.systemClasses()]) {
    const m = KubeObject.meta(object)
    if (store.get(storage, m.namespace ?? "", m.name ?? "") === undefined) store.put(storage, object, 0)
  }
}

/**
 * Starts a server in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ApiServer from "./ApiServer.ts"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const server = yield* ApiServer.make({ port: 0, kubeconfigPath: "/tmp/kubefx/kubeconfig" })
 *   yield* Effect.log(`listening on ${server.url}`)
 * }))
 */
export const make = Effect.fnUntraced(function*(options: Options = {}) {
  const outer = yield* Effect.scope
  const scope = yield* Scope.fork(outer, "sequential")
  const close = Scope.close(scope, Exit.void)
  const fail = (message: string) => new ApiServerError({ message })

  return yield* Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    // With a data directory, the token and certificate survive restarts with the data.
    const identity = yield* Identity.load({
      hosts: host === "0.0.0.0" || host === "::" ? [] : [host],
      token: options.token,
      dataDir: options.dataDir
    }).pipe(Effect.mapError((e) => fail(e.message)))
    const token = identity.token
    const initial = options.dataDir === undefined
      ? undefined
      : yield* Persistence.recover(options.dataDir).pipe(Effect.mapError((e) => fail(e.message)))
    const store = Store.make({
      ...(options.historySize === undefined ? {} : { historySize: options.historySize }),
      ...(initial === undefined ? {} : { initial })
    })
    const persistence = options.dataDir === undefined
      ? undefined
      : yield* Persistence.attach(store, {
        dir: options.dataDir,
        ...(options.snapshotEvery === undefined ? {} : { snapshotEvery: options.snapshotEvery })
      }).pipe(Effect.mapError((e) => fail(e.message)))
    seed(store)

    const registry = Registry.make(Builtins.make())
    const env: Rest.Env = {
      store,
      registry,
      schemas: Crds.schemas,
      fields: Patching.fieldManagement,
      authorization: Authorization.make(store),
      durable: persistence === undefined
        ? () => Effect.void
        : (revision) => persistence.durable(revision).pipe(Effect.mapError((e) => Status.internal(e.message)))
    }
    const faults = Faults.make()
    const metrics = RequestMetrics.make()
    const watches = Watch.make({
      store,
      faults,
      metrics,
      durable: env.durable,
      ...(options.bookmarkIntervalMs === undefined ? {} : { bookmarkIntervalMs: options.bookmarkIntervalMs }),
      ...(options.watchBufferSize === undefined ? {} : { bufferSize: options.watchBufferSize })
    })
    // As kube-apiserver: a CRD's deletion ends the open watches of its kind; watching again gets 404.
    const crds = yield* Crds.controller(env, {
      unserved: ({ type }) => faults.closeWatches({ resource: `${type.plural}.${type.group}` })
    })
    const gc = yield* GarbageCollector.make(env)
    const aggregation = yield* Aggregation.make(env)
    const namespaces = yield* Namespaces.controller(env, {
      ...(options.namespaceCleanupDelayMs === undefined ? {} : { delayMs: options.namespaceCleanupDelayMs })
    })
    const serviceAccounts = yield* ServiceAccounts.make(env)
    const rootCa = options.publishRootCa === true ? yield* RootCaPublisher.make(env, identity.certificate.cert) : undefined
    // A cluster's namespaces have their default ServiceAccount and root CA by the time it is used.
    yield* serviceAccounts.idle
    if (rootCa !== undefined) yield* rootCa.idle
    const legacyTokens = yield* LegacyTokens.make(env, { signingKey: identity.serviceAccountKey, certificateAuthority: identity.certificate.cert })
    const quotas = yield* ResourceQuotas.make(env)
    const apiServices = yield* ApiServices.make(env)
    const storageProtection = yield* StorageProtection.make(env)
    const flowSchemas = yield* FlowSchemas.make(env)
    // Events expire an hour after their last write (kube-apiserver's --event-ttl), so a long session
    // of controllers' events does not grow without bound.
    const eventTtl = options.eventTtlMs ?? 3_600_000
    const events = registry.byStorage("events")[0]
    if (events !== undefined) {
      const sweep = Effect.suspend(() => {
        const now = Date.now()
        const expired = store.list("events", undefined).filter((event) => Events.lastWritten(event) + eventTtl <= now)
        return Effect.forEach(expired, (event) =>
          Effect.ignore(Rest.remove(env, { resource: events, namespace: KubeObject.meta(event).namespace, name: KubeObject.meta(event).name ?? "" }, {
            propagationPolicy: undefined,
            preconditions: { uid: KubeObject.meta(event).uid ?? "" },
            dryRun: false
          })), { discard: true })
      })
      yield* Effect.forkScoped(Effect.forever(Effect.sleep(Duration.millis(Math.min(60_000, eventTtl))).pipe(Effect.andThen(sweep))))
    }

    const openapi = ServedOpenApi.make(registry)
    const certificate = identity.certificate
    let address = ""
    const handler = yield* NodeHttpServer.makeHandler(
      yield* Http.handler({
        env,
        watches,
        faults,
        authentication: Authentication.make({ token, signingKey: identity.serviceAccountKey, store }),
        address: () => address,
        patch: (target, subresource, contentType, body, patchOptions) =>
          Patching.patch(env, target, subresource, contentType, body, patchOptions),
        patchDocument: (contentType, document, body, fieldValidation) =>
          Patching.patchDocument(contentType, document, body, undefined, fieldValidation),
        openapi,
        finalizeNamespace: (name, body) => Namespaces.finalize(env, name, body),
        deleteNamespace: (name, deleteOptions) => Namespaces.remove(env, name, deleteOptions),
        discovered: apiServices.discovered,
        metrics
      }),
      { scope }
    )
    const listener = yield* Listener.listen({ host, port: options.port ?? 0, certificate, handler }).pipe(
      Effect.mapError((e) => fail(e.message))
    )
    // Open watches would keep connections busy: end them before the listener drops connections.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        faults.resumeWatches()
        faults.closeWatches()
      })
    )
    const port = listener.port
    // Bound to every interface: clients (and the certificate) use the loopback address.
    const clientHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host
    const hostInUrl = clientHost.includes(":") ? `[${clientHost}]` : clientHost
    address = `${hostInUrl}:${port}`
    const url = `http://${address}`
    const httpsUrl = `https://${address}`
    // The `kubernetes` Service points at the address clients reach the server at, kept so.
    const kubernetesService = yield* Worker.make("kubernetes-service", () => Effect.ignore(KubernetesService.reconcile(env, clientHost, port)), () => "")
    kubernetesService.enqueue(undefined)
    const unsubscribeKubernetesService = store.subscribe((event) => {
      if (KubernetesService.concerns(event)) kubernetesService.enqueue(undefined)
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribeKubernetesService))

    if (options.kubeconfigPath !== undefined) {
      yield* Kubeconfig.write(options.kubeconfigPath, { server: httpsUrl, token, certificateAuthority: certificate.cert }).pipe(
        Effect.mapError((e) => fail(e.message))
      )
    }
    const apiServer: ApiServer = {
      url,
      httpsUrl,
      certificateAuthority: certificate.cert,
      host,
      port,
      token,
      kubeconfigPath: options.kubeconfigPath,
      faults,
      store,
      registry,
      env,
      // One controller's writes can queue work for another: wait until all are idle at once.
      settled: Effect.all([
        crds.idle,
        gc.idle,
        namespaces.idle,
        aggregation.idle,
        serviceAccounts.idle,
        legacyTokens.idle,
        quotas.idle,
        apiServices.idle,
        storageProtection.idle,
        kubernetesService.idle
      ], {
        discard: true
      }).pipe(
        Effect.andThen(Effect.yieldNow),
        Effect.repeat({
          until: () =>
            crds.pending() + gc.pending() + namespaces.pending() + aggregation.pending() + serviceAccounts.pending() + (rootCa?.pending() ?? 0) + legacyTokens.pending() + quotas.pending() +
                apiServices.pending() + storageProtection.pending() + flowSchemas.pending() + kubernetesService.pending() === 0
        })
      ),
      close
    }
    for (const controller of options.controllers ?? []) yield* Effect.forkScoped(controller(apiServer))
    return apiServer
  }).pipe(
    Scope.provide(scope),
    Effect.onError(() => close)
  )
})

/** The server as a service, for programs assembled from layers. */
export class Service extends Context.Service<Service, ApiServer>()("@kubefx/apiserver/ApiServer") {
  /**
   * A layer that starts a server and stops it when the layer is released.
   *
   * @example
   * import { Effect } from "effect"
   * import * as ApiServer from "./ApiServer.ts"
   * const program = ApiServer.Service.use((server) => Effect.log(server.url)).pipe(
   *   Effect.provide(ApiServer.Service.layer({ port: 0 }))
   * )
   */
  static readonly layer = (options: Options = {}): Layer.Layer<Service, ApiServerError> =>
    Layer.effect(Service, make(options))
}

/** A server started outside Effect: `close` returns a Promise. */
export interface Running extends Omit<ApiServer, "close"> {
  readonly close: () => Promise<void>
}

/**
 * Starts a server from plain async code (tests, scripts); call `close()` to stop it.
 *
 * @example
 * import * as ApiServer from "./ApiServer.ts"
 * const server = await ApiServer.start({ port: 0 })
 * // ... use server.url and server.token ...
 * await server.close()
 */
export const start = async (options: Options = {}): Promise<Running> => {
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(make(options).pipe(Scope.provide(scope)))
  return { ...server, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
