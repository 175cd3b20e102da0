/**
 * Keys from outside the cluster (`sources`): a key a stream brings reconciles that object as a
 * related event, and a key whose object does not exist runs nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube } from "@kubefx/kube"
import { Effect, Queue, Ref, Stream } from "effect"
import { ensure, eventually, layer as cluster, namespace } from "./support.ts"

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("external sources", (it) => {
  it.effect("a key a source brings runs its object as a related event; one with no object runs nothing", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const incoming = yield* Queue.unbounded<string>()
      const runs = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "externally-triggered",
        for: Builtins.ConfigMap,
        namespace: ns,
        sources: [Stream.fromQueue(incoming)],
        reconcile: (configMap) => Effect.as(Ref.update(runs, (xs) => [...xs, configMap.metadata.name]), Outcome.done)
      }))
      const triggers: Array<string> = []
      yield* controller.reports.pipe(
        Stream.runForEach((report) => Effect.sync(() => triggers.push(`${report.key}:${report.triggers.map((t) => t._tag).join("+")}`))),
        Effect.forkScoped
      )
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "tracked", namespace: ns } })
      yield* eventually(Effect.flatMap(Ref.get(runs), (xs) => ensure(xs.join(",") === "tracked", xs.join(","))))

      yield* Queue.offer(incoming, `${ns}/missing`)
      yield* Queue.offer(incoming, `${ns}/tracked`)
      yield* eventually(Effect.flatMap(Ref.get(runs), (xs) => ensure(xs.join(",") === "tracked,tracked", xs.join(","))))
      yield* eventually(Effect.suspend(() => ensure(triggers.includes(`${ns}/tracked:Related`), triggers.join(" "))))
      assert.deepStrictEqual((yield* Ref.get(runs)), ["tracked", "tracked"])
    }))
})
