/**
 * An operator run as its ServiceAccount, holding only the ClusterRole `Rbac.clusterRole` derives
 * (what `kubefx manifests` binds to it; `Rbac.serviceAccount` sets it up), against an API server
 * that authorizes with RBAC as a cluster does: every request its controllers, workflow, finalizer, Events and leader Lease make
 * must be granted, or the run fails with a 403 and the object never converges.
 */
import { assert, layer } from "@effect/vitest"
import { Builtins, Conditions, Controller, Dependent, Kube, Operator, Rbac, Resource, Workflow } from "@kubefx/kube"
import { Effect, Schema } from "effect"
import { clientWithToken, ensure, eventually, installCrd, layer as support, namespace, TestCluster } from "./support.ts"

const Gadget = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  spec: Schema.Struct({ keep: Schema.Boolean }),
  status: Schema.Struct({ ...Conditions.statusFields })
})
type Gadget = typeof Gadget.schema.Type

// One ConfigMap per Gadget while it asks to keep one: turning `keep` off deletes it.
const config = Dependent.make({
  name: "config",
  resource: Builtins.ConfigMap,
  reconcileWhen: (gadget: Controller.Stored<Gadget>) => gadget.spec.keep,
  desired: (gadget: Controller.Stored<Gadget>) => ({ metadata: { name: `${gadget.metadata.name}-config` }, data: { kept: "yes" } })
})

const operator = Operator.make({
  name: "gadgets",
  http: false,
  leaderElection: { namespace: "gadgets-system" },
  controllers: [Controller.define({ name: "gadgets", for: Gadget, ...Workflow.controller(Workflow.sequence(config)) })]
})

layer(support, { excludeTestServices: true, timeout: "60 seconds" })("an operator as its ServiceAccount", (it) => {
  it.effect("converges, deletes a dependent and finishes a cleanup with only its derived ClusterRole", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const admin = yield* Kube.Kube
      const ns = yield* namespace
      yield* installCrd(Gadget)
      // What `kubefx manifests` deploys, and the token a pod of its Deployment mounts.
      const { token } = yield* Rbac.serviceAccount(operator, { name: "gadgets", namespace: "gadgets-system" })

      yield* Effect.scoped(Effect.gen(function*() {
        // Built in this scope, so the operator's client lives as long as its fibers do.
        const asServiceAccount = yield* clientWithToken(server, token)
        yield* Operator.start(operator).pipe(Effect.provide(asServiceAccount))
        const ready = (name: string) =>
          eventually(Effect.flatMap(admin.get(Gadget, name, ns), (gadget) =>
            ensure(
              gadget.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True" && c.observedGeneration === gadget.metadata.generation) === true,
              `${name} not Ready: ${JSON.stringify(gadget.status)}`
            )))
        yield* admin.create(Gadget, { apiVersion: "demo.kubefx.dev/v1", kind: "Gadget", metadata: { name: "one", namespace: ns }, spec: { keep: true } })
        yield* ready("one")
        assert.strictEqual((yield* admin.get(Builtins.ConfigMap, "one-config", ns)).data?.kept, "yes")
        // The precondition turns false: the workflow deletes the ConfigMap.
        yield* admin.patch(Gadget, "one", ns, { spec: { keep: false } }, { type: "merge" })
        yield* ready("one")
        yield* eventually(Effect.flatMap(Effect.option(admin.get(Builtins.ConfigMap, "one-config", ns)), (found) =>
          ensure(found._tag === "None", "the ConfigMap is still there")))
        // Deleted, the Gadget waits for its cleanup (the finalizer) and is gone.
        yield* admin.patch(Gadget, "one", ns, { spec: { keep: true } }, { type: "merge" })
        yield* eventually(Effect.flatMap(Effect.option(admin.get(Builtins.ConfigMap, "one-config", ns)), (found) =>
          ensure(found._tag === "Some", "no ConfigMap again")))
        yield* admin.delete(Gadget, "one", ns)
        yield* eventually(Effect.flatMap(Effect.option(admin.get(Gadget, "one", ns)), (found) =>
          ensure(found._tag === "None", `still there: ${JSON.stringify(found)}`)))
        // The leader Lease is its own.
        const lease = yield* admin.get(Builtins.Lease, "gadgets-leader", "gadgets-system")
        assert.isString(lease.spec?.holderIdentity)
      }))
    }))
})
