import { assert, describe, it as plain, layer } from "@effect/vitest"
import { Controller as Engine, Outcome } from "@kubefx/core"
import { Builtins, Controller, type Informer, Kube, ObjectMeta } from "@kubefx/kube"
import { Effect, Ref, References } from "effect"
import * as OwnWrites from "../src/controller/OwnWrites.ts"
import { Widget, widgetIn } from "./fixtures/Widget.ts"
import { ensure, eventually, installCrd, layer as cluster, lossy, namespace } from "./support.ts"

const configMap = (name: string, resourceVersion: string): Builtins.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion }
})

const updated = (object: Builtins.ConfigMap): Informer.Change<Builtins.ConfigMap> => ({ _tag: "Updated", previous: object, object })

/** Waits until the controller's caches hold the Widget as Ready and every object it wrote, then until it is idle. */
const settled = (controller: Controller.Running, kube: Kube.Client, ns: string, name: string, written: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ready = yield* eventually(Effect.flatMap(kube.get(Widget, name, ns), (object) =>
      Effect.as(ensure(object.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true, "not Ready"), object)))
    yield* controller.informer.awaitVersion(ObjectMeta.key(ready), ready.metadata.resourceVersion)
    const configMaps = controller.informers.find((informer) => informer.resource.kind === "ConfigMap")!
    for (const cm of written) {
      const object = yield* kube.get(Builtins.ConfigMap, cm, ns)
      yield* configMaps.awaitVersion(ObjectMeta.key(object), object.metadata.resourceVersion)
    }
    yield* controller.awaitIdle
  })

const owning = (name: string, ns: string, runs: Ref.Ref<Array<string>>, reconcileOwnWrites?: boolean) =>
  Controller.start(Controller.define({
    name,
    for: Widget,
    namespace: ns,
    owns: [Builtins.ConfigMap],
    reconcileOwnWrites,
    reconcile: (object, ctx) =>
      Ref.update(runs, (xs) => [...xs, object.metadata.name]).pipe(
        Effect.andThen(ctx.applyOwned(Builtins.ConfigMap, { metadata: { name: `${object.metadata.name}-config` }, data: { message: object.spec.message } })),
        Effect.as(Outcome.done)
      ),
    cleanup: () => Effect.void
  })).pipe(Effect.provideService(References.MinimumLogLevel, "None"))

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("a run's own writes", (it) => {
  it.effect("coming back on the watch (the finalizer, an owned apply) do not run the key again; a hand edit does", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Array<string>>([])
      const controller = yield* owning("widgets-own-writes", ns, runs)
      yield* kube.create(Widget, widgetIn(ns, "a"))
      yield* settled(controller, kube, ns, "a", ["a-config"])
      assert.include((yield* kube.get(Widget, "a", ns)).metadata.finalizers ?? [], controller.finalizer)
      assert.deepStrictEqual(yield* Ref.get(runs), ["a"])

      // Someone else's change of the owned object runs it; the run's restoring write does not again.
      yield* kube.patch(Builtins.ConfigMap, "a-config", ns, { data: { message: "tampered" } }, { type: "merge", fieldManager: "kubectl-edit" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "a-config", ns), (cm) => ensure(cm.data?.message === "hello", `still ${cm.data?.message}`)))
      yield* settled(controller, kube, ns, "a", ["a-config"])
      assert.deepStrictEqual(yield* Ref.get(runs), ["a", "a"])
    }))

  it.effect("with reconcileOwnWrites, they run it again", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Array<string>>([])
      const controller = yield* owning("widgets-own-writes-on", ns, runs, true)
      yield* kube.create(Widget, widgetIn(ns, "a"))
      yield* settled(controller, kube, ns, "a", ["a-config"])
      const seen = yield* Ref.get(runs)
      assert.isAtLeast(seen.length, 2, seen.join())
    }))

  it.effect("of a watched object wake the other keys it maps to, not the writer", () =>
    Effect.gen(function*() {
      yield* installCrd(Widget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "widgets-own-watched",
        for: Widget,
        namespace: ns,
        watches: [Controller.watch(Builtins.ConfigMap, (cm) =>
          (cm.metadata.annotations?.["widgets"] ?? "").split(",").filter((n) => n !== "").map((n) => ObjectMeta.keyOf(ns, n)))],
        reconcile: (object, ctx) =>
          Ref.update(runs, (xs) => [...xs, object.metadata.name]).pipe(
            Effect.andThen(object.metadata.name !== "a" ? Effect.void : ctx.apply(Builtins.ConfigMap, {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: "shared", namespace: ns, annotations: { widgets: "a,b" } },
              data: { from: "a" }
            })),
            Effect.as(Outcome.done)
          )
      })).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
      yield* kube.create(Widget, widgetIn(ns, "b"))
      yield* settled(controller, kube, ns, "b", [])
      yield* kube.create(Widget, widgetIn(ns, "a"))
      yield* eventually(Effect.flatMap(Ref.get(runs), (xs) => ensure(xs.length >= 3, xs.join())))
      yield* settled(controller, kube, ns, "a", ["shared"])
      assert.deepStrictEqual(yield* Ref.get(runs), ["b", "a", "b"])
    }))

  it.effect("folded into a relist with someone else's earlier change still run the key for that change", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      // Its watches can lose events, then end with a 410 (a client fallen too far behind).
      const watches = lossy(kube)
      const seen = yield* Ref.make<Array<string>>([])
      // Each run notes the message it read and stamps its ConfigMap: a recorded own write with no
      // status write after it, so the stamp is the object's latest version.
      const controller = yield* Controller.start(Controller.define({
        name: "configmaps-own-relisted",
        for: Builtins.ConfigMap,
        namespace: ns,
        reconcile: (object, ctx) =>
          Effect.gen(function*() {
            const runs = yield* Ref.updateAndGet(seen, (xs) => [...xs, object.data?.message ?? ""])
            yield* ctx.kube.patch(Builtins.ConfigMap, object.metadata.name, ns, { metadata: { annotations: { runs: `${runs.length}` } } }, { type: "merge" })
            return Outcome.done
          })
      })).pipe(Effect.provideService(Kube.Kube, watches.client), Effect.provideService(References.MinimumLogLevel, "None"))
      const stampedAs = (runs: string) =>
        eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "x", ns), (cm) =>
          Effect.as(ensure(cm.metadata.annotations?.["runs"] === runs, `not stamped ${runs}`), cm)))
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: ns }, data: { message: "one" } })
      const stamped = yield* stampedAs("1")
      yield* controller.informer.awaitVersion(ObjectMeta.key(stamped), stamped.metadata.resourceVersion)
      yield* controller.awaitIdle

      // Lost: someone else's change, then a run's stamp on top of it. The relist finds both as one
      // change, to the version the run wrote.
      watches.losing = true
      yield* kube.patch(Builtins.ConfigMap, "x", ns, { data: { message: "two" } }, { type: "merge", fieldManager: "kubectl-edit" })
      yield* controller.enqueue(`${ns}/x`)
      yield* stampedAs("2")
      yield* controller.awaitIdle
      assert.deepStrictEqual(yield* Ref.get(seen), ["one", "one"])
      watches.expire()
      yield* eventually(Effect.flatMap(Ref.get(seen), (xs) => ensure(xs.includes("two"), `runs read ${xs.join(", ")}`)))
    }))
})

describe("OwnWrites", () => {
  const cached = new Map<string, Builtins.ConfigMap>()
  const configMaps = { resource: Builtins.ConfigMap, get: (key: string) => cached.get(key) } as unknown as Informer.Informer<Builtins.ConfigMap>

  plain("names the writer of that very version once; an older version waits, a later one ends the wait", () => {
    const writes = OwnWrites.make([configMaps])
    writes.record(Builtins.ConfigMap, configMap("x", "5"), "ns/a")
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("x", "4"))))
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, updated(configMap("x", "5"))), "ns/a")
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("x", "5"))))

    writes.record(Builtins.ConfigMap, configMap("y", "7"), "ns/a")
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("y", "8"))))
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("y", "7"))))

    // A deletion, even of an older version (a relist's), ends the wait.
    writes.record(Builtins.ConfigMap, configMap("z", "9"), "ns/a")
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, { _tag: "Deleted", object: configMap("z", "8") }))
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("z", "9"))))
  })

  plain("does not take a relist's change to the written version for the write: it may fold in others' changes", () => {
    const writes = OwnWrites.make([configMaps])
    writes.record(Builtins.ConfigMap, configMap("folded", "5"), "ns/a")
    const relisted: Informer.Change<Builtins.ConfigMap> = { _tag: "Updated", previous: configMap("folded", "3"), object: configMap("folded", "5"), listed: true }
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, relisted))
    // The record ended with it.
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("folded", "5"))))
  })

  plain("finds an echo that came first in any cache of the kind, not only the last one", () => {
    const held = new Map([["ns/early", configMap("early", "4")]])
    const owned = { resource: Builtins.ConfigMap, get: (key: string) => held.get(key) } as unknown as Informer.Informer<Builtins.ConfigMap>
    const watchedElsewhere = { resource: Builtins.ConfigMap, get: () => undefined } as unknown as Informer.Informer<Builtins.ConfigMap>
    const writes = OwnWrites.make([owned, watchedElsewhere])
    writes.record(Builtins.ConfigMap, configMap("early", "4"), "ns/a")
    // Nothing was kept to wait for: a later change of that very version is not taken for the echo.
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("early", "4"))))
  })

  plain("in a kind with several caches, names the writer of each cache's echo of the version", () => {
    const one = { resource: Builtins.ConfigMap, get: () => undefined } as unknown as Informer.Informer<Builtins.ConfigMap>
    const other = { resource: Builtins.ConfigMap, get: () => undefined } as unknown as Informer.Informer<Builtins.ConfigMap>
    const writes = OwnWrites.make([one, other])
    writes.record(Builtins.ConfigMap, configMap("both", "5"), "ns/a")
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, updated(configMap("both", "5"))), "ns/a")
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, updated(configMap("both", "5"))), "ns/a")
    // A later version, someone else's, ends it.
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("both", "6"))))
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("both", "5"))))
  })

  plain("answers every trigger asking about the same change alike", () => {
    const writes = OwnWrites.make([configMaps])
    writes.record(Builtins.ConfigMap, configMap("w", "5"), "ns/a")
    const change = updated(configMap("w", "5"))
    // The owned trigger and the watched trigger of one kind ask in turn.
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, change), "ns/a")
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, change), "ns/a")
    // Another change of that version is not the echo.
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("w", "5"))))
  })

  plain("keeps nothing the cache already holds or no cache will bring back, and at most its capacity", () => {
    const writes = OwnWrites.make([configMaps], { capacity: 2 })
    cached.set("ns/held", configMap("held", "9"))
    writes.record(Builtins.ConfigMap, configMap("held", "9"), "ns/a")
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("held", "9"))))
    writes.record(Builtins.Secret, { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "ns", resourceVersion: "3" } }, "ns/a")
    assert.isUndefined(writes.writerOf(Builtins.Secret, { _tag: "Added", object: { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "ns", resourceVersion: "3" } } }))

    for (const name of ["p", "q", "r"]) writes.record(Builtins.ConfigMap, configMap(name, "1"), `ns/${name}`)
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("p", "1"))))
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, updated(configMap("q", "1"))), "ns/q")
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, updated(configMap("r", "1"))), "ns/r")
  })

  // The watch may bring a write back before its answer: what comes meanwhile waits for the answer.
  const echoFirst = (changes: ReadonlyArray<Informer.Change<Builtins.ConfigMap>>, answer: Builtins.ConfigMap | undefined) => {
    const redelivered: Array<string> = []
    const writes = OwnWrites.make([configMaps], { redeliver: (events) => redelivered.push(...events.map((e) => `${e._tag} ${e.key}`)) })
    const pending = writes.begin(Builtins.ConfigMap, "ns/f", "ns/a")!
    const writers = changes.map((change) => {
      const writer = writes.writerOf(Builtins.ConfigMap, change)
      if (writer !== undefined) writes.hold(change, Engine.enqueue(writer))
      return writer
    })
    const before = [...redelivered]
    writes.end(pending, answer)
    return { writers, before, redelivered, writes }
  }

  plain("holds a change of an object its writer's write is in flight for, and drops it when the answer names its version", () => {
    const echo = updated(configMap("f", "6"))
    const { before, redelivered, writers, writes } = echoFirst([echo], configMap("f", "6"))
    assert.deepStrictEqual(writers, ["ns/a"])
    assert.deepStrictEqual(before, [])
    assert.deepStrictEqual(redelivered, [])
    // Another trigger asking about that change after the write ended hears the same writer.
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, echo), "ns/a")
  })

  plain("sends the writer what it held that was not the write's: someone else's version, a relist's, or anything of a failed write", () => {
    assert.deepStrictEqual(echoFirst([updated(configMap("f", "5")), updated(configMap("f", "6"))], configMap("f", "6")).redelivered, ["Enqueue ns/a"])
    const relisted: Informer.Change<Builtins.ConfigMap> = { _tag: "Updated", previous: configMap("f", "3"), object: configMap("f", "6"), listed: true }
    assert.deepStrictEqual(echoFirst([relisted], configMap("f", "6")).redelivered, ["Enqueue ns/a"])
    assert.deepStrictEqual(echoFirst([updated(configMap("f", "6"))], undefined).redelivered, ["Enqueue ns/a"])
    // A deletion is never held.
    assert.deepStrictEqual(echoFirst([{ _tag: "Deleted", object: configMap("f", "6") }], configMap("f", "6")).writers, [undefined])
  })

  plain("in a kind with several caches, an echo held in one is still the write's when another brings it after the answer", () => {
    const first = { resource: Builtins.ConfigMap, get: () => configMap("late", "6") } as unknown as Informer.Informer<Builtins.ConfigMap>
    const second = { resource: Builtins.ConfigMap, get: () => undefined } as unknown as Informer.Informer<Builtins.ConfigMap>
    const writes = OwnWrites.make([first, second])
    const pending = writes.begin(Builtins.ConfigMap, "ns/late", "ns/a")!
    const early = updated(configMap("late", "6"))
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, early), "ns/a")
    writes.hold(early, Engine.enqueue("ns/a"))
    writes.end(pending, configMap("late", "6"))
    assert.strictEqual(writes.writerOf(Builtins.ConfigMap, updated(configMap("late", "6"))), "ns/a")
    // Someone else's later version ends it.
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("late", "7"))))
  })

  plain("holds nothing for an object two keys' runs write at once", () => {
    const writes = OwnWrites.make([configMaps])
    const first = writes.begin(Builtins.ConfigMap, "ns/shared", "ns/a")!
    const second = writes.begin(Builtins.ConfigMap, "ns/shared", "ns/b")!
    assert.isUndefined(writes.writerOf(Builtins.ConfigMap, updated(configMap("shared", "2"))))
    writes.end(first, undefined)
    writes.end(second, undefined)
  })
})
