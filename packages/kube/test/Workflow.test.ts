import { assert, describe, expectTypeOf, it as plain, layer } from "@effect/vitest"
import { Outcome, ReconcileError, RetryPolicy } from "@kubefx/core"
import {
  Builtins,
  CacheSync,
  Conditions,
  Controller,
  Dependent,
  Informer,
  Kube,
  type KubeError,
  ObjectMeta,
  Resource,
  Workflow
} from "@kubefx/kube"
import { Cause, Context, Deferred, Effect, Ref, References, Schema, type Scope, Stream } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const Site = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Site",
  plural: "sites",
  spec: Schema.Struct({
    image: Schema.String,
    exposed: Schema.optionalKey(Schema.Boolean),
    monitored: Schema.optionalKey(Schema.Boolean),
    failWith: Schema.optionalKey(Schema.String)
  }),
  status: Schema.Struct({
    conditions: Schema.optionalKey(Conditions.Conditions),
    observedGeneration: Schema.optionalKey(Schema.Int)
  })
})
type Site = typeof Site.schema.Type

const site = (ns: string, name: string, spec: Site["spec"]): Site => ({
  apiVersion: Site.apiVersion,
  kind: Site.kind,
  metadata: { name, namespace: ns },
  spec
})

const nameOf = (primary: Site) => primary.metadata.name ?? ""
const labels = (primary: Site) => ({ app: nameOf(primary) })

const content = Dependent.make({
  name: "content",
  resource: Builtins.ConfigMap,
  desired: (primary: Site) => ({ metadata: { name: `${nameOf(primary)}-content` }, data: { image: primary.spec.image } })
})

const deployment = Dependent.make({
  name: "deployment",
  resource: Builtins.Deployment,
  ready: Dependent.deploymentReady,
  desired: (primary: Site) => ({
    metadata: { name: nameOf(primary) },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels(primary) },
      template: {
        metadata: { labels: labels(primary) },
        spec: { containers: [{ name: "web", image: primary.spec.image }] }
      }
    }
  })
})

const service = Dependent.make({
  name: "service",
  resource: Builtins.Service,
  desired: (primary: Site) => ({
    metadata: { name: nameOf(primary) },
    spec: { selector: labels(primary), ports: [{ port: 80, targetPort: 8080 }] }
  })
})

const conditionOf = (object: Site | undefined, type: string) => object?.status?.conditions?.find((c) => c.type === type)

/** Waits until the Site's condition of `type` satisfies `test`, and returns the Site. */
const awaitCondition = (ns: string, name: string, type: string, test: (condition: Conditions.Condition) => boolean) =>
  Effect.flatMap(Kube.Kube, (kube) =>
    eventually(Effect.flatMap(kube.get(Site, name, ns), (object) => {
      const condition = conditionOf(object, type)
      return condition !== undefined && test(condition)
        ? Effect.succeed(object)
        : Effect.fail(new Error(`${type} is ${JSON.stringify(condition)}`))
    })))

/** Waits until the object is gone. */
const absent = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, name: string, ns: string) =>
  Effect.flatMap(Kube.Kube, (kube) =>
    eventually(Effect.flatMap(Effect.flip(kube.get(resource, name, ns)), (error) => ensure(error._tag === "NotFound", `${name}: ${error._tag}`))))

/** Plays the Deployment controller and kubelet: every replica updated, ready and available. */
const markAvailable = (ns: string, name: string) =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const current = yield* kube.get(Builtins.Deployment, name, ns)
    const replicas = current.spec?.replicas ?? 1
    yield* kube.patch(Builtins.Deployment, name, ns, {
      status: {
        observedGeneration: current.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas
      }
    }, { type: "merge", subresource: "status" })
  })

/**
 * Records the deletions of these kinds in the namespace; the answer lists them as "Kind/name" in
 * the server's order (by the revision of each deletion, whichever watch delivered it first).
 */
const recordDeletions = (ns: string, kinds: ReadonlyArray<Resource.Resource<any>>) =>
  Effect.gen(function*() {
    const deletions = yield* Ref.make<Array<{ readonly revision: number; readonly name: string }>>([])
    const informers = yield* Effect.forEach(kinds, (kind) => Informer.make(kind, { namespace: ns }))
    yield* Effect.forEach(informers, (informer) => informer.awaitSynced, { discard: true })
    yield* Stream.mergeAll(informers.map((informer) => informer.changes), { concurrency: "unbounded" }).pipe(
      Stream.runForEach((change) =>
        change._tag === "Deleted"
          ? Ref.update(deletions, (xs) => [...xs, { revision: Number(change.object.metadata.resourceVersion), name: `${change.object.kind ?? ""}/${change.object.metadata.name}` }])
          : Effect.void
      ),
      Effect.forkScoped
    )
    return Effect.map(Ref.get(deletions), (xs) => [...xs].sort((a, b) => a.revision - b.revision).map((x) => x.name))
  })

const start = (
  name: string,
  ns: string,
  workflow: Workflow.Workflow<Site, any, never>,
  extra: Partial<Controller.Options<Site, unknown, never>> = {}
) =>
  Controller.start(Controller.define({
    name,
    for: Site,
    namespace: ns,
    owns: Workflow.owns(workflow),
    reconcile: Workflow.reconciler(workflow),
    ...extra
  }))

/** The Site CRD installed, a fresh namespace, and the client. */
const setup = Effect.gen(function*() {
  yield* installCrd(Site)
  return { ns: yield* namespace, kube: yield* Kube.Kube }
})

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Workflow on the API server", (it) => {
  it.effect("ConfigMap -> Deployment -> Service: the Service waits for the Deployment's readiness, then all converge", () =>
    Effect.gen(function*() {
      const { kube, ns } = yield* setup
      yield* start("sites-chain", ns, Workflow.sequence(content, deployment, service))
      yield* kube.create(Site, site(ns, "web", { image: "nginx:1" }))

      const waiting = yield* awaitCondition(ns, "web", "ServiceReady", (c) => c.reason === "Waiting")
      assert.strictEqual(conditionOf(waiting, "ServiceReady")?.status, "Unknown")
      assert.strictEqual(conditionOf(waiting, "ServiceReady")?.message, "service waits for deployment")
      assert.strictEqual(conditionOf(waiting, "DeploymentReady")?.reason, "NotReady")
      assert.strictEqual(conditionOf(waiting, "ContentReady")?.status, "True")
      const ready = yield* awaitCondition(ns, "web", "Ready", (c) => c.status === "False")
      assert.strictEqual(conditionOf(ready, "Ready")?.reason, "DependentsNotReady")
      assert.strictEqual(conditionOf(ready, "Ready")?.message, "deployment is not ready; service waits for deployment")
      assert.strictEqual(ready.status?.observedGeneration, 1)
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "web-content", ns)).data, { image: "nginx:1" })
      const created = yield* kube.get(Builtins.Deployment, "web", ns)
      assert.strictEqual(created.metadata.ownerReferences?.[0]?.kind, "Site")
      yield* absent(Builtins.Service, "web", ns)

      yield* markAvailable(ns, "web")
      const converged = yield* awaitCondition(ns, "web", "Ready", (c) => c.status === "True")
      for (const type of ["ContentReady", "DeploymentReady", "ServiceReady"]) {
        assert.strictEqual(conditionOf(converged, type)?.status, "True", type)
      }
      const exposed = yield* kube.get(Builtins.Service, "web", ns)
      assert.deepStrictEqual(exposed.spec?.selector, { app: "web" })
    }))

  it.effect("independent nodes run concurrently; a dependent node starts after its parent", () =>
    Effect.gen(function*() {
      const { kube, ns } = yield* setup
      const log = yield* Ref.make<Array<string>>([])
      const started = { left: yield* Deferred.make<void>(), right: yield* Deferred.make<void>() }
      // Each side waits until the other has started: only concurrent runs get past this.
      const handshake = (side: "left" | "right") =>
        Dependent.make({
          name: side,
          resource: Builtins.ConfigMap,
          desired: (primary: Site) =>
            Effect.gen(function*() {
              yield* Ref.update(log, (xs) => [...xs, `${side} started`])
              yield* Deferred.succeed(started[side], undefined)
              yield* Deferred.await(started[side === "left" ? "right" : "left"])
              yield* Ref.update(log, (xs) => [...xs, `${side} desired`])
              return { metadata: { name: `${nameOf(primary)}-${side}` }, data: { side } }
            }).pipe(Effect.timeout("10 seconds"))
        })
      const after = Dependent.make({
        name: "after",
        resource: Builtins.ConfigMap,
        desired: (primary: Site) =>
          Effect.as(Ref.update(log, (xs) => [...xs, "after started"]), { metadata: { name: `${nameOf(primary)}-after` }, data: {} })
      })
      yield* start("sites-parallel", ns, Workflow.sequence(Workflow.parallel(handshake("left"), handshake("right")), after))
      yield* kube.create(Site, site(ns, "p", { image: "x" }))
      yield* eventually(kube.get(Builtins.ConfigMap, "p-after", ns))

      const first = (yield* Ref.get(log)).slice(0, 5)
      assert.sameMembers(first.slice(0, 2), ["left started", "right started"])
      assert.sameMembers(first.slice(2, 4), ["left desired", "right desired"])
      assert.strictEqual(first[4], "after started")
    }))

  it.effect("a failing node stops only what depends on it; every failure is kept and reported per node", () =>
    Effect.gen(function*() {
      const { kube, ns } = yield* setup
      const failing = (name: string) =>
        Workflow.step({
          name,
          reconcile: (primary: Site) => Effect.fail(new ReconcileError.Transient({ message: `${name}: ${primary.spec.failWith}` }))
        })
      const below = Dependent.make({
        name: "below",
        resource: Builtins.ConfigMap,
        desired: (primary: Site) => ({ metadata: { name: `${nameOf(primary)}-below` }, data: {} })
      })
      const workflow = Workflow.make({
        nodes: [failing("quota"), failing("dns"), content, below],
        dependsOn: { below: ["quota"] }
      })
      const causes = yield* Ref.make<Array<Cause.Cause<unknown>>>([])
      yield* start("sites-failing", ns, workflow, {
        retryPolicy: RetryPolicy.none,
        reconcile: (primary, ctx) => Workflow.reconciler(workflow)(primary, ctx).pipe(Effect.tapCause((cause) => Ref.update(causes, (xs) => [...xs, cause])))
      }).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
      yield* kube.create(Site, site(ns, "f", { image: "x", failWith: "boom" }))

      const failed = yield* awaitCondition(ns, "f", "Ready", (c) => c.reason === "ReconcileError")
      assert.strictEqual(conditionOf(failed, "QuotaReady")?.reason, "Failed")
      assert.strictEqual(conditionOf(failed, "QuotaReady")?.message, "quota failed: quota: boom")
      assert.strictEqual(conditionOf(failed, "DnsReady")?.message, "dns failed: dns: boom")
      assert.strictEqual(conditionOf(failed, "BelowReady")?.message, "below waits for quota")
      assert.strictEqual(conditionOf(failed, "ContentReady")?.status, "True")
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "f-content", ns)).data, { image: "x" })
      yield* absent(Builtins.ConfigMap, "f-below", ns)

      const [cause] = yield* Ref.get(causes)
      const messages = cause!.reasons.filter(Cause.isFailReason).map((reason) => (reason.error as { message: string }).message)
      assert.deepStrictEqual(messages, ["quota: boom", "dns: boom"])
    }))

  it.effect("a false precondition skips the node and deletes it, and what depends on it first", () =>
    Effect.gen(function*() {
      const { kube, ns } = yield* setup
      const exposed = Workflow.when((primary: Site) => primary.spec.exposed === true, service)
      const endpoints = Dependent.make({
        name: "endpoints",
        resource: Builtins.ConfigMap,
        desired: (primary: Site) => ({ metadata: { name: `${nameOf(primary)}-endpoints` }, data: { url: `http://${nameOf(primary)}` } })
      })
      const deletions = yield* recordDeletions(ns, [Builtins.Service, Builtins.ConfigMap])
      yield* start("sites-precondition", ns, Workflow.sequence(content, exposed, endpoints))
      yield* kube.create(Site, site(ns, "s", { image: "x", exposed: true }))
      yield* eventually(kube.get(Builtins.ConfigMap, "s-endpoints", ns))
      yield* awaitCondition(ns, "s", "Ready", (c) => c.status === "True")
      assert.strictEqual((yield* kube.get(Builtins.Service, "s", ns)).metadata.name, "s")

      yield* kube.patch(Site, "s", ns, { spec: { exposed: false } }, { type: "merge" })
      const skipped = yield* awaitCondition(ns, "s", "ServiceReady", (c) => c.reason === "Skipped")
      assert.strictEqual(conditionOf(skipped, "ServiceReady")?.message, "service is skipped: its precondition is false")
      yield* absent(Builtins.Service, "s", ns)
      yield* absent(Builtins.ConfigMap, "s-endpoints", ns)
      assert.deepStrictEqual(yield* deletions, ["ConfigMap/s-endpoints", "Service/s"])
      yield* awaitCondition(ns, "s", "Ready", (c) => c.status === "True" && c.observedGeneration === 2)
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "s-content", ns)).data, { image: "x" })
    }))

  it.effect("an inactive node is neither applied nor deleted, and what depends on it is deleted", () =>
    Effect.gen(function*() {
      const { kube, ns } = yield* setup
      const configMap = (name: string, extra: Partial<Parameters<typeof Dependent.make<Site, Builtins.ConfigMap>>[0]> = {}) =>
        Dependent.make({
          name,
          resource: Builtins.ConfigMap,
          desired: (primary: Site) => ({ metadata: { name: `${nameOf(primary)}-${name}` }, data: { image: primary.spec.image } }),
          ...extra
        })
      const monitor = configMap("monitor", { activeWhen: (primary) => primary.spec.monitored === true })
      const dashboard = configMap("dashboard")
      yield* start("sites-activation", ns, Workflow.sequence(monitor, dashboard))
      yield* kube.create(Site, site(ns, "m", { image: "v1", monitored: true }))
      yield* eventually(kube.get(Builtins.ConfigMap, "m-dashboard", ns))

      yield* kube.patch(Site, "m", ns, { spec: { image: "v2", monitored: false } }, { type: "merge" })
      const inactive = yield* awaitCondition(ns, "m", "MonitorReady", (c) => c.reason === "Inactive")
      assert.strictEqual(conditionOf(inactive, "MonitorReady")?.status, "False")
      yield* absent(Builtins.ConfigMap, "m-dashboard", ns)
      const dashboardSkipped = yield* awaitCondition(ns, "m", "DashboardReady", (c) => c.reason === "Skipped")
      assert.strictEqual(conditionOf(dashboardSkipped, "DashboardReady")?.message, "dashboard is skipped: monitor is skipped or inactive")
      // Left as it was: not deleted, and not updated to the new spec either.
      assert.deepStrictEqual((yield* kube.get(Builtins.ConfigMap, "m-monitor", ns)).data, { image: "v1" })
    }))

  it.effect("deleting the primary runs the cleanups in reverse order before the finalizer goes", () =>
    Effect.gen(function*() {
      const { kube, ns } = yield* setup
      // What the external step saw of the Service each time its cleanup ran (cleanups run on every
      // pass until the whole graph is gone, so they must be idempotent).
      const serviceSeenByDns = yield* Ref.make<Array<boolean>>([])
      const dns = Workflow.step({
        name: "dns",
        reconcile: (_: Site) => Effect.void,
        cleanup: (primary, ctx) =>
          Ref.update(serviceSeenByDns, (xs) => [...xs, ctx.cached(Builtins.Service, `${ns}/${nameOf(primary)}`) !== undefined])
      })
      const workflow = Workflow.sequence(content, deployment, service, dns)
      const deletions = yield* recordDeletions(ns, [Builtins.ConfigMap, Builtins.Deployment, Builtins.Service])
      const controller = yield* start("sites-cleanup", ns, workflow, { cleanup: Workflow.cleanup(workflow, { recheckAfter: "1 second" }) })
      yield* kube.create(Site, site(ns, "c", { image: "x" }))
      yield* eventually(kube.get(Builtins.Deployment, "c", ns))
      yield* markAvailable(ns, "c")
      yield* awaitCondition(ns, "c", "Ready", (c) => c.status === "True")
      assert.include((yield* kube.get(Site, "c", ns)).metadata.finalizers ?? [], controller.finalizer)

      yield* kube.delete(Site, "c", ns)
      yield* absent(Site, "c", ns)
      assert.deepStrictEqual(yield* deletions, ["Service/c", "Deployment/c", "ConfigMap/c-content"])
      assert.isTrue((yield* Ref.get(serviceSeenByDns))[0], "the step below the Service was cleaned up first")
    }))
})

class Quota extends Schema.TaggedError<Quota>()("Quota", { message: Schema.String }) {}
class Dns extends Schema.TaggedError<Dns>()("Dns", { message: Schema.String }) {}
class Registry extends Context.Service<Registry, { readonly lookup: (name: string) => Effect.Effect<string> }>()("test/Registry") {}
class Resolver extends Context.Service<Resolver, { readonly resolve: (name: string) => Effect.Effect<boolean, Dns> }>()("test/Resolver") {}

describe("Workflow types", () => {
  plain("a workflow's requirements and errors are the union of its nodes'", () => {
    const image = Dependent.make({
      name: "image",
      resource: Builtins.ConfigMap,
      desired: (primary: Site) =>
        Effect.map(Registry.use((registry) => registry.lookup(primary.spec.image)), (digest) => ({ metadata: { name: "image" }, data: { digest } })),
      ready: (configMap) => configMap.data?.digest === undefined ? Effect.fail(new Quota({ message: "no digest" })) : true
    })
    const dns = Workflow.step({
      name: "dns",
      reconcile: (primary: Site) => Effect.asVoid(Resolver.use((resolver) => resolver.resolve(nameOf(primary))))
    })
    const plainNode = Dependent.make({ name: "plain", resource: Builtins.ConfigMap, desired: (_: Site) => ({ metadata: { name: "p" } }) })

    const workflow = Workflow.sequence(plainNode, Workflow.parallel(image, dns))
    type Api = KubeError.KubeError | Resource.DecodeError
    expectTypeOf(workflow).toEqualTypeOf<Workflow.Workflow<Site, Quota | Dns | Api, Registry | Resolver>>()
    expectTypeOf(Workflow.parallel(dns)).toEqualTypeOf<Workflow.Workflow<Site, Dns, Resolver>>()
    expectTypeOf(Workflow.make({ nodes: [image] })).toEqualTypeOf<Workflow.Workflow<Site, Quota | Api, Registry>>()
    const guarded = Workflow.when((primary: Site) => Effect.as(Registry, primary.spec.exposed === true), dns)
    expectTypeOf(guarded).toEqualTypeOf<Workflow.Workflow<Site, Dns, Resolver | Registry>>()

    const reconcile = Workflow.reconciler(workflow)
    expectTypeOf(reconcile).returns.toEqualTypeOf<Effect.Effect<Outcome.Outcome, Quota | Dns | Api, Registry | Resolver>>()
    expectTypeOf(Controller.start(Controller.define({ name: "typed", for: Site, reconcile }))).toEqualTypeOf<
      Effect.Effect<Controller.Controller<Site>, CacheSync.Timeout, Registry | Resolver | Kube.Kube | Scope.Scope>
    >()
    // @ts-expect-error a workflow that needs Registry and Resolver does not run without them
    const unprovided: Effect.Effect<unknown, unknown, never> = Workflow.run(workflow, {} as Site, {} as Controller.Context<Site>)
    void unprovided
  })

  plain("invalid graphs are refused when built", () => {
    assert.throws(() => Workflow.make({ nodes: [content], dependsOn: { content: ["nowhere"] } }), /nowhere in dependsOn is not a node/)
    assert.throws(() => Workflow.parallel(content, Dependent.make({ name: "content", resource: Builtins.Secret, desired: () => ({ metadata: { name: "other" } }) })), /two nodes are named content/)
    assert.throws(
      () => Workflow.make({ nodes: [content, service], dependsOn: { content: ["service"], service: ["content"] } }),
      /cycle among content, service/
    )
    assert.deepStrictEqual(Workflow.sequence(content, Workflow.parallel(deployment, service)).dependsOn.get("service"), ["content"])
  })

  plain("results map to one condition per node", () => {
    const result: Workflow.Result<string> = {
      nodes: [
        { name: "config-map", status: { _tag: "Ready", applied: true } },
        { name: "deployment", status: { _tag: "NotReady", applied: false } },
        { name: "service", status: { _tag: "Waiting", on: ["deployment"] } },
        { name: "ingress", status: { _tag: "Skipped", because: "ingress", deleted: false } },
        { name: "dns", status: { _tag: "Failed", cause: Cause.fail("no zone") } }
      ],
      outcome: Outcome.done
    }
    assert.deepStrictEqual(Workflow.conditions(result, { observedGeneration: 4 }).map((c) => [c.type, c.status, c.reason, c.message]), [
      ["ConfigMapReady", "True", "Ready", ""],
      ["DeploymentReady", "False", "NotReady", "deployment is not ready"],
      ["ServiceReady", "Unknown", "Waiting", "service waits for deployment"],
      ["IngressReady", "False", "Deleting", "ingress is being deleted: its precondition is false"],
      ["DnsReady", "False", "Failed", "dns failed: no zone"]
    ])
    assert.isFalse(Workflow.isComplete(result))
    assert.deepStrictEqual(Workflow.failures(result).map((f) => f.name), ["dns"])
    assert.strictEqual(
      Workflow.describe(result),
      "deployment is not ready; service waits for deployment; ingress is being deleted: its precondition is false; dns failed: no zone"
    )
  })
})
