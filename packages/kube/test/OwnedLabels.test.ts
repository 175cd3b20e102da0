/**
 * Caches narrowed by labels. `ownedLabels`: the caches of owned kinds hold only the objects that
 * carry the labels, which `applyOwned` puts on; an owned object that loses them leaves the cache and
 * its owner puts them back; labels the server would refuse are refused when the controller is
 * declared. A watched kind's `labelSelector` or `fieldSelector`: only the objects they select are
 * cached and reconcile; selectors the server would refuse are refused when the controller is declared.
 */
import { assert, describe, it as plain, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube, ObjectMeta } from "@kubefx/kube"
import { Effect, Ref, References } from "effect"
import { applyingConfigMap, Widget, widgetIn } from "./fixtures/Widget.ts"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const managedBy = "app.kubernetes.io/managed-by"

const definition = (ns: string, runs: Ref.Ref<number>) =>
  Controller.define({
    name: "widgets-labelled",
    for: Widget,
    namespace: ns,
    owns: [Builtins.ConfigMap],
    ownedLabels: { [managedBy]: "widgets-labelled" },
    reconcile: applyingConfigMap(runs)
  })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("ownedLabels", (it) => {
  it.effect("owned caches hold only the labelled objects; one that loses the labels gets them back", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "stranger", namespace: ns }, data: {} })
      const runs = yield* Ref.make(0)
      const controller = yield* Controller.start(definition(ns, runs))
      const owned = controller.informers.find((informer) => informer.resource === Builtins.ConfigMap)!
      yield* kube.create(Widget, widgetIn(ns, "k", "hi"))
      const applied = yield* eventually(kube.get(Builtins.ConfigMap, "k-config", ns))
      assert.strictEqual(applied.metadata.labels?.[managedBy], "widgets-labelled")
      yield* eventually(Effect.suspend(() => ensure(owned.get(`${ns}/k-config`) !== undefined, "not cached")))
      assert.isUndefined(owned.get(`${ns}/stranger`), "an unlabelled ConfigMap was cached")
      assert.deepStrictEqual(owned.keys(), [`${ns}/k-config`])
      yield* controller.awaitIdle
      assert.strictEqual(yield* Ref.get(runs), 1)

      yield* kube.patch(Builtins.ConfigMap, "k-config", ns, { metadata: { labels: { [managedBy]: null } } }, { type: "merge", fieldManager: "kubectl-edit" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "k-config", ns), (cm) =>
        ensure(cm.metadata.labels?.[managedBy] === "widgets-labelled", "the label was not put back")))
      yield* eventually(Effect.suspend(() => ensure(owned.get(`${ns}/k-config`) !== undefined, "not cached again")))
      yield* controller.awaitIdle
      assert.strictEqual(yield* Ref.get(runs), 2)
    }))

  const selecting = [
    ["labelSelector", "by-labels", { labelSelector: "app=web" }],
    ["fieldSelector", "by-fields", { fieldSelector: "metadata.name=web" }]
  ] as const
  for (const [what, name, selector] of selecting) {
    it.effect(`a watched kind's ${what}: only the objects it selects are cached and reconcile`, () =>
      Effect.gen(function*() {
        yield* installCrd(Widget)
        const ns = yield* namespace
        const kube = yield* Kube.Kube
        const runs = yield* Ref.make<Array<string>>([])
        const controller = yield* Controller.start(Controller.define({
          name,
          for: Widget,
          namespace: ns,
          watches: [Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)], selector)],
          reconcile: (object) => Ref.update(runs, (xs) => [...xs, object.metadata.name!]).pipe(Effect.as(Outcome.done))
        }))
        for (const widget of ["web", "other"]) {
          yield* kube.create(Widget, widgetIn(ns, widget, widget))
        }
        yield* eventually(Effect.flatMap(Ref.get(runs), (xs) => ensure(xs.length === 2, `runs ${xs}`)))
        yield* controller.awaitIdle
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "other", namespace: ns }, data: {} })
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web", namespace: ns, labels: { app: "web" } }, data: {} })
        const watched = controller.informers.find((informer) => informer.resource === Builtins.ConfigMap)!
        yield* eventually(Effect.suspend(() => ensure(watched.get(`${ns}/web`) !== undefined, "not cached")))
        yield* eventually(Effect.flatMap(Ref.get(runs), (xs) => ensure(xs.length >= 3, `runs ${xs}`)))
        yield* controller.awaitIdle
        assert.deepStrictEqual((yield* Ref.get(runs)).slice(2), ["web"])
        assert.deepStrictEqual(watched.keys(), [`${ns}/web`])
        // What the cache selects by, as /controllers and the Control Center show it.
        const { labelSelector, fieldSelector } = { labelSelector: undefined, fieldSelector: undefined, ...selector }
        assert.deepStrictEqual([watched.labelSelector, watched.fieldSelector], [labelSelector, fieldSelector])
      }))
  }

  it.effect("a kind both owned and watched through different selectors: a converged owned object is not applied again", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const applies = yield* Ref.make(0)
      const runs = yield* Ref.make(0)
      const seenCached = yield* Ref.make(false)
      const counting: Kube.Client = {
        ...kube,
        // Applies of objects: the Widget's status write (Ready) is not what this counts.
        apply: (resource, body, options) =>
          Effect.andThen(Ref.update(applies, (n) => options.subresource === "status" ? n : n + 1), kube.apply(resource, body, options))
      }
      const controller = yield* Controller.start(Controller.define({
        name: "widgets-both",
        for: Widget,
        namespace: ns,
        owns: [Builtins.ConfigMap],
        ownedLabels: { [managedBy]: "widgets-both" },
        watches: [Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)], { labelSelector: "app=web" })],
        resync: "300 millis",
        reconcile: (object, ctx) =>
          Ref.update(runs, (n) => n + 1).pipe(
            Effect.andThen(ctx.applyOwned(Builtins.ConfigMap, { metadata: { name: `${object.metadata.name}-config` }, data: { message: object.spec.message } })),
            Effect.andThen(Effect.sync(() => ctx.cached(Builtins.ConfigMap, `${ns}/${object.metadata.name}-config`))),
            Effect.tap((cached) => cached === undefined ? Effect.void : Ref.set(seenCached, true)),
            Effect.as(Outcome.done)
          )
      })).pipe(Effect.provideService(Kube.Kube, counting), Effect.provideService(References.MinimumLogLevel, "None"))
      yield* kube.create(Widget, widgetIn(ns, "both", "hi"))
      yield* eventually(kube.get(Builtins.ConfigMap, "both-config", ns))
      const owned = controller.informers.find((informer) => informer.resource === Builtins.ConfigMap && informer.labelSelector?.includes(managedBy))!
      yield* eventually(Effect.suspend(() => ensure(owned.get(`${ns}/both-config`) !== undefined, "not cached")))
      const converged = yield* Ref.get(applies)
      const runsBefore = yield* Ref.get(runs)
      // Resyncs run it again and again; its ConfigMap, in the owned cache only, holds the body.
      yield* eventually(Effect.flatMap(Ref.get(runs), (n) => ensure(n >= runsBefore + 3, `${n - runsBefore} runs`)))
      assert.strictEqual(yield* Ref.get(applies), converged)
      assert.isTrue(yield* Ref.get(seenCached), "ctx.cached did not find the owned ConfigMap")
    }))
})

describe("labels and selectors, declared", () => {
  plain("refuses a label the API server would refuse, naming the controller and the label", () => {
    const runs = Ref.makeUnsafe(0)
    assert.throws(
      () => Controller.define({ ...definition("ns", runs).options, ownedLabels: { [managedBy]: "not a value" } }),
      /controller widgets-labelled: ownedLabels app\.kubernetes\.io\/managed-by=not a value: a valid label must be/
    )
    assert.throws(
      () => Controller.define({ ...definition("ns", runs).options, ownedLabels: { "kubefx.dev/shard": "a" } }),
      /the sharder's label/
    )
  })

  plain("refuses a selector the API server would refuse, with its message, naming the controller and the selector", () => {
    const runs = Ref.makeUnsafe(0)
    const { options } = definition("ns", runs)
    assert.throws(
      () => Controller.define({ ...options, labelSelector: "tier in (web" }),
      /^controller widgets-labelled: labelSelector "tier in \(web": unable to parse requirement: found '', expected: '\)'$/
    )
    const watching = (labelSelector: string) => [Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)], { labelSelector })]
    assert.throws(
      () => Controller.define({ ...options, watches: watching("app=web,bad key") }),
      /^controller widgets-labelled: watches ConfigMap labelSelector "app=web,bad key": unable to parse requirement: found 'key', expected: /
    )
    assert.throws(
      () => Controller.define({ ...options, watches: [Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)], { fieldSelector: "metadata.name" })] }),
      /^controller widgets-labelled: watches ConfigMap fieldSelector "metadata.name": invalid selector: 'metadata.name'; can't understand 'metadata.name'$/
    )
    assert.throws(
      () => Controller.define({ ...options, watch: { fieldSelector: "a=b,c" } }),
      /^controller widgets-labelled: watch.fieldSelector "a=b,c": invalid selector: 'a=b,c'; can't understand 'c'$/
    )
    assert.doesNotThrow(() => Controller.define({ ...options, labelSelector: "tier in (web,api),!legacy", watches: watching("app=web") }))
  })

  plain("refuses a finalizer the API server would refuse: on a built-in kind, one without a domain and a path", () => {
    const cleaning = (options: { readonly name?: string; readonly finalizer?: string; readonly custom?: boolean }) => {
      const common = {
        name: options.name ?? "cleaner",
        finalizer: options.finalizer,
        reconcile: () => Effect.succeed(Outcome.done),
        cleanup: () => Effect.succeed(Outcome.done)
      }
      return options.custom === true ? Controller.define({ ...common, for: Widget }) : Controller.define({ ...common, for: Builtins.ConfigMap })
    }
    assert.throws(
      () => cleaning({ finalizer: "cleanup" }),
      /^controller cleaner: finalizer "cleanup": a finalizer on the built-in kind ConfigMap needs a domain and a path \(as example\.com\/cleanup\)$/
    )
    assert.throws(() => cleaning({ finalizer: "example.com/clean up" }), /^controller cleaner: finalizer "example.com\/clean up": name part must consist of/)
    // The default, <group or kubefx.dev>/<controller name>, follows the controller's name.
    assert.throws(() => cleaning({ name: "my cleaner" }), /^controller my cleaner: finalizer "kubefx.dev\/my cleaner": name part must consist of/)
    assert.doesNotThrow(() => cleaning({}))
    assert.doesNotThrow(() => cleaning({ finalizer: "example.com/cleanup" }))
    // A custom resource's unqualified finalizer is only warned about by the server.
    assert.doesNotThrow(() => cleaning({ finalizer: "cleanup", custom: true }))
  })
})
