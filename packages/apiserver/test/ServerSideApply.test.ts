import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as ManagedFields from "../src/ManagedFields.ts"
import * as ServerSideApply from "../src/ServerSideApply.ts"
import type * as Structure from "../src/Structure.ts"
import { Json } from "@kubefx/schema/internal"

const deployments = BuiltinStructures.lookup("apps", "Deployment")!
const t0 = "2024-05-01T10:00:00Z"
const t1 = "2024-05-01T10:05:00Z"
const t2 = "2024-05-01T10:10:00Z"

type Options = Partial<ServerSideApply.ApplyOptions> & Pick<ServerSideApply.ApplyOptions, "applied" | "manager">

const apply = (options: Options) =>
  ServerSideApply.apply({ live: undefined, apiVersion: "apps/v1", force: false, structure: deployments, time: t0, ...options })

const ok = (options: Options): Json.JsonObject => {
  const result = apply(options)
  if (Result.isFailure(result)) assert.fail(`expected success, got ${result.failure.message}`)
  return result.success
}

const conflictOf = (options: Options): ServerSideApply.ApplyConflict => {
  const result = apply(options)
  if (Result.isSuccess(result) || result.failure._tag !== "ApplyConflict") return assert.fail("expected a conflict")
  return result.failure
}

const entries = (object: Json.JsonObject): ReadonlyArray<Json.JsonObject> =>
  ((object.metadata as Json.JsonObject).managedFields ?? []) as ReadonlyArray<Json.JsonObject>

const entry = (object: Json.JsonObject, manager: string, operation = "Apply") =>
  entries(object).find((e) => e.manager === manager && e.operation === operation)

const spec = (object: Json.JsonObject) => object.spec as Json.JsonObject
const podSpec = (object: Json.JsonObject) => ((spec(object).template as Json.JsonObject).spec as Json.JsonObject)
const containers = (object: Json.JsonObject) => podSpec(object).containers as ReadonlyArray<Json.JsonObject>

const deployment = (specFields?: Json.JsonObject, metadata: Json.JsonObject = {}): Json.JsonObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", ...metadata },
  ...(specFields === undefined ? {} : { spec: specFields })
})

const template = (...containerList: ReadonlyArray<Json.JsonObject>): Json.JsonObject => ({
  metadata: { labels: { app: "web" } },
  spec: { containers: containerList }
})

// What the API server stores after `kubectl create` (or client-side `kubectl apply`) of a Deployment.
const createdByUpdate = (manager: string, specFields: Json.JsonObject): Json.JsonObject =>
  ManagedFields.update({
    live: undefined,
    next: { ...deployment(specFields), metadata: { name: "web", namespace: "default", uid: "u1", resourceVersion: "1" } },
    manager,
    apiVersion: "apps/v1",
    time: t0,
    structure: deployments
  })

describe("ServerSideApply.apply", () => {
  it("creates the object with one Apply entry owning exactly what was applied", () => {
    const created = ok({
      manager: "kubectl",
      applied: deployment({ replicas: 2, template: template({ name: "app", image: "app:1" }) }, { labels: { tier: "web" } })
    })
    assert.strictEqual(spec(created).replicas, 2)
    assert.deepStrictEqual(entries(created), [{
      manager: "kubectl",
      operation: "Apply",
      apiVersion: "apps/v1",
      time: t0,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:metadata": { "f:labels": { "f:tier": {} } },
        "f:spec": {
          "f:replicas": {},
          "f:template": {
            "f:metadata": { "f:labels": { "f:app": {} } },
            "f:spec": { "f:containers": { "k:{\"name\":\"app\"}": { ".": {}, "f:image": {}, "f:name": {} } } }
          }
        }
      }
    }])
  })

  it("conflicts with the client-side apply manager when changing a value it set", () => {
    const live = createdByUpdate("kubectl-client-side-apply", { replicas: 3 })
    const conflict = conflictOf({ live, manager: "kubectl", applied: deployment({ replicas: 5 }) })
    assert.strictEqual(
      conflict.message,
      "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
    )
    assert.deepStrictEqual(ServerSideApply.conflictCauses(conflict.conflicts), [{
      reason: "FieldManagerConflict",
      message: "conflict with \"kubectl-client-side-apply\" using apps/v1",
      field: ".spec.replicas"
    }])
  })

  it("shares ownership when applying the value already there", () => {
    const live = createdByUpdate("kubectl-client-side-apply", { replicas: 3 })
    const applied = ok({ live, manager: "kubectl", applied: deployment({ replicas: 3 }), time: t1 })
    assert.deepStrictEqual(entry(applied, "kubectl")?.fieldsV1, { "f:spec": { "f:replicas": {} } })
    assert.deepStrictEqual(entry(applied, "kubectl-client-side-apply", "Update")?.fieldsV1, {
      "f:spec": { ".": {}, "f:replicas": {} }
    })
  })

  it("with force takes the field from its other owners", () => {
    const live = createdByUpdate("kubectl-client-side-apply", { replicas: 3, paused: false })
    const forced = ok({ live, manager: "kubectl", applied: deployment({ replicas: 5 }), force: true, time: t1 })
    assert.strictEqual(spec(forced).replicas, 5)
    assert.strictEqual(spec(forced).paused, false)
    assert.deepStrictEqual(entry(forced, "kubectl")?.fieldsV1, { "f:spec": { "f:replicas": {} } })
    assert.deepStrictEqual(entry(forced, "kubectl-client-side-apply", "Update")?.fieldsV1, {
      "f:spec": { ".": {}, "f:paused": {} }
    })
  })

  it("lists every conflict, grouped by manager", () => {
    const first = ok({ manager: "alice", applied: deployment({ replicas: 1, paused: false }) })
    const second = ok({ live: first, manager: "bob", applied: deployment({ minReadySeconds: 5 }), time: t1 })
    const withUpdate = ManagedFields.update({
      live: second,
      next: { ...second, spec: { ...spec(second), minReadySeconds: 6 } },
      manager: "ctl",
      apiVersion: "apps/v1",
      time: t1,
      structure: deployments
    })
    const conflict = conflictOf({
      live: withUpdate,
      manager: "carol",
      applied: deployment({ replicas: 2, paused: true, minReadySeconds: 7 }),
      time: t2
    })
    assert.strictEqual(
      conflict.message,
      "Apply failed with 3 conflicts: conflicts with \"alice\":\n- .spec.paused\n- .spec.replicas\n" +
        "conflicts with \"ctl\" using apps/v1:\n- .spec.minReadySeconds"
    )
  })

  it("removes fields the manager applied before and omits now", () => {
    const first = ok({ manager: "kubectl", applied: deployment({ replicas: 2, paused: true }, { labels: { a: "1", b: "2" } }) })
    const second = ok({ live: first, manager: "kubectl", applied: deployment({ replicas: 2 }, { labels: { a: "1" } }), time: t1 })
    assert.deepStrictEqual(spec(second), { replicas: 2 })
    assert.deepStrictEqual((second.metadata as Json.JsonObject).labels, { a: "1" })
    assert.deepStrictEqual(entry(second, "kubectl")?.fieldsV1, {
      "f:metadata": { "f:labels": { "f:a": {} } },
      "f:spec": { "f:replicas": {} }
    })
  })

  it("keeps an omitted field another manager also owns, and drops it from the applier", () => {
    const first = ok({ manager: "alice", applied: deployment({ replicas: 2, paused: true }) })
    const shared = ok({ live: first, manager: "bob", applied: deployment({ paused: true }), time: t1 })
    const omitted = ok({ live: shared, manager: "alice", applied: deployment({ replicas: 2 }), time: t2 })
    assert.strictEqual(spec(omitted).paused, true)
    assert.deepStrictEqual(entry(omitted, "alice")?.fieldsV1, { "f:spec": { "f:replicas": {} } })
    assert.deepStrictEqual(entry(omitted, "bob")?.fieldsV1, { "f:spec": { "f:paused": {} } })
  })

  it("keeps an omitted field that a non-apply write changed since (it owns it now)", () => {
    const first = ok({ manager: "kubectl", applied: deployment({ replicas: 2, paused: true }) })
    const edited = ManagedFields.update({
      live: first,
      next: { ...first, spec: { replicas: 2, paused: false } },
      manager: "kubectl-edit",
      apiVersion: "apps/v1",
      time: t1,
      structure: deployments
    })
    const omitted = ok({ live: edited, manager: "kubectl", applied: deployment({ replicas: 2 }), time: t2 })
    assert.deepStrictEqual(spec(omitted), { replicas: 2, paused: false })
  })

  it("never removes what another manager applied, even when this manager omits its own fields", () => {
    const alice = ok({ manager: "alice", applied: deployment({ replicas: 2 }) })
    const bob = ok({ live: alice, manager: "bob", applied: deployment({ paused: true }), time: t1 })
    const aliceAgain = ok({ live: bob, manager: "alice", applied: deployment(), time: t2 })
    assert.deepStrictEqual(spec(aliceAgain), { paused: true })
    assert.isUndefined(entry(aliceAgain, "alice"))
    assert.deepStrictEqual(entries(aliceAgain).map((e) => e.manager), ["bob"])
  })

  it("records a second manager's apply beside the first, in API server order", () => {
    const alice = ok({ manager: "alice", applied: deployment({ replicas: 2 }), time: t1 })
    const bob = ok({ live: alice, manager: "bob", applied: deployment({ paused: true }), time: t0 })
    assert.deepStrictEqual(entries(bob).map((e) => [e.manager, e.operation, e.time]), [
      ["bob", "Apply", t0],
      ["alice", "Apply", t1]
    ])
    assert.deepStrictEqual(spec(bob), { replicas: 2, paused: true })
  })

  describe("lists", () => {
    it("merges map-lists per key: each manager owns its own items", () => {
      const alice = ok({ manager: "alice", applied: deployment({ template: template({ name: "app", image: "app:1" }) }) })
      const bob = ok({ live: alice, manager: "bob", applied: deployment({ template: template({ name: "sidecar", image: "proxy:1" }) }), time: t1 })
      assert.deepStrictEqual(containers(bob).map((c) => c.name), ["app", "sidecar"])
      const aliceBumps = ok({ live: bob, manager: "alice", applied: deployment({ template: template({ name: "app", image: "app:2" }) }), time: t2 })
      assert.deepStrictEqual(containers(aliceBumps), [{ name: "app", image: "app:2" }, { name: "sidecar", image: "proxy:1" }])
      const bobTouchesApp = conflictOf({
        live: aliceBumps,
        manager: "bob",
        applied: deployment({ template: template({ name: "sidecar", image: "proxy:1" }, { name: "app", image: "app:3" }) })
      })
      assert.deepStrictEqual(bobTouchesApp.conflicts.map((c) => [c.manager, c.field]), [[
        "alice",
        ".spec.template.spec.containers[name=\"app\"].image"
      ]])
    })

    it("removes an omitted map-list item and merges nested map-lists (ports by containerPort+protocol)", () => {
      const port = (containerPort: number) => ({ containerPort, protocol: "TCP" })
      const first = ok({
        manager: "kubectl",
        applied: deployment({
          template: template(
            { name: "app", image: "app:1", ports: [port(80), port(443)] },
            { name: "old", image: "old:1" }
          )
        })
      })
      const second = ok({
        live: first,
        manager: "kubectl",
        applied: deployment({ template: template({ name: "app", image: "app:1", ports: [port(80)] }) }),
        time: t1
      })
      assert.deepStrictEqual(containers(second), [{ name: "app", image: "app:1", ports: [port(80)] }])
    })


    it("identifies an item that omits a defaulted key field by the default (ports without protocol)", () => {
      // What the server stores: the applied ports, defaulted with protocol TCP after the merge.
      const stored = ok({
        manager: "kubectl",
        applied: deployment({
          template: template({ name: "app", image: "app:1", ports: [{ containerPort: 8080, name: "http" }] })
        })
      })
      const defaulted: Json.JsonObject = {
        ...stored,
        spec: {
          template: template({ name: "app", image: "app:1", ports: [{ containerPort: 8080, name: "http", protocol: "TCP" }] })
        }
      }
      assert.include(JSON.stringify(entry(stored, "kubectl")!.fieldsV1), `k:{\\"containerPort\\":8080,\\"protocol\\":\\"TCP\\"}`)
      const changed = ok({
        live: defaulted,
        manager: "kubectl",
        applied: deployment({
          template: template({ name: "app", image: "app:1", ports: [{ containerPort: 9090, name: "http" }] })
        }),
        time: t1
      })
      // The old port was the manager's (same key with the default): it goes, no duplicate "http" is left.
      assert.deepStrictEqual(containers(changed)[0]!.ports, [{ containerPort: 9090, name: "http" }])
      const ports = JSON.stringify(entry(changed, "kubectl")!.fieldsV1)
      assert.include(ports, `k:{\\"containerPort\\":9090,\\"protocol\\":\\"TCP\\"}`)
    })
    it("keeps live order, takes the configuration's order for items it lists", () => {
      const structure: Structure.Structure = { fields: { items: { listType: { _tag: "Map", keys: ["name"] } } } }
      const live = ManagedFields.update({
        live: undefined,
        next: { metadata: { name: "x" }, items: [{ name: "a" }, { name: "b" }, { name: "c" }] },
        manager: "creator",
        apiVersion: "v1",
        time: t0,
        structure
      })
      const applied = ok({
        live,
        manager: "kubectl",
        structure,
        applied: { metadata: { name: "x" }, items: [{ name: "c" }, { name: "d" }, { name: "a" }] }
      })
      assert.deepStrictEqual((applied.items as ReadonlyArray<Json.JsonObject>).map((i) => i.name), ["b", "c", "d", "a"])
    })

    it("merges set-lists per value (finalizers)", () => {
      const alice = ok({ manager: "alice", applied: deployment(undefined, { finalizers: ["example.com/a"] }) })
      const bob = ok({ live: alice, manager: "bob", applied: deployment(undefined, { finalizers: ["example.com/b"] }), time: t1 })
      assert.deepStrictEqual((bob.metadata as Json.JsonObject).finalizers, ["example.com/a", "example.com/b"])
      assert.deepStrictEqual(entry(bob, "bob")?.fieldsV1, {
        "f:metadata": { "f:finalizers": { "v:\"example.com/b\"": {} } }
      })
      const aliceDrops = ok({ live: bob, manager: "alice", applied: deployment(), time: t2 })
      assert.deepStrictEqual((aliceDrops.metadata as Json.JsonObject).finalizers, ["example.com/b"])
    })

    it("treats atomic lists as one value with one owner", () => {
      const alice = ok({ manager: "alice", applied: deployment({ template: template({ name: "app", args: ["--a", "--b"] }) }) })
      const conflict = conflictOf({
        live: alice,
        manager: "bob",
        applied: deployment({ template: template({ name: "app", args: ["--c"] }) })
      })
      assert.deepStrictEqual(conflict.conflicts.map((c) => c.field), [".spec.template.spec.containers[name=\"app\"].args"])
      const forced = ok({
        live: alice,
        manager: "bob",
        force: true,
        applied: deployment({ template: template({ name: "app", args: ["--c"] }) }),
        time: t1
      })
      assert.deepStrictEqual(containers(forced)[0]?.args, ["--c"])
    })

    it("rejects a configuration with duplicate keys", () => {
      const result = apply({
        manager: "kubectl",
        applied: deployment({ template: template({ name: "app", image: "1" }, { name: "app", image: "2" }) })
      })
      assert.isTrue(Result.isFailure(result) && result.failure._tag === "ApplyInvalid")
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure.message, ".spec.template.spec.containers: duplicate entries for key [name=\"app\"]")
      }
    })
  })

  it("owns and replaces atomic maps whole (the label selector)", () => {
    const alice = ok({ manager: "alice", applied: deployment({ selector: { matchLabels: { app: "web", tier: "fe" } } }) })
    assert.deepStrictEqual(entry(alice, "alice")?.fieldsV1, { "f:spec": { "f:selector": {} } })
    const conflict = conflictOf({ live: alice, manager: "bob", applied: deployment({ selector: { matchLabels: { app: "web" } } }) })
    assert.deepStrictEqual(conflict.conflicts.map((c) => c.field), [".spec.selector"])
    const replaced = ok({ live: alice, manager: "alice", applied: deployment({ selector: { matchLabels: { app: "web" } } }), time: t1 })
    assert.deepStrictEqual(spec(replaced).selector, { matchLabels: { app: "web" } })
  })

  it("merges granular maps key by key", () => {
    const alice = ok({ manager: "alice", applied: deployment(undefined, { labels: { a: "1" } }) })
    const bob = ok({ live: alice, manager: "bob", applied: deployment(undefined, { labels: { b: "2" } }), time: t1 })
    assert.deepStrictEqual((bob.metadata as Json.JsonObject).labels, { a: "1", b: "2" })
  })

  it("returns the live object unchanged for a no-op apply, so the caller can skip the write", () => {
    const config = deployment({ replicas: 2, template: template({ name: "app", image: "app:1" }) }, { labels: { a: "1" } })
    const first = ok({ manager: "kubectl", applied: config })
    const again = ok({ live: first, manager: "kubectl", applied: config, time: t2 })
    assert.isTrue(Json.equals(again, first))
    const changed = ok({ live: first, manager: "kubectl", applied: deployment({ replicas: 3 }, { labels: { a: "1" } }), time: t2 })
    assert.isFalse(Json.equals(changed, first))
    assert.strictEqual(entry(changed, "kubectl")?.time, t2)
  })

  it("never owns identity fields", () => {
    const created = ok({
      manager: "kubectl",
      applied: { ...deployment({ replicas: 1 }), metadata: { name: "web", namespace: "default", uid: "u1", resourceVersion: "3" } }
    })
    assert.deepStrictEqual(entry(created, "kubectl")?.fieldsV1, { "f:spec": { "f:replicas": {} } })
    const renamedAway = ok({ live: created, manager: "kubectl", applied: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" } }, time: t1 })
    assert.strictEqual((renamedAway.metadata as Json.JsonObject).namespace, "default")
    assert.strictEqual(renamedAway.kind, "Deployment")
  })

  it("a created object keeps no null of its configuration's granular fields, in list items too, and the rest as given", () => {
    const created = ok({
      manager: "kubectl",
      applied: deployment({ replicas: 2, paused: null, template: { spec: { containers: [{ name: "a", image: "x", ports: null }, { name: "b", image: "y" }] } } })
    })
    assert.deepStrictEqual(spec(created), { replicas: 2, template: { spec: { containers: [{ name: "a", image: "x" }, { name: "b", image: "y" }] } } })
  })

  it("removes a field set to null, and reports a conflict if another manager owns it", () => {
    const live = createdByUpdate("kubectl-client-side-apply", { replicas: 3, paused: true })
    const conflict = conflictOf({ live, manager: "kubectl", applied: deployment({ paused: null }) })
    assert.deepStrictEqual(conflict.conflicts.map((c) => c.field), [".spec.paused"])
    const forced = ok({ live, manager: "kubectl", applied: deployment({ paused: null }), force: true, time: t1 })
    assert.deepStrictEqual(spec(forced), { replicas: 3 })
    assert.isUndefined(entry(forced, "kubectl"))
  })

  describe("scope", () => {
    const status = { replicas: 2, conditions: [{ type: "Available", status: "True" }] }

    it("a /status apply merges and owns only .status, in an entry with subresource \"status\"", () => {
      const live = ok({ manager: "kubectl", applied: deployment({ replicas: 2 }) })
      const applied = ok({
        live,
        manager: "controller",
        scope: "status",
        applied: { ...deployment({ replicas: 9 }, { labels: { ignored: "yes" } }), status },
        time: t1
      })
      assert.deepStrictEqual(applied.status, status)
      assert.strictEqual(spec(applied).replicas, 2)
      assert.isUndefined((applied.metadata as Json.JsonObject).labels)
      assert.deepStrictEqual(entry(applied, "controller"), {
        manager: "controller",
        operation: "Apply",
        apiVersion: "apps/v1",
        time: t1,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:status": {
            "f:conditions": { "k:{\"type\":\"Available\"}": { ".": {}, "f:status": {}, "f:type": {} } },
            "f:replicas": {}
          }
        },
        subresource: "status"
      })
    })

    it("a main-resource apply of a kind with a status subresource ignores .status", () => {
      const live = ok({ manager: "controller", scope: "status", applied: { ...deployment(), status }, live: ok({ manager: "kubectl", applied: deployment({ replicas: 2 }) }) })
      const applied = ok({ live, manager: "kubectl", scope: "withoutStatus", applied: { ...deployment({ replicas: 2 }), status: { replicas: 0 } }, time: t1 })
      assert.deepStrictEqual(applied.status, status)
      assert.isTrue(Json.equals(applied, live))
    })

    it("the same manager's main and status entries are separate", () => {
      const main = ok({ manager: "ctl", applied: deployment({ replicas: 2 }) })
      const both = ok({ live: main, manager: "ctl", scope: "status", applied: { ...deployment(), status }, time: t1 })
      assert.deepStrictEqual(entries(both).map((e) => [e.manager, e.subresource ?? ""]), [["ctl", ""], ["ctl", "status"]])
      // the status apply omitting spec does not remove the main entry's fields
      assert.strictEqual(spec(both).replicas, 2)
    })
  })
})

describe("ServerSideApply helpers", () => {
  it("formats conflicts with subresource managers", () => {
    assert.strictEqual(
      ServerSideApply.conflictMessage([{ manager: "ctrl", operation: "Apply", apiVersion: "v1", subresource: "status", field: ".status.phase" }]),
      "Apply failed with 1 conflict: conflict with \"ctrl\" with subresource \"status\": .status.phase"
    )
  })

  it("decodes apply bodies written as JSON or YAML", () => {
    const yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n"
    assert.deepStrictEqual(Result.getOrThrow(ServerSideApply.decodeBody(yaml)), {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: { replicas: 2 }
    })
    assert.deepStrictEqual(Result.getOrThrow(ServerSideApply.decodeBody("{\"kind\":\"ConfigMap\"}")), { kind: "ConfigMap" })
    assert.isTrue(Result.isFailure(ServerSideApply.decodeBody("- a\n- b\n")))
    assert.isTrue(Result.isFailure(ServerSideApply.decodeBody("a: [unclosed\n")))
  })
})
