/**
 * Owned kinds with options of their own (`Controller.own`): a cache transform keeps what the owned
 * cache holds of each object, never the fields the controller finds owners and its own writes by,
 * and never masks an outside change of a field it drops; an update predicate keeps an owned
 * object's noise from reconciling its owner, while adds, deletes and a change of owner still do; a
 * kind owned twice is refused.
 */
import { assert, describe, it as plain, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube, Resource } from "@kubefx/kube"
import { Effect, Ref } from "effect"
import { Widget, widgetIn } from "./fixtures/Widget.ts"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const managedBy = "app.kubernetes.io/managed-by"

// Counts the runs of each Widget.
const counting = (runs: Ref.Ref<Record<string, number>>, name: string) =>
  Ref.update(runs, (all) => ({ ...all, [name]: (all[name] ?? 0) + 1 }))

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("owned kinds with options", (it) => {
  it.effect("a transform keeps the owned cache to what it returns, with the object's identity and owners, and masks no outside change", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const children = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "widgets-transformed",
        for: Widget,
        namespace: ns,
        ownedLabels: { [managedBy]: "widgets-transformed" },
        // The transform drops the data and all the metadata.
        owns: [Controller.own(Builtins.ConfigMap, {
          transform: ({ data: _, ...configMap }) => ({ ...configMap, metadata: {} })
        })],
        reconcile: (widget, ctx) =>
          Effect.gen(function*() {
            yield* Ref.update(children, (xs) => [...xs, ctx.owned(Builtins.ConfigMap).map((cm) => cm.metadata.name).join(",")])
            yield* ctx.applyOwned(Builtins.ConfigMap, { metadata: { name: `${widget.metadata.name}-config` }, data: { message: widget.spec.message } })
            return Outcome.done
          })
      }))
      const owned = controller.informers.find((informer) => informer.resource === Builtins.ConfigMap)!
      const widget = yield* kube.create(Widget, widgetIn(ns, "k", "hi"))
      const stored = yield* eventually(kube.get(Builtins.ConfigMap, "k-config", ns))
      const cached = yield* eventually(Effect.suspend(() => {
        const object = owned.get(`${ns}/k-config`) as Builtins.ConfigMap | undefined
        return object === undefined ? Effect.fail("not cached") : Effect.succeed(object)
      }))
      assert.isUndefined(cached.data)
      assert.isUndefined(cached.metadata.creationTimestamp)
      assert.isUndefined(cached.metadata.annotations)
      assert.strictEqual(cached.metadata.name, "k-config")
      assert.strictEqual(cached.metadata.namespace, ns)
      assert.strictEqual(cached.metadata.resourceVersion, stored.metadata.resourceVersion)
      assert.strictEqual(cached.metadata.uid, stored.metadata.uid)
      assert.deepStrictEqual(cached.metadata.labels, { [managedBy]: "widgets-transformed" })
      assert.deepStrictEqual(cached.metadata.ownerReferences?.map((reference) => reference.uid), [widget.metadata.uid])

      // Someone changes the data the cache does not keep: the owner runs (no predicate), finds its
      // child through the owner index, and applies again, since the cache cannot show the data held.
      yield* kube.patch(Builtins.ConfigMap, "k-config", ns, { data: { message: "edited" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "k-config", ns), (configMap) =>
        ensure(configMap.data?.message === "hi", `data ${JSON.stringify(configMap.data)}`)))
      yield* eventually(Effect.flatMap(Ref.get(children), (xs) => ensure(xs.at(-1) === "k-config", xs.join(" | "))))
    }))

  it.effect("an update predicate: refused updates of an owned object do not reconcile its owner; adds, deletes and a new owner do", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Record<string, number>>({})
      yield* Controller.start(Controller.define({
        name: "widgets-predicated",
        for: Widget,
        namespace: ns,
        owns: [Controller.own(Builtins.ConfigMap, {
          predicate: (previous, next) => previous.data?.version !== next.data?.version
        })],
        reconcile: (widget) => Effect.as(counting(runs, widget.metadata.name), Outcome.done)
      }))
      const first = yield* kube.create(Widget, widgetIn(ns, "a"))
      const second = yield* kube.create(Widget, widgetIn(ns, "b"))
      const ran = (name: string, atLeast: number) =>
        eventually(Effect.flatMap(Ref.get(runs), (all) => ensure((all[name] ?? 0) >= atLeast, JSON.stringify(all))))
      yield* ran("a", 1)
      yield* ran("b", 1)
      const controlledBy = (owner: typeof first) => [{
        apiVersion: Widget.apiVersion,
        kind: Widget.kind,
        name: owner.metadata.name!,
        uid: owner.metadata.uid!,
        controller: true
      }]
      const settled = Effect.andThen(Effect.sleep("500 millis"), Ref.get(runs))

      // An add reconciles the owner.
      let before = yield* Ref.get(runs)
      yield* kube.create(Builtins.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "child", namespace: ns, ownerReferences: controlledBy(first) },
        data: { version: "1", payload: "x" }
      })
      yield* ran("a", before.a! + 1)
      // An update the predicate refuses does not.
      before = yield* settled
      yield* kube.patch(Builtins.ConfigMap, "child", ns, { data: { payload: "y" } }, { type: "merge" })
      assert.deepStrictEqual(yield* settled, before)
      // One it accepts does.
      yield* kube.patch(Builtins.ConfigMap, "child", ns, { data: { version: "2" } }, { type: "merge" })
      yield* ran("a", before.a! + 1)
      // A new controller owner: both owners hear of it, though the predicate refuses the update.
      before = yield* settled
      yield* kube.patch(Builtins.ConfigMap, "child", ns, { metadata: { ownerReferences: controlledBy(second) } }, { type: "merge" })
      yield* ran("a", before.a! + 1)
      yield* ran("b", before.b! + 1)
      // A delete reconciles the owner.
      before = yield* settled
      yield* kube.delete(Builtins.ConfigMap, "child", ns)
      yield* ran("b", before.b! + 1)
      assert.strictEqual((yield* settled).a, before.a)
    }))
})

describe("owns", () => {
  plain("a kind owned twice, as it is, metadata-only or through own, is refused when the controller is defined", () => {
    const define = (owns: Controller.Options<typeof Widget.schema.Type, never, never>["owns"]) => () =>
      Controller.define({ name: "twice", for: Widget, owns, reconcile: () => Effect.succeed(Outcome.done) })
    const message = "controller twice: owns ConfigMap twice: list each kind once (Controller.own gives one its options)"
    assert.throws(define([Builtins.ConfigMap, Builtins.ConfigMap]), message)
    assert.throws(define([Builtins.ConfigMap, Resource.metadataOnly(Builtins.ConfigMap)]), message)
    assert.throws(define([Controller.own(Builtins.ConfigMap), Builtins.ConfigMap]), message)
    assert.doesNotThrow(define([Controller.own(Builtins.ConfigMap, { predicate: () => false }), Builtins.Secret]))
  })
})
