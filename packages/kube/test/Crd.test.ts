import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Yaml } from "effect/encoding"
import { Builtins, Crd, Resource, StructuralSchema } from "@kubefx/kube"
import { Widget } from "./fixtures/Widget.ts"

describe("Crd markers", () => {
  it("list, map, int-or-string, embedded and CEL markers reach the generated schema; enums never use const", () => {
    const p = StructuralSchema.make(Schema.Struct({
      ports: Schema.Array(Schema.Struct({ name: Schema.String, port: Schema.Int })).annotate(Crd.listMap("name")),
      tags: Schema.Array(Schema.String).annotate(Crd.listType("set")),
      labels: Schema.Record(Schema.String, Schema.String).annotate(Crd.mapType("atomic")),
      target: Crd.IntOrString,
      values: Schema.Struct({ known: Schema.String }).annotate(Crd.preserveUnknownFields),
      template: Schema.Record(Schema.String, Schema.Unknown).annotate(Crd.embeddedResource),
      range: Schema.Struct({ min: Schema.Int, max: Schema.Int }).annotate(Crd.validations({ rule: "self.min <= self.max" }))
    })).properties!
    expect(p.ports).toMatchObject({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
    expect(p.tags).toMatchObject({ "x-kubernetes-list-type": "set" })
    expect(p.labels).toMatchObject({ "x-kubernetes-map-type": "atomic" })
    expect(p.target).toEqual({ anyOf: [{ type: "integer" }, { type: "string" }], "x-kubernetes-int-or-string": true })
    expect(p.values).toMatchObject({ "x-kubernetes-preserve-unknown-fields": true })
    expect(p.template).toMatchObject({ "x-kubernetes-embedded-resource": true })
    expect(p.range!["x-kubernetes-validations"]).toEqual([{ rule: "self.min <= self.max" }])
    expect(JSON.stringify(StructuralSchema.make(Widget.custom!.spec))).not.toContain("const")
  })
})

describe("Crd.make", () => {
  it("names, scope, one served and stored version, status subresource, printer columns", () => {
    const crd = Crd.make(Widget)
    expect(crd.apiVersion).toBe("apiextensions.k8s.io/v1")
    expect(crd.kind).toBe("CustomResourceDefinition")
    expect(crd.metadata.name).toBe("widgets.demo.kubefx.dev")
    expect(crd.spec.group).toBe("demo.kubefx.dev")
    expect(crd.spec.names).toEqual({
      kind: "Widget",
      listKind: "WidgetList",
      plural: "widgets",
      singular: "widget",
      shortNames: ["wg"],
      categories: ["all"]
    })
    expect(crd.spec.scope).toBe("Namespaced")
    expect(crd.spec.versions).toHaveLength(1)
    const [version] = crd.spec.versions
    expect(version).toMatchObject({ name: "v1", served: true, storage: true, subresources: { status: {} } })
    expect(version!.additionalPrinterColumns).toEqual([
      { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
    ])
    const root = version!.schema.openAPIV3Schema
    expect(root.type).toBe("object")
    expect(Object.keys(root.properties!)).toEqual(["apiVersion", "kind", "metadata", "spec", "status"])
    expect(root.properties!.metadata).toEqual({ type: "object" })
    expect(root.properties!.apiVersion!.type).toBe("string")
    expect(root.required).toEqual(["spec"])
    expect(root.properties!.spec).toEqual(StructuralSchema.make(Widget.custom!.spec))
  })

  it("cluster scope, no status and no printer columns", () => {
    const Tenant = Resource.custom({
      group: "demo.kubefx.dev",
      version: "v1alpha1",
      kind: "Tenant",
      plural: "tenants",
      namespaced: false,
      spec: Schema.Struct({ owner: Schema.String })
    })
    const crd = Crd.make(Tenant)
    expect(crd.spec.scope).toBe("Cluster")
    expect(crd.spec.names).toEqual({ kind: "Tenant", listKind: "TenantList", plural: "tenants", singular: "tenant" })
    const [version] = crd.spec.versions
    expect(version!.subresources).toBeUndefined()
    expect(version!.additionalPrinterColumns).toBeUndefined()
    expect(version!.schema.openAPIV3Schema.properties!.status).toBeUndefined()
  })

  it("built-in kinds have no CRD", () => {
    expect(Crd.isCustom(Widget)).toBe(true)
    expect(Crd.isCustom(Builtins.ConfigMap)).toBe(false)
    expect(() => Crd.make(Builtins.ConfigMap)).toThrow(/built-in kind/)
  })

  it("YAML is a stream of the CRDs, with every key kept", () => {
    const Gadget = Resource.custom({
      group: "demo.kubefx.dev",
      version: "v1",
      kind: "Gadget",
      plural: "gadgets",
      spec: Schema.Struct({ port: Crd.IntOrString })
    })
    const crds = [Crd.make(Widget), Crd.make(Gadget)]
    const text = Crd.toYaml(crds)
    const documents = text.split(/^---$/m)
    expect(documents).toHaveLength(2)
    // parsed back, each document is the CRD object itself: x-kubernetes-* keys included
    expect(documents.map((d) => Yaml.parse(d))).toEqual(JSON.parse(JSON.stringify(crds)))
    expect(text).toContain("x-kubernetes-list-map-keys")
    expect(text).toContain("x-kubernetes-int-or-string: true")
  })
})

describe("Crd.check", () => {
  it("checks an object against the generated schema and its CEL rules, without a cluster", async () => {
    const Range = Resource.custom({
      group: "demo.kubefx.dev",
      version: "v1",
      kind: "Range",
      plural: "ranges",
      spec: Schema.Struct({ min: Schema.Int, max: Schema.Int.check(Schema.isLessThanOrEqualTo(10)) }).annotate(
        Crd.validations({ rule: "self.min <= self.max", message: "min must not exceed max" })
      )
    })
    const range = (spec: Record<string, unknown>) => ({ apiVersion: "demo.kubefx.dev/v1", kind: "Range", metadata: { name: "r" }, spec })
    const causes = async (spec: Record<string, unknown>) => (await Effect.runPromise(Crd.check(Range, range(spec)))).causes
    expect(await causes({ min: 1, max: 2 })).toEqual([])
    expect(await causes({ min: 3, max: 2 })).toEqual([
      { reason: "FieldValueInvalid", field: "spec", message: 'Invalid value: "object": min must not exceed max' }
    ])
    expect((await causes({ min: 1, max: 11 })).map((c) => c.field)).toEqual(["spec.max"])
  })
})
