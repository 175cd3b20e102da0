import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as FieldSet from "../src/FieldSet.ts"
import * as ManagedFields from "../src/ManagedFields.ts"
import { Json } from "@kubefx/schema/internal"

const configMaps = BuiltinStructures.lookup("", "ConfigMap")!
const deployments = BuiltinStructures.lookup("apps", "Deployment")!
const t0 = "2024-05-01T10:00:00Z"
const t1 = "2024-05-01T10:05:00Z"
const t2 = "2024-05-01T10:10:00Z"

const entries = (object: Json.JsonObject): ReadonlyArray<Json.JsonObject> =>
  ((object.metadata as Json.JsonObject).managedFields ?? []) as ReadonlyArray<Json.JsonObject>

const fieldsOf = (object: Json.JsonObject, manager: string): Json.Json | undefined =>
  entries(object).find((e) => e.manager === manager)?.fieldsV1

const configMap = (data: Json.JsonObject, labels?: Json.JsonObject): Json.JsonObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: "settings",
    namespace: "default",
    uid: "3f0c",
    resourceVersion: "7",
    creationTimestamp: t0,
    ...(labels === undefined ? {} : { labels })
  },
  data
})

const write = (live: Json.JsonObject | undefined, next: Json.JsonObject, manager: string, time: string, subresource?: string) =>
  ManagedFields.update({ live, next, manager, apiVersion: "v1", time, structure: configMaps, subresource })

describe("ManagedFields.update", () => {
  it("gives the creator an Update entry for every field it set, identity fields excluded", () => {
    const created = write(undefined, configMap({ a: "1", b: "2" }, { app: "web" }), "kubectl-create", t0)
    assert.deepStrictEqual(entries(created), [{
      manager: "kubectl-create",
      operation: "Update",
      apiVersion: "v1",
      time: t0,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:data": { ".": {}, "f:a": {}, "f:b": {} },
        "f:metadata": { "f:labels": { ".": {}, "f:app": {} } }
      }
    }])
  })

  it("gives a main-resource writer none of .status when the kind has a /status subresource", () => {
    const job = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec: { parallelism: 1 }, status: {} }
    const created = ManagedFields.update({ live: undefined, next: job, manager: "kubectl-create", apiVersion: "batch/v1", time: t0, structure: {}, statusSubresource: true })
    assert.deepStrictEqual(fieldsOf(created, "kubectl-create"), { "f:spec": { ".": {}, "f:parallelism": {} } })
    // Without a status subresource the creator owns what it wrote there.
    const plain = ManagedFields.update({ live: undefined, next: job, manager: "kubectl-create", apiVersion: "batch/v1", time: t0, structure: {} })
    assert.deepStrictEqual(fieldsOf(plain, "kubectl-create"), { "f:spec": { ".": {}, "f:parallelism": {} }, "f:status": {} })
    // A write to /status owns the status it changes.
    const counted = ManagedFields.update({
      live: created,
      next: { ...created, status: { active: 1 } },
      manager: "job-controller",
      apiVersion: "batch/v1",
      time: t1,
      structure: {},
      subresource: "status",
      statusSubresource: true
    })
    assert.deepStrictEqual(fieldsOf(counted, "job-controller"), { "f:status": { "f:active": {} } })
  })

  it("moves the fields a second writer changes or adds to its own entry", () => {
    const created = write(undefined, configMap({ a: "1", b: "2" }), "kubectl-create", t0)
    const edited = write(created, { ...created, data: { a: "1", b: "20", c: "3" } }, "kubectl-edit", t1)
    assert.deepStrictEqual(fieldsOf(edited, "kubectl-create"), { "f:data": { ".": {}, "f:a": {} } })
    assert.deepStrictEqual(fieldsOf(edited, "kubectl-edit"), { "f:data": { "f:b": {}, "f:c": {} } })
    // the entry that lost fields keeps its time: only the writer's entry is stamped
    assert.strictEqual(entries(edited).find((e) => e.manager === "kubectl-create")?.time, t0)
    assert.strictEqual(entries(edited).find((e) => e.manager === "kubectl-edit")?.time, t1)
  })

  it("takes removed fields away from every owner and drops entries left empty", () => {
    const created = write(undefined, configMap({ a: "1" }), "creator", t0)
    const edited = write(created, { ...created, data: { a: "1", b: "2" } }, "editor", t1)
    const trimmed = write(edited, { ...edited, data: { a: "1" } }, "trimmer", t2)
    assert.deepStrictEqual(entries(trimmed).map((e) => e.manager), ["creator"])
    const emptied = write(trimmed, { ...trimmed, data: {} }, "trimmer", t2)
    // data itself stays (as {}), owned by its creator; a is gone and owned by nobody
    assert.deepStrictEqual(fieldsOf(emptied, "creator"), { "f:data": {} })
  })

  it("leaves managedFields untouched when the write changes nothing", () => {
    const created = write(undefined, configMap({ a: "1" }), "creator", t0)
    const same = write(created, { ...created }, "someone-else", t1)
    assert.deepStrictEqual(same, created)
  })

  it("keeps one entry per manager, stamped with its last change", () => {
    const created = write(undefined, configMap({ a: "1" }), "tool", t0)
    const again = write(created, { ...created, data: { a: "1", b: "2" } }, "tool", t1)
    assert.deepStrictEqual(entries(again).length, 1)
    assert.strictEqual(entries(again)[0]?.time, t1)
    assert.deepStrictEqual(fieldsOf(again, "tool"), { "f:data": { ".": {}, "f:a": {}, "f:b": {} } })
  })

  it("records a /status write in its own entry with subresource \"status\"", () => {
    const structure = deployments
    const created = ManagedFields.update({
      live: undefined,
      next: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 1 } },
      manager: "kubectl-create",
      apiVersion: "apps/v1",
      time: t0,
      structure
    })
    const status = ManagedFields.update({
      live: created,
      next: { ...created, status: { replicas: 1, conditions: [{ type: "Available", status: "True" }] } },
      manager: "kube-controller-manager",
      apiVersion: "apps/v1",
      subresource: "status",
      time: t1,
      structure
    })
    const entry = entries(status).find((e) => e.manager === "kube-controller-manager")
    assert.deepStrictEqual(entry, {
      manager: "kube-controller-manager",
      operation: "Update",
      apiVersion: "apps/v1",
      time: t1,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:status": {
          ".": {},
          "f:conditions": { ".": {}, "k:{\"type\":\"Available\"}": { ".": {}, "f:status": {}, "f:type": {} } },
          "f:replicas": {}
        }
      },
      subresource: "status"
    })
  })

  it("clears managedFields when a write sets them to [{}], and keeps them for []", () => {
    const created = write(undefined, configMap({ a: "1" }), "creator", t0)
    const reset = write(created, { ...created, metadata: { ...(created.metadata as Json.JsonObject), managedFields: [{}] } }, "x", t1)
    assert.isFalse(Object.hasOwn(reset.metadata as Json.JsonObject, "managedFields"))
    const resetAndChange = write(
      created,
      { ...created, metadata: { ...(created.metadata as Json.JsonObject), managedFields: [{}] }, data: { a: "2" } },
      "changer",
      t1
    )
    assert.deepStrictEqual(entries(resetAndChange).map((e) => [e.manager, e.fieldsV1]), [["changer", { "f:data": { "f:a": {} } }]])
    // An empty list is what a client unaware of managedFields sends: the owners stay.
    const two = write(undefined, configMap({ a: "1", b: "1" }), "creator", t0)
    const keptAndChanged = write(
      two,
      { ...two, metadata: { ...(two.metadata as Json.JsonObject), managedFields: [] }, data: { a: "2", b: "1" } },
      "changer",
      t1
    )
    assert.deepStrictEqual(
      entries(keptAndChanged).map((e) => [e.manager, e.fieldsV1]).sort(),
      [["changer", { "f:data": { "f:a": {} } }], ["creator", { "f:data": { ".": {}, "f:b": {} } }]]
    )
  })

  it("takes managedFields a main-resource write sets, but not from a subresource write", () => {
    const created = write(undefined, configMap({ a: "1" }), "creator", t0)
    const given = [{ manager: "someone", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:data": { "f:a": {} } } }]
    const next = { ...created, metadata: { ...(created.metadata as Json.JsonObject), managedFields: given } }
    assert.deepStrictEqual(entries(write(created, next, "x", t1)), given)
    assert.deepStrictEqual(entries(write(created, next, "x", t1, "status")), entries(created))
  })
})

describe("ManagedFields", () => {
  it("decodes entries and rejects malformed ones", () => {
    const object = configMap({}, undefined)
    const withEntries = (managedFields: Json.Json) => ({ ...object, metadata: { ...(object.metadata as Json.JsonObject), managedFields } })
    const owners = Result.getOrThrow(ManagedFields.decode(withEntries([
      { manager: "a", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:data": { "f:x": {} } }, subresource: "status" }
    ])))
    assert.strictEqual(owners[0]?.subresource, "status")
    assert.isTrue(FieldSet.has(owners[0]!.fields, ["f:data", "f:x"]))
    assert.isTrue(Result.isFailure(ManagedFields.decode(withEntries([{ manager: "a", operation: "Delete", fieldsV1: {} }]))))
    assert.isTrue(Result.isFailure(ManagedFields.decode(withEntries([{ manager: "a", operation: "Apply", fieldsType: "FieldsV2" }]))))
    assert.isTrue(Result.isFailure(ManagedFields.decode(withEntries({ not: "a list" }))))
    assert.deepStrictEqual(Result.getOrThrow(ManagedFields.decode(object)), [])
  })

  it("orders entries like the API server: Apply before Update, then by time, then by manager", () => {
    const fields = FieldSet.make([["f:data", "f:a"]])
    const encoded = ManagedFields.encode([
      { manager: "z", operation: "Update", apiVersion: "v1", time: t0, fields },
      { manager: "b", operation: "Apply", apiVersion: "v1", time: t1, fields },
      { manager: "a", operation: "Apply", apiVersion: "v1", time: t1, fields },
      { manager: "c", operation: "Apply", apiVersion: "v1", time: t0, fields },
      { manager: "empty", operation: "Apply", apiVersion: "v1", time: t0, fields: FieldSet.empty }
    ])
    assert.deepStrictEqual(encoded.map((e) => e.manager), ["c", "a", "b", "z"])
  })

  it("names owners the way conflict messages do", () => {
    assert.strictEqual(ManagedFields.describe({ manager: "kubectl", operation: "Apply", apiVersion: "v1" }), "\"kubectl\"")
    assert.strictEqual(
      ManagedFields.describe({ manager: "kubectl-client-side-apply", operation: "Update", apiVersion: "apps/v1" }),
      "\"kubectl-client-side-apply\" using apps/v1"
    )
    assert.strictEqual(
      ManagedFields.describe({ manager: "ctrl", operation: "Update", apiVersion: "v1", subresource: "status" }),
      "\"ctrl\" with subresource \"status\" using v1"
    )
  })

  it("never owns identity fields", () => {
    const c = ManagedFields.changes(undefined, configMap({ a: "1" }), configMaps)
    for (const path of [["f:apiVersion"], ["f:kind"], ["f:metadata"], ["f:metadata", "f:name"], ["f:metadata", "f:uid"]]) {
      assert.isFalse(FieldSet.has(c.added, path), path.join("."))
    }
    assert.isTrue(Json.equals(ManagedFields.strip({ metadata: { name: "a", managedFields: [] } }), { metadata: { name: "a" } }))
  })
})
