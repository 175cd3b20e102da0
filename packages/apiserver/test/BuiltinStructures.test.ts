import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as FieldSet from "../src/FieldSet.ts"
import * as ServerSideApply from "../src/ServerSideApply.ts"
import * as Structure from "../src/Structure.ts"
import { type Json } from "@kubefx/schema/internal"

const at = (structure: Structure.Structure, ...path: ReadonlyArray<string | "[]">): Structure.Structure =>
  path.reduce((s, step) => (step === "[]" ? Structure.items(s) : Structure.field(s, step)), structure)

describe("BuiltinStructures", () => {
  it("knows the merge keys of pod templates in workloads", () => {
    for (const [group, kind] of [["", "Pod"], ["apps", "Deployment"], ["apps", "StatefulSet"]] as const) {
      const structure = BuiltinStructures.lookup(group, kind)!
      const podSpec = kind === "Pod" ? at(structure, "spec") : at(structure, "spec", "template", "spec")
      assert.deepStrictEqual(at(podSpec, "containers").listType, { _tag: "Map", keys: ["name"] }, kind)
      assert.deepStrictEqual(at(podSpec, "initContainers").listType, { _tag: "Map", keys: ["name"] })
      assert.deepStrictEqual(at(podSpec, "volumes").listType, { _tag: "Map", keys: ["name"] })
      assert.deepStrictEqual(at(podSpec, "imagePullSecrets").listType, { _tag: "Map", keys: ["name"] })
      assert.deepStrictEqual(at(podSpec, "tolerations").listType, { _tag: "Atomic" })
      const container = at(podSpec, "containers", "[]")
      assert.deepStrictEqual(at(container, "ports").listType, { _tag: "Map", keys: ["containerPort", "protocol"], keyDefaults: { protocol: "TCP" } })
      assert.deepStrictEqual(at(container, "env").listType, { _tag: "Map", keys: ["name"] })
      assert.deepStrictEqual(at(container, "volumeMounts").listType, { _tag: "Map", keys: ["mountPath"] })
      assert.isUndefined(at(container, "args").listType)
    }
    const deployment = BuiltinStructures.lookup("apps", "Deployment")!
    assert.strictEqual(at(deployment, "spec", "selector").mapType, "atomic")
    assert.deepStrictEqual(at(deployment, "status", "conditions").listType, { _tag: "Map", keys: ["type"] })
    assert.strictEqual(at(deployment, "spec", "template", "metadata"), BuiltinStructures.objectMeta)
  })

  it("knows Service ports by port and protocol, and the data maps of ConfigMaps and Secrets", () => {
    const service = BuiltinStructures.lookup("", "Service")!
    assert.deepStrictEqual(at(service, "spec", "ports").listType, { _tag: "Map", keys: ["port", "protocol"], keyDefaults: { protocol: "TCP" } })
    assert.deepStrictEqual(at(BuiltinStructures.lookup("", "ConfigMap")!, "data").additional, {})
    assert.deepStrictEqual(at(BuiltinStructures.lookup("", "Secret")!, "stringData").additional, {})
    assert.isDefined(BuiltinStructures.lookup("coordination.k8s.io", "Lease"))
    assert.isDefined(BuiltinStructures.lookup("", "Namespace"))
    assert.strictEqual(BuiltinStructures.lookup("events.k8s.io", "Event"), BuiltinStructures.lookup("", "Event"))
    assert.isUndefined(BuiltinStructures.lookup("stable.example.com", "CronTab"))
    assert.isUndefined(BuiltinStructures.lookup("apps", "ConfigMap"))
  })

  it("gives every kind the common metadata rules", () => {
    const meta = BuiltinStructures.objectMeta
    assert.deepStrictEqual(at(meta, "ownerReferences").listType, { _tag: "Map", keys: ["uid"] })
    assert.deepStrictEqual(at(meta, "finalizers").listType, { _tag: "Set" })
    assert.deepStrictEqual(at(meta, "managedFields").listType, { _tag: "Atomic" })
    assert.deepStrictEqual(at(meta, "labels").additional, {})
    for (const kind of Object.keys(BuiltinStructures.byKind)) {
      assert.strictEqual(at(BuiltinStructures.byKind[kind]!, "metadata"), meta, kind)
    }
    const crd = BuiltinStructures.withObjectMeta({ fields: { spec: { fields: { items: { listType: { _tag: "Set" } } } } } })
    assert.strictEqual(at(crd, "metadata"), meta)
    assert.deepStrictEqual(at(crd, "spec", "items").listType, { _tag: "Set" })
  })

  it("lets two controllers own ownerReferences by uid through server-side apply", () => {
    const ref = (uid: string): Json.JsonObject => ({ apiVersion: "v1", kind: "ConfigMap", name: uid, uid })
    const structure = BuiltinStructures.lookup("", "Secret")!
    const config = (uid: string): Json.JsonObject => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", ownerReferences: [ref(uid)] }
    })
    const options = { apiVersion: "v1", force: false, structure, time: "2024-05-01T10:00:00Z" }
    const first = Result.getOrThrow(ServerSideApply.apply({ ...options, live: undefined, applied: config("u1"), manager: "a" }))
    const second = Result.getOrThrow(ServerSideApply.apply({ ...options, live: first, applied: config("u2"), manager: "b" }))
    assert.deepStrictEqual((second.metadata as Json.JsonObject).ownerReferences, [ref("u1"), ref("u2")])
    const entries = (second.metadata as Json.JsonObject).managedFields as ReadonlyArray<Json.JsonObject>
    const owned = Result.getOrThrow(FieldSet.fromFieldsV1(entries.find((e) => e.manager === "b")!.fieldsV1!))
    assert.isTrue(FieldSet.has(owned, ["f:metadata", "f:ownerReferences", FieldSet.key({ uid: "u2" })]))
  })
})
