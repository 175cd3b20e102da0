import { assert, describe, it as plain, layer } from "@effect/vitest"
import { createHash } from "node:crypto"
import { Outcome, RetryPolicy } from "@kubefx/core"
import { Builtins, Conditions, Controller, Dependent, Kube, Resource } from "@kubefx/kube"
import { Effect, Ref, References, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const Holder = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Holder",
  plural: "holders",
  spec: Schema.Struct({
    mode: Schema.Literals(["apply", "remove"]),
    data: Schema.Record(Schema.String, Schema.String),
    namespace: Schema.optionalKey(Schema.String)
  }),
  status: Schema.Struct({ conditions: Schema.optionalKey(Conditions.Conditions) })
})
type Holder = typeof Holder.schema.Type

const holder = (ns: string, name: string, spec: Holder["spec"]): Holder => ({
  apiVersion: Holder.apiVersion,
  kind: Holder.kind,
  metadata: { name, namespace: ns },
  spec
})

const config = Dependent.make({
  name: "config",
  resource: Builtins.ConfigMap,
  desired: (primary: Holder) => ({
    metadata: { name: `${primary.metadata.name}-config`, ...(primary.spec.namespace === undefined ? {} : { namespace: primary.spec.namespace }) },
    data: primary.spec.data
  })
})

type Run = { readonly applied: boolean; readonly version: string | undefined } | { readonly gone: boolean }

const runsOf = (runs: Ref.Ref<Array<[string, Run]>>, name: string) =>
  Effect.map(Ref.get(runs), (xs) => xs.filter(([holder]) => holder === name).map(([, run]) => run))

/** A controller that reconciles or removes a dependent (`config` unless told) per the Holder's mode, recording each answer. */
const probe = (
  name: string,
  ns: string,
  runs: Ref.Ref<Array<[string, Run]>>,
  options: { readonly owns?: boolean; readonly dependent?: Dependent.Dependent<Holder, Builtins.ConfigMap, unknown> } = {}
) =>
  Controller.start(Controller.define({
    name,
    for: Holder,
    namespace: ns,
    owns: options.owns === false ? [] : [Builtins.ConfigMap],
    retryPolicy: RetryPolicy.none,
    reconcile: (primary, ctx) =>
      (primary.spec.mode === "apply"
        ? Effect.map(Dependent.reconcile(options.dependent ?? config, primary, ctx), (r): Run => ({ applied: r.applied, version: r.actual.metadata.resourceVersion }))
        : Effect.map(Dependent.remove(options.dependent ?? config, primary, ctx), (gone): Run => ({ gone }))).pipe(
          Effect.tap((run) => Ref.update(runs, (xs) => [...xs, [primary.metadata.name ?? "", run] as [string, Run]])),
          Effect.as(Outcome.done)
        )
  })).pipe(Effect.provideService(References.MinimumLogLevel, "None"))

/** The `count`th run for the Holder `name`, once it happened. */
const nthRun = (runs: Ref.Ref<Array<[string, Run]>>, name: string, count: number) =>
  eventually(Effect.flatMap(runsOf(runs, name), (xs) => xs.length >= count ? Effect.succeed(xs[count - 1]!) : Effect.fail(new Error(`${xs.length} runs`))))

const relabel = (ns: string, name: string, value: string) =>
  Effect.flatMap(Kube.Kube, (kube) => kube.patch(Holder, name, ns, { metadata: { labels: { poke: value } } }, { type: "merge" }))

/** The Holder CRD installed, a fresh namespace, the client, and an empty record of runs. */
const setup = Effect.gen(function*() {
  yield* installCrd(Holder)
  return { ns: yield* namespace, kube: yield* Kube.Kube, runs: yield* Ref.make<Array<[string, Run]>>([]) }
})

/** The message of the Holder's Ready condition once it says False. */
const failureOf = (ns: string, name: string) =>
  Effect.flatMap(Kube.Kube, (kube) =>
    eventually(Effect.flatMap(kube.get(Holder, name, ns), (object) => {
      const ready = object.status?.conditions?.find((c) => c.type === "Ready")
      return ready?.status === "False" ? Effect.succeed(ready.message) : Effect.fail(new Error("not failed yet"))
    })))

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Dependent on the API server", (it) => {
  it.effect("applies an owned object once; writes again only for a changed desired object or a hand edit", () =>
    Effect.gen(function*() {
      const { kube, ns, runs } = yield* setup
      yield* probe("holders-apply", ns, runs)
      const created = yield* kube.create(Holder, holder(ns, "a", { mode: "apply", data: { a: "1", b: "2" } }))
      assert.deepInclude(yield* nthRun(runs, "a", 1), { applied: true })
      const applied = yield* kube.get(Builtins.ConfigMap, "a-config", ns)
      assert.deepStrictEqual(applied.data, { a: "1", b: "2" })
      assert.deepStrictEqual(applied.metadata.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [["Holder", created.metadata.uid, true]])
      assert.match(applied.metadata.annotations?.[Dependent.appliedDigestAnnotation] ?? "", /^[0-9a-f]{16}$/)

      // Nothing changed: read from the cache, no write.
      yield* relabel(ns, "a", "1")
      const unchanged = yield* nthRun(runs, "a", 2)
      assert.deepStrictEqual(unchanged, { applied: false, version: applied.metadata.resourceVersion })

      // A hand edit of an owned field is reverted by the next run.
      yield* kube.patch(Builtins.ConfigMap, "a-config", ns, { data: { a: "edited" } }, { type: "merge", fieldManager: "kubectl-edit" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "a-config", ns), (cm) => ensure(cm.data?.a === "1", `a is ${cm.data?.a}`)))

      // A field dropped from the desired object is removed, though the rest still matches.
      yield* kube.patch(Holder, "a", ns, [{ op: "remove", path: "/spec/data/b" }], { type: "json" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "a-config", ns), (cm) =>
        ensure(cm.data?.b === undefined && cm.data?.a === "1", JSON.stringify(cm.data))))
    }))

  it.effect("removes the object it controls, leaves one controlled by another owner, and reports completion from the cache", () =>
    Effect.gen(function*() {
      const { kube, ns, runs } = yield* setup
      yield* probe("holders-remove", ns, runs)
      yield* kube.create(Holder, holder(ns, "r", { mode: "apply", data: { a: "1" } }))
      yield* eventually(kube.get(Builtins.ConfigMap, "r-config", ns))
      yield* kube.patch(Holder, "r", ns, { spec: { mode: "remove" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Effect.flip(kube.get(Builtins.ConfigMap, "r-config", ns)), (e) => ensure(e._tag === "NotFound", e._tag)))
      // The delete's own run still sees the object in the cache; the deletion event brings a run that does not.
      yield* eventually(Effect.flatMap(runsOf(runs, "r"), (xs) => ensure(JSON.stringify(xs.at(-1)) === JSON.stringify({ gone: true }), JSON.stringify(xs))))

      // Someone else's ConfigMap of the same name is not this dependent's to delete.
      const other = yield* kube.create(Holder, holder(ns, "other", { mode: "apply", data: {} }))
      yield* kube.create(Builtins.ConfigMap, {
        metadata: {
          name: "s-config",
          namespace: ns,
          ownerReferences: [{ apiVersion: Holder.apiVersion, kind: "Holder", name: "other", uid: other.metadata.uid ?? "", controller: true }]
        },
        data: { keep: "me" }
      })
      yield* kube.create(Holder, holder(ns, "s", { mode: "remove", data: {} }))
      assert.deepStrictEqual(yield* nthRun(runs, "s", 1), { gone: true })
      yield* relabel(ns, "s", "again")
      assert.deepStrictEqual(yield* nthRun(runs, "s", 2), { gone: true })
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "s-config", ns)).data, { keep: "me" })
    }))

  it.effect("a non-owned dependent is applied without an owner, and its cleanup and delete postcondition replace the DELETE", () =>
    Effect.gen(function*() {
      const { kube, ns, runs } = yield* setup
      // Shared with others: released (unlabelled) rather than deleted.
      const shared = Dependent.make({
        name: "shared",
        resource: Builtins.ConfigMap,
        owned: false,
        desired: (primary: Holder) => ({
          metadata: { name: `${primary.metadata.name}-shared`, labels: { holder: primary.metadata.name ?? "" } },
          data: primary.spec.data
        }),
        cleanup: (actual, _primary, ctx) =>
          Effect.asVoid(ctx.kube.patch(Builtins.ConfigMap, actual.metadata.name ?? "", actual.metadata.namespace, {
            metadata: { labels: { holder: null } }
          }, { type: "merge" })),
        deleteWhen: (actual) => actual?.metadata.labels?.holder === undefined
      })
      yield* probe("holders-shared", ns, runs, { dependent: shared })
      yield* kube.create(Holder, holder(ns, "h", { mode: "apply", data: { a: "1" } }))
      assert.deepInclude(yield* nthRun(runs, "h", 1), { applied: true })
      const applied = yield* kube.get(Builtins.ConfigMap, "h-shared", ns)
      assert.isUndefined(applied.metadata.ownerReferences)
      assert.strictEqual(applied.metadata.labels?.holder, "h")

      yield* kube.patch(Holder, "h", ns, { spec: { mode: "remove" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "h-shared", ns), (cm) =>
        ensure(cm.metadata.labels?.holder === undefined, "still labelled")))
      // Its events do not come back to the Holder (no owner): poke it until a run sees the release.
      let pokes = 0
      yield* eventually(Effect.gen(function*() {
        yield* relabel(ns, "h", `${++pokes}`)
        const last = (yield* runsOf(runs, "h")).at(-1)
        yield* ensure(JSON.stringify(last) === JSON.stringify({ gone: true }), JSON.stringify(last))
      }), "10 seconds")
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "h-shared", ns)).data, { a: "1" })
    }))

  it.effect("a dependent whose kind the controller does not cache, or that it cannot own, fails with a clear message", () =>
    Effect.gen(function*() {
      const { kube, ns, runs } = yield* setup
      yield* probe("holders-uncached", ns, runs, { owns: false })
      yield* kube.create(Holder, holder(ns, "u", { mode: "apply", data: {} }))
      assert.strictEqual(yield* failureOf(ns, "u"), "dependent config: the controller has no cache of ConfigMap; add it to the controller's owns (or watches)")
    }))

  it.effect("an owned dependent in another namespace than its primary is refused", () =>
    Effect.gen(function*() {
      const { kube, ns, runs } = yield* setup
      yield* probe("holders-elsewhere", ns, runs)
      yield* kube.create(Holder, holder(ns, "x", { mode: "apply", data: {}, namespace: "default" }))
      assert.strictEqual(yield* failureOf(ns, "x"), "dependent config: ConfigMap x-config cannot be owned by a Holder in another namespace; declare it with owned: false")
      assert.deepStrictEqual(yield* Ref.get(runs), [])
    }))
})

describe("Dependent", () => {
  plain("contains compares desired fields only, arrays element by element", () => {
    assert.isTrue(Dependent.contains({ spec: { ports: [{ port: 80, protocol: "TCP" }], clusterIP: "10.0.0.1" } }, { spec: { ports: [{ port: 80 }] } }))
    assert.isFalse(Dependent.contains({ spec: { ports: [{ port: 80 }, { port: 81 }] } }, { spec: { ports: [{ port: 80 }] } }))
    assert.isFalse(Dependent.contains({ data: {} }, { data: { a: "1" } }))
    assert.isFalse(Dependent.contains({ replicas: "1" }, { replicas: 1 }))
    assert.isTrue(Dependent.contains({ a: 1 }, { a: 1, b: undefined }))
  })

  plain("contains takes an absent field for an empty map, an empty list or null, as the server stores them", () => {
    const stored = { metadata: { name: "a" }, spec: { containers: [{ name: "c" }] } }
    assert.isTrue(Dependent.contains(stored, { metadata: { name: "a", labels: {}, finalizers: [] }, spec: { tolerations: [], affinity: null } }))
    assert.isTrue(Dependent.contains(stored, { spec: { containers: [{ name: "c", env: [] }] } }))
    // Only absence: a value that is there must match, and a zero scalar is not taken for an absent field.
    assert.isFalse(Dependent.contains({ spec: { tolerations: [{ key: "k" }] } }, { spec: { tolerations: [] } }))
    assert.isFalse(Dependent.contains(stored, { spec: { hostNetwork: false } }))
    assert.isFalse(Dependent.contains(stored, { metadata: { labels: { app: "a" } } }))
  })

  plain("contains takes a quantity of requests, limits or a quota's hard for its canonical form, as the server stores it", () => {
    const stored = { spec: { containers: [{ name: "c", resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "1" } } }] } }
    const desired = (requests: Record<string, unknown>, limits: Record<string, unknown> = { cpu: "1000m" }) =>
      ({ spec: { containers: [{ name: "c", resources: { requests, limits } }] } })
    assert.isTrue(Dependent.contains(stored, desired({ cpu: "0.5", memory: "1024Mi" })))
    assert.isTrue(Dependent.contains(stored, desired({ cpu: 0.5 }, { cpu: 1 })))
    // Another value, or another spelling of another value, is a change.
    assert.isFalse(Dependent.contains(stored, desired({ cpu: "0.6" })))
    assert.isFalse(Dependent.contains(stored, desired({ memory: "1G" })))
    assert.isTrue(Dependent.contains({ spec: { hard: { pods: "10", "requests.cpu": "2" } } }, { spec: { hard: { "requests.cpu": "2000m" } } }))
    // Elsewhere a string is held only by itself.
    assert.isFalse(Dependent.contains({ data: { size: "1k" } }, { data: { size: "1000" } }))
  })

  plain("digest ignores key order and undefined fields", () => {
    assert.strictEqual(Dependent.digest({ a: 1, b: { c: [1, 2] } }), Dependent.digest({ b: { c: [1, 2] }, a: 1, d: undefined }))
    assert.notStrictEqual(Dependent.digest({ a: [1, 2] }), Dependent.digest({ a: [2, 1] }))
  })

  plain("digest hashes the sorted-key JSON of the object, whatever its strings hold", () => {
    // The digests already in objects' annotations were made this way: a different text would
    // apply every converged object once more after an upgrade.
    const sortedJson = (value: unknown): string =>
      JSON.stringify(value, (_, field) =>
        typeof field === "object" && field !== null && !Array.isArray(field)
          ? Object.fromEntries(Object.keys(field).sort().map((key) => [key, field[key]]))
          : field)
    const sha = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16)
    const tricky = {
      metadata: { name: "web", labels: { "app.kubernetes.io/name": "web" }, annotations: { "q\"uote": "back\\slash", tab: "a\tb" } },
      data: { "é": "ünïcödé ☃", nul: "\u0000", del: "\u007f", lone: "\ud800", n: 1.5, t: true, z: null, list: ["x", { b: 2, a: 1 }] }
    }
    assert.strictEqual(Dependent.digest(tricky), sha(sortedJson(tricky)))
  })

  plain("digest is unchanged for any value: keys sorted by UTF-16 code units, digit keys and __proto__ too", () => {
    // The text digests were made from before they were written natively: each object's keys sorted
    // by UTF-16 code units, undefined fields left out, functions and symbols written as null.
    const reference = (value: unknown): string => {
      if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
      if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`
      const record = value as Record<string, unknown>
      const fields = Object.keys(record).sort().filter((key) => record[key] !== undefined)
      return `{${fields.map((key) => `${JSON.stringify(key)}:${reference(record[key])}`).join(",")}}`
    }
    const sha = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16)
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
    const keys = ["a", "b", "Z", "é", "10", "2", "0", "1a", "__proto__", "toJSON", "q\"uote", "", "app.kubernetes.io/name"]
    const leaves = [1.5, -0, 1e21, NaN, true, null, undefined, "x", "ünï\u0000\ud800", () => 1, Symbol("s"), new Date(0)]
    const arbitrary = (depth: number): unknown => {
      const pick = next()
      if (depth === 0 || pick < 0.35) return leaves[Math.floor(next() * leaves.length)]
      if (pick < 0.55) return Array.from({ length: Math.floor(next() * 4) }, () => arbitrary(depth - 1))
      const record: Record<string, unknown> = JSON.parse("{}")
      for (let i = Math.floor(next() * 5); i > 0; i--) {
        Object.defineProperty(record, keys[Math.floor(next() * keys.length)]!, { value: arbitrary(depth - 1), enumerable: true, configurable: true, writable: true })
      }
      return record
    }
    for (let i = 0; i < 2000; i++) {
      const value = arbitrary(4)
      assert.strictEqual(Dependent.digest(value), sha(reference(value)), reference(value))
    }
  })

  plain("deploymentReady follows kubectl rollout status", () => {
    const deployment = (generation: number, status?: NonNullable<Builtins.Deployment["status"]>): Builtins.Deployment => ({
      metadata: { name: "d", generation },
      spec: { replicas: 3, selector: {}, template: {} },
      ...(status === undefined ? {} : { status })
    })
    const done = { observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 }
    assert.isTrue(Dependent.deploymentReady(deployment(2, done)))
    assert.isFalse(Dependent.deploymentReady(deployment(3, done)), "generation not observed")
    assert.isFalse(Dependent.deploymentReady(deployment(2, { ...done, updatedReplicas: 2 })), "rollout in progress")
    assert.isFalse(Dependent.deploymentReady(deployment(2, { ...done, replicas: 4 })), "old replicas left")
    assert.isFalse(Dependent.deploymentReady(deployment(2, { ...done, availableReplicas: 2 })), "not all available")
    assert.isFalse(Dependent.deploymentReady(deployment(1)))
  })

  plain("statefulSetReady needs every replica ready, and those at or above the partition updated", () => {
    const statefulSet = (status: NonNullable<Builtins.StatefulSet["status"]>): Builtins.StatefulSet => ({
      metadata: { name: "s", generation: 1 },
      spec: { replicas: 2, selector: {}, template: {} },
      status
    })
    assert.isTrue(Dependent.statefulSetReady(statefulSet({ observedGeneration: 1, readyReplicas: 2, updatedReplicas: 2 })))
    assert.isFalse(Dependent.statefulSetReady(statefulSet({ observedGeneration: 1, readyReplicas: 1, updatedReplicas: 2 })))
    assert.isFalse(Dependent.statefulSetReady(statefulSet({ observedGeneration: 0, readyReplicas: 2, updatedReplicas: 2 })))
    // A partitioned rollout is done once the replicas at or above the partition are updated.
    const partitioned = (partition: number, updatedReplicas: number): Builtins.StatefulSet => ({
      ...statefulSet({ observedGeneration: 1, readyReplicas: 2, updatedReplicas }),
      spec: { replicas: 2, selector: {}, template: {}, updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition } } }
    })
    assert.isTrue(Dependent.statefulSetReady(partitioned(1, 1)))
    assert.isFalse(Dependent.statefulSetReady(partitioned(0, 1)))
  })
})
