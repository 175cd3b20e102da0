import { describe, expect, it } from "vitest"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as CrdStructure from "../src/CrdStructure.ts"
import * as Structure from "../src/Structure.ts"
import type { JsonSchemaProps } from "@kubefx/schema"

const schema: JsonSchemaProps = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
          items: {
            type: "object",
            properties: { containerPort: { type: "integer" }, protocol: { type: "string", default: "TCP" } },
            required: ["containerPort"]
          }
        },
        args: { type: "array", "x-kubernetes-list-type": "atomic", items: { type: "string" } },
        plain: { type: "array", items: { type: "string" } },
        selector: { type: "object", "x-kubernetes-map-type": "atomic", additionalProperties: { type: "string" } },
        labels: { type: "object", additionalProperties: { type: "string" } },
        template: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true }
      }
    }
  }
}

describe("CrdStructure.fromSchema", () => {
  const structure = CrdStructure.fromSchema(schema)
  const spec = Structure.field(structure, "spec")

  it("reads list types from x-kubernetes-list-type", () => {
    expect(Structure.field(spec, "tags").listType).toEqual({ _tag: "Set" })
    expect(Structure.field(spec, "ports").listType).toEqual({ _tag: "Map", keys: ["containerPort", "protocol"], keyDefaults: { protocol: "TCP" } })
    expect(Structure.field(spec, "args").listType).toEqual({ _tag: "Atomic" })
  })

  it("lists without a marker stay atomic by default", () => {
    expect(Structure.field(spec, "plain").listType).toBeUndefined()
  })

  it("reads map types, and follows additionalProperties and items", () => {
    expect(Structure.field(spec, "selector").mapType).toBe("atomic")
    expect(Structure.field(spec, "labels").mapType).toBeUndefined()
    expect(Structure.field(spec, "labels").additional).toEqual({})
    expect(Structure.items(Structure.field(spec, "ports")).fields).toEqual({ containerPort: {}, protocol: {} })
  })

  it("gives metadata of the resource and of embedded resources ObjectMeta's structure", () => {
    expect(Structure.field(structure, "metadata")).toBe(BuiltinStructures.objectMeta)
    expect(Structure.field(Structure.field(spec, "template"), "metadata")).toBe(BuiltinStructures.objectMeta)
    expect(Structure.field(Structure.field(structure, "metadata"), "finalizers").listType).toEqual({ _tag: "Set" })
  })

  it("a resource without a schema only knows its metadata", () => {
    expect(CrdStructure.fromSchema(undefined)).toEqual({ fields: { metadata: BuiltinStructures.objectMeta } })
  })
})
