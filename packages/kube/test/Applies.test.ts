import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube } from "@kubefx/kube"
import { Effect, Ref, References } from "effect"
import { Widget } from "./fixtures/Widget.ts"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

/** The client, counting the applies it sends (status applies apart). */
const counting = Effect.gen(function*() {
  const kube = yield* Kube.Kube
  const sent = yield* Ref.make({ objects: 0, status: 0 })
  const client: Kube.Client = {
    ...kube,
    apply: (resource, body, options) =>
      Ref.update(sent, (n) => options.subresource === "status" ? { ...n, status: n.status + 1 } : { ...n, objects: n.objects + 1 }).pipe(
        Effect.andThen(kube.apply(resource, body, options))
      )
  }
  return { kube, client, sent }
})

/**
 * A Widget controller in a fresh namespace, resyncing every 300 ms, that applies the ConfigMap
 * `configMap` gives (named `<widget>-config`) and states its name in status; its client counts applies.
 */
const widgetsApplying = (name: string, configMap: (widget: typeof Widget.schema.Type, name: string) => Kube.ApplyBody) =>
  Effect.gen(function*() {
    yield* installCrd(Widget)
    const ns = yield* namespace
    const { client, kube, sent } = yield* counting
    const runs = yield* Ref.make(0)
    yield* Controller.start(Controller.define({
      name,
      for: Widget,
      namespace: ns,
      owns: [Builtins.ConfigMap],
      resync: "300 millis",
      reconcile: (widget, ctx) =>
        Effect.gen(function*() {
          yield* Ref.update(runs, (n) => n + 1)
          const configMapName = `${widget.metadata.name}-config`
          yield* ctx.applyOwned(Builtins.ConfigMap, configMap(widget, configMapName))
          yield* ctx.applyStatus({ status: { configMapName } })
          return Outcome.done
        })
    })).pipe(Effect.provideService(Kube.Kube, client), Effect.provideService(References.MinimumLogLevel, "None"))
    return { ns, kube, sent, runs }
  })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("applies that would change nothing", (it) => {
  it.effect("a resync of converged objects sends no request; a hand edit or a dropped field is applied again", () =>
    Effect.gen(function*() {
      const { kube, ns, runs, sent } = yield* widgetsApplying("widgets-applies", (widget, name) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name },
        data: { message: widget.spec.message, ...(widget.spec.mode === undefined ? {} : { mode: widget.spec.mode }) }
      }))
      const spec = { replicas: 1, message: "hello", mode: "fast" as const }
      yield* kube.create(Widget, { apiVersion: Widget.apiVersion, kind: Widget.kind, metadata: { name: "a", namespace: ns }, spec })
      yield* eventually(Effect.flatMap(kube.get(Widget, "a", ns), (w) => ensure(w.status?.configMapName === "a-config", "not reconciled")))

      // Converged: several resyncs later, not one more apply.
      const converged = yield* Ref.get(sent)
      const runsBefore = yield* Ref.get(runs)
      yield* eventually(Effect.flatMap(Ref.get(runs), (n) => ensure(n >= runsBefore + 3, `${n - runsBefore} runs`)))
      assert.deepStrictEqual(yield* Ref.get(sent), converged)

      // Someone else's field beside the controller's is no reason to write.
      yield* kube.patch(Builtins.ConfigMap, "a-config", ns, { data: { note: "mine" } }, { type: "merge", fieldManager: "kubectl-edit" })
      const afterNote = (yield* Ref.get(runs)) + 2
      yield* eventually(Effect.flatMap(Ref.get(runs), (n) => ensure(n >= afterNote, "no run yet")))
      assert.strictEqual((yield* Ref.get(sent)).objects, converged.objects)

      // A hand edit of the controller's field is applied again (not masked by the skip).
      yield* kube.patch(Builtins.ConfigMap, "a-config", ns, { data: { message: "edited" } }, { type: "merge", fieldManager: "kubectl-edit" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "a-config", ns), (cm) => ensure(cm.data?.message === "hello", `message is ${cm.data?.message}`)))
      assert.strictEqual((yield* Ref.get(sent)).objects, converged.objects + 1)

      // A field the body no longer states is removed, though every stated field already matches.
      yield* kube.patch(Widget, "a", ns, [{ op: "remove", path: "/spec/mode" }], { type: "json" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "a-config", ns), (cm) =>
        ensure(cm.data?.mode === undefined && cm.data?.message === "hello" && cm.data?.note === "mine", JSON.stringify(cm.data))))
    }))

  it.effect("a body stating empty values the server leaves out (labels: {}, finalizers: []) still converges to no request", () =>
    Effect.gen(function*() {
      const { kube, ns, runs, sent } = yield* widgetsApplying("widgets-empty-values", (widget, name) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, labels: {}, finalizers: [] },
        data: { message: widget.spec.message }
      }))
      yield* kube.create(Widget, { apiVersion: Widget.apiVersion, kind: Widget.kind, metadata: { name: "e", namespace: ns }, spec: { replicas: 1, message: "hi" } })
      yield* eventually(Effect.flatMap(kube.get(Widget, "e", ns), (w) => ensure(w.status?.configMapName === "e-config", "not reconciled")))
      const stored = yield* kube.get(Builtins.ConfigMap, "e-config", ns)
      assert.isUndefined(stored.metadata.labels)
      assert.isUndefined(stored.metadata.finalizers)

      const converged = yield* Ref.get(sent)
      const runsBefore = yield* Ref.get(runs)
      yield* eventually(Effect.flatMap(Ref.get(runs), (n) => ensure(n >= runsBefore + 3, `${n - runsBefore} runs`)))
      assert.deepStrictEqual(yield* Ref.get(sent), converged)
    }))
})
