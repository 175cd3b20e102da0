/**
 * A custom resource with two versions: v2 (what the controller reconciles) and v1 (stored, and
 * what older clients write), converted by the operator's conversion webhook through Schema
 * transformations; the embedded API server calls it for every read, list, watch and write.
 */
import { assert, layer } from "@effect/vitest"
import { Certificate } from "@kubefx/apiserver"
import { Outcome } from "@kubefx/core"
import { Controller, Crd, Kube, Operator, Resource, Webhook } from "@kubefx/kube"
import { Effect, Metric, References, Schema } from "effect"
import { eventually, ensure, layer as cluster, namespace } from "./support.ts"

const Size = Schema.Struct({ value: Schema.Int, unit: Schema.Literals(["Gi", "Mi"]) })

/** v2, the hub: what the controller reads. */
const StoreV2 = Resource.custom({
  group: "versions.kubefx.dev",
  version: "v2",
  kind: "Store",
  plural: "stores",
  spec: Schema.Struct({ size: Size, replicas: Schema.Int })
})

/** v1 kept the size as one string ("10Gi") and had no replicas (v2 defaults them to 1). */
const v1 = Resource.version(StoreV2, {
  name: "v1",
  spec: Schema.Struct({ size: Schema.String, replicas: Schema.optionalKey(Schema.Int) }),
  deprecationWarning: "versions.kubefx.dev/v1 Store is deprecated; use v2",
  conversion: {
    decode: (old) => {
      const match = /^(\d+)(Gi|Mi)$/.exec(old.spec.size)
      if (match === null) throw new Error(`size ${old.spec.size} is not a number of Gi or Mi`)
      return {
        spec: {
          size: { value: Number(match[1]), unit: match[2] === "Mi" ? "Mi" as const : "Gi" as const },
          replicas: old.spec.replicas ?? 1
        }
      }
    },
    encode: (hub) => ({ spec: { size: `${hub.spec.size.value}${hub.spec.size.unit}`, replicas: hub.spec.replicas } })
  }
})

const Store = Resource.withVersions(StoreV2, { versions: [v1], storage: "v1" })

const certificate = Certificate.selfSigned(["127.0.0.1"])

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("versions", (it) => {
  it.effect("objects written in v1 are reconciled in v2, read back in either version, and round-trip losslessly", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const ns = yield* namespace
      const crd = Crd.make(Store)
      assert.deepStrictEqual(crd.spec.versions.map((v) => [v.name, v.storage, v.deprecated ?? false]), [["v2", false, false], ["v1", true, true]])
      assert.strictEqual(crd.spec.conversion, undefined)

      const seen: Array<typeof Store.schema.Type["spec"]> = []
      const running = yield* Operator.start(Operator.make({
        name: "stores",
        http: false,
        webhooks: { handlers: [Webhook.conversion(Store)], port: 0, tls: certificate },
        controllers: [Controller.define({
          name: "stores",
          for: Store,
          namespace: ns,
          reconcile: (store) => Effect.sync(() => seen.push(store.spec)).pipe(Effect.as(Outcome.done))
        })]
      })).pipe(
        Effect.provideService(Metric.MetricRegistry, new Map()),
        // The CRD must serve before the controller lists; its conversion points at the webhook server.
        Effect.tap((started) =>
          Crd.install([Store], { conversion: { url: `${started.webhookUrl}/convert`, caBundle: Buffer.from(certificate.cert).toString("base64") } }))
      )
      assert.isDefined(running.webhookUrl)

      // An older client writes v1; the controller sees v2.
      const v1Path = `/apis/versions.kubefx.dev/v1/namespaces/${ns}/stores`
      yield* kube.request({ method: "POST", path: v1Path, body: { apiVersion: "versions.kubefx.dev/v1", kind: "Store", metadata: { name: "legacy" }, spec: { size: "10Gi" } } })
      yield* eventually(Effect.suspend(() => ensure(seen.length > 0, "not reconciled yet")))
      assert.deepStrictEqual(seen[0], { size: { value: 10, unit: "Gi" }, replicas: 1 })

      // The typed client reads v2; the v1 endpoint reads what is stored.
      const read = yield* kube.get(Store, "legacy", ns)
      assert.deepStrictEqual(read.spec, { size: { value: 10, unit: "Gi" }, replicas: 1 })
      const stored = (yield* kube.request({ method: "GET", path: `${v1Path}/legacy` })) as { spec: unknown }
      assert.deepStrictEqual(stored.spec, { size: "10Gi" })

      // A v2 write goes back to v1 storage and reads the same through either version.
      const updated = yield* kube.replace(Store, { ...read, spec: { size: { value: 512, unit: "Mi" }, replicas: 3 } })
      assert.deepStrictEqual(updated.spec, { size: { value: 512, unit: "Mi" }, replicas: 3 })
      assert.deepStrictEqual(((yield* kube.request({ method: "GET", path: `${v1Path}/legacy` })) as { spec: unknown }).spec, { size: "512Mi", replicas: 3 })
      assert.deepStrictEqual((yield* kube.get(Store, "legacy", ns)).spec, updated.spec)
      yield* eventually(Effect.suspend(() => ensure(seen.some((s) => s.replicas === 3), "the update was not reconciled")))

      // A stored v1 object the conversion cannot read fails reads in v2 with the webhook's message.
      yield* kube.request({ method: "POST", path: v1Path, body: { apiVersion: "versions.kubefx.dev/v1", kind: "Store", metadata: { name: "odd" }, spec: { size: "lots" } } })
      const unreadable = yield* Effect.flip(kube.get(Store, "odd", ns))
      assert.strictEqual(unreadable.message, "conversion webhook for versions.kubefx.dev/v1, Kind=Store failed: response.result.status was 'Failure', not 'Success': size lots is not a number of Gi or Mi")
      yield* running.shutdown
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
