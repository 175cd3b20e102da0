import { assert, layer } from "@effect/vitest"
import { Builtins, Kube } from "@kubefx/kube"
import { Effect } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "../../../packages/kube/test/support.ts"
import { configMapName, controller, Widget } from "../src/index.ts"

const ready = (widget: Widget) => widget.status?.conditions?.find((c) => c.type === "Ready")?.status === "True"

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("widgets", (it) => {
  it.effect("a Widget gets its ConfigMap, status and Ready; hand edits are reverted; deletion collects the ConfigMap", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* controller
      yield* kube.create(Widget, {
        apiVersion: Widget.apiVersion,
        kind: Widget.kind,
        metadata: { name: "hello", namespace: ns },
        spec: { replicas: 2, message: "Hello" }
      })
      const widget = yield* eventually(Effect.flatMap(kube.get(Widget, "hello", ns), (w) =>
        ready(w) ? Effect.succeed(w) : Effect.fail(new Error("not ready"))))
      assert.strictEqual(widget.status?.configMapName, "hello-config")
      assert.strictEqual(widget.status?.observedGeneration, 1)
      const configMap = yield* kube.get(Builtins.ConfigMap, configMapName(widget), ns)
      assert.deepStrictEqual(configMap.data, { message: "Hello", replicas: "2" })

      yield* kube.patch(Builtins.ConfigMap, "hello-config", ns, { data: { message: "edited by hand" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "hello-config", ns), (cm) =>
        ensure(cm.data?.message === "Hello", "edit not reverted")))

      yield* kube.patch(Widget, "hello", ns, { spec: { message: "Changed" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "hello-config", ns), (cm) =>
        ensure(cm.data?.message === "Changed", "spec change not applied")))

      yield* kube.delete(Widget, "hello", ns)
      yield* eventually(Effect.flatMap(Effect.flip(kube.get(Builtins.ConfigMap, "hello-config", ns)), (error) =>
        ensure(error._tag === "NotFound", error._tag)))
    }))
})
