/**
 * The owner's side of a shard move (`Handover.follow`) on the API server, with a cache whose
 * watch can lose events and relist: what it acknowledges, and when; and a withdrawn drain, after
 * which the key runs again.
 */
import { assert, layer } from "@effect/vitest"
import { Controller as Engine, Outcome } from "@kubefx/core"
import { Builtins, Controller, Handover, Informer, Kube } from "@kubefx/kube"
import { Duration, Effect } from "effect"
import { ensure, eventually, layer as cluster, lossy, namespace } from "./support.ts"

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Handover", (it) => {
  it.effect("acknowledges a drain asked again after a cancel, also when a relist brings the cancel and the new request as one change", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const watches = lossy(kube)
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: ns, labelSelector: Handover.selector("r1") }).pipe(
        Effect.provideService(Kube.Kube, watches.client)
      )
      const engine = yield* Engine.make({ name: "handover", reconcile: () => Effect.succeed(Outcome.done) })
      yield* Handover.follow([{ engine, informer }], { identity: "r1", resource: Builtins.ConfigMap, drainTimeout: Duration.seconds(5) })
      const key = `${ns}/x`
      const annotate = (annotations: Record<string, string | null>) =>
        kube.patch(Builtins.ConfigMap, "x", ns, { metadata: { annotations } }, { type: "merge", fieldManager: "sharder" })
      const acknowledgedIn = (read: Effect.Effect<Builtins.ConfigMap | undefined, unknown>) =>
        eventually(Effect.flatMap(read, (cm) => ensure(cm?.metadata.annotations?.[Handover.drainedAnnotation] === "r1", "not acknowledged")))
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: ns, labels: { [Handover.shardLabel]: "r1" } } })

      yield* annotate({ [Handover.drainAnnotation]: "r2" })
      yield* acknowledgedIn(Effect.sync(() => informer.get(key)))
      assert.isTrue(engine.isReleased(key))

      // The sharder withdraws the request and asks again, toward another replica; the cache
      // misses both and finds them by relisting.
      watches.losing = true
      yield* annotate({ [Handover.drainAnnotation]: null, [Handover.drainedAnnotation]: null })
      yield* annotate({ [Handover.drainAnnotation]: "r3" })
      watches.expire()
      yield* acknowledgedIn(kube.get(Builtins.ConfigMap, "x", ns))
      assert.isTrue(engine.isReleased(key))
    }))

  it.effect("a drain withdrawn runs the key again, so a change that came while it was released is reconciled", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const seen: Array<string> = []
      // Only a change of its data reconciles: the drain's annotations alone never do, so the run
      // after the withdrawal can only come from the handover.
      const controller = yield* Controller.start(Controller.define({
        name: "withdrawn",
        for: Builtins.ConfigMap,
        namespace: ns,
        predicate: (previous, next) => previous.data?.v !== next.data?.v,
        reconcile: (object) => Effect.sync(() => seen.push(object.data?.v ?? "")).pipe(Effect.as(Outcome.done))
      }))
      yield* Handover.follow([{ engine: controller, informer: controller.informer }], {
        identity: "r1",
        resource: Builtins.ConfigMap,
        drainTimeout: Duration.seconds(5)
      })
      const key = `${ns}/x`
      const patch = (body: object) => kube.patch(Builtins.ConfigMap, "x", ns, body, { type: "merge", fieldManager: "sharder" })
      yield* kube.create(Builtins.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "x", namespace: ns, labels: { [Handover.shardLabel]: "r1" } },
        data: { v: "0" }
      })
      yield* eventually(Effect.suspend(() => ensure(seen.join() === "0", `runs: ${seen.join()}`)))

      yield* patch({ metadata: { annotations: { [Handover.drainAnnotation]: "r2" } } })
      yield* eventually(Effect.suspend(() =>
        ensure(controller.informer.get(key)?.metadata.annotations?.[Handover.drainedAnnotation] === "r1", "not acknowledged")))
      // Released: the change is not run here...
      yield* patch({ data: { v: "1" } })
      yield* eventually(Effect.suspend(() => ensure(controller.informer.get(key)?.data?.v === "1", "not cached")))
      yield* controller.awaitIdle
      assert.deepStrictEqual(seen, ["0"])
      // ...until the sharder withdraws the drain: the key is the replica's again, and runs.
      yield* patch({ metadata: { annotations: { [Handover.drainAnnotation]: null, [Handover.drainedAnnotation]: null } } })
      yield* eventually(Effect.suspend(() => ensure(seen.join() === "0,1", `runs: ${seen.join()}`)))
      assert.isFalse(controller.isReleased(key))
    }))
})
