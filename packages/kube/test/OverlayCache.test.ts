import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Informer, Kube, ObjectMeta, OverlayCache, Resource } from "@kubefx/kube"
import { Effect, Ref, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace, TestCluster } from "./support.ts"

const Claim = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Claim",
  plural: "claims",
  spec: Schema.Struct({ size: Schema.Int }),
  status: Schema.Struct({ allocatedId: Schema.optionalKey(Schema.String), seenSize: Schema.optionalKey(Schema.Int) })
})
type Claim = typeof Claim.schema.Type

const claim = (ns: string, name: string, size = 1): Claim => ({
  apiVersion: Claim.apiVersion,
  kind: Claim.kind,
  metadata: { name, namespace: ns },
  spec: { size }
})

/** A fresh namespace with the Claim CRD, a synced informer of its Claims, and an overlay over it. */
const claims = (options: OverlayCache.Options<Claim>) =>
  Effect.gen(function*() {
    yield* installCrd(Claim)
    const ns = yield* namespace
    const kube = yield* Kube.Kube
    const informer = yield* Informer.make(Claim, { namespace: ns })
    const overlay = yield* OverlayCache.make(informer, options)
    yield* informer.awaitSynced
    return { ns, kube, informer, overlay }
  })

// `awaitVersion` also passes for an object the cache does not hold (yet, after a create): wait for it.
const heldAt = (informer: Informer.Informer<Claim>, object: Claim) =>
  eventually(Effect.suspend(() =>
    ensure(
      informer.get(ObjectMeta.key(object))?.metadata.resourceVersion === object.metadata.resourceVersion,
      `${ObjectMeta.key(object)} not cached at ${object.metadata.resourceVersion}`
    )
  ))

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("OverlayCache", (it) => {
  it.effect("on a conflict waits for the informer, applies again on the newer version, and caches the result", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const { ns, kube, informer, overlay } = yield* claims({ fieldManager: "claims" })
      const original = yield* kube.create(Claim, claim(ns, "a"))
      const key = ObjectMeta.key(original)
      yield* heldAt(informer, original)

      // Someone else writes first: our lock on `original` is stale.
      const theirs = yield* kube.patch(Claim, "a", ns, { metadata: { labels: { touched: "yes" } } }, { type: "merge" })
      const bases: Array<string> = []
      const fresh = (latest: Claim) => {
        bases.push(latest.metadata.resourceVersion ?? "")
        return { metadata: { name: "a", namespace: ns }, status: { allocatedId: "id-1" } }
      }
      // The retry happens once the informer holds their version; pause delivery right after it does,
      // so the informer still holds the version we locked on when our write succeeds.
      yield* informer.awaitNewerThan(key, original.metadata.resourceVersion)
      server.faults.pauseWatches({ resource: "claims.test.kubefx.dev" })
      const updated = yield* overlay.patchStatusAndCache(original, fresh)
      assert.deepStrictEqual(bases, [original.metadata.resourceVersion, theirs.metadata.resourceVersion])
      assert.strictEqual(updated.status?.allocatedId, "id-1")
      assert.strictEqual(updated.metadata.labels?.touched, "yes")
      assert.strictEqual(yield* overlay.size, 1)
      assert.strictEqual((yield* overlay.get(key))?.status?.allocatedId, "id-1") // read-after-write
      assert.isUndefined(informer.get(key)?.status?.allocatedId) // the informer still lags
      // The overlay keeps the answer as the informer keeps objects: without managedFields.
      assert.isDefined(updated.metadata.managedFields)
      assert.isUndefined((yield* overlay.get(key))?.metadata.managedFields)

      server.faults.resumeWatches()
      yield* eventually(Effect.flatMap(overlay.size, (size) => ensure(size === 0, "not evicted")))
      assert.strictEqual((yield* overlay.get(key))?.status?.allocatedId, "id-1")
    }))

  it.effect("a conflict the server's copy does not explain (the object is unchanged) is applied again at once", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      // Waiting for the informer would outlast the test: nothing newer ever comes.
      const { ns, kube, informer, overlay } = yield* claims({ fieldManager: "claims", conflictWait: "1 hour" })
      const original = yield* kube.create(Claim, claim(ns, "spurious"))
      yield* heldAt(informer, original)
      // Every status write is answered 409 until the retry clears the fault.
      server.faults.set({ rules: [{ resource: "claims.test.kubefx.dev", verbs: ["patch"], conflictRate: 1 }] })
      const bases: Array<string> = []
      const updated = yield* overlay.patchStatusAndCache(original, (latest) => {
        bases.push(latest.metadata.resourceVersion ?? "")
        if (bases.length > 1) server.faults.clear()
        return { metadata: { name: "spurious", namespace: ns }, status: { allocatedId: "id-1" } }
      }).pipe(Effect.ensuring(Effect.sync(() => server.faults.clear())))
      assert.deepStrictEqual(bases, [original.metadata.resourceVersion, original.metadata.resourceVersion])
      assert.strictEqual(updated.status?.allocatedId, "id-1")
      assert.strictEqual((yield* overlay.get(ObjectMeta.key(original)))?.status?.allocatedId, "id-1")
    }))

  it.effect("keeps its writes through the transform it is given, the one its informer caches with", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const marked = (object: Claim): Claim => ({ ...object, metadata: { ...object.metadata, labels: { ...object.metadata.labels, kept: "transformed" } } })
      const { ns, kube, informer, overlay } = yield* claims({ fieldManager: "claims", transform: marked })
      const original = yield* kube.create(Claim, claim(ns, "t"))
      yield* heldAt(informer, original)
      server.faults.pauseWatches({ resource: "claims.test.kubefx.dev" })
      const updated = yield* overlay.patchStatusAndCache(original, { metadata: { name: "t", namespace: ns }, status: { allocatedId: "id-t" } })
      const kept = yield* overlay.get(ObjectMeta.key(original))
      server.faults.resumeWatches()
      assert.isUndefined(updated.metadata.labels?.kept) // what the write answered is the caller's, as it came
      assert.strictEqual(kept?.status?.allocatedId, "id-t")
      assert.strictEqual(kept?.metadata.labels?.kept, "transformed")
      assert.isDefined(kept?.metadata.managedFields) // this transform keeps them
    }))

  const allocations = (useOverlay: boolean) =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return undefined
      yield* installCrd(Claim)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const allocated = yield* Ref.make<Array<string>>([])
      const claimsWatch = { resource: "claims.test.kubefx.dev", namespace: ns }
      const names = ["a", "b", "c", "d", "e"]
      for (const name of names) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns } })
        yield* kube.create(Claim, claim(ns, name))
      }
      // The controller starts from a complete list; its first run stalls the claims' watch.
      const controller = yield* Controller.start(Controller.define({
        name: `claims-${useOverlay ? "overlay" : "plain"}`,
        for: Claim,
        namespace: ns,
        concurrency: 4,
        // The controller also remembers its Ready writes; without them the overlay is the only
        // read-after-write, which the control run leaves out.
        // A related object whose changes reconcile the claim of the same name.
        watches: [Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)])],
        reconcile: (object, ctx) =>
          Effect.gen(function*() {
            if (object.status?.allocatedId !== undefined) return Outcome.done
            // The informer lags from here on: the claims' watch delivers nothing.
            server.faults.pauseWatches(claimsWatch)
            yield* Effect.sleep("20 millis") // the external allocation takes a while
            const id = `bucket-${(yield* Ref.updateAndGet(allocated, (xs) => [...xs, object.metadata.uid])).length}`
            const status = { metadata: { name: object.metadata.name, namespace: ns }, status: { allocatedId: id } }
            if (useOverlay) yield* ctx.patchStatusAndCache(status)
            else yield* kube.apply(Claim, status, { fieldManager: "claims", subresource: "status", force: true })
            return Outcome.done
          })
      }))
      yield* eventually(Effect.flatMap(Ref.get(allocated), (xs) => ensure(new Set(xs).size === names.length, "not all allocated")))
      // A burst of events while the claims' watch is stalled: label and spec changes of the claims
      // (held by the server) and changes of the related ConfigMaps (delivered, so they reconcile).
      for (let round = 1; round <= 3; round++) {
        for (const name of names) {
          yield* kube.patch(Claim, name, ns, { metadata: { labels: { round: `${round}` } }, spec: { size: round + 1 } }, { type: "merge" })
          yield* kube.patch(Builtins.ConfigMap, name, ns, { metadata: { labels: { round: `${round}` } } }, { type: "merge" })
        }
      }
      // Each claim's ConfigMap changes reconcile it at least once more before the watch resumes.
      yield* eventually(Effect.flatMap(controller.health, (health) => ensure(health.total >= 2 * names.length, "burst not reconciled")))
      yield* controller.awaitIdle
      server.faults.resumeWatches()
      // Everything settles on the latest spec, each claim with one allocated id in status.
      yield* eventually(Effect.flatMap(kube.list(Claim, { namespace: ns }), (list) =>
        ensure(list.items.every((item) => item.status?.allocatedId !== undefined), "status not written")))
      const uids = yield* Ref.get(allocated)
      return { allocations: uids.length, claims: new Set(uids).size }
    })

  it.effect("with the overlay, a stalled watch and a burst of events allocate exactly once per object", () =>
    Effect.gen(function*() {
      const result = yield* allocations(true)
      if (result === undefined) return
      assert.deepStrictEqual(result, { allocations: 5, claims: 5 })
    }))

  it.effect("without it, the same burst allocates again from the stale cache (the test proves the mechanism)", () =>
    Effect.gen(function*() {
      const result = yield* allocations(false)
      if (result === undefined) return
      assert.strictEqual(result.claims, 5)
      assert.isAbove(result.allocations, 5)
    }))
})
