/**
 * An object the API server accepts but the controller's Schema does not decode is reported, not
 * skipped in silence: Ready=False with reason DecodeError and the decode error's message (256
 * characters at most), a Warning Event, a failed run in the controller's health and per-key
 * status; fixing the object reconciles it, deleting it forgets it.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Kube } from "@kubefx/kube"
import { Effect, Option, References } from "effect"
import { LooseMeter, Meter } from "./fixtures/Meter.ts"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"


const readyOf = (object: { readonly status?: { readonly conditions?: ReadonlyArray<Conditions.Condition> | undefined } | undefined }) =>
  object.status?.conditions?.find((c) => c.type === "Ready")

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("an object that does not decode", (it) => {
  it.effect("is Ready=False/DecodeError with a Warning Event and a failed run; a fix reconciles it; deletion forgets it", () =>
    Effect.gen(function*() {
      yield* installCrd(LooseMeter)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const meters = yield* Controller.start(Controller.define({ name: "meters", for: Meter, namespace: ns, reconcile: () => Effect.succeed(Outcome.done) }))
      const create = (name: string, size: number) =>
        kube.create(LooseMeter, { apiVersion: LooseMeter.apiVersion, kind: "Meter", metadata: { name, namespace: ns }, spec: { size } })

      yield* create("broken", 1.5)
      const broken = yield* eventually(Effect.flatMap(kube.get(LooseMeter, "broken", ns), (object) => {
        const ready = readyOf(object)
        return ready?.reason === "DecodeError" ? Effect.succeed(ready) : Effect.fail(new Error(`Ready is ${JSON.stringify(ready)}`))
      }))
      assert.strictEqual(broken.status, "False")
      assert.include(broken.message, "size")
      assert.isAtMost(broken.message.length, 256)
      const events = yield* eventually(Effect.flatMap(
        kube.list(Builtins.Event, { namespace: ns, fieldSelector: "involvedObject.name=broken" }),
        (list) => list.items.some((e) => e.reason === "DecodeError") ? Effect.succeed(list.items) : Effect.fail(new Error("no event"))
      ))
      assert.deepStrictEqual(events.filter((e) => e.reason === "DecodeError").map((e) => [e.type, e.involvedObject.kind]), [["Warning", "Meter"]])
      const status = yield* eventually(Effect.flatMap(meters.keyStatus(`${ns}/broken`), (s) =>
        Option.isSome(s) && s.value.last !== undefined ? Effect.succeed(s.value) : Effect.fail(new Error("no run"))))
      assert.strictEqual(status.last?.result._tag, "Transient")
      assert.isUndefined(status.next, "nothing to retry until the object changes")
      assert.isAtLeast((yield* meters.health).failed, 1)

      // Fixed: it decodes, reconciles and is Ready.
      yield* kube.patch(LooseMeter, "broken", ns, { spec: { size: 2 } }, { type: "merge" })
      yield* eventually(Effect.flatMap(kube.get(Meter, "broken", ns), (object) => ensure(readyOf(object)?.status === "True", "not Ready")))

      // A good object edited into one that does not decode is reported the same way.
      yield* create("good", 1)
      yield* eventually(Effect.flatMap(kube.get(Meter, "good", ns), (object) => ensure(readyOf(object)?.status === "True", "not Ready")))
      yield* kube.patch(LooseMeter, "good", ns, { spec: { size: 2.5 } }, { type: "merge" })
      yield* eventually(Effect.flatMap(kube.get(LooseMeter, "good", ns), (object) =>
        ensure(readyOf(object)?.reason === "DecodeError", "not reported")))

      // Deleted while it does not decode: its key is forgotten.
      yield* kube.delete(LooseMeter, "good", ns)
      yield* eventually(Effect.flatMap(meters.keyStatus(`${ns}/good`), (s) => ensure(Option.isNone(s), "still known")))
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
