import { assert, describe, it } from "@effect/vitest"
import { Builtins, type Informer } from "@kubefx/kube"
import { Effect, Stream } from "effect"
import type * as OwnWrites from "../src/controller/OwnWrites.ts"
import * as Triggers from "../src/controller/Triggers.ts"

const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } })
type ConfigMap = ReturnType<typeof configMap>

// An informer whose changes come in the given chunks (as it publishes a watch read's changes together).
const informer = (chunks: ReadonlyArray<ReadonlyArray<string>>) =>
  ({
    resource: Builtins.ConfigMap,
    changes: Stream.fromArrays(...chunks.map((names) => names.map((name) => ({ _tag: "Added", object: configMap(name) } as const))))
  }) as unknown as Informer.Informer<ConfigMap>

// `c` was written by the run of key default/own-c: its change does not reconcile that key.
const writes: OwnWrites.OwnWrites = {
  record: () => undefined,
  writerOf: (_, change) => change.object.metadata.name === "c" ? "default/own-c" : undefined
}

describe("Triggers.watched", () => {
  it.effect("maps every change of a chunk to its keys, in order, leaving out the key whose run wrote it", () =>
    Effect.gen(function*() {
      const events = yield* Triggers.watched(
        informer([["a", "b", "c"], ["d"]]),
        (cm) => cm.metadata.name === "c" ? ["default/own-c", "default/other"] : [`default/for-${cm.metadata.name}`],
        writes
      ).pipe(Stream.runCollect)
      assert.deepStrictEqual(
        events.map((event) => event._tag === "Enqueue" ? `${event.key} ${event.trigger._tag}` : event._tag),
        ["default/for-a Related", "default/for-b Related", "default/other Related", "default/for-d Related"]
      )
    }))

  it.effect("lets a chunk whose changes name no key through as nothing", () =>
    Effect.gen(function*() {
      const events = yield* Triggers.watched(informer([["a", "b"], ["c"]]), (cm) => cm.metadata.name === "c" ? ["default/c"] : [], writes)
        .pipe(Stream.runCollect)
      assert.deepStrictEqual(events.map((event) => event.key), ["default/c"])
    }))

  // A Pod-like object naming the primary it concerns in an annotation.
  const pointing = (name: string, to: string, data = "1") => ({ ...configMap(name), metadata: { ...configMap(name).metadata, annotations: { to } }, data: { v: data } })
  type Pointing = ReturnType<typeof pointing>
  const updates = (...changes: ReadonlyArray<readonly [Pointing, Pointing]>) =>
    ({
      resource: Builtins.ConfigMap,
      changes: Stream.fromIterable(changes.map(([previous, object]) => ({ _tag: "Updated", previous, object } as const)))
    }) as unknown as Informer.Informer<Pointing>
  const to = (object: Pointing) => [`default/${object.metadata.annotations.to}`]
  const keys = (events: ReadonlyArray<{ readonly _tag: string; readonly key: string }>) => events.map((event) => event.key)

  it.effect("an update reconciles the keys its previous version named too: the primary it left hears of it", () =>
    Effect.gen(function*() {
      const events = yield* Triggers.watched(updates([pointing("p", "a"), pointing("p", "b")], [pointing("p", "b"), pointing("p", "b", "2")]), to, writes)
        .pipe(Stream.runCollect)
      assert.deepStrictEqual(keys(events), ["default/b", "default/a", "default/b"])
    }))

  it.effect("an update the predicate refuses reconciles nothing", () =>
    Effect.gen(function*() {
      const dataChanged = (previous: Pointing, next: Pointing) => previous.data.v !== next.data.v
      const events = yield* Triggers.watched(
        updates([pointing("p", "a"), pointing("p", "b")], [pointing("p", "b"), pointing("p", "b", "2")]),
        to,
        writes,
        dataChanged
      ).pipe(Stream.runCollect)
      assert.deepStrictEqual(keys(events), ["default/b"])
    }))
})
