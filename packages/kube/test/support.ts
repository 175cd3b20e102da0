/**
 * Integration-test support: an embedded API server on a random loopback port per test file (or the
 * cluster of KUBEFX_TEST_KUBECONFIG), a fresh namespace per test, CRD installation, and polling.
 */
import { ApiServer, Kubeconfig } from "@kubefx/apiserver"
import { Builtins, Crd, type Informer, Kube, KubeError } from "@kubefx/kube"
import { Clock, Context, Deferred, Duration, Effect, Exit, Layer, Schedule, Stream } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface Cluster {
  /** Fault injection, when the cluster is the embedded server. */
  readonly server: ApiServer.ApiServer | undefined
}
export class TestCluster extends Context.Service<TestCluster, Cluster>()("@kubefx/kube/test/TestCluster") {}

const embedded = (options: Pick<ApiServer.Options, "controllers">) => Layer.unwrap(Effect.gen(function*() {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-kube-test-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  const kubeconfigPath = join(dir, "kubeconfig")
  const server = yield* ApiServer.make({ ...options, kubeconfigPath, bookmarkIntervalMs: 1000 })
  return Layer.merge(Kube.layer({ _tag: "File", path: kubeconfigPath }), Layer.succeed(TestCluster, { server }))
}))

const external = (path: string) =>
  Layer.merge(Kube.layer({ _tag: "File", path }), Layer.succeed(TestCluster, { server: undefined }))

/**
 * Kube and TestCluster for a test file whose embedded server also runs `controllers` (for example
 * the workload simulator); a real cluster has its own.
 */
export const layerWith = (options: Pick<ApiServer.Options, "controllers"> = {}): Layer.Layer<Kube.Kube | TestCluster, unknown> =>
  process.env.KUBEFX_TEST_KUBECONFIG === undefined
    ? Layer.orDie(embedded(options))
    : Layer.orDie(external(process.env.KUBEFX_TEST_KUBECONFIG))

/** Kube and TestCluster for a test file. */
export const layer: Layer.Layer<Kube.Kube | TestCluster, unknown> = layerWith()

let namespaces = 0

/** A fresh namespace for one test, deleted when its scope closes. */
export const namespace = Effect.gen(function*() {
  const kube = yield* Kube.Kube
  const name = `kubefx-test-${process.pid}-${++namespaces}`
  yield* kube.create(Builtins.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  yield* Effect.addFinalizer(() => Effect.ignore(kube.delete(Builtins.Namespace, name)))
  return name
})

/** Installs the CRD of a custom resource and waits until it is served. */
export const installCrd = (resource: Crd.CustomResource) => Crd.install([resource], { fieldManager: "kubefx-test" })

/** Retries `check` every 50 ms until it succeeds, for at most `within` (default 15 s). */
export const eventually = <A, E, R>(check: Effect.Effect<A, E, R>, within: Duration.Input = "15 seconds") =>
  check.pipe(
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo({ duration: within }))),
    Effect.orDie
  )

/**
 * A `Kube` client of the embedded server holding `token` (a ServiceAccount's, from
 * `Rbac.serviceAccount`), as an operator in its pod holds it; built in the caller's scope.
 */
export const clientWithToken = (server: ApiServer.ApiServer, token: string) =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "kubefx-token-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const kubeconfig = join(dir, "kubeconfig")
    yield* Kubeconfig.write(kubeconfig, { server: server.httpsUrl, token, certificateAuthority: server.certificateAuthority })
    return yield* Layer.build(Kube.layer({ _tag: "File", path: kubeconfig }))
  })

/** Fails unless the informer's ConfigMaps in `ns` are the server's, version for version; answers how many. */
export const converged = (informer: Informer.Informer<Builtins.ConfigMap>, ns: string) =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const listed = yield* kube.list(Builtins.ConfigMap, { namespace: ns })
    const server = listed.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort()
    const cached = informer.list({ namespace: ns }).map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort()
    yield* ensure(JSON.stringify(server) === JSON.stringify(cached), `cache ${cached.length} != server ${server.length}`)
    return server.length
  })

/** Fails unless `condition` holds; for use with `eventually`. */
export const ensure = (condition: boolean, message: string) =>
  condition ? Effect.void : Effect.fail(new Error(message))

/** A client whose requests fail while `cut` says so: a replica cut off from the API server. */
export const partitionable = (kube: Kube.Client, cut: () => boolean): Kube.Client => {
  const fail = Effect.fail(new KubeError.Transport({ message: "partitioned" }))
  return {
    ...kube,
    get: (resource, name, ns) => Effect.suspend(() => cut() ? fail : kube.get(resource, name, ns)),
    list: (resource, options) => Effect.suspend(() => cut() ? fail : kube.list(resource, options)),
    create: (resource, object, options) => Effect.suspend(() => cut() ? fail : kube.create(resource, object, options)),
    replace: (resource, object, options) => Effect.suspend(() => cut() ? fail : kube.replace(resource, object, options)),
    patch: (resource, name, ns, body, options) => Effect.suspend(() => cut() ? fail : kube.patch(resource, name, ns, body, options))
  }
}

/**
 * A client whose watches lose their events while `losing` is set, then end with a 410 at
 * `expire()`, as those of a client that fell too far behind: an informer relists and finds what
 * it missed folded into one change per object.
 */
export const lossy = (kube: Kube.Client): { readonly client: Kube.Client; losing: boolean; readonly expire: () => void } => {
  let expiry = Deferred.makeUnsafe<void>()
  const gone = new KubeError.Gone({ message: "too old resource version", code: 410 })
  const state: { readonly client: Kube.Client; losing: boolean; readonly expire: () => void } = {
    losing: false,
    client: {
      ...kube,
      watch: (resource, options) => {
        const expired = Stream.fromEffect(Effect.andThen(Deferred.await(expiry), Effect.fail(gone)))
        return Stream.merge(Stream.filter(kube.watch(resource, options), () => !state.losing), expired, { haltStrategy: "either" })
      }
    },
    expire: () => {
      state.losing = false
      const expired = expiry
      expiry = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(expired, Exit.void)
    }
  }
  return state
}

/** When something ran, by the clock: `end` is Infinity until it ended. */
export interface Span {
  readonly start: number
  end: number
}

/** Runs `effect`, appending its span with `fields` to `spans` when it starts and closing it when it ends, however it ends. */
export const spanned = <F extends object, A, E, R>(spans: Array<F & Span>, fields: F, effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Clock.currentTimeMillis, (start) => {
    const span: F & Span = { ...fields, start, end: Infinity }
    spans.push(span)
    return effect.pipe(Effect.ensuring(Effect.flatMap(Clock.currentTimeMillis, (end) => Effect.sync(() => (span.end = end)))))
  })
