/**
 * The Go types of the built-in kinds, as kube-apiserver decodes a write into them, derived from
 * the API model classes of `@kubernetes/client-node` (generated from Kubernetes' OpenAPI spec):
 * each model's `attributeTypeMap` gives its fields' JSON names and types. From them come, per
 * group/version/kind, a {@link GoType} tree (what the decoder checks: types, unknown fields, Go
 * type names for error messages) and a structural schema (what the pruner drops).
 *
 * The models come from a newer Kubernetes (1.36) than the one served (1.32): the fields added
 * since 1.32 to the GA types are listed in {@link newerThanServed} and left out, so that 1.32's
 * unknown-field reports are kept. Models are loaded one file at a time, on first use of a kind.
 * Which fields Go leaves out when empty (`omitempty`) the models do not say: that comes from
 * 1.32's json tags ({@link OmitEmptyFields}).
 */
import { createRequire } from "node:module"
import type { JsonSchemaProps } from "@kubefx/schema"
import * as OmitEmptyFields from "./OmitEmptyFields.ts"

/** A Go type, as far as JSON decoding tells types apart. */
export type GoType =
  | Struct
  | { readonly _tag: "Slice"; readonly goName: string; readonly items: GoType }
  | { readonly _tag: "Map"; readonly goName: string; readonly values: GoType }
  | { readonly _tag: "Scalar"; readonly goName: Scalar }
  /** Types with their own JSON decoding (metav1.Time, MicroTime, IntOrString, Quantity). */
  | { readonly _tag: "Time" | "MicroTime" | "IntOrString" | "Quantity"; readonly goName: string }
  /** Free-form JSON (RawExtension, apiextensions JSON, FieldsV1): anything decodes. */
  | { readonly _tag: "Raw"; readonly goName: string }

export type Scalar = "string" | "bool" | "int32" | "int64" | "float64" | "[]uint8"

export interface Struct {
  readonly _tag: "Struct"
  /** The Go type's name ("DeploymentSpec"), as JSON type errors name the struct of a field. */
  readonly name: string
  /** The qualified name ("v1.DeploymentSpec"), as type errors name a field's type. */
  readonly goName: string
  readonly fields: ReadonlyMap<string, GoType>
  /**
   * How Go writes a field, where it is not a plain value: "omitempty" fields are left out at Go's
   * zero value (`""`, 0, false, an empty list or map, null), "omitemptyPointer" ones only when
   * null, "pointer" ones (no omitempty) are written as null when nil.
   */
  readonly encodings: ReadonlyMap<string, FieldEncoding>
}

export type FieldEncoding = "omitempty" | "omitemptyPointer" | "pointer"

const encodingMarks: Readonly<Record<string, FieldEncoding>> = { "?": "omitemptyPointer", "!": "pointer" }

/** A built-in kind's decoding type and structural schema. */
export interface KindSchema {
  readonly type: Struct
  readonly schema: JsonSchemaProps
}

interface Attribute {
  readonly baseName: string
  readonly type: string
  readonly format: string
}

/**
 * Fields the client-node models have that 1.32's Go types do not (GA types only), found by
 * comparing the models' attributes with the json tags of the 1.32 API types (k8s.io/api,
 * apimachinery and apiextensions-apiserver at v0.32.0).
 */
export const newerThanServed: Readonly<Record<string, ReadonlyArray<string>>> = {
  V1CSIDriverSpec: ["nodeAllocatableUpdatePeriodSeconds", "preventPodSchedulingIfMissing", "serviceAccountTokenInSecrets"],
  V1Container: ["restartPolicyRules"],
  V1ContainerStatus: ["stopSignal"],
  V1CustomResourceDefinitionCondition: ["observedGeneration"],
  V1CustomResourceDefinitionStatus: ["observedGeneration"],
  V1DeploymentStatus: ["terminatingReplicas"],
  V1EndpointHints: ["forNodes"],
  V1EnvVarSource: ["fileKeyRef"],
  V1EphemeralContainer: ["restartPolicyRules"],
  V1Lifecycle: ["stopSignal"],
  V1ListMeta: ["shardInfo"],
  V1NodeStatus: ["declaredFeatures"],
  V1NodeSystemInfo: ["swap"],
  V1PodCondition: ["observedGeneration"],
  V1PodSpec: ["hostnameOverride", "schedulingGroup"],
  V1PodStatus: ["allocatedResources", "extendedResourceClaimStatus", "nodeAllocatableResourceClaimStatuses", "observedGeneration", "resources"],
  V1ReplicaSetStatus: ["terminatingReplicas"],
  V1ResourceHealth: ["message"],
  V1VolumeError: ["errorCode"],
  V1VolumeMountStatus: ["volumeStatus"],
  V1VolumeProjection: ["podCertificate"],
  V2HPAScalingRules: ["tolerance"]
}

// resource.Quantity fields (singly or as a ResourceList), which the OpenAPI models type as
// strings: in JSON a quantity is a string or a number. Keyed by Go struct name, from 1.32's types.
const quantities: Readonly<Record<string, ReadonlyArray<string>>> = {
  ContainerStatus: ["allocatedResources"],
  CSIStorageCapacity: ["capacity", "maximumVolumeSize"],
  DeviceCapacity: ["value"],
  EmptyDirVolumeSource: ["sizeLimit"],
  LimitRangeItem: ["default", "defaultRequest", "max", "maxLimitRequestRatio", "min"],
  MetricTarget: ["averageValue", "value"],
  MetricValueStatus: ["averageValue", "value"],
  NodeStatus: ["allocatable", "capacity"],
  Overhead: ["podFixed"],
  PersistentVolumeClaimStatus: ["allocatedResources", "capacity"],
  PersistentVolumeSpec: ["capacity"],
  PodSpec: ["overhead"],
  ResourceFieldSelector: ["divisor"],
  ResourceQuotaSpec: ["hard"],
  ResourceQuotaStatus: ["hard", "used"],
  ResourceRequirements: ["limits", "requests"],
  VolumeResourceRequirements: ["limits", "requests"]
}

const modelsPath = "@kubernetes/client-node/dist/gen/models/"
const require = createRequire(import.meta.url)

const loadAttributes = (model: string): ReadonlyArray<Attribute> | undefined => {
  let loaded: unknown
  try {
    loaded = (require(`${modelsPath}${model}.js`) as Record<string, unknown>)[model]
  } catch {
    return undefined
  }
  const attributes = (loaded as { readonly attributeTypeMap?: unknown } | undefined)?.attributeTypeMap
  return Array.isArray(attributes) ? attributes as ReadonlyArray<Attribute> : undefined
}

/** "V1beta1", "CoreV1" or "EventsV1" prefixes: the Go package is the version, the rest the struct. */
const splitModel = (model: string): { readonly pkg: string; readonly name: string } => {
  const m = /^(?:[A-Z][a-z]+)?(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$/.exec(model)
  return m === null ? { pkg: "v1", name: model } : { pkg: m[1]!.toLowerCase(), name: m[2]! }
}

const time: GoType = { _tag: "Time", goName: "v1.Time" }
const microTime: GoType = { _tag: "MicroTime", goName: "v1.MicroTime" }
const intOrString: GoType = { _tag: "IntOrString", goName: "intstr.IntOrString" }
const quantity: GoType = { _tag: "Quantity", goName: "resource.Quantity" }
const raw: GoType = { _tag: "Raw", goName: "interface {}" }
const scalar = (goName: Scalar): GoType => ({ _tag: "Scalar", goName })

const mapPrefix = "{ [key: string]: "

const typeOf = (type: string, format: string, structs: Map<string, Struct>): GoType => {
  if (type.startsWith("Array<")) {
    const items = typeOf(type.slice(6, -1), format, structs)
    return { _tag: "Slice", goName: `[]${items.goName}`, items }
  }
  if (type.startsWith(mapPrefix)) {
    const values = typeOf(type.slice(mapPrefix.length, -3), format, structs)
    return { _tag: "Map", goName: `map[string]${values.goName}`, values }
  }
  switch (type) {
    case "string":
      return scalar(format === "byte" ? "[]uint8" : "string")
    case "boolean":
      return scalar("bool")
    case "number":
      return scalar(format === "int32" ? "int32" : format === "int64" ? "int64" : "float64")
    case "Date":
      return time
    case "V1MicroTime":
      return microTime
    case "IntOrString":
      return intOrString
    case "any":
    case "object":
      return raw
  }
  return structOf(type, structs) ?? raw
}

const asQuantity = (type: GoType): GoType =>
  type._tag === "Map" ? { _tag: "Map", goName: "v1.ResourceList", values: quantity } : quantity

/** The struct of a model, built once per lookup; recursive types (JSONSchemaProps) share it. */
const structOf = (model: string, structs: Map<string, Struct>): Struct | undefined => {
  const known = structs.get(model)
  if (known !== undefined) return known
  const attributes = loadAttributes(model)
  if (attributes === undefined) return undefined
  const { pkg, name } = splitModel(model)
  const fields = new Map<string, GoType>()
  const encodings = new Map<string, FieldEncoding>()
  for (const field of OmitEmptyFields.omitEmptyFields[model]?.split(" ") ?? []) {
    const mark = encodingMarks[field.slice(-1)]
    encodings.set(mark === undefined ? field : field.slice(0, -1), mark ?? "omitempty")
  }
  const struct: Struct = { _tag: "Struct", name, goName: `${pkg}.${name}`, fields, encodings }
  structs.set(model, struct)
  const newer = newerThanServed[model] ?? []
  const quantityFields = quantities[name] ?? []
  for (const a of attributes) {
    if (newer.includes(a.baseName)) continue
    const type = typeOf(a.type, a.format, structs)
    fields.set(a.baseName, quantityFields.includes(a.baseName) ? asQuantity(type) : type)
  }
  return struct
}

/**
 * The client-node model names that may hold a kind, most specific first: kinds whose name
 * clashes across groups carry the group ("CoreV1Event", "EventsV1Event").
 *
 * @example
 * import * as BuiltinSchemas from "./BuiltinSchemas.ts"
 * BuiltinSchemas.modelNames("apps", "v1", "Deployment") // ["AppsV1Deployment", "V1Deployment"]
 */
export const modelNames = (group: string, version: string, kind: string): ReadonlyArray<string> => {
  const groupWord = group === "" ? "core" : group.split(".")[0]!
  const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
  const versioned = `${capital(version)}${kind}`
  return [`${capital(groupWord)}${versioned}`, versioned]
}

const schemaOf = (type: GoType, done: Map<GoType, JsonSchemaProps>): JsonSchemaProps => {
  const known = done.get(type)
  if (known !== undefined) return known
  switch (type._tag) {
    case "Struct": {
      // Filled after it is cached, so that recursive types end in a cycle, not an endless tree.
      const properties: Record<string, JsonSchemaProps> = {}
      const schema: JsonSchemaProps = { type: "object", properties }
      done.set(type, schema)
      for (const [field, fieldType] of type.fields) properties[field] = schemaOf(fieldType, done)
      return schema
    }
    case "Slice":
      return { type: "array", items: schemaOf(type.items, done) }
    case "Map":
      return { type: "object", additionalProperties: schemaOf(type.values, done) }
    case "Scalar":
      return scalarSchemas[type.goName]
    case "Time":
    case "MicroTime":
      return { type: "string", format: "date-time" }
    case "IntOrString":
      return { "x-kubernetes-int-or-string": true }
    case "Quantity":
      return { oneOf: [{ type: "string" }, { type: "number" }] }
    case "Raw":
      return { "x-kubernetes-preserve-unknown-fields": true }
  }
}

const scalarSchemas: Readonly<Record<Scalar, JsonSchemaProps>> = {
  string: { type: "string" },
  bool: { type: "boolean" },
  int32: { type: "integer", format: "int32" },
  int64: { type: "integer", format: "int64" },
  float64: { type: "number", format: "double" },
  "[]uint8": { type: "string", format: "byte" }
}

// Shared by all kinds (ObjectMeta, PodSpec... are derived once); filled lazily, never changed.
const structs = new Map<string, Struct>()
const schemas = new Map<GoType, JsonSchemaProps>()
const cache = new Map<string, KindSchema | undefined>()

const derive = (group: string, version: string, kind: string): KindSchema | undefined => {
  for (const model of modelNames(group, version, kind)) {
    const type = structOf(model, structs)
    // Only a top-level kind has these; a same-named nested type is not the kind.
    if (type === undefined || !type.fields.has("apiVersion") || !type.fields.has("metadata")) continue
    return { type, schema: schemaOf(type, schemas) }
  }
  return undefined
}

/**
 * The decoding type and structural schema of a built-in group/version/kind, derived on first use
 * and cached; undefined when client-node has no model for it.
 *
 * @example
 * import * as BuiltinSchemas from "./BuiltinSchemas.ts"
 * const deployment = BuiltinSchemas.lookup("apps", "v1", "Deployment")!
 * deployment.schema.properties?.spec?.properties?.replicas // { type: "integer", format: "int32" }
 */
export const lookup = (group: string, version: string, kind: string): KindSchema | undefined => {
  const key = `${group}/${version}/${kind}`
  if (cache.has(key)) return cache.get(key)
  const derived = derive(group, version, kind)
  cache.set(key, derived)
  return derived
}
