/**
 * resourceVersions are opaque: kubefx orders them only when both are decimal (as etcd-backed servers
 * and its own give them), and otherwise treats the order as unknown and trusts the informer. Before,
 * a version that is not a number compared as NaN and kept an overlay entry forever.
 */
import { assert, describe, it } from "@effect/vitest"
import { Builtins, type Informer, Kube, ObjectMeta, OverlayCache } from "@kubefx/kube"
import { Effect, Stream } from "effect"

const configMap = (resourceVersion: string, mode: string): Builtins.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "a", namespace: "default", resourceVersion },
  data: { mode }
})

// An informer holding one object, whose changes never come: enough for the overlay's reads.
const informerHolding = (object: Builtins.ConfigMap): Informer.Informer<Builtins.ConfigMap> => ({
  resource: Builtins.ConfigMap,
  get: (key) => (key === "default/a" ? object : undefined),
  list: () => [object],
  byIndex: () => [],
  ownedBy: () => [],
  keys: () => ["default/a"],
  size: () => 1,
  hasSynced: () => true,
  awaitSynced: Effect.void,
  failure: () => undefined,
  served: () => true,
  servedChanges: Stream.make(true),
  changes: Stream.never,
  validity: Stream.never,
  awaitNewerThan: () => Effect.void,
  awaitVersion: () => Effect.void
})

const overlayOver = (cached: Builtins.ConfigMap) =>
  OverlayCache.make(informerHolding(cached), { fieldManager: "test" }).pipe(
    Effect.provideService(Kube.Kube, {} as Kube.Kube["Service"])
  )

describe("ObjectMeta.compareVersions", () => {
  it("orders decimal versions as integers, without losing precision, and nothing else", () => {
    assert.isAbove(ObjectMeta.compareVersions("10", "9")!, 0)
    assert.isBelow(ObjectMeta.compareVersions("9", "10")!, 0)
    assert.strictEqual(ObjectMeta.compareVersions("42", "42"), 0)
    assert.isAbove(ObjectMeta.compareVersions("900719925474099300", "900719925474099299")!, 0)
    assert.strictEqual(ObjectMeta.compareVersions("b2", "a1"), undefined)
    assert.strictEqual(ObjectMeta.compareVersions("07", "7"), undefined)
    assert.strictEqual(ObjectMeta.compareVersions(undefined, "1"), undefined)
    assert.strictEqual(ObjectMeta.compareVersions("x", "x"), 0)
  })
})

describe("the overlay with versions it cannot order", () => {
  it.effect("keeps a write only when certainly newer than the informer's copy, and otherwise reads the informer's", () =>
    Effect.scoped(Effect.gen(function*() {
      const opaque = yield* overlayOver(configMap("a1", "informer"))
      yield* opaque.remember(configMap("b2", "mine"))
      assert.strictEqual(yield* opaque.size, 0)
      assert.strictEqual((yield* opaque.get("default/a"))?.data?.mode, "informer")

      const decimal = yield* overlayOver(configMap("7", "informer"))
      yield* decimal.remember(configMap("8", "mine"))
      assert.strictEqual(yield* decimal.size, 1)
      assert.strictEqual((yield* decimal.get("default/a"))?.data?.mode, "mine")
      yield* decimal.remember(configMap("6", "older"))
      assert.strictEqual((yield* decimal.get("default/a"))?.data?.mode, "mine")
    })))
})
