import { assert, layer } from "@effect/vitest"
import { Builtins, Informer, Kube } from "@kubefx/kube"
import { Effect, Latch, Ref, Stream } from "effect"
import { converged, ensure, eventually, layer as cluster, namespace, TestCluster } from "./support.ts"

const configMap = (ns: string, name: string, value: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns },
  data: { value }
})

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Informer on the API server", (it) => {
  it.effect("lists, then follows creates, updates and deletes, with label and namespace indexes", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: ns, indexLabels: ["app"] })
      yield* informer.awaitSynced
      const seen = yield* Ref.make<Array<string>>([])
      yield* informer.changes.pipe(
        Stream.runForEach((change) => Ref.update(seen, (xs) => [...xs, `${change._tag}:${change.object.metadata.name}`])),
        Effect.forkScoped
      )
      yield* kube.create(Builtins.ConfigMap, { ...configMap(ns, "one", "1"), metadata: { name: "one", namespace: ns, labels: { app: "web" } } })
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "two", "2"))
      yield* kube.patch(Builtins.ConfigMap, "two", ns, { data: { value: "3" } }, { type: "merge" })
      yield* kube.delete(Builtins.ConfigMap, "one", ns)
      yield* eventually(converged(informer, ns))
      yield* eventually(Effect.flatMap(Ref.get(seen), (xs) =>
        ensure(xs.join(",") === "Added:one,Added:two,Updated:two,Deleted:one", xs.join(","))))
      assert.strictEqual(informer.get(`${ns}/two`)?.data?.value, "3")
      assert.isUndefined(informer.get(`${ns}/two`)?.metadata.managedFields)
      yield* kube.create(Builtins.ConfigMap, { ...configMap(ns, "three", "3"), metadata: { name: "three", namespace: ns, labels: { app: "web" } } })
      yield* eventually(Effect.suspend(() => ensure(informer.list({ labels: { app: "web" } }).length === 1, "label index")))
      // An update moves the object between label index entries; one that keeps its labels leaves it.
      yield* kube.patch(Builtins.ConfigMap, "three", ns, { metadata: { labels: { app: "api" } } }, { type: "merge" })
      yield* eventually(Effect.suspend(() => ensure(informer.list({ labels: { app: "api" } }).length === 1, "relabelled")))
      assert.deepStrictEqual(informer.list({ labels: { app: "web" } }), [])
      yield* kube.patch(Builtins.ConfigMap, "three", ns, { data: { value: "4" } }, { type: "merge" })
      yield* eventually(Effect.suspend(() => ensure(informer.get(`${ns}/three`)?.data?.value === "4", "updated")))
      assert.deepStrictEqual(informer.list({ labels: { app: "api" } }).map((o) => o.data?.value), ["4"])
    }))

  it.effect("a cluster-wide informer lists one namespace right, before and after its namespace index exists", () =>
    Effect.gen(function*() {
      const first = yield* namespace
      const second = yield* namespace
      const kube = yield* Kube.Kube
      yield* kube.create(Builtins.ConfigMap, configMap(first, "a", "1"))
      yield* kube.create(Builtins.ConfigMap, configMap(second, "b", "1"))
      const informer = yield* Informer.make(Builtins.ConfigMap)
      yield* informer.awaitSynced
      const names = (ns: string) => informer.list({ namespace: ns }).map((o) => o.metadata.name).sort().join(",")
      // The first namespaced list builds the index from the cache ...
      assert.strictEqual(names(first), "a")
      assert.strictEqual(names(second), "b")
      // ... which then follows creates and deletes.
      yield* kube.create(Builtins.ConfigMap, configMap(first, "c", "1"))
      yield* kube.delete(Builtins.ConfigMap, "b", second)
      yield* eventually(Effect.suspend(() => ensure(names(first) === "a,c" && names(second) === "", `${names(first)} | ${names(second)}`)))
      assert.strictEqual(names("nowhere"), "")
    }))
})

layer(cluster, { excludeTestServices: true, timeout: "90 seconds" })("Informer under watch faults", (it) => {
  it.effect("recovers from closed watches, a 410 and a stalled watch without missing a change", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      // The informer's client counts the watches it opens, to see a stalled one restarted, and its
      // lists wait while `lists` is closed, so that a relist surely comes after a change made meanwhile.
      const watches = yield* Ref.make(0)
      const lists = yield* Latch.make(true)
      const counting: Kube.Client = {
        ...kube,
        watch: (resource, options) => Stream.unwrap(Effect.as(Ref.update(watches, (n) => n + 1), kube.watch(resource, options))),
        listAll: (resource, options) => Effect.andThen(lists.await, kube.listAll(resource, options))
      }
      const informer = yield* Informer.make(Builtins.ConfigMap, {
        namespace: ns,
        inactivityTimeout: "1500 millis",
        backoff: { initial: "20 millis", max: "200 millis" }
      }).pipe(Effect.provideService(Kube.Kube, counting))
      yield* informer.awaitSynced
      const deleted = yield* Ref.make<Array<string>>([])
      yield* informer.changes.pipe(
        Stream.runForEach((change) =>
          change._tag === "Deleted" ? Ref.update(deleted, (xs) => [...xs, change.object.metadata.name ?? ""]) : Effect.void),
        Effect.forkScoped
      )
      const churn = (round: number) =>
        Effect.forEach(Array.from({ length: 10 }, (_, i) => i), (i) =>
          kube.apply(Builtins.ConfigMap, configMap(ns, `cm-${i}`, `${round}`), { fieldManager: "test" }), { discard: true })

      yield* churn(1)
      assert.isAbove(server.faults.closeWatches({ resource: "configmaps" }), 0)
      yield* churn(2)
      yield* eventually(converged(informer, ns))

      yield* lists.close
      assert.isAbove(server.faults.expireWatches({ resource: "configmaps" }), 0)
      yield* kube.delete(Builtins.ConfigMap, "cm-0", ns) // while the watch is expired: found by the relist
      yield* lists.open
      yield* eventually(Effect.flatMap(Ref.get(deleted), (names) => ensure(names.includes("cm-0"), "the relist did not find cm-0 deleted")))
      yield* churn(3)
      yield* eventually(converged(informer, ns))

      server.faults.pauseWatches({ resource: "configmaps" })
      const opened = yield* Ref.get(watches)
      yield* kube.delete(Builtins.ConfigMap, "cm-1", ns)
      yield* churn(4)
      // Silent for longer than the inactivity timeout: the watcher gives the watch up and opens another.
      yield* eventually(Effect.flatMap(Ref.get(watches), (n) => ensure(n > opened, "the stalled watch was not restarted")))
      server.faults.resumeWatches()
      const count = yield* eventually(converged(informer, ns))
      assert.strictEqual(count, 10) // cm-0 and cm-1 came back with round 3 and 4
      assert.strictEqual(informer.get(`${ns}/cm-5`)?.data?.value, "4")
      yield* eventually(Effect.flatMap(Ref.get(deleted), (names) =>
        ensure(names.includes("cm-0") && names.includes("cm-1"), `deletes seen: ${names.join(",")}`)))
    }))
})
