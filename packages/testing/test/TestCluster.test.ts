/**
 * The test kit on a small operator of its own: the layer starts the server with the CRD installed
 * and the controller running, waits succeed on what the controller does and time out with the
 * object's last state, Events are read back, faults reach the server, and everything closes.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Kube, Resource } from "@kubefx/kube"
import { Cause, Context, Effect, Exit, Layer, Schedule, Schema, Scope } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { connect } from "node:net"
import { Await, Events, Samples, ServerMetrics, TestCluster } from "../src/index.ts"

const Greeting = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Greeting",
  plural: "greetings",
  spec: Schema.Struct({ name: Schema.String }),
  status: Schema.Struct(Conditions.statusFields)
})

const greetings = Controller.define({
  name: "greetings",
  for: Greeting,
  owns: [Builtins.ConfigMap],
  reconcile: (greeting, ctx) =>
    Effect.gen(function*() {
      yield* ctx.applyOwned(Builtins.ConfigMap, {
        metadata: { name: `${greeting.metadata.name}-greeting` },
        data: { message: `Hello, ${greeting.spec.name}!` }
      })
      yield* ctx.recordEvent({ type: "Normal", reason: "Greeted", message: `greeted ${greeting.spec.name}` })
      return Outcome.done
    })
})

const refused = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname)
    socket.once("connect", () => (socket.destroy(), resolve(false)))
    socket.once("error", () => resolve(true))
  })

layer(TestCluster.layer({ resources: [Greeting], controllers: [greetings] }), { excludeTestServices: true })("TestCluster", (it) => {
  it.effect("runs the controller: an applied Greeting gets Ready, its ConfigMap and an Event", () =>
    Effect.gen(function*() {
      const namespace = yield* TestCluster.namespace
      yield* Samples.apply(Greeting, { metadata: { name: "world", namespace }, spec: { name: "World" } })
      const ready = yield* Await.condition(Greeting, "world", namespace, "Ready")
      assert.strictEqual(ready.status?.observedGeneration, 1)
      const configMap = yield* Await.until(Builtins.ConfigMap, "world-greeting", namespace, (cm) => cm.data?.message !== undefined)
      assert.strictEqual(configMap.data?.message, "Hello, World!")
      // Events are written in the background: read until the controller's is there.
      const events = yield* Events.about("world", namespace, "Greeting").pipe(
        Effect.repeat({ until: (list) => list.some((e) => e.reason === "Greeted"), schedule: Schedule.spaced("50 millis") }),
        Effect.timeout("10 seconds")
      )
      assert.deepStrictEqual(events.filter((e) => e.reason === "Greeted").map((e) => [e.type, e.message, e.involvedObject.kind]), [
        ["Normal", "greeted World", "Greeting"]
      ])
    }))

  it.effect("counts what the controller costs the server: one ConfigMap apply and one status write per Greeting, one watch per kind", () =>
    Effect.gen(function*() {
      const namespace = yield* TestCluster.namespace
      const converged = Effect.andThen(
        Samples.apply(Greeting, { metadata: { name: "counted", namespace }, spec: { name: "Counted" } }),
        Await.condition(Greeting, "counted", namespace, "Ready")
      )
      const [, configMapApplies] = yield* ServerMetrics.counting(converged, "apiserver_request_total", { resource: "configmaps", verb: "APPLY" })
      assert.strictEqual(configMapApplies, 1)
      const samples = yield* ServerMetrics.scrape
      assert.isAtLeast(ServerMetrics.sum(samples, "apiserver_request_total", { resource: "greetings", subresource: "status", verb: "APPLY" }), 1)
      // The operator's informers: one watch of the Greetings and one of the ConfigMaps it owns.
      assert.strictEqual(ServerMetrics.sum(samples, "apiserver_longrunning_requests", { resource: "greetings" }), 1)
      assert.strictEqual(ServerMetrics.sum(samples, "apiserver_longrunning_requests", { resource: "configmaps" }), 1)
      assert.isAtLeast(ServerMetrics.sum(samples, "apiserver_watch_events_total", { kind: "Greeting" }), 1)
      // Another status write is one APPLY more, of the same series.
      const [, statusWrites] = yield* ServerMetrics.counting(
        Effect.andThen(
          Samples.apply(Greeting, { metadata: { name: "counted", namespace }, spec: { name: "Counted again" } }),
          Await.until(Greeting, "counted", namespace, (g) => g.status?.observedGeneration === 2)
        ),
        "apiserver_request_total",
        { resource: "greetings", subresource: "status", verb: "APPLY" }
      )
      assert.strictEqual(statusWrites, 1)
    }))

  it.effect("a wait that times out fails with the object's last state, or says it does not exist", () =>
    Effect.gen(function*() {
      const namespace = yield* TestCluster.namespace
      yield* Samples.apply(Builtins.ConfigMap, { metadata: { name: "plain", namespace }, data: { mode: "slow" } })
      const timedOut = yield* Effect.flip(
        Await.until(Builtins.ConfigMap, "plain", namespace, (cm) => cm.data?.mode === "fast", { timeout: "300 millis", description: "mode fast" })
      )
      assert.strictEqual(timedOut._tag, "AwaitTimeout")
      assert.include(timedOut.message, `ConfigMap ${namespace}/plain did not reach mode fast within 300ms; last seen:`)
      assert.include(timedOut.message, `"mode": "slow"`)
      const missing = yield* Effect.flip(Await.condition(Greeting, "nobody", namespace, "Ready", "True", { timeout: "200 millis" }))
      assert.strictEqual(missing.message, `Greeting ${namespace}/nobody did not reach Ready=True within 200ms; it does not exist`)
    }))

  it.effect("injects faults into the server the client talks to", () =>
    Effect.gen(function*() {
      const namespace = yield* TestCluster.namespace
      const faults = yield* TestCluster.faults
      faults.set({ rules: [{ resource: "configmaps", verbs: ["get"], errorRate: 1, errorCode: 503 }] })
      const failed = yield* Effect.flip((yield* Kube.Kube).get(Builtins.ConfigMap, "any", namespace))
      faults.clear()
      assert.deepStrictEqual([failed._tag, "code" in failed ? failed.code : undefined], ["ServerError", 503])
    }))
})

layer(Layer.empty, { excludeTestServices: true })("TestCluster's scope", (it) => {
  it.effect("closes the server, its port and its temporary directory with the layer", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(TestCluster.layer({ resources: [Greeting] }), scope)
      const cluster = Context.get(context, TestCluster.TestCluster)
      assert.isFalse(yield* Effect.promise(() => refused(cluster.url)))
      assert.isTrue(existsSync(cluster.kubeconfigPath))
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* Effect.promise(() => refused(cluster.url)))
      assert.isFalse(existsSync(cluster.kubeconfigPath))
    }))

  it.effect("publishes kube-root-ca.crt only when asked to, as a cluster's controller manager does", () =>
    Effect.scoped(Effect.gen(function*() {
      const names = (options: { readonly publishRootCa?: boolean }) =>
        Effect.scoped(Effect.gen(function*() {
          const context = yield* Layer.build(TestCluster.layer(options))
          const listed = yield* Effect.provide(
            Effect.flatMap(Kube.Kube, (kube) => kube.list(Builtins.ConfigMap, { namespace: "default" })),
            context
          )
          return listed.items.map((item) => item.metadata.name)
        }))
      assert.deepStrictEqual(yield* names({}), [])
      assert.deepStrictEqual(yield* names({ publishRootCa: true }), ["kube-root-ca.crt"])
    })))
})

// A reconciler reading Secrets it never declared: what each run's list of them answered.
const secretReads: Array<string> = []
const nosy = Controller.define({
  name: "nosy",
  for: Greeting,
  reconcile: (_, ctx) =>
    Effect.map(Effect.result(ctx.kube.list(Builtins.Secret)), (listed) => {
      const failure = listed._tag === "Failure" ? listed.failure : undefined
      secretReads.push(failure === undefined ? "listed" : failure._tag === "Forbidden" ? `Forbidden ${JSON.stringify(failure.rule)}` : failure._tag)
      return Outcome.done
    })
})

// The lifetime of the token the controllers' client holds (beside the kubeconfig the layer writes).
const tokenLifetimes: Array<number> = []
const tokenLifetime = Effect.map(TestCluster.TestCluster, (cluster) => {
  const kubeconfig = readFileSync(join(dirname(cluster.kubeconfigPath), "operator-kubeconfig"), "utf8")
  const token = /token: (\S+)/.exec(kubeconfig)![1]!
  const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { exp: number; iat: number }
  return claims.exp - claims.iat
})

const readsFor = (options: { readonly administrator?: boolean }) =>
  Effect.scoped(Effect.gen(function*() {
    secretReads.length = 0
    const context = yield* Layer.build(TestCluster.layer({ resources: [Greeting], controllers: [nosy], ...options }))
    yield* Effect.gen(function*() {
      if (options.administrator !== true) tokenLifetimes.push(yield* tokenLifetime)
      const namespace = yield* TestCluster.namespace
      yield* Samples.apply(Greeting, { metadata: { name: "nosy", namespace }, spec: { name: "Nosy" } })
      yield* Effect.sync(() => secretReads.length).pipe(
        Effect.repeat({ until: (n) => n > 0, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout("10 seconds")
      )
    }).pipe(Effect.provide(context))
    return secretReads[0]
  }))

layer(Layer.empty, { excludeTestServices: true })("TestCluster's controllers", (it) => {
  it.effect("run as their ServiceAccount with only their derived ClusterRole, unless run as the administrator", () =>
    Effect.gen(function*() {
      // The 403 names the rule the controller's `rbac` lacks.
      assert.strictEqual(yield* readsFor({}), `Forbidden {"apiGroups":[""],"resources":["secrets"],"verbs":["list"]}`)
      assert.strictEqual(yield* readsFor({ administrator: true }), "listed")
      // A day, so that a layer held past the server's default hour keeps working.
      assert.deepStrictEqual(tokenLifetimes, [24 * 60 * 60])
    }))
})

// A field selector the API server refuses (ConfigMaps are selected by metadata fields only): its
// cache never lists, so the controller fails to start once its cacheSyncTimeout has passed.
const mistyped = Controller.define({
  name: "mistyped",
  for: Greeting,
  watches: [Controller.watch(Builtins.ConfigMap, () => [], { fieldSelector: "data.name=x" })],
  cacheSyncTimeout: "500 millis",
  reconcile: () => Effect.succeed(Outcome.done)
})

layer(Layer.empty, { excludeTestServices: true })("TestCluster's start", (it) => {
  it.effect("fails at once with why when a controller does not start, instead of waiting for its readiness", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(TestCluster.layer({ resources: [Greeting], controllers: [greetings, mistyped] }))))
      assert.isTrue(Exit.isFailure(exit))
      const message = Exit.isFailure(exit) ? String(Cause.squash(exit.cause)) : ""
      assert.match(
        message,
        /^Error: the test cluster's controllers failed to start: mistyped: controller mistyped: caches not synced after 500ms: ConfigMap \(BadRequest: .*data\.name.*\)$/
      )
    }))
})

// A Deployment whose pods crash-loop, and a LoadBalancer Service, with the layer's workloads.
const workloads = TestCluster.layer({
  workloads: {
    delay: "100 millis",
    crashing: (pod) => (pod.metadata as { readonly labels?: Record<string, string> } | undefined)?.labels?.["app"] === "broken",
    loadBalancerAddresses: "172.18.255.0/29"
  }
})

layer(workloads, { excludeTestServices: true, timeout: "30 seconds" })("TestCluster's workloads", (it) => {
  it.effect("roll Deployments out, crash-loop the pods it is told to, and give load balancers addresses", () =>
    Effect.gen(function*() {
      const namespace = yield* TestCluster.namespace
      const deployment = (app: string) => ({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: app, namespace },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app } },
          template: { metadata: { labels: { app } }, spec: { containers: [{ name: app, image: "nginx" }] } }
        }
      })
      yield* Samples.apply(Builtins.Deployment, deployment("healthy"))
      yield* Samples.apply(Builtins.Deployment, deployment("broken"))
      const healthy = yield* Await.until(Builtins.Deployment, "healthy", namespace, (d) => d.status?.availableReplicas === 1)
      assert.strictEqual(healthy.status?.readyReplicas, 1)
      const kube = yield* Kube.Kube
      const crashing = yield* Effect.gen(function*() {
        const pods = yield* kube.list(Builtins.Pod, { namespace, labelSelector: "app=broken" })
        const restarts = pods.items[0]?.status?.containerStatuses?.[0]?.restartCount ?? 0
        if (restarts < 2) return yield* Effect.fail("not restarted twice yet")
        return pods.items[0]!
      }).pipe(Effect.retry(Schedule.spaced("100 millis")), Effect.timeout("15 seconds"))
      const lastState = crashing.status?.containerStatuses?.[0]?.lastState as { readonly terminated?: { readonly reason?: string } } | undefined
      assert.strictEqual(lastState?.terminated?.reason, "Error")
      yield* Samples.apply(Builtins.Service, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "front", namespace },
        spec: { type: "LoadBalancer", selector: { app: "healthy" }, ports: [{ port: 80 }] }
      })
      const ingress = (service: Builtins.Service) =>
        (service.status?.loadBalancer as { readonly ingress?: ReadonlyArray<{ readonly ip?: string }> } | undefined)?.ingress ?? []
      const front = yield* Await.until(Builtins.Service, "front", namespace, (s) => ingress(s).length > 0)
      assert.strictEqual(ingress(front)[0]?.ip, "172.18.255.1")
    }))
})
