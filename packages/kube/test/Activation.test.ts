import { assert, layer } from "@effect/vitest"
import { Builtins, Conditions, Controller, Dependent, Informer, Kube, Resource, Workflow } from "@kubefx/kube"
import { Effect, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const Site = Resource.custom({
  group: "activation.kubefx.dev",
  version: "v1",
  kind: "Site",
  plural: "sites",
  spec: Schema.Struct({ title: Schema.String }),
  status: Schema.Struct(Conditions.statusFields)
})
type Site = typeof Site.schema.Type

// A kind whose CRD is not installed when the controller starts (like a monitoring CRD an optional
// add-on brings).
const Monitor = Resource.custom({
  group: "addons.kubefx.dev",
  version: "v1",
  kind: "Monitor",
  plural: "monitors",
  spec: Schema.Struct({ target: Schema.String })
})

const page = Dependent.make({
  name: "page",
  resource: Builtins.ConfigMap,
  desired: (site: Site) => ({ metadata: { name: `${site.metadata.name}-page` }, data: { title: site.spec.title } })
})

const monitor = Dependent.make({
  name: "monitor",
  resource: Monitor,
  activeWhen: Dependent.whenServed(Monitor),
  desired: (site: Site) => ({ metadata: { name: `${site.metadata.name}-monitor` }, spec: { target: site.metadata.name ?? "" } })
})

const workflow = Workflow.parallel(page, monitor)

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("activation on a kind's CRD", (it) => {
  it.effect("an informer on a kind that is not served is synced and empty, and follows it once its CRD appears", () =>
    Effect.gen(function*() {
      const informer = yield* Informer.make(Monitor, { backoff: { initial: "50 millis", max: "200 millis" } })
      yield* informer.awaitSynced
      assert.isFalse(informer.served())
      assert.strictEqual(informer.size(), 0)
      yield* installCrd(Monitor)
      yield* eventually(Effect.suspend(() => ensure(informer.served(), "not served yet")))

      // The CRD deleted: the server ends the kind's watch, and the informer learns it is gone.
      const kube = yield* Kube.Kube
      yield* kube.request({ method: "DELETE", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/monitors.addons.kubefx.dev" })
      yield* eventually(Effect.suspend(() => ensure(!informer.served(), "still served")))
      yield* installCrd(Monitor)
      yield* eventually(Effect.suspend(() => ensure(informer.served(), "not served again")))
    }))

  it.effect("a node active only while its kind is served waits for the CRD, then is applied for every primary", () =>
    Effect.gen(function*() {
      yield* installCrd(Site)
      const kube = yield* Kube.Kube
      // The previous test may have installed Monitor: start from a cluster without it.
      yield* kube.request({ method: "DELETE", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/monitors.addons.kubefx.dev" }).pipe(
        Effect.ignore
      )
      yield* eventually(Effect.flatMap(Effect.flip(kube.list(Monitor, { limit: 1 })), (error) => ensure(error._tag === "NotFound", error._tag)))
      const ns = yield* namespace
      yield* Controller.start(Controller.define({
        name: "sites",
        for: Site,
        namespace: ns,
        owns: Workflow.owns(workflow),
        watch: { backoff: { initial: "50 millis", max: "200 millis" } },
        reconcile: Workflow.reconciler(workflow)
      }))
      yield* kube.create(Site, { apiVersion: Site.apiVersion, kind: Site.kind, metadata: { name: "home", namespace: ns }, spec: { title: "Home" } })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "home-page", ns), (cm) => ensure(cm.data?.title === "Home", "no page")))

      yield* installCrd(Monitor)
      const created = yield* eventually(kube.get(Monitor, "home-monitor", ns))
      assert.strictEqual(created.spec.target, "home")
    }))
})
