/**
 * A controller given several namespaces: it caches and reconciles its kinds there and nowhere
 * else, its caches read as one (a key in its namespace's cache, lists and children across them),
 * and namespaces it could not watch are refused when it is defined.
 */
import { assert, describe, it as plain, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Handover, Kube, Operator, Rbac } from "@kubefx/kube"
import { Context, Effect, Metric, Ref, References } from "effect"
import { clientWithToken, ensure, eventually, layer as cluster, namespace, TestCluster } from "./support.ts"

const done = () => Effect.succeed(Outcome.done)

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("a controller of several namespaces", (it) => {
  it.effect("reconciles its objects in each of them, none elsewhere, and reads its caches as one", () =>
    Effect.gen(function*() {
      const [a, b, c] = [yield* namespace, yield* namespace, yield* namespace]
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Record<string, number>>({})
      const controller = yield* Controller.start(Controller.define({
        name: "multi",
        for: Builtins.ConfigMap,
        namespaces: [a, b],
        owns: [Builtins.Secret],
        // A kind no namespace holds: one cache of the cluster's, each object once.
        watches: [Controller.watch(Builtins.Namespace, (ns) => [`${ns.metadata.name}/settings`])],
        reconcile: (configMap, ctx) =>
          Effect.gen(function*() {
            // The children this ConfigMap had when the run began, then its one Secret.
            const children = ctx.owned(Builtins.Secret).length
            yield* Ref.update(runs, (all) => ({ ...all, [`${configMap.metadata.namespace}/${configMap.metadata.name}`]: children }))
            yield* ctx.applyOwned(Builtins.Secret, { metadata: { name: `${configMap.metadata.name}-secret` }, stringData: { v: "1" } })
            return Outcome.done
          })
      }))
      for (const ns of [a, b, c]) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: ns } })
      }
      yield* eventually(Effect.flatMap(Ref.get(runs), (all) => ensure(Object.keys(all).sort().join(" ") === `${a}/settings ${b}/settings`, JSON.stringify(all))))
      // Each got its Secret; none was made in the namespace not watched.
      for (const ns of [a, b]) yield* kube.get(Builtins.Secret, "settings-secret", ns)
      assert.deepStrictEqual((yield* kube.list(Builtins.Secret, { namespace: c })).items.map((s) => s.metadata.name), [])
      // One cache over both namespaces: a key is found in its own, lists span them.
      assert.strictEqual(controller.informer.get(`${b}/settings`)?.metadata.namespace, b)
      assert.isUndefined(controller.informer.get(`${c}/settings`))
      assert.deepStrictEqual(controller.informer.list().map((cm) => cm.metadata.namespace).sort(), [a, b].sort())
      assert.deepStrictEqual(controller.informer.list({ namespace: a }).map((cm) => cm.metadata.namespace), [a])
      const namespaces = controller.informers.find((informer) => informer.resource === Builtins.Namespace)!
      assert.strictEqual(namespaces.get(c)?.metadata.name, c)
      assert.strictEqual(new Set(namespaces.keys()).size, namespaces.keys().length)
      // A change in one namespace runs that key; the run sees its one child there.
      yield* kube.patch(Builtins.ConfigMap, "settings", b, { data: { v: "2" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(runs), (all) => ensure(all[`${b}/settings`] === 1, JSON.stringify(all))))
    }))

  it.effect("run as their ServiceAccount, are granted their namespaces only (RoleBindings to the ClusterRole)", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const [a, b, c] = [yield* namespace, yield* namespace, yield* namespace]
      const kube = yield* Kube.Kube
      const reads = yield* Ref.make<Record<string, string>>({})
      // Each run reads the same ConfigMap in every namespace: granted in its own two, not in c.
      const operator = Operator.make({
        name: "two-teams",
        http: false,
        controllers: [Controller.define({
          name: "two-teams",
          for: Builtins.ConfigMap,
          namespaces: [a, b],
          reconcile: (_, ctx) =>
            Effect.forEach([a, b, c], (ns) =>
              Effect.map(Effect.result(ctx.kube.get(Builtins.ConfigMap, "settings", ns)), (read) =>
                [ns, read._tag === "Success" ? "read" : read.failure._tag] as const
              )).pipe(
                Effect.flatMap((results) => Ref.set(reads, Object.fromEntries(results))),
                Effect.as(Outcome.done)
              )
        })]
      })
      const { token } = yield* Rbac.serviceAccount(operator, { name: "two-teams", namespace: "two-teams-system" })
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Operator.start(operator).pipe(Effect.provide(yield* clientWithToken(server, token)))
        for (const ns of [a, b, c]) {
          yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: ns } })
        }
        yield* eventually(Effect.flatMap(Ref.get(reads), (seen) =>
          ensure(JSON.stringify(seen) === JSON.stringify({ [a]: "read", [b]: "read", [c]: "Forbidden" }), JSON.stringify(seen))))
      }))
      const bindings = yield* kube.request({ method: "GET", path: `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/two-teams` }).pipe(Effect.flip)
      assert.strictEqual(bindings._tag, "NotFound")
    }))

  it.effect("keep no binding of an earlier run: moving from the cluster to some namespaces, or leaving one, takes its grant away", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const [a, b, c, own] = [yield* namespace, yield* namespace, yield* namespace, yield* namespace]
      const kube = yield* Kube.Kube
      const account = { name: "moving", namespace: "moving-system" }
      const operatorOf = (namespaces: ReadonlyArray<string> | undefined) =>
        Operator.make({
          name: "moving",
          http: false,
          controllers: [Controller.define({ name: "moving", for: Builtins.ConfigMap, ...(namespaces && { namespaces }), reconcile: done })]
        })
      const bound = Effect.gen(function*() {
        const cluster = yield* kube.request({ method: "GET", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/moving" }).pipe(
          Effect.as(true),
          Effect.catchTag("NotFound", () => Effect.succeed(false))
        )
        const named = (yield* kube.request({
          method: "GET",
          path: "/apis/rbac.authorization.k8s.io/v1/rolebindings",
          query: { fieldSelector: "metadata.name=moving" }
        })) as { readonly items: ReadonlyArray<{ readonly metadata: { readonly namespace: string } }> }
        return { cluster, namespaces: named.items.map((binding) => binding.metadata.namespace).sort() }
      })
      // A binding of the same name that someone else made (created, not applied by kubefx) stays.
      yield* kube.request({
        method: "POST",
        path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${own}/rolebindings`,
        body: {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "moving", namespace: own },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
          subjects: [{ kind: "ServiceAccount", ...account }]
        }
      })
      yield* Rbac.serviceAccount(operatorOf(undefined), account)
      assert.deepStrictEqual(yield* bound, { cluster: true, namespaces: [own] })
      const { token } = yield* Rbac.serviceAccount(operatorOf([a, b]), account)
      assert.deepStrictEqual(yield* bound, { cluster: false, namespaces: [a, b, own].sort() })
      // What the cluster-wide binding granted is gone: reading in c is forbidden now.
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: c } })
      const read = yield* Effect.scoped(Effect.gen(function*() {
        const asOperator = Context.get(yield* clientWithToken(server, token), Kube.Kube)
        return yield* Effect.flip(asOperator.get(Builtins.ConfigMap, "settings", c))
      }))
      assert.strictEqual(read._tag, "Forbidden")
      yield* Rbac.serviceAccount(operatorOf([a]), account)
      assert.deepStrictEqual(yield* bound, { cluster: false, namespaces: [a, own].sort() })
      yield* Rbac.serviceAccount(operatorOf(undefined), account)
      assert.deepStrictEqual(yield* bound, { cluster: true, namespaces: [own] })
    }))

  it.effect("with a rule naming another namespace, are granted it there by a Role, until the rule goes", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const [a, vault] = [yield* namespace, yield* namespace]
      const kube = yield* Kube.Kube
      const account = { name: "vaulted", namespace: "vaulted-system" }
      const operatorOf = (rbac: ReadonlyArray<Rbac.PolicyRule>) =>
        Operator.make({
          name: "vaulted",
          http: false,
          controllers: [Controller.define({ name: "vaulted", for: Builtins.ConfigMap, namespaces: [a], rbac, reconcile: done })]
        })
      for (const ns of [a, vault]) {
        yield* kube.create(Builtins.Secret, { apiVersion: "v1", kind: "Secret", metadata: { name: "token", namespace: ns } })
      }
      const { token } = yield* Rbac.serviceAccount(operatorOf([{ apiGroups: [""], resources: ["secrets"], verbs: ["get"], namespace: vault }]), account)
      const reads = yield* Effect.scoped(Effect.gen(function*() {
        const asOperator = Context.get(yield* clientWithToken(server, token), Kube.Kube)
        return yield* Effect.forEach([vault, a], (ns) =>
          Effect.map(Effect.result(asOperator.get(Builtins.Secret, "token", ns)), (read) => read._tag === "Success" ? "read" : read.failure._tag))
      }))
      // Its namespace's Secret through the Role; its own namespace grants the ClusterRole only.
      assert.deepStrictEqual(reads, ["read", "Forbidden"])
      const cluster = yield* kube.request({ method: "GET", path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/vaulted" }).pipe(Effect.flip)
      assert.strictEqual(cluster._tag, "NotFound")
      const present = (path: string) =>
        kube.request({ method: "GET", path }).pipe(Effect.as(true), Effect.catchTag("NotFound", () => Effect.succeed(false)))
      const rolePath = `/apis/rbac.authorization.k8s.io/v1/namespaces/${vault}/roles/vaulted`
      const bindingPath = `/apis/rbac.authorization.k8s.io/v1/namespaces/${vault}/rolebindings/vaulted-role`
      assert.deepStrictEqual([yield* present(rolePath), yield* present(bindingPath)], [true, true])
      yield* Rbac.serviceAccount(operatorOf([]), account)
      assert.deepStrictEqual([yield* present(rolePath), yield* present(bindingPath)], [false, false])
    }))

  it.effect("that cannot all be listed fail the controller's start, naming the namespace whose list failed", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const [a, b] = [yield* namespace, yield* namespace]
      server.faults.set({ rules: [{ resource: "configmaps", verbs: ["list"], namespace: b, errorRate: 1, errorCode: 503 }] })
      const failed = yield* Effect.flip(Controller.start(Controller.define({
        name: "half-listed",
        for: Builtins.ConfigMap,
        namespaces: [a, b],
        cacheSyncTimeout: "1 second",
        reconcile: done
      })))
      server.faults.clear()
      assert.deepStrictEqual(failed.unsynced.map((cache) => [cache.kind, cache.namespace, cache.failure?.split(":")[0]]), [["ConfigMap", b, "ServerError"]])
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("in a sharded operator are shared out among its replicas, each object of theirs to one, none of another namespace", () =>
    Effect.gen(function*() {
      const [a, b, c, system] = [yield* namespace, yield* namespace, yield* namespace, yield* namespace]
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Record<string, ReadonlyArray<string>>>({})
      const replica = (identity: string) =>
        Operator.start(Operator.make({
          name: "sharded-teams",
          http: false,
          sharding: { namespace: system, identity, leaseDuration: "4 seconds", renewDeadline: "3 seconds", retryPeriod: "200 millis" },
          controllers: [Controller.define({
            name: "sharded-teams",
            for: Builtins.ConfigMap,
            namespaces: [a, b],
            reconcile: (configMap) =>
              Effect.as(Ref.update(runs, (all) => {
                const key = `${configMap.metadata.namespace}/${configMap.metadata.name}`
                return { ...all, [key]: [...new Set([...(all[key] ?? []), identity])] }
              }), Outcome.done)
          })]
        })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
      for (const ns of [a, b, c]) {
        for (let i = 0; i < 6; i++) {
          yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: ns } })
        }
      }
      const replicas = new Map([["r1", yield* replica("r1")], ["r2", yield* replica("r2")]])
      const ours = (yield* Effect.forEach([a, b], (ns) => kube.list(Builtins.ConfigMap, { namespace: ns })))
        .flatMap((list) => list.items.filter((cm) => cm.metadata.name?.startsWith("cm-")).map((cm) => `${cm.metadata.namespace}/${cm.metadata.name}`))
      assert.strictEqual(ours.length, 12)
      // Every object of a and b labelled with a live replica and reconciled there, each replica
      // caching exactly its own; c's left alone.
      yield* eventually(Effect.gen(function*() {
        const labelled = yield* Effect.forEach(ours, (key) => {
          const [ns, name] = key.split("/") as [string, string]
          return Effect.map(kube.get(Builtins.ConfigMap, name, ns), (cm) => [key, Handover.placement(cm).owner] as const)
        })
        yield* ensure(labelled.every(([, owner]) => owner === "r1" || owner === "r2"), JSON.stringify(labelled))
        yield* ensure(new Set(labelled.map(([, owner]) => owner)).size === 2, `one replica owns all: ${JSON.stringify(labelled)}`)
        const seen = yield* Ref.get(runs)
        for (const [key, owner] of labelled) {
          // (A key the first replica ran may have moved to the second since.)
          yield* ensure(seen[key]?.includes(owner!) === true, `${key}: run by ${JSON.stringify(seen[key])}, owned by ${owner}`)
          const cached = replicas.get(owner!)!.controllers[0]!.controller()?.informer.get(key)
          yield* ensure(cached !== undefined, `${owner} does not cache ${key}`)
        }
        for (const [identity, running] of replicas) {
          const keys = (running.controllers[0]!.controller()?.informer.keys() ?? []).filter((key) => key.includes("/cm-"))
          const own = labelled.filter(([, owner]) => owner === identity).map(([key]) => key)
          yield* ensure(JSON.stringify([...keys].sort()) === JSON.stringify(own.sort()), `${identity} caches ${JSON.stringify(keys)}`)
        }
      }), "30 seconds")
      const untouched = (yield* kube.list(Builtins.ConfigMap, { namespace: c })).items.filter((cm) => cm.metadata.name?.startsWith("cm-"))
      assert.deepStrictEqual(untouched.map((cm) => Handover.placement(cm).owner), Array(6).fill(undefined))
      assert.isFalse(Object.keys(yield* Ref.get(runs)).some((key) => key.startsWith(`${c}/`)))
      for (const running of replicas.values()) yield* running.shutdown
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})

describe("namespaces a controller cannot watch", () => {
  plain("are refused when it is defined", () => {
    const define = (namespaces: ReadonlyArray<string>, namespace?: string) => () =>
      Controller.define({ name: "multi", for: Builtins.ConfigMap, namespaces, namespace, reconcile: done })
    assert.throws(define(["a"], "b"), "controller multi: give namespace or namespaces, not both")
    assert.throws(define([]), "controller multi: namespaces is empty: leave it out to watch every namespace")
    assert.throws(define(["a", "a"]), "controller multi: namespaces names one twice")
    assert.throws(define(["Team_A"]), `controller multi: namespace "Team_A": `)
  })
})
