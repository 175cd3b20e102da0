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
})
