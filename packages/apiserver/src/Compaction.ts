/**
 * Stored objects take less memory: the short strings most objects repeat (apiVersion, kind,
 * namespace, label values, field managers, operations, timestamps) are shared through a bounded
 * table instead of each parsed copy keeping its own, and the empty leaves of `managedFields`
 * field sets share one frozen object. The result is equal, as JSON, to what it was given.
 *
 * @since 0.1.0
 */
import { Interning, type KubeObject } from "@kubefx/schema/internal"

/** The shared empty leaf of a field set (`"f:name": {}`). */
const emptyLeaf: Readonly<Record<string, never>> = Object.freeze({})

const table = Interning.make()
const intern = table.intern

const internValues = (record: unknown): unknown => {
  if (typeof record !== "object" || record === null || Array.isArray(record)) return record
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(record)) out[key] = intern(value)
  return out
}

const shareLeaves = (fields: unknown): unknown => {
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return fields
  const entries = Object.entries(fields)
  if (entries.length === 0) return emptyLeaf
  const out: Record<string, unknown> = {}
  for (const [key, value] of entries) out[key] = shareLeaves(value)
  return out
}

const managedField = (entry: unknown): unknown => {
  if (typeof entry !== "object" || entry === null) return entry
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(entry)) out[key] = key === "fieldsV1" ? shareLeaves(value) : intern(value)
  return out
}

const sharedMetadata = ["namespace", "creationTimestamp", "deletionTimestamp", "generateName"] as const

/**
 * The object as it will be stored: equal as JSON, its repeated strings and empty field-set leaves
 * shared. New objects are made along the way; the given one is left as it is.
 *
 * @example
 * import * as Compaction from "./Compaction.ts"
 * const a = Compaction.compact(JSON.parse('{"kind":"ConfigMap","metadata":{"namespace":"default"}}'))
 * const b = Compaction.compact(JSON.parse('{"kind":"ConfigMap","metadata":{"namespace":"default"}}'))
 * a.metadata.namespace === b.metadata.namespace // true, and one string in memory
 */
export const compact = (object: KubeObject.KubeObject): KubeObject.KubeObject => {
  const source = object as Record<string, unknown> & { readonly metadata?: Record<string, unknown> }
  const out: Record<string, unknown> = { ...source }
  if ("apiVersion" in source) out.apiVersion = intern(source.apiVersion)
  if ("kind" in source) out.kind = intern(source.kind)
  const metadata = source.metadata
  if (typeof metadata === "object" && metadata !== null) {
    const m: Record<string, unknown> = { ...metadata }
    for (const key of sharedMetadata) if (key in m) m[key] = intern(m[key])
    if (m.labels !== undefined) m.labels = internValues(m.labels)
    if (Array.isArray(m.managedFields)) m.managedFields = m.managedFields.map(managedField)
    out.metadata = m
  }
  return out as KubeObject.KubeObject
}
