/**
 * rest_client_requests_total, as client-go counts it: each request by the answer's code (`<error>`
 * when none came), method and host, watches and refusals included; shown in an operator's
 * `/metrics`, and gone from it with the last client of the host.
 */
import { assert, layer } from "@effect/vitest"
import { Builtins, Kube, KubeConfig, Operator } from "@kubefx/kube"
import { Effect, Exit, Metric, References, Scope, Stream } from "effect"
import { createServer } from "node:net"
import type * as OperatorHttp from "../src/operator/OperatorHttp.ts"
import { layer as cluster, namespace, TestCluster } from "./support.ts"

// Runs `effect` with a registry of its own, so the counts are the test's alone.
const registered = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(Metric.MetricRegistry, new Map()),
    Effect.provideService(References.MinimumLogLevel, "None")
  )

const countsFor = (host: string) =>
  Effect.map(Metric.snapshot, (snapshots) =>
    Object.fromEntries(
      snapshots
        .filter((s) => s.id === "rest_client_requests_total" && s.attributes?.host === host)
        .map((s) => [`${s.attributes!.code} ${s.attributes!.method}`, (s.state as { readonly count: number }).count])
    ))

const configMap = (ns: string, name: string) => ({
  apiVersion: "v1" as const,
  kind: "ConfigMap" as const,
  metadata: { name, namespace: ns },
  data: { a: "b" }
})

// A connection to the test cluster of a client's own.
const clusterConnection = Effect.gen(function*() {
  const { server } = yield* TestCluster
  return yield* KubeConfig.connection({ _tag: "File", path: server?.kubeconfigPath ?? process.env.KUBEFX_TEST_KUBECONFIG! })
})

// A port nothing listens on: bound, then closed.
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { readonly port: number }
      server.close(() => resolve(port))
    })
  })
)

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("rest_client_requests_total", (it) => {
  it.effect("counts each request by code, method and host, watches and refusals included, in an operator's /metrics", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.make(yield* clusterConnection)
      const host = new URL(kube.server).host
      yield* kube.list(Builtins.ConfigMap, { namespace: ns })
      yield* Effect.exit(kube.get(Builtins.ConfigMap, "missing", ns))
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "one"))
      yield* Effect.exit(kube.create(Builtins.ConfigMap, configMap(ns, "one")))
      yield* kube.watch(Builtins.ConfigMap, { namespace: ns, resourceVersion: "0" }).pipe(Stream.take(1), Stream.runDrain)
      assert.deepStrictEqual(yield* countsFor(host), { "200 GET": 2, "404 GET": 1, "201 POST": 1, "409 POST": 1 })

      const running = yield* Operator.start(Operator.make<never>({ name: "counting", http: { port: 0 }, controllers: [] })).pipe(
        Effect.provideService(Kube.Kube, kube)
      )
      const text = yield* Effect.promise(() => fetch(`${running.url}/metrics`).then((r) => r.text()))
      assert.include(text, "# TYPE rest_client_requests_total counter")
      assert.match(text, new RegExp(`^rest_client_requests_total\\{[^}]*code="404"[^}]*\\} 1$`, "m"))
      // The Control Center's header counts them all.
      const view = yield* Effect.promise(() => fetch(`${running.url}/controllers`).then((r) => r.json() as Promise<OperatorHttp.OperatorView>))
      const counted = Object.values(yield* countsFor(host)).reduce((sum, n) => sum + n, 0)
      assert.strictEqual(view.process.apiRequests, counted)
      assert.isAtLeast(counted, 5)
      yield* running.shutdown
    }).pipe(registered))

  it.effect("counts a request that got no answer as <error>", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const kube = yield* Kube.make({ server: `http://127.0.0.1:${port}`, dispatcher: undefined, headers: Effect.succeed({}) })
      const exit = yield* Effect.exit(kube.list(Builtins.ConfigMap, { namespace: "default" }))
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(yield* countsFor(`127.0.0.1:${port}`), { "<error> GET": 1 })
    }).pipe(registered))

  it.effect("a host's series stays while one of its clients is open, and goes with the last", () =>
    Effect.gen(function*() {
      const connection = yield* clusterConnection
      const host = new URL(connection.server).host
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const before = (yield* countsFor(host))["200 GET"] ?? 0
      const a = yield* Kube.make(connection).pipe(Scope.provide(first))
      const b = yield* Kube.make(connection).pipe(Scope.provide(second))
      yield* a.list(Builtins.Namespace)
      yield* b.list(Builtins.Namespace)
      assert.strictEqual((yield* countsFor(host))["200 GET"], before + 2)
      yield* Scope.close(first, Exit.void)
      assert.strictEqual((yield* countsFor(host))["200 GET"], before + 2)
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual(yield* countsFor(host), {})
    }).pipe(registered))
})
