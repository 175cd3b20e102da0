/**
 * Pruning of custom resources: on write, kube-apiserver drops every field its structural schema
 * does not declare (below `x-kubernetes-preserve-unknown-fields: true` unknown fields stay), and
 * ObjectMeta fields it does not know; the paths of what it dropped feed `fieldValidation`:
 * Ignore drops silently, Warn (the default) answers one `Warning: 299 - "unknown field \"spec.foo\""`
 * header per path, Strict fails with 400 `strict decoding error: unknown field "spec.foo", ...`.
 *
 * Order on write: {@link Defaulting.apply}, then {@link prune}, then validation.
 */
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"

/** A pruned value and the paths of the fields that were dropped, as kube-apiserver reports them. */
export interface Pruned<A> {
  readonly value: A
  readonly unknownFields: ReadonlyArray<string>
}

const typeMetaFields = new Set(["apiVersion", "kind", "metadata"])

const objectMetaFields = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields"
])

const ownerReferenceFields = new Set(["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"])

/** Where dropped fields are collected: schema pruning is reported sorted, metadata in traversal order. */
interface Report {
  readonly pruned: Array<string>
  readonly metadata: Array<string>
}

const appendKey = (path: string, k: string): string => (path === "" ? k : `${path}.${k}`)

const isEmbedded = (schema: JsonSchemaProps | undefined): boolean =>
  schema?.["x-kubernetes-embedded-resource"] === true

// Every ObjectMeta field is `omitempty` in Go (a pointer, string, integer, map or slice), so
// kube-apiserver's decoding leaves these values out; deletionGracePeriodSeconds is a pointer, so
// its 0 stays.
const isEmptyMetaValue = (key: string, value: unknown): boolean =>
  value === null || value === "" || (value === 0 && key === "generation") ||
  (Array.isArray(value) && value.length === 0) ||
  ((key === "labels" || key === "annotations") && KubeObject.isEmptyObject(value))

/**
 * Metadata as kube-apiserver stores it, decoded into Go's ObjectMeta and written back: the
 * fields Go leaves out when empty (`labels: {}`, `annotations: {}`, `finalizers: []`,
 * `ownerReferences: []`, `managedFields: []`, `""`, `null`) are not kept. A merge patch of
 * `{"metadata":{"annotations":{}}}` (what `kubectl diff` and client-side apply send for a
 * manifest without annotations) then changes nothing. The same object back when nothing is empty.
 *
 * @example
 * import * as Pruning from "./Pruning.ts"
 * Pruning.omitEmptyMeta({ metadata: { name: "a", labels: {}, finalizers: [] } }) // { metadata: { name: "a" } }
 */
export const omitEmptyMeta = (object: KubeObject.KubeObject): KubeObject.KubeObject => {
  const metadata = object.metadata
  if (!KubeObject.isObject(metadata)) return object
  const kept = omitEmpty(metadata)
  return kept === metadata ? object : { ...object, metadata: kept }
}

const omitEmpty = (metadata: KubeObject.KubeObject): KubeObject.KubeObject => {
  let out: Record<string, unknown> | undefined
  for (const k in metadata) {
    if (!Object.hasOwn(metadata, k) || !objectMetaFields.has(k) || !isEmptyMetaValue(k, metadata[k])) continue
    out ??= { ...metadata }
    delete out[k]
  }
  return out ?? metadata
}

/** ObjectMeta as Go's typed decoding keeps it: unknown keys (and unknown owner reference keys) and empty values dropped. */
const coerceObjectMeta = (metadata: unknown, path: string, report: Array<string>): unknown => {
  if (!KubeObject.isObject(metadata)) return metadata
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(metadata)) {
    if (!objectMetaFields.has(k)) {
      report.push(appendKey(path, k))
    } else if (isEmptyMetaValue(k, v)) {
      continue
    } else if (k === "ownerReferences" && Array.isArray(v)) {
      out[k] = v.map((ref, i) => {
        if (!KubeObject.isObject(ref)) return ref
        const kept = Object.entries(ref).filter(([rk]) => {
          if (ownerReferenceFields.has(rk)) return true
          report.push(`${appendKey(path, k)}[${i}].${rk}`)
          return false
        })
        return Object.fromEntries(kept)
      })
    } else {
      out[k] = v
    }
  }
  return out
}

/** The schema of the values of a map, when `additionalProperties` is given (`true` prunes like no schema). */
const additionalOf = (schema: JsonSchemaProps): { readonly schema: JsonSchemaProps | undefined } | undefined =>
  schema.additionalProperties === undefined
    ? undefined
    : { schema: typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined }

const metaField = (k: string, v: unknown, embedded: boolean, isRoot: boolean, path: string, report: Report): unknown =>
  embedded && !isRoot && k === "metadata" ? coerceObjectMeta(v, appendKey(path, k), report.metadata) : v

const pruneNode = (
  value: unknown,
  schema: JsonSchemaProps | undefined,
  embedded: boolean,
  isRoot: boolean,
  path: string,
  report: Report
): unknown => {
  if (schema?.["x-kubernetes-preserve-unknown-fields"] === true) {
    return preserveNode(value, schema, embedded, isRoot, path, report)
  }
  if (Array.isArray(value)) {
    const items = schema?.items
    return value.map((v, i) => pruneNode(v, items, isEmbedded(items), false, `${path}[${i}]`, report))
  }
  if (!KubeObject.isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    const here = appendKey(path, k)
    if (schema === undefined) {
      report.pruned.push(here)
      continue
    }
    if (embedded && typeMetaFields.has(k)) {
      out[k] = metaField(k, v, embedded, isRoot, path, report)
      continue
    }
    const property = schema.properties?.[k]
    const additional = additionalOf(schema)
    if (property !== undefined) out[k] = pruneNode(v, property, isEmbedded(property), false, here, report)
    else if (additional !== undefined) {
      out[k] = pruneNode(v, additional.schema, isEmbedded(additional.schema), false, here, report)
    } else report.pruned.push(here)
  }
  return out
}

/** Below `x-kubernetes-preserve-unknown-fields`: unknown fields stay, known ones are still pruned inside. */
const preserveNode = (
  value: unknown,
  schema: JsonSchemaProps,
  embedded: boolean,
  isRoot: boolean,
  path: string,
  report: Report
): unknown => {
  if (Array.isArray(value)) {
    const items = schema.items
    if (items === undefined) return value
    return value.map((v, i) => preserveNode(v, items, isEmbedded(items), false, `${path}[${i}]`, report))
  }
  if (!KubeObject.isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    const here = appendKey(path, k)
    const property = schema.properties?.[k]
    const additional = additionalOf(schema)
    if (embedded && typeMetaFields.has(k)) out[k] = metaField(k, v, embedded, isRoot, path, report)
    else if (property !== undefined) out[k] = pruneNode(v, property, isEmbedded(property), false, here, report)
    else if (additional !== undefined) {
      out[k] = pruneNode(v, additional.schema, isEmbedded(additional.schema), false, here, report)
    } else out[k] = v
  }
  return out
}

/**
 * Prunes any value against a schema (not a resource root unless `root`): what `pruning.Prune` does
 * to a default value or a nested object. Paths are relative to the value.
 *
 * @example
 * import * as Pruning from "./Pruning.ts"
 * Pruning.pruneValue({ a: 1, b: 2 }, { type: "object", properties: { a: { type: "integer" } } })
 * // { value: { a: 1 }, unknownFields: ["b"] }
 */
export const pruneValue = (
  value: unknown,
  schema: JsonSchemaProps | undefined,
  options: { readonly root?: boolean } = {}
): Pruned<unknown> => {
  const report: Report = { pruned: [], metadata: [] }
  const root = options.root === true
  // a resource root without a schema still keeps apiVersion, kind and metadata
  const pruned = pruneNode(value, root ? (schema ?? {}) : schema, root || isEmbedded(schema), root, "", report)
  return { value: pruned, unknownFields: [...report.pruned.sort(), ...report.metadata] }
}

/**
 * Prunes a custom resource on write. `apiVersion`, `kind` and `metadata` at the root (and in
 * `x-kubernetes-embedded-resource` objects) are not pruned by the schema, but metadata keeps only
 * ObjectMeta's fields. Reported paths: unknown root metadata fields (`metadata.foo`), then schema
 * fields sorted (`spec.foo`, `spec.items[0].x`), then embedded metadata fields.
 *
 * @example
 * import * as Pruning from "./Pruning.ts"
 * const schema = { type: "object" as const, properties: { spec: { type: "object" as const, properties: {
 *   replicas: { type: "integer" as const } } } } }
 * Pruning.prune({ apiVersion: "a/v1", kind: "A", metadata: { name: "x" }, spec: { replicas: 1, foo: 2 } }, schema)
 * // { value: { apiVersion: "a/v1", kind: "A", metadata: { name: "x" }, spec: { replicas: 1 } }, unknownFields: ["spec.foo"] }
 */
export const prune = (
  object: KubeObject.KubeObject,
  schema: JsonSchemaProps | undefined
): Pruned<KubeObject.KubeObject> => {
  const rootMetadata: Array<string> = []
  const report: Report = { pruned: [], metadata: [] }
  const pruned = pruneNode(object, schema ?? {}, true, true, "", report)
  const value: Record<string, unknown> = KubeObject.isObject(pruned) ? { ...pruned } : {}
  if (Object.hasOwn(value, "metadata")) value.metadata = coerceObjectMeta(value.metadata, "metadata", rootMetadata)
  return { value, unknownFields: [...rootMetadata, ...report.pruned.sort(), ...report.metadata] }
}

/**
 * The warning text for one dropped field (fieldValidation=Warn): `unknown field "spec.foo"`.
 *
 * @example
 * import * as Pruning from "./Pruning.ts"
 * Pruning.unknownFieldWarning("spec.foo") // 'unknown field "spec.foo"'
 */
export const unknownFieldWarning = (path: string): string => `unknown field "${path}"`

/**
 * The 400 BadRequest message for fieldValidation=Strict.
 *
 * @example
 * import * as Pruning from "./Pruning.ts"
 * Pruning.strictDecodingError(["spec.foo", "spec.bar"])
 * // 'strict decoding error: unknown field "spec.foo", unknown field "spec.bar"'
 */
export const strictDecodingError = (paths: ReadonlyArray<string>): string =>
  `strict decoding error: ${paths.map(unknownFieldWarning).join(", ")}`
