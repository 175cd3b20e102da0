/**
 * Named indexes (controller-runtime's field indexers): an informer finds objects by any value its
 * index functions give, without a scan, through creates, updates and deletes; and a
 * watch's `map` finds the primaries a changed object concerns through the primary cache's index.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Informer, Kube, ObjectMeta, Resource } from "@kubefx/kube"
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
          Controller.watch(Builtins.ConfigMap, (configMap, mirrors) => mirrors.byIndex("configMap", ObjectMeta.key(configMap)).map(ObjectMeta.key))
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
      yield* kube.patch(Builtins.ConfigMap, "shared", ns, { data: { v: "2" } }, { type: "merge" })
      yield* ranOnce("a")
    }))
})
