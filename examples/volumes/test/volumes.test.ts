/**
 * The volumes example as a user meets it: its samples and rejected samples applied with kubectl to
 * the test cluster, which runs the controller and serves and registers the example's webhooks.
 */
import { assert, layer } from "@effect/vitest"
import { Kube } from "@kubefx/kube"
import { Await, TestCluster } from "@kubefx/testing"
import { Effect, References } from "effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { definition, resources, Volume, webhooks } from "../src/index.ts"

const cluster = TestCluster.layer({ resources, controllers: [definition], webhooks })

const sample = (name: string) => fileURLToPath(new URL(`../samples/${name}`, import.meta.url))

const kubectl = (...args: ReadonlyArray<string>) =>
  Effect.flatMap(TestCluster.TestCluster, ({ kubeconfigPath }) =>
    Effect.callback<{ readonly ok: boolean; readonly stdout: string; readonly stderr: string }>((resume) => {
      execFile("kubectl", ["--kubeconfig", kubeconfigPath, ...args], { timeout: 30_000 }, (error, stdout, stderr) =>
        resume(Effect.succeed({ ok: error === null, stdout, stderr })))
    }))

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("volumes", (it) => {
  it.effect("the samples apply in both versions, are mutated and reconciled in v2, and read back converted to v1", () =>
    Effect.gen(function*() {
      const applied = yield* kubectl("apply", "-f", sample("volumes.yaml"))
      assert.isTrue(applied.ok, applied.stderr)
      assert.include(applied.stdout, "volume.demo.kubefx.dev/data created")
      assert.include(applied.stdout, "volume.demo.kubefx.dev/legacy created")
      const data = yield* Await.condition(Volume, "data", "default", "Ready")
      assert.strictEqual(data.spec.storageClass, "standard")
      assert.strictEqual(data.status?.capacity, "20Gi")
      const legacy = yield* Await.condition(Volume, "legacy", "default", "Ready")
      assert.deepStrictEqual(legacy.spec, { size: { value: 512, unit: "Mi" }, replicas: 1, storageClass: "fast", accessModes: ["ReadWriteOnce"] })
      const asV1 = yield* kubectl("get", "volumes.v1.demo.kubefx.dev", "legacy", "-o", "json")
      assert.isTrue(asV1.ok, asV1.stderr)
      // v1 is deprecated: every answer from it carries the warning, which kubectl prints.
      assert.include(asV1.stderr, "Warning: demo.kubefx.dev/v1 Volume is deprecated; use demo.kubefx.dev/v2")
      const v1 = JSON.parse(asV1.stdout) as { apiVersion: string; spec: unknown; status: { capacity: string } }
      assert.strictEqual(v1.apiVersion, "demo.kubefx.dev/v1")
      assert.deepStrictEqual(v1.spec, { size: "512Mi", storageClass: "fast", accessModes: ["ReadWriteOnce"] })
      assert.strictEqual(v1.status.capacity, "512Mi")
      const listed = yield* kubectl("get", "volumes")
      assert.match(listed.stdout, /^NAME\s+SIZE\s+CLASS\s+READY\s*$/m)
      assert.match(listed.stdout, /^data\s+20Gi\s+standard\s+True\s*$/m)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("each rejected sample is refused with the message of the rule or webhook that refuses it", () =>
    Effect.gen(function*() {
      const refusals: ReadonlyArray<readonly [string, string]> = [
        ["too-big.yaml", 'The Volume "too-big" is invalid: spec: Invalid value: "object": a volume holds at most 100Gi, not 500Gi'],
        ["modes-twice.yaml", 'spec.accessModes: Invalid value: "array": access modes are listed once: ReadOnlyMany, ReadOnlyMany'],
        ["rwo-replicas.yaml", 'admission webhook "vvolume.demo.kubefx.dev" denied the request: a ReadWriteOnce volume has one replica, not 3'],
        ["class-change.yaml", "spec.storageClass: Forbidden: storageClass is immutable"]
      ]
      yield* kubectl("apply", "-f", sample("volumes.yaml"))
      for (const [file, message] of refusals) {
        const result = yield* kubectl("apply", "-f", sample(`rejected/${file}`))
        assert.isFalse(result.ok, `${file} was accepted`)
        assert.include(result.stderr, message, file)
      }
      const deleted = yield* kubectl("delete", "volume", "data", "-n", "default")
      assert.isFalse(deleted.ok)
      assert.include(deleted.stderr, 'admission webhook "vvolume.demo.kubefx.dev" denied the request: volume data is protected')
      const kube = yield* Kube.Kube
      assert.strictEqual((yield* kube.get(Volume, "data", "default")).metadata.name, "data")
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
