/**
 * Streaming lists (`initialList: "streaming"`, Kubernetes' `sendInitialEvents`): an informer reads
 * the objects there are now from one watch, never asking for a list, then follows their changes on
 * the same watch; a server that refuses them (422, as a 1.33 server does by default) is listed
 * instead, and the informer keeps following. An operator's `initialList` chooses them for all its caches.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Informer, Kube, Operator, Watcher } from "@kubefx/kube"
import { Effect, Metric, References, Stream } from "effect"
import { LooseMeter, Meter } from "./fixtures/Meter.ts"
import { converged, ensure, eventually, installCrd, layer as cluster, namespace, TestCluster } from "./support.ts"

const configMap = (ns: string, name: string, value: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns },
  data: { value }
})

// The client the informer uses, counting its lists and keeping the options of its watches.
const recording = (kube: Kube.Client) => {
  const seen = { lists: 0, watches: [] as Array<Kube.WatchOptions> }
  const client: Kube.Client = {
    ...kube,
    listAll: (resource, options) => Effect.suspend(() => (seen.lists++, kube.listAll(resource, options))),
    watch: (resource, options) => (seen.watches.push(options), kube.watch(resource, options))
  }
  return { seen, client }
}

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Streaming lists", (it) => {
  it.effect("fill an informer from one watch, with no list asked for, then follow the changes on it", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < 25; i++) yield* kube.create(Builtins.ConfigMap, configMap(ns, `cm-${i}`, "1"))
      const { client, seen } = recording(kube)
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: ns, initialList: "streaming" }).pipe(
        Effect.provideService(Kube.Kube, client)
      )
      yield* informer.awaitSynced
      assert.strictEqual(informer.size(), 25)
      yield* converged(informer, ns)
      assert.strictEqual(seen.lists, 0)
      assert.deepStrictEqual(seen.watches.map((w) => [w.sendInitialEvents, w.resourceVersion]), [[true, ""]])
      // The same watch goes on with what changes after.
      yield* kube.patch(Builtins.ConfigMap, "cm-3", ns, { data: { value: "2" } }, { type: "merge" })
      yield* kube.delete(Builtins.ConfigMap, "cm-4", ns)
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "late", "1"))
      yield* eventually(converged(informer, ns))
      assert.strictEqual(informer.get(`${ns}/cm-3`)?.data?.value, "2")
      assert.strictEqual(seen.watches.length, 1)
    }))

  it.effect("are the default of watchers under Watcher.InitialList, which a watcher's own choice overrides", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "one", "1"))
      const { client, seen } = recording(kube)
      const streamed = yield* Informer.make(Builtins.ConfigMap, { namespace: ns }).pipe(
        Effect.provideService(Kube.Kube, client),
        Effect.provideService(Watcher.InitialList, "streaming")
      )
      yield* streamed.awaitSynced
      const listed = yield* Informer.make(Builtins.ConfigMap, { namespace: ns, initialList: "list" }).pipe(
        Effect.provideService(Kube.Kube, client),
        Effect.provideService(Watcher.InitialList, "streaming")
      )
      yield* listed.awaitSynced
      assert.deepStrictEqual([streamed.size(), listed.size()], [1, 1])
      assert.strictEqual(seen.lists, 1)
      assert.deepStrictEqual(seen.watches.map((w) => w.sendInitialEvents === true), [true, false])
    }))

  it.effect("from a server that ignores them (older than 1.27: the objects, never their end), are replaced by a list when the watch ends", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < 3; i++) yield* kube.create(Builtins.ConfigMap, configMap(ns, `cm-${i}`, "1"))
      const { client, seen } = recording(kube)
      const ignoring: Kube.Client = {
        ...client,
        watch: (resource, options) =>
          Stream.filter(client.watch(resource, options), (event) => !(event.type === "BOOKMARK" && event.initialEventsEnd === true))
      }
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: ns, initialList: "streaming", watchTimeout: "1 second" }).pipe(
        Effect.provideService(Kube.Kube, ignoring)
      )
      yield* informer.awaitSynced
      assert.strictEqual(informer.size(), 3)
      assert.strictEqual(seen.lists, 1)
      assert.deepStrictEqual(seen.watches.slice(0, 2).map((w) => w.sendInitialEvents), [true, false])
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("refused by the server (422), are replaced by a list, and the informer follows once its watches are served", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < 5; i++) yield* kube.create(Builtins.ConfigMap, configMap(ns, `cm-${i}`, "1"))
      server.faults.set({ rules: [{ resource: "configmaps", verbs: ["watch"], namespace: ns, errorRate: 1, errorCode: 422 }] })
      const { client, seen } = recording(kube)
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: ns, initialList: "streaming", backoff: { initial: "20 millis", max: "100 millis" } }).pipe(
        Effect.provideService(Kube.Kube, client)
      )
      yield* informer.awaitSynced
      server.faults.clear()
      assert.strictEqual(informer.size(), 5)
      assert.strictEqual(seen.lists, 1)
      assert.isTrue(seen.watches[0]?.sendInitialEvents)
      yield* kube.patch(Builtins.ConfigMap, "cm-1", ns, { data: { value: "2" } }, { type: "merge" })
      yield* eventually(converged(informer, ns))
      // Listed once; every watch after the refusal follows the list's version.
      assert.strictEqual(seen.lists, 1)
      assert.isTrue(seen.watches.slice(1).every((w) => w.sendInitialEvents === false && w.resourceVersion !== ""))
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("chosen by an operator, fill every cache of its controllers", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      for (let i = 0; i < 4; i++) yield* kube.create(Builtins.ConfigMap, configMap(ns, `cm-${i}`, "1"))
      const { client, seen } = recording(kube)
      const reconciled = new Set<string>()
      const running = yield* Operator.start(Operator.make({
        name: "streamed",
        http: false,
        initialList: "streaming",
        controllers: [Controller.define({
          name: "streamed",
          for: Builtins.ConfigMap,
          namespace: ns,
          owns: [Builtins.Secret],
          watches: [Controller.watch(Builtins.ServiceAccount, () => [])],
          reconcile: (configMap) => Effect.sync(() => (reconciled.add(configMap.metadata.name ?? ""), Outcome.done))
        })]
      })).pipe(Effect.provideService(Kube.Kube, client), Effect.provideService(Metric.MetricRegistry, new Map()))
      yield* eventually(Effect.suspend(() => ensure(reconciled.size >= 4, `${reconciled.size} reconciled`)))
      assert.strictEqual(seen.lists, 0)
      assert.deepStrictEqual(seen.watches.map((w) => w.sendInitialEvents).sort(), [true, true, true])
      yield* running.shutdown
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("report an object there already that does not decode, as a list does", () =>
    Effect.gen(function*() {
      yield* installCrd(LooseMeter)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const create = (name: string, size: number) =>
        kube.create(LooseMeter, { apiVersion: LooseMeter.apiVersion, kind: "Meter", metadata: { name, namespace: ns }, spec: { size } })
      yield* create("broken", 1.5)
      yield* create("fine", 2)
      const { client, seen } = recording(kube)
      const meters = yield* Controller.start(Controller.define({
        name: "streamed-meters",
        for: Meter,
        namespace: ns,
        watch: { initialList: "streaming" },
        reconcile: () => Effect.succeed(Outcome.done)
      })).pipe(Effect.provideService(Kube.Kube, client))
      assert.deepStrictEqual(meters.informer.keys(), [`${ns}/fine`])
      const ready = yield* eventually(Effect.flatMap(kube.get(LooseMeter, "broken", ns), (object) => {
        const condition = object.status?.conditions?.find((c) => c.type === "Ready")
        return condition?.reason === "DecodeError" ? Effect.succeed(condition) : Effect.fail(new Error(`Ready is ${JSON.stringify(condition)}`))
      }))
      assert.strictEqual(ready.status, "False")
      assert.strictEqual(seen.lists, 0)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
