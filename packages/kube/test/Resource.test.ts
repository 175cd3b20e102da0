import { assert, describe, it } from "@effect/vitest"
import { Builtins, Resource } from "@kubefx/kube"
import { Effect, Exit, Schema } from "effect"
import { Widget } from "./fixtures/Widget.ts"

// Decoding skips the metadata Schema for plain metadata; it must answer what the Schema answers.
const bySchema = <A>(resource: Resource.Resource<A & Resource.CustomObject<unknown, unknown>> | Resource.Resource<any>, value: unknown) =>
  Effect.runSyncExit(Effect.mapError(Schema.decodeUnknownEffect(resource.schema)(value), (error) => error.message))
const byDecode = (resource: Resource.Resource<any>, value: unknown) =>
  Effect.runSyncExit(Effect.mapError(Resource.decode(resource, value), (error) => error.message))

const served = {
  name: "web-config",
  namespace: "default",
  uid: "6f1c9d7e-1a2b-4c3d-8e9f-0a1b2c3d4e5f",
  resourceVersion: "123456",
  generation: 3,
  creationTimestamp: "2026-11-26T17:00:00Z",
  labels: { "app.kubernetes.io/managed-by": "kubefx-widgets" },
  annotations: { "kubefx.dev/applied-digest": "0123456789abcdef" },
  finalizers: ["demo.kubefx.dev/cleanup"],
  ownerReferences: [{ apiVersion: "demo.kubefx.dev/v1", kind: "Widget", name: "web", uid: "u-1", controller: true, blockOwnerDeletion: true }],
  managedFields: [{ manager: "widgets", operation: "Apply", fieldsType: "FieldsV1", fieldsV1: { "f:data": { "f:message": {} } } }],
  selfLink: "/api/v1/namespaces/default/configmaps/web-config"
}

// Each one is plain metadata but for one field, which the Schema rejects, rewrites or keeps.
const unusual: Record<string, unknown> = {
  "a number label": { ...served, labels: { tier: 1 } },
  "a string generation": { ...served, generation: "3" },
  "an unknown owner reference field": { ...served, ownerReferences: [{ ...served.ownerReferences[0], extra: "dropped by the Schema" }] },
  "an owner reference without uid": { ...served, ownerReferences: [{ apiVersion: "v1", kind: "Widget", name: "web" }] },
  "a non-boolean controller": { ...served, ownerReferences: [{ ...served.ownerReferences[0], controller: "yes" }] },
  "a number finalizer": { ...served, finalizers: [1] },
  "managedFields not a list": { ...served, managedFields: {} },
  "an undefined field": { ...served, namespace: undefined },
  "an undefined unknown field": { ...served, extra: undefined },
  "a __proto__ key": JSON.parse(`{"name":"a","__proto__":{"polluted":true}}`),
  "no metadata object": "web",
  "null metadata": null
}

describe("Resource.decode", () => {
  it("takes plain metadata as it is and answers what the resource's Schema answers", () => {
    const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: served, data: { message: "hello" } }
    const decoded = byDecode(Builtins.ConfigMap, configMap)
    assert.deepStrictEqual(decoded, bySchema(Builtins.ConfigMap, configMap))
    assert.isTrue(Exit.isSuccess(decoded) && decoded.value.metadata === served)
    const widget = { apiVersion: Widget.apiVersion, kind: Widget.kind, metadata: { name: "web", namespace: "default" }, spec: { replicas: 1, message: "m" } }
    const decodedWidget = byDecode(Widget, widget)
    assert.deepStrictEqual(decodedWidget, bySchema(Widget, widget))
    assert.isTrue(Exit.isSuccess(decodedWidget) && decodedWidget.value.metadata === widget.metadata)
  })

  it("hands unusual metadata to the Schema, and answers what it answers", () => {
    for (const [what, metadata] of Object.entries(unusual)) {
      for (const resource of [Builtins.ConfigMap, Widget] as const) {
        const value = { apiVersion: resource.apiVersion, kind: resource.kind, metadata, data: {}, spec: { replicas: 1, message: "m" } }
        const decoded = byDecode(resource, value)
        assert.deepStrictEqual(decoded, bySchema(resource, value), `${resource.kind}: ${what}`)
        if (Exit.isSuccess(decoded)) assert.notStrictEqual(decoded.value.metadata, metadata, `${resource.kind}: ${what}`)
      }
    }
  })

  it("still fails an object whose other fields do not decode", () => {
    const value = { apiVersion: "v1", kind: "ConfigMap", metadata: served, data: { message: 1 } }
    const decoded = byDecode(Builtins.ConfigMap, value)
    assert.isTrue(Exit.isFailure(decoded))
    assert.deepStrictEqual(decoded, bySchema(Builtins.ConfigMap, value))
  })
})

describe("Resource.decodeNow", () => {
  it("answers at once what decode answers, and nothing for an object the Schema refuses", () => {
    const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: served, data: { message: "hello" } }
    const decoded = byDecode(Builtins.ConfigMap, configMap)
    assert.isTrue(Exit.isSuccess(decoded))
    assert.deepStrictEqual(Resource.decodeNow(Builtins.ConfigMap, configMap), Exit.isSuccess(decoded) ? decoded.value : undefined)
    assert.isUndefined(Resource.decodeNow(Builtins.ConfigMap, { ...configMap, data: { message: 1 } }))
    assert.isUndefined(Resource.decodeNow(Widget, { apiVersion: Widget.apiVersion, kind: Widget.kind, metadata: { name: "w" }, spec: { replicas: "one", message: "m" } }))
  })
})
