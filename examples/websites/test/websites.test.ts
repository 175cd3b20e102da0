import { assert, layer } from "@effect/vitest"
import { WorkloadSimulator } from "@kubefx/apiserver"
import { Builtins, Informer, Kube, ObjectMeta, type Resource } from "@kubefx/kube"
import { Await, Samples, TestCluster } from "@kubefx/testing"
import { Effect, Ref, Schedule, Stream } from "effect"
import { definition, Website } from "../src/index.ts"

const cluster = TestCluster.layer({
  resources: [Website],
  controllers: [definition],
  serverControllers: [WorkloadSimulator.make({ delay: "300 millis" })]
})

const condition = (site: Website, type: string) => site.status?.conditions?.find((c) => c.type === type)

const readyWebsite = (ns: string, name: string, generation: number) =>
  Await.until(Website, name, ns, (site) => {
    const ready = condition(site, "Ready")
    return ready?.status === "True" && ready.observedGeneration === generation
  }, { description: `Ready=True at generation ${generation}`, timeout: "20 seconds" })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("websites", (it) => {
  it.effect("a Website becomes a ConfigMap, a Deployment and, once that is ready, a Service; deletion goes in reverse", () =>
    Effect.gen(function*() {
      const ns = yield* TestCluster.namespace
      const kube = yield* Kube.Kube
      const deletions = yield* Ref.make<Array<{ readonly revision: number; readonly kind: string }>>([])
      const kinds: ReadonlyArray<Resource.Resource<any>> = [Builtins.ConfigMap, Builtins.Deployment, Builtins.Service]
      const informers = yield* Effect.forEach(kinds, (kind) => Informer.make(kind, { namespace: ns }))
      yield* Stream.mergeAll(informers.map((informer) => informer.changes), { concurrency: "unbounded" }).pipe(
        Stream.runForEach((change) =>
          change._tag === "Deleted"
            ? Ref.update(deletions, (xs) => [...xs, { revision: Number(change.object.metadata.resourceVersion), kind: change.object.kind ?? "" }])
            : Effect.void
        ),
        Effect.forkScoped
      )
      yield* Samples.apply(Website, { metadata: { name: "hello", namespace: ns }, spec: { content: "<h1>Hello</h1>", replicas: 2 } })

      const site = yield* readyWebsite(ns, "hello", 1)
      for (const type of ["ContentReady", "DeploymentReady", "ServiceReady"]) assert.strictEqual(condition(site, type)?.status, "True", type)
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "hello-content", ns)).data, { "index.html": "<h1>Hello</h1>" })
      const deployment = yield* kube.get(Builtins.Deployment, "hello", ns)
      assert.strictEqual(deployment.status?.availableReplicas, 2)
      // The server's revisions order its writes: the Service came after the write that made the
      // Deployment ready (the simulator's last one).
      const service = yield* kube.get(Builtins.Service, "hello", ns)
      assert.isAbove(ObjectMeta.compareVersions(service.metadata.resourceVersion, deployment.metadata.resourceVersion) ?? 0, 0)
      assert.strictEqual(service.metadata.ownerReferences?.[0]?.name, "hello")

      // New content: a new page and a new rollout, then Ready again.
      yield* kube.patch(Website, "hello", ns, { spec: { content: "<h1>Changed</h1>" } }, { type: "merge" })
      yield* readyWebsite(ns, "hello", 2)
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "hello-content", ns)).data, { "index.html": "<h1>Changed</h1>" })
      assert.strictEqual((yield* kube.get(Builtins.Deployment, "hello", ns)).status?.observedGeneration, 2)

      yield* kube.delete(Website, "hello", ns)
      yield* Await.deleted(Website, "hello", ns)
      const deleted = yield* Ref.get(deletions).pipe(
        Effect.repeat({ until: (xs) => xs.length === 3, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout("15 seconds")
      )
      const order = [...deleted].sort((a, b) => a.revision - b.revision).map((d) => d.kind)
      assert.deepStrictEqual(order, ["Service", "Deployment", "ConfigMap"])
    }))
})
