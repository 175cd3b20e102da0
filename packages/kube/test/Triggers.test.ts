import { assert, describe, it } from "@effect/vitest"
import { Builtins, type Informer, Resource } from "@kubefx/kube"
import { Effect, Schema, Stream } from "effect"
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
  writerOf: (_, change) => change.object.metadata.name === "c" ? "default/own-c" : undefined,
  hold: () => undefined,
  begin: () => undefined,
  end: () => undefined
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

describe("Triggers.owned", () => {
  const Widget = Resource.custom({ group: "demo.kubefx.dev", version: "v1", kind: "Widget", plural: "widgets", spec: Schema.Struct({}) })
  const child = (owner: string | undefined) => ({
    ...configMap("child"),
    metadata: {
      ...configMap("child").metadata,
      ...(owner === undefined ? {} : {
        ownerReferences: [{ apiVersion: "demo.kubefx.dev/v1", kind: "Widget", name: owner, uid: `uid-${owner}`, controller: true }]
      })
    }
  })
  type Child = ReturnType<typeof child>
  const changes = (...list: ReadonlyArray<Informer.Change<Child>>) =>
    ({ resource: Builtins.ConfigMap, changes: Stream.fromIterable(list) }) as unknown as Informer.Informer<Child>

  it.effect("reconciles the owner, and on an update that moved or orphaned the object the owner it had too", () =>
    Effect.gen(function*() {
      const events = yield* Triggers.owned(changes(
        { _tag: "Added", object: child("a") },
        { _tag: "Updated", previous: child("a"), object: child("b") },
        { _tag: "Updated", previous: child("b"), object: child(undefined) },
        { _tag: "Updated", previous: child(undefined), object: child(undefined) },
        { _tag: "Deleted", object: child("a") }
      ), Widget, writes).pipe(Stream.runCollect)
      assert.deepStrictEqual(events.map((event) => event.key), ["default/a", "default/b", "default/a", "default/b", "default/a"])
    }))
})
