/**
 * The merge {@link Structure.Structure} of a custom resource, read from its openAPIV3Schema the
 * way the apiserver derives its structured-merge-diff type: `x-kubernetes-list-type`
 * (atomic / set / map with `x-kubernetes-list-map-keys`) on arrays, `x-kubernetes-map-type` on
 * objects, following `properties`, `additionalProperties` and `items`. Nodes without markers stay
 * unmarked (lists atomic, objects granular). `metadata` of the resource and of every
 * `x-kubernetes-embedded-resource` gets ObjectMeta's structure (`BuiltinStructures.objectMeta`).
 */
import * as BuiltinStructures from "./BuiltinStructures.ts"
import type * as Structure from "./Structure.ts"
import { type Json } from "@kubefx/schema/internal"
import type { JsonSchemaProps } from "@kubefx/schema"

const listTypeOf = (schema: JsonSchemaProps): Structure.ListType | undefined => {
  switch (schema["x-kubernetes-list-type"]) {
    case "atomic":
      return { _tag: "Atomic" }
    case "set":
      return { _tag: "Set" }
    case "map": {
      const keys = schema["x-kubernetes-list-map-keys"] ?? []
      const item = schema.items?.properties ?? {}
      const defaulted = keys.flatMap((key) => item[key]?.default === undefined ? [] : [[key, item[key].default as Json.Json] as const])
      return { _tag: "Map", keys, ...(defaulted.length === 0 ? {} : { keyDefaults: Object.fromEntries(defaulted) }) }
    }
    default:
      return undefined
  }
}

/**
 * The structure of any node of a schema (not a resource root: no implicit metadata unless the node
 * is an embedded resource).
 *
 * @example
 * import * as CrdStructure from "./CrdStructure.ts"
 * CrdStructure.node({ type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
 *   items: { type: "object" } }).listType // { _tag: "Map", keys: ["name"] }
 */
export const node = (schema: JsonSchemaProps): Structure.Structure => {
  const listType = listTypeOf(schema)
  const mapType = schema["x-kubernetes-map-type"]
  const properties = Object.entries(schema.properties ?? {})
  const embedded = schema["x-kubernetes-embedded-resource"] === true
  const fields: Record<string, Structure.Structure> = Object.fromEntries(properties.map(([k, v]) => [k, node(v)]))
  if (embedded) fields.metadata = BuiltinStructures.objectMeta
  const additional = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined
  return {
    ...(listType === undefined ? {} : { listType }),
    ...(mapType === undefined ? {} : { mapType }),
    ...(properties.length > 0 || embedded ? { fields } : {}),
    ...(additional === undefined ? {} : { additional: node(additional) }),
    ...(schema.items === undefined ? {} : { items: node(schema.items) })
  }
}

/**
 * The structure of a custom resource from its version's openAPIV3Schema (none: only metadata is
 * known).
 *
 * @example
 * import * as BuiltinStructures from "./BuiltinStructures.ts"
 * import * as CrdStructure from "./CrdStructure.ts"
 * const s = CrdStructure.fromSchema({ type: "object", properties: { spec: { type: "object", properties: {
 *   tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } } } } } })
 * s.fields?.spec?.fields?.tags?.listType // { _tag: "Set" }
 * s.fields?.metadata === BuiltinStructures.objectMeta // true
 */
export const fromSchema = (schema: JsonSchemaProps | undefined): Structure.Structure =>
  node({ ...(schema ?? {}), "x-kubernetes-embedded-resource": true })
