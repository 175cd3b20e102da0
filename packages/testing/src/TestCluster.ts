/**
 * A Kubernetes API server for a test file: the embedded server on a random loopback port, the
 * given CRDs installed and established, a `Kube` client connected to it, and optionally the
 * operator's controllers running in-process. Everything it opens (server, port, temporary
 * directory, controllers) closes with the layer's scope.
 *
 * @since 0.1.0
 */
import { ApiServer, Certificate, type Faults, Kubeconfig, WorkloadSimulator } from "@kubefx/apiserver"
import { Builtins, type Controller, Crd, Kube, type KubeError, Operator, Rbac, type Resource, Webhook } from "@kubefx/kube"
import { Context, Effect, Layer, Schedule, type Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** What a test can reach of the server beyond the `Kube` client. */
export interface Cluster {
  /** "https://127.0.0.1:PORT", as the kubeconfig names it. */
  readonly url: string
  /** A kubeconfig for the server (for kubectl or another client), removed with the layer. */
  readonly kubeconfigPath: string
  /** Fault injection: errors, delays and watch disruptions on chosen requests. */
  readonly faults: Faults.Faults
  /** The running operator, when the layer was given controllers. */
  readonly operator: Operator.Running | undefined
  /** The server's `/metrics` as it reads now (Prometheus text); `ServerMetrics` reads it. */
  readonly metricsText: Effect.Effect<string>
}

/** The test cluster's service. */
export class TestCluster extends Context.Service<TestCluster, Cluster>()("@kubefx/testing/TestCluster") {}

export interface Options<R = never> {
  /** Custom resources whose CRDs are installed (and established) before any test runs. */
  readonly resources?: ReadonlyArray<Crd.CustomResource>
  /** Controllers run in-process, in one operator, for the layer's life. */
  readonly controllers?: ReadonlyArray<Controller.Any<R>>
  /** Extra in-process controllers of the server itself, e.g. `WorkloadSimulator.controller`. */
  readonly serverControllers?: ApiServer.Options["controllers"]
  /**
   * Run workloads as a cluster would, with the server's workload simulator: Deployments, Jobs and
   * their Pods roll out and report readiness (`true`, or its options: how long a Pod takes
   * (`delay`), how Jobs end (`jobOutcome`), which Pods crash-loop (`crashing`), the addresses of
   * LoadBalancer Services (`loadBalancerAddresses`)). Off by default: nothing touches their status.
   */
  readonly workloads?: boolean | WorkloadSimulator.Options | undefined
  /**
   * Admission and conversion webhooks, served over HTTPS by the layer's operator (with a fresh
   * certificate) and registered with the server, as a cluster would call them.
   */
  readonly webhooks?: ReadonlyArray<Webhook.Webhook<R> | Webhook.Conversion>
  /**
   * Run the controllers with the administrator's credentials. By default they run as the
   * ServiceAccount `kube-system:kubefx-testing`, holding only the ClusterRole they derive
   * (`Rbac.clusterRole`), as they are deployed: a reconciler needing more fails its test with a 403.
   */
  readonly administrator?: boolean | undefined
  /**
   * Publish the `kube-root-ca.crt` ConfigMap in every namespace, as a cluster's controller manager
   * does. Off by default, as under envtest: a test listing ConfigMaps sees only its own.
   */
  readonly publishRootCa?: boolean | undefined
}

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "kubefx-testing-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

// The operator's own client: its ServiceAccount's token, in a kubeconfig of its own.
const asServiceAccount = (
  operator: Operator.Operator<any>,
  server: ApiServer.ApiServer,
  dir: string,
  withKube: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Kube.Kube>>
) =>
  Effect.gen(function*() {
    // A token for a day: a test file (or a watch-mode session) may hold its layer for longer than
    // the server's default hour.
    const { token } = yield* withKube(Rbac.serviceAccount(operator, {
      name: "kubefx-testing",
      namespace: "kube-system",
      fieldManager: "kubefx-testing",
      tokenSeconds: 24 * 60 * 60
    }))
    const path = join(dir, "operator-kubeconfig")
    yield* Kubeconfig.write(path, { server: server.httpsUrl, token, certificateAuthority: server.certificateAuthority })
    return yield* Layer.build(Kube.layer({ _tag: "File", path }))
  })

const cluster = <R>(options: Options<R>) =>
  Effect.gen(function*() {
    const dir = yield* temporaryDirectory
    const kubeconfigPath = join(dir, "kubeconfig")
    const workloads = options.workloads === undefined || options.workloads === false
      ? []
      : [WorkloadSimulator.make(options.workloads === true ? {} : options.workloads)]
    const controllers = [...workloads, ...(options.serverControllers ?? [])]
    const server = yield* ApiServer.make({
      port: 0,
      kubeconfigPath,
      publishRootCa: options.publishRootCa === true,
      ...(controllers.length === 0 ? {} : { controllers })
    })
    const kube = yield* Layer.build(Kube.layer({ _tag: "File", path: kubeconfigPath }))
    const withKube = <A, E, R2>(effect: Effect.Effect<A, E, R2>) => Effect.provide(effect, kube)
    yield* withKube(Crd.install(options.resources ?? [], { fieldManager: "kubefx-testing" }))
    const hooks = options.webhooks ?? []
    const tls = hooks.length === 0 ? undefined : Certificate.selfSigned(["127.0.0.1"])
    const definition = (options.controllers ?? []).length === 0 && tls === undefined
      ? undefined
      : Operator.make({
        name: "kubefx-testing",
        controllers: options.controllers ?? [],
        http: false,
        ...(tls === undefined ? {} : { webhooks: { handlers: hooks, host: "127.0.0.1", port: 0, tls } })
      })
    const operator = definition === undefined ? undefined : yield* Operator.start(definition).pipe(
      Effect.provide(options.administrator === true ? kube : yield* asServiceAccount(definition, server, dir, withKube))
    )
    if (tls !== undefined && operator?.webhookUrl !== undefined) {
      yield* withKube(Webhook.register("kubefx-testing", hooks, { url: operator.webhookUrl, caBundle: Buffer.from(tls.cert).toString("base64") }))
    }
    // Tests start once every controller runs with its caches synced, as they would in a cluster;
    // one that failed to start (its caches did not sync in its cacheSyncTimeout) fails the layer.
    if (operator !== undefined) {
      const failed = () => operator.controllers.filter((c) => c.phase() === "Failed")
      yield* Effect.sync(() => operator.checks.readiness()).pipe(
        Effect.repeat({ until: (checks) => checks.every((c) => c.ok) || failed().length > 0, schedule: Schedule.spaced("10 millis") }),
        Effect.timeoutOrElse({
          duration: "30 seconds",
          orElse: () =>
            Effect.die(new Error(`the test cluster's controllers did not become ready within 30s: ${
              operator.checks.readiness().filter((c) => !c.ok).map((c) => `${c.name}: ${c.message ?? "not ok"}`).join("; ")
            }`))
        })
      )
      const failures = failed().map((c) => `${c.name}: ${c.failure()}`)
      if (failures.length > 0) yield* Effect.die(new Error(`the test cluster's controllers failed to start: ${failures.join("; ")}`))
    }
    const metricsText = Effect.promise(() =>
      fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } }).then((response) => response.text())
    )
    return Context.add(kube, TestCluster, { url: server.httpsUrl, kubeconfigPath, faults: server.faults, operator, metricsText })
  })

/**
 * The layer a test file shares: `Kube` and `TestCluster`. Use it with `@effect/vitest`'s `layer`,
 * on the live clock (`excludeTestServices: true`): the server and the operator run in real time.
 *
 * @example
 * import { layer } from "@effect/vitest"
 * import { Effect } from "effect"
 * import { Await, Samples, TestCluster } from "@kubefx/testing"
 * import { definition, Widget } from "../src/widget.ts"
 *
 * layer(TestCluster.layer({ resources: [Widget], controllers: [definition] }), { excludeTestServices: true })("widgets", (it) => {
 *   it.effect("gets Ready", () => Effect.gen(function*() {
 *     const namespace = yield* TestCluster.namespace
 *     yield* Samples.apply(Widget, { metadata: { name: "a", namespace }, spec: { replicas: 1 } })
 *     yield* Await.condition(Widget, "a", namespace, "Ready")
 *   }))
 * })
 */
export const layer = <R = never>(options: Options<R> = {}): Layer.Layer<Kube.Kube | TestCluster, unknown, R> =>
  Layer.effectContext(cluster(options))

let namespaces = 0

/**
 * A fresh namespace for one test, deleted when the test's scope closes.
 *
 * @example
 * import { Effect } from "effect"
 * import { TestCluster } from "@kubefx/testing"
 * const program = Effect.scoped(Effect.flatMap(TestCluster.namespace, (name) => Effect.log(name)))
 */
export const namespace: Effect.Effect<string, KubeError.KubeError | Resource.DecodeError, Kube.Kube | Scope.Scope> = Effect.gen(function*() {
  const kube = yield* Kube.Kube
  const name = `test-${process.pid}-${++namespaces}`
  yield* kube.create(Builtins.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  yield* Effect.addFinalizer(() => Effect.ignore(kube.delete(Builtins.Namespace, name)))
  return name
})

/**
 * The server's fault injection, to make chosen requests fail or stall.
 *
 * @example
 * import { Effect } from "effect"
 * import { TestCluster } from "@kubefx/testing"
 * const failWrites = Effect.map(TestCluster.faults, (faults) =>
 *   faults.set({ rules: [{ resource: "configmaps", verbs: ["patch"], errorRate: 1 }] }))
 */
export const faults: Effect.Effect<Faults.Faults, never, TestCluster> = TestCluster.useSync((c) => c.faults)

/**
 * The started controller named `name` of the layer's operator (its health, per-key status,
 * degraded state). Dies with a clear message when the layer runs no such controller.
 *
 * @example
 * import { Effect } from "effect"
 * import { TestCluster } from "@kubefx/testing"
 * const failures = Effect.flatMap(TestCluster.controller("widgets"), (c) => c.health)
 */
export const controller = (name: string): Effect.Effect<Controller.Running, never, TestCluster> =>
  Effect.gen(function*() {
    const cluster = yield* TestCluster
    const running = cluster.operator?.controllers ?? []
    const started = running.find((c) => c.name === name)?.controller()
    if (started !== undefined) return started
    return yield* Effect.die(new Error(`the test cluster runs no started controller named ${name}` +
      ` (it runs: ${running.map((c) => c.name).join(", ") || "none"})`))
  })
