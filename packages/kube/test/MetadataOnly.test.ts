/**
 * Metadata-only resources against the API server: an informer of one caches each object's
 * metadata alone and follows its changes, gets and lists answer the same view, and a controller
 * that owns a kind as metadata only is still run by changes to its owned objects.
 */
import { assert, layer } from "@effect/vitest"
import { Builtins, Controller, Informer, Kube, Resource } from "@kubefx/kube"
import { Effect, Ref } from "effect"
import { applyingConfigMap, Widget, widgetIn } from "./fixtures/Widget.ts"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const SecretMetadata = Resource.metadataOnly(Builtins.Secret)

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("metadata-only resources", (it) => {
  it.effect("an informer caches each object's metadata alone and follows its changes", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* kube.create(Builtins.Secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "before", namespace: ns, labels: { app: "meta" } },
        stringData: { password: "hunter2" }
      })
      const informer = yield* Informer.make(SecretMetadata, { namespace: ns })
      yield* informer.awaitSynced
      const listed = informer.get(`${ns}/before`)
      assert.strictEqual(listed?.kind, "PartialObjectMetadata")
      assert.deepStrictEqual(listed?.metadata.labels, { app: "meta" })
      assert.isFalse("data" in (listed ?? {}), "the list brought the Secret's data")

      yield* kube.create(Builtins.Secret, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "after", namespace: ns },
        stringData: { token: "t0ps3cret" }
      })
      yield* kube.patch(Builtins.Secret, "before", ns, { metadata: { labels: { app: "meta", tier: "gold" } } }, { type: "merge" })
      yield* eventually(Effect.suspend(() => {
        const after = informer.get(`${ns}/after`)
        const before = informer.get(`${ns}/before`)
        return ensure(after !== undefined && before?.metadata.labels?.tier === "gold", "changes not followed yet")
      }))
      const watched = informer.get(`${ns}/after`)!
      assert.strictEqual(watched.kind, "PartialObjectMetadata")
      assert.isFalse(JSON.stringify(informer.list()).includes("t0ps3cret"), "a watch event brought the Secret's data")

      yield* kube.delete(Builtins.Secret, "after", ns)
      yield* eventually(Effect.suspend(() => ensure(informer.get(`${ns}/after`) === undefined, "still cached")))
    }))

  it.effect("get, list and a write answer the same view; the full resource still reads whole objects", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: ns }, data: { k: "v" } })
      const ConfigMapMetadata = Resource.metadataOnly(Builtins.ConfigMap)
      const one = yield* kube.get(ConfigMapMetadata, "cm", ns)
      assert.strictEqual(one.kind, "PartialObjectMetadata")
      assert.isFalse("data" in one)
      const page = yield* kube.list(ConfigMapMetadata, { namespace: ns })
      assert.deepStrictEqual(page.items.map((item) => [item.kind, item.metadata.name]), [["PartialObjectMetadata", "cm"]])
      // A write through the view (as the garbage collector patches owner references) answers metadata.
      const patched = yield* kube.patch(ConfigMapMetadata, "cm", ns, { metadata: { labels: { tier: "gold" } } }, { type: "merge" })
      assert.strictEqual(patched.kind, "PartialObjectMetadata")
      assert.deepStrictEqual(patched.metadata.labels, { tier: "gold" })
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "cm", ns)).data, { k: "v" })
    }))

  it.effect("a controller owning a kind as metadata only restores an owned object edited by hand, once", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make(0)
      const ConfigMapMetadata = Resource.metadataOnly(Builtins.ConfigMap)
      const controller = yield* Controller.start(Controller.define({
        name: "widgets-metadata",
        for: Widget,
        namespace: ns,
        owns: [ConfigMapMetadata],
        reconcile: applyingConfigMap(runs)
      }))
      yield* kube.create(Widget, widgetIn(ns, "h", "hello"))
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "h-config", ns), (cm) => ensure(cm.data?.message === "hello", "not applied")))
      const owned = controller.informers.find((informer) => informer.resource === ConfigMapMetadata)!
      yield* eventually(Effect.suspend(() => ensure(owned.get(`${ns}/h-config`) !== undefined, "not cached")))
      yield* controller.awaitIdle
      // Its own apply's echo ran nothing more.
      assert.strictEqual(yield* Ref.get(runs), 1)
      const cached = owned.get(`${ns}/h-config`) as Resource.PartialObjectMetadata
      assert.strictEqual(cached.kind, "PartialObjectMetadata")
      assert.strictEqual(cached.metadata.ownerReferences?.[0]?.name, "h")
      assert.isFalse("data" in cached)

      yield* kube.patch(Builtins.ConfigMap, "h-config", ns, { data: { message: "tampered" } }, { type: "merge", fieldManager: "kubectl-edit" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "h-config", ns), (cm) =>
        ensure(cm.data?.message === "hello", `still ${cm.data?.message}`)))
      yield* controller.awaitIdle
      assert.strictEqual(yield* Ref.get(runs), 2)
    }))
})
