/**
 * Named indexes (controller-runtime's field indexers): an informer finds objects by any value its
 * index functions give, without a scan, through creates, updates and deletes; and a
 * watch's `map` finds the primaries a changed object concerns through the primary cache's index.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Informer, Kube, ObjectMeta, OwnerReferences, Resource } from "@kubefx/kube"
import { Effect, Ref, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

// A Mirror copies the ConfigMap its spec names.
const Mirror = Resource.custom({
  group: "indexes.test.kubefx.dev",
  version: "v1",
  kind: "Mirror",
  plural: "mirrors",
  spec: Schema.Struct({ configMap: Schema.String }),
  status: Schema.Struct(Conditions.statusFields)
})
type Mirror = typeof Mirror.schema.Type

const mirror = (ns: string, name: string, configMap: string) => ({
  apiVersion: "indexes.test.kubefx.dev/v1",
  kind: "Mirror",
  metadata: { name, namespace: ns },
  spec: { configMap }
})

// The ConfigMap a Mirror names, by its key.
const byConfigMap = { configMap: (m: Mirror) => [ObjectMeta.keyOf(m.metadata.namespace, m.spec.configMap)] }

const names = (objects: ReadonlyArray<ObjectMeta.KubeObject>) => objects.map((o) => o.metadata.name).sort().join(",")

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("named indexes", (it) => {
  it.effect("an informer's index follows creates, updates and deletes; an index it lacks throws", () =>
    Effect.gen(function*() {
      yield* installCrd(Mirror)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* kube.create(Mirror, mirror(ns, "a", "shared"))
      const informer = yield* Informer.make(Mirror, { namespace: ns, indexes: byConfigMap })
      yield* informer.awaitSynced
      const found = (configMap: string) => names(informer.byIndex("configMap", `${ns}/${configMap}`))
      assert.strictEqual(found("shared"), "a")

      yield* kube.create(Mirror, mirror(ns, "b", "shared"))
      yield* kube.create(Mirror, mirror(ns, "c", "own"))
      yield* eventually(Effect.suspend(() => ensure(found("shared") === "a,b" && found("own") === "c", `${found("shared")} ${found("own")}`)))
      // An update moves the object to its new value's entry, and out of its old one.
      yield* kube.patch(Mirror, "b", ns, { spec: { configMap: "own" } }, { type: "merge" })
      yield* eventually(Effect.suspend(() => ensure(found("own") === "b,c", found("own"))))
      assert.strictEqual(found("shared"), "a")
      yield* kube.delete(Mirror, "c", ns)
      yield* eventually(Effect.suspend(() => ensure(found("own") === "b", found("own"))))

      assert.throws(() => informer.byIndex("owner", "x"), "the Mirror informer has no index owner: its indexes are configMap")
      const plain = yield* Informer.make(Builtins.ConfigMap, { namespace: ns })
      assert.throws(() => plain.byIndex("configMap", "x"), "the ConfigMap informer has no index configMap: it was made with none")
    }))

  it.effect("a watch's map finds the primaries a ConfigMap concerns through the primary cache's index", () =>
    Effect.gen(function*() {
      yield* installCrd(Mirror)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "mirrors",
        for: Mirror,
        namespace: ns,
        watch: { indexes: byConfigMap },
        watches: [
          Controller.watch(Builtins.ConfigMap, (configMap, mirrors) => mirrors.byIndex("configMap", ObjectMeta.key(configMap)).map(ObjectMeta.key), {
            // What a Mirror copies is the data: a change of labels alone is not worth a run.
            predicate: (previous, next) => JSON.stringify(previous.data) !== JSON.stringify(next.data)
          })
        ],
        reconcile: (object) => Effect.as(Ref.update(runs, (xs) => [...xs, object.metadata.name]), Outcome.done)
      }))
      yield* kube.create(Mirror, mirror(ns, "a", "shared"))
      yield* kube.create(Mirror, mirror(ns, "b", "shared"))
      yield* kube.create(Mirror, mirror(ns, "c", "own"))
      const ranOnce = (expected: string) =>
        eventually(Effect.flatMap(Ref.get(runs), (xs) => ensure([...xs].sort().join(",") === expected, xs.join(","))))
      yield* ranOnce("a,b,c")

      // The shared ConfigMap's change reconciles its two Mirrors, and only them.
      yield* Ref.set(runs, [])
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shared", namespace: ns }, data: { v: "1" } })
      yield* ranOnce("a,b")

      // A Mirror that now names another ConfigMap is reconciled by that one's changes, not the old one's.
      yield* Ref.set(runs, [])
      yield* kube.patch(Mirror, "b", ns, { spec: { configMap: "own" } }, { type: "merge" })
      yield* ranOnce("b")
      assert.strictEqual(controller.informer.get(`${ns}/b`)?.spec.configMap, "own")
      yield* Ref.set(runs, [])
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "own", namespace: ns }, data: { v: "1" } })
      yield* ranOnce("b,c")
      yield* Ref.set(runs, [])
      // The label change runs nothing (given the time a run takes here many times over); the data
      // change runs "a".
      yield* kube.patch(Builtins.ConfigMap, "shared", ns, { metadata: { labels: { touched: "yes" } } }, { type: "merge" })
      yield* Effect.sleep("500 millis")
      assert.deepStrictEqual(yield* Ref.get(runs), [])
      yield* kube.patch(Builtins.ConfigMap, "shared", ns, { data: { v: "2" } }, { type: "merge" })
      yield* ranOnce("a")
    }))

  it.effect("a watch's transform keeps what the cache holds of each object to what the controller reads", () =>
    Effect.gen(function*() {
      yield* installCrd(Mirror)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const seen = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "versions",
        for: Mirror,
        namespace: ns,
        watches: [
          Controller.watch(Builtins.ConfigMap, (configMap) => [ObjectMeta.key(configMap)], {
            // The cache keeps the "version" key alone: the big payload beside it is never held.
            transform: (configMap) => ({ ...configMap, data: { version: configMap.data?.version ?? "" } }),
            predicate: (previous, next) => previous.data?.version !== next.data?.version
          })
        ],
        reconcile: (object, ctx) =>
          Effect.as(Ref.update(seen, (xs) => [...xs, JSON.stringify(ctx.cached(Builtins.ConfigMap, `${ns}/${object.spec.configMap}`)?.data ?? null)]), Outcome.done)
      }))
      yield* kube.create(Builtins.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "a", namespace: ns },
        data: { version: "1", payload: "x".repeat(10_000) }
      })
      yield* kube.create(Mirror, mirror(ns, "a", "a"))
      yield* eventually(Effect.flatMap(Ref.get(seen), (xs) => ensure(xs.at(-1) === JSON.stringify({ version: "1" }), xs.join(" "))))
      const cached = controller.informers.find((informer) => informer.resource === Builtins.ConfigMap)!.get(`${ns}/a`) as Builtins.ConfigMap | undefined
      assert.deepStrictEqual(cached?.data, { version: "1" })
      assert.isUndefined(cached?.metadata.managedFields)
      // A change of what the cache does not keep is no change to the controller; a new version is.
      yield* Ref.set(seen, [])
      yield* kube.patch(Builtins.ConfigMap, "a", ns, { data: { payload: "y" } }, { type: "merge" })
      yield* Effect.sleep("500 millis")
      assert.deepStrictEqual(yield* Ref.get(seen), [])
      yield* kube.patch(Builtins.ConfigMap, "a", ns, { data: { version: "2" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(seen), (xs) => ensure(xs.at(-1) === JSON.stringify({ version: "2" }), xs.join(" "))))
    }))

  it.effect("ctx.owned: each primary reads its own children of an owned kind from the cache, and an unowned kind throws", () =>
    Effect.gen(function*() {
      yield* installCrd(Mirror)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const seen = yield* Ref.make<Record<string, string>>({})
      const thrown = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "mirror-children",
        for: Mirror,
        namespace: ns,
        owns: [Builtins.ConfigMap],
        reconcile: (mirror, ctx) =>
          Effect.gen(function*() {
            // What the cache held of its children when the run began, then two more.
            const children = names(ctx.owned(Builtins.ConfigMap))
            yield* Ref.update(seen, (all) => ({ ...all, [mirror.metadata.name]: children }))
            for (const n of [1, 2]) {
              yield* ctx.applyOwned(Builtins.ConfigMap, { metadata: { name: `${mirror.metadata.name}-${n}` }, data: { n: `${n}` } })
            }
            yield* Effect.try({ try: () => ctx.owned(Builtins.Secret), catch: (error) => String(error) }).pipe(
              Effect.flip,
              Effect.flatMap((message) => Ref.update(thrown, (xs) => [...xs, message]))
            )
            return Outcome.done
          })
      }))
      // A ConfigMap of the same namespace that no Mirror controls is no one's child.
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "stray", namespace: ns } })
      yield* kube.create(Mirror, mirror(ns, "a", "x"))
      yield* kube.create(Mirror, mirror(ns, "b", "x"))
      yield* eventually(Effect.flatMap(Ref.get(seen), (all) => ensure(all.a === "" && all.b === "", JSON.stringify(all))))
      // Another run of each, once its children are in the cache (the stray and four children): it
      // sees them, and only them.
      const ownedCache = controller.informers.find((informer) => informer.resource === Builtins.ConfigMap)!
      yield* eventually(Effect.suspend(() => ensure(ownedCache.size() === 5, `${ownedCache.size()} ConfigMaps cached`)))
      yield* kube.patch(Mirror, "a", ns, { spec: { configMap: "y" } }, { type: "merge" })
      yield* kube.patch(Mirror, "b", ns, { spec: { configMap: "y" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(seen), (all) => ensure(all.a === "a-1,a-2" && all.b === "b-1,b-2", JSON.stringify(all))))
      assert.strictEqual((yield* Ref.get(thrown))[0], "Error: controller mirror-children does not own Secret: add it to owns to read its children from the cache")
    }))

  it.effect("an informer's index by controller owner follows adoption, a change of owner, orphaning and deletion", () =>
    Effect.gen(function*() {
      yield* installCrd(Mirror)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const first = yield* kube.create(Mirror, mirror(ns, "first", "x"))
      const second = yield* kube.create(Mirror, mirror(ns, "second", "x"))
      const controllerOf = (owner: Mirror) => [{ ...OwnerReferences.controllerReference(owner, Mirror), blockOwnerDeletion: false }]
      yield* kube.create(Builtins.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "child", namespace: ns, ownerReferences: controllerOf(first) }
      })
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: ns })
      yield* informer.awaitSynced
      const of = (owner: Mirror) => names(informer.ownedBy(owner.metadata.uid!))
      assert.strictEqual(of(first), "child")
      assert.strictEqual(of(second), "")
      yield* kube.patch(Builtins.ConfigMap, "child", ns, { metadata: { ownerReferences: controllerOf(second) } }, { type: "merge" })
      yield* eventually(Effect.suspend(() => ensure(of(first) === "" && of(second) === "child", `${of(first)} ${of(second)}`)))
      yield* kube.patch(Builtins.ConfigMap, "child", ns, { metadata: { ownerReferences: null } }, { type: "merge" })
      yield* eventually(Effect.suspend(() => ensure(of(second) === "", of(second))))
      yield* kube.patch(Builtins.ConfigMap, "child", ns, { metadata: { ownerReferences: controllerOf(first) } }, { type: "merge" })
      yield* eventually(Effect.suspend(() => ensure(of(first) === "child", of(first))))
      yield* kube.delete(Builtins.ConfigMap, "child", ns)
      yield* eventually(Effect.suspend(() => ensure(of(first) === "", of(first))))
    }))
})
