/**
 * A watch answer's read holding many events (the API server sends what it has together under load)
 * is read as one batch, and still as if line by line: what an undecodable object or an ERROR event
 * does happens after the events before it have reached the consumer, never before, and nothing after
 * an ERROR is delivered. The server here is a fake undici dispatcher answering with fixed reads.
 */
import { assert, describe, it } from "@effect/vitest"
import { Informer, Kube, Resource } from "@kubefx/kube"
import { Effect, Exit, Ref, Schema, Stream } from "effect"
import type * as Undici from "undici"

const Meter = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Meter",
  plural: "meters",
  spec: Schema.Struct({ size: Schema.Int })
})

const meter = (name: string, version: number, size: number) => ({
  apiVersion: Meter.apiVersion,
  kind: "Meter",
  metadata: { name, namespace: "default", resourceVersion: String(version) },
  spec: { size }
})

const line = (type: string, object: unknown) => JSON.stringify({ type, object })

// Answers a list with no items at version 1, and a watch with `reads`, each one `onResponseData`,
// then keeps the watch open.
const serving = (reads: ReadonlyArray<ReadonlyArray<string>>): Undici.Dispatcher => {
  const dispatcher = {
    dispatch: (options: Undici.Dispatcher.DispatchOptions, handler: Undici.Dispatcher.DispatchHandler) => {
      const controller = { pause() {}, resume() {}, abort() {}, paused: false, aborted: false, reason: null }
      handler.onRequestStart?.(controller as never, {})
      setImmediate(() => {
        handler.onResponseStart?.(controller as never, 200, { "content-type": "application/json" }, "OK")
        if (!String(options.path).includes("watch=true")) {
          handler.onResponseData?.(controller as never, Buffer.from(JSON.stringify({ kind: "MeterList", items: [], metadata: { resourceVersion: "1" } })))
          handler.onResponseEnd?.(controller as never, {})
          return
        }
        for (const read of reads) handler.onResponseData?.(controller as never, Buffer.from(read.map((l) => l + "\n").join("")))
      })
      return true
    },
    close: () => Promise.resolve(),
    destroy: () => Promise.resolve()
  }
  return dispatcher as unknown as Undici.Dispatcher
}

const client = (reads: ReadonlyArray<ReadonlyArray<string>>) =>
  Kube.make({ server: "https://127.0.0.1:1", dispatcher: serving(reads), headers: Effect.succeed({}) })

describe("a watch read of many events", () => {
  it.effect("tells of an undecodable object after the events before it reached the consumer, in one read", () =>
    Effect.gen(function*() {
      const log = yield* Ref.make<Array<string>>([])
      const record = (entry: string) => Ref.update(log, (entries) => [...entries, entry])
      const kube = yield* client([[
        line("ADDED", meter("a", 2, 1)),
        line("MODIFIED", meter("a", 3, 1.5)),
        line("ADDED", meter("b", 4, 2)),
        line("BOOKMARK", { metadata: { resourceVersion: "5" } })
      ]])
      yield* kube.watch(Meter, {
        resourceVersion: "1",
        onUndecodable: (object) => record(`undecodable ${(object as { metadata: { resourceVersion: string } }).metadata.resourceVersion}`)
      }).pipe(
        Stream.take(3),
        Stream.runForEach((event) =>
          record(event.type === "BOOKMARK" ? `bookmark ${event.resourceVersion}` : `${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}`))
      )
      assert.deepStrictEqual(yield* Ref.get(log), ["ADDED a 2", "undecodable 3", "ADDED b 4", "bookmark 5"])
    }).pipe(Effect.scoped))

  it.effect("delivers the events before an ERROR event and nothing after it, then fails with its status", () =>
    Effect.gen(function*() {
      const kube = yield* client([[
        line("ADDED", meter("a", 2, 1)),
        line("ERROR", { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Expired", code: 410, message: "too old resource version" }),
        line("ADDED", meter("c", 3, 1))
      ]])
      const seen: Array<string> = []
      const exit = yield* kube.watch(Meter, { resourceVersion: "1" }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event.type === "BOOKMARK" ? "bookmark" : event.object.metadata.name ?? ""))),
        Effect.exit
      )
      assert.deepStrictEqual(seen, ["a"])
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(String(exit.cause), "Gone")
    }).pipe(Effect.scoped))

  it.live("leaves the informer with the object's last state when it stops decoding within the read", () =>
    Effect.gen(function*() {
      const kube = yield* client([
        [line("ADDED", meter("a", 2, 1)), line("ADDED", meter("b", 3, 1)), line("MODIFIED", meter("a", 4, 1.5))],
        [line("MODIFIED", meter("b", 5, 7))]
      ])
      const informer = yield* Informer.make(Meter).pipe(Effect.provideService(Kube.Kube, kube))
      for (let i = 0; i < 500 && informer.get("default/b")?.metadata.resourceVersion !== "5"; i++) yield* Effect.sleep("10 millis")
      assert.strictEqual(informer.get("default/b")?.metadata.resourceVersion, "5")
      assert.isUndefined(informer.get("default/a"), "the undecodable version replaced the decoded one")
      // What is invalid now comes first on a new subscription.
      const invalid = yield* informer.validity.pipe(Stream.take(1), Stream.runCollect)
      assert.deepStrictEqual(invalid.map((entry) => [entry._tag, entry.key]), [["Invalid", "default/a"]])
      assert.strictEqual(informer.get("default/b")?.spec.size, 7)
    }).pipe(Effect.scoped))
})
