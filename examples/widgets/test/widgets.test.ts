import { assert, layer } from "@effect/vitest"
import { Builtins, Kube } from "@kubefx/kube"
import { Await, Samples, TestCluster } from "@kubefx/testing"
import { Effect } from "effect"
import { configMapName, definition, Widget } from "../src/index.ts"

const cluster = TestCluster.layer({ resources: [Widget], controllers: [definition] })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("widgets", (it) => {
  it.effect("a Widget gets its ConfigMap, status and Ready; hand edits are reverted; deletion collects the ConfigMap", () =>
    Effect.gen(function*() {
      const ns = yield* TestCluster.namespace
      const kube = yield* Kube.Kube
      yield* Samples.apply(Widget, { metadata: { name: "hello", namespace: ns }, spec: { replicas: 2, message: "Hello" } })
      const widget = yield* Await.condition(Widget, "hello", ns, "Ready")
      assert.strictEqual(widget.status?.configMapName, "hello-config")
      assert.strictEqual(widget.status?.observedGeneration, 1)
      const configMap = yield* kube.get(Builtins.ConfigMap, configMapName(widget), ns)
      assert.deepStrictEqual(configMap.data, { message: "Hello", replicas: "2" })

      yield* kube.patch(Builtins.ConfigMap, "hello-config", ns, { data: { message: "edited by hand" } }, { type: "merge" })
      yield* Await.until(Builtins.ConfigMap, "hello-config", ns, (cm) => cm.data?.message === "Hello", { description: "the edit reverted" })

      yield* kube.patch(Widget, "hello", ns, { spec: { message: "Changed" } }, { type: "merge" })
      yield* Await.until(Builtins.ConfigMap, "hello-config", ns, (cm) => cm.data?.message === "Changed", { description: "the new message" })

      yield* kube.delete(Widget, "hello", ns)
      yield* Await.deleted(Builtins.ConfigMap, "hello-config", ns)
    }))
})
