/**
 * `metadata.managedFields`: which manager owns which fields of an object, and how non-apply writes
 * (create, update, JSON/merge/strategic patches) move that ownership.
 *
 * There is one entry per (manager, operation, subresource). A writer takes ownership of the fields
 * whose values it added or changed, taking them from every other entry; removed fields lose all
 * owners; an entry left with no fields is dropped. Identity fields (`apiVersion`, `kind`,
 * `metadata.name`, `metadata.uid`, ...) are never owned.
 */
import { Result } from "effect"
import * as FieldSet from "./FieldSet.ts"
import type * as Structure from "./Structure.ts"
import { Json } from "@kubefx/schema/internal"

/** `Apply` for server-side apply, `Update` for every other write. */
export type Operation = "Apply" | "Update"

/** One `metadata.managedFields` entry as the API returns it. */
export interface Entry {
  readonly manager: string
  readonly operation: Operation
  readonly apiVersion: string
  readonly time?: string
  readonly fieldsType: "FieldsV1"
  readonly fieldsV1: Json.JsonObject
  readonly subresource?: string
}

/** A decoded entry: a manager and the fields it owns. */
export interface Owner {
  readonly manager: string
  readonly operation: Operation
  readonly apiVersion: string
  readonly subresource?: string
  readonly time?: string
  readonly fields: FieldSet.FieldSet
  /** The entry this owner was decoded from, written back unchanged while the owner is unchanged. */
  readonly decodedFrom?: { readonly entry: Json.JsonObject; readonly owner: Omit<Owner, "decodedFrom"> }
}

/**
 * The identity of an entry: owners with the same identity are the same entry.
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * ManagedFields.identity({ manager: "kubectl", operation: "Apply" }) === ManagedFields.identity({ manager: "kubectl", operation: "Apply", subresource: undefined }) // true
 */
export const identity = (owner: {
  readonly manager: string
  readonly operation: Operation
  readonly subresource?: string | undefined
}): string => JSON.stringify([owner.manager, owner.operation, owner.subresource ?? ""])

const metadataPaths = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
  "managedFields"
]

/**
 * The fields nobody owns: `apiVersion`, `kind`, the `metadata` node itself and its identity fields.
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.has(ManagedFields.ignored, ["f:metadata", "f:name"]) // true
 */
export const ignored: FieldSet.FieldSet = FieldSet.make([
  ["f:apiVersion"],
  ["f:kind"],
  ["f:metadata"],
  ...metadataPaths.map((name) => ["f:metadata", FieldSet.field(name)])
])

const metadataOf = (object: Json.JsonObject): Json.JsonObject =>
  Json.isObject(object.metadata) ? object.metadata : {}

const decodeEntry = (entry: Json.Json): Result.Result<Owner, string> => {
  if (!Json.isObject(entry)) return Result.fail("managedFields entry is not an object")
  const { apiVersion, fieldsType, fieldsV1, manager, operation, subresource, time } = entry
  if (typeof manager !== "string") return Result.fail("managedFields entry without manager")
  if (operation !== "Apply" && operation !== "Update") {
    return Result.fail(`managedFields entry with operation ${JSON.stringify(operation)}`)
  }
  if (fieldsType !== undefined && fieldsType !== "FieldsV1") {
    return Result.fail(`managedFields entry with fieldsType ${JSON.stringify(fieldsType)}`)
  }
  return Result.map(FieldSet.fromFieldsV1(fieldsV1 ?? {}), (fields) => {
    const owner: Omit<Owner, "decodedFrom"> = {
      manager,
      operation,
      apiVersion: typeof apiVersion === "string" ? apiVersion : "",
      fields,
      ...(typeof subresource === "string" && subresource !== "" ? { subresource } : {}),
      ...(typeof time === "string" ? { time } : {})
    }
    return { ...owner, decodedFrom: { entry, owner } }
  })
}

/**
 * The owners recorded in an object's `metadata.managedFields`; fails when an entry is malformed.
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * import { Result } from "effect"
 * const owners = Result.getOrThrow(ManagedFields.decode({ metadata: { managedFields: [
 *   { manager: "kubectl", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:data": { "f:a": {} } } }
 * ] } }))
 * owners[0]?.manager // "kubectl"
 */
export const decode = (object: Json.JsonObject): Result.Result<ReadonlyArray<Owner>, string> => {
  const entries = metadataOf(object).managedFields
  if (entries === undefined || entries === null) return Result.succeed([])
  if (!Json.isArray(entries)) return Result.fail("metadata.managedFields is not a list")
  const owners: Array<Owner> = []
  for (const entry of entries) {
    const owner = decodeEntry(entry)
    if (Result.isFailure(owner)) return Result.fail(owner.failure)
    owners.push(owner.success)
  }
  return Result.succeed(owners)
}

const unchanged = (owner: Owner): boolean => {
  const before = owner.decodedFrom?.owner
  return before !== undefined && before.manager === owner.manager && before.operation === owner.operation &&
    before.apiVersion === owner.apiVersion && before.subresource === owner.subresource &&
    before.time === owner.time && FieldSet.equals(before.fields, owner.fields)
}

const seconds = (time: string | undefined): number => {
  const ms = time === undefined ? Number.NaN : Date.parse(time)
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000)
}

const order = (a: Owner, b: Owner): number => {
  const text = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)
  return text(a.operation, b.operation) || seconds(a.time) - seconds(b.time) || text(a.manager, b.manager) ||
    text(a.apiVersion, b.apiVersion) || text(a.subresource ?? "", b.subresource ?? "")
}

/**
 * The `managedFields` list for some owners, in the API server's order (Apply before Update, then
 * by time and manager). Owners with no fields are left out; unchanged owners keep their original
 * entry.
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * import * as FieldSet from "./FieldSet.ts"
 * ManagedFields.encode([{ manager: "kubectl", operation: "Apply", apiVersion: "v1", time: "2024-01-01T00:00:00Z", fields: FieldSet.make([["f:data", "f:a"]]) }])
 * // [{ manager: "kubectl", operation: "Apply", apiVersion: "v1", time: "2024-01-01T00:00:00Z", fieldsType: "FieldsV1", fieldsV1: { "f:data": { "f:a": {} } } }]
 */
export const encode = (owners: ReadonlyArray<Owner>): Array<Json.JsonObject> =>
  owners
    .filter((owner) => !FieldSet.isEmpty(owner.fields))
    .sort(order)
    .map((owner): Json.JsonObject =>
      unchanged(owner) && owner.decodedFrom !== undefined ? owner.decodedFrom.entry : {
        manager: owner.manager,
        operation: owner.operation,
        apiVersion: owner.apiVersion,
        ...(owner.time === undefined ? {} : { time: owner.time }),
        fieldsType: "FieldsV1",
        fieldsV1: FieldSet.toFieldsV1(owner.fields),
        ...(owner.subresource === undefined ? {} : { subresource: owner.subresource })
      }
    )

/**
 * The object with `metadata.managedFields` set from the owners (removed when none owns anything).
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * ManagedFields.withOwners({ metadata: { name: "x", managedFields: [] } }, []) // { metadata: { name: "x" } }
 */
export const withOwners = (object: Json.JsonObject, owners: ReadonlyArray<Owner>): Json.JsonObject => {
  const { managedFields: _, ...metadata } = metadataOf(object)
  const entries = encode(owners)
  return { ...object, metadata: entries.length === 0 ? metadata : { ...metadata, managedFields: entries } }
}

/**
 * The object without `metadata.managedFields`.
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * ManagedFields.strip({ metadata: { name: "x", managedFields: [] } }) // { metadata: { name: "x" } }
 */
export const strip = (object: Json.JsonObject): Json.JsonObject => {
  if (!Json.isObject(object.metadata) || !Object.hasOwn(object.metadata, "managedFields")) return object
  const { managedFields: _, ...metadata } = object.metadata
  return { ...object, metadata }
}

/**
 * How the owner is named in conflict messages: `"kubectl"`, or for an update
 * `"kube-controller-manager" using apps/v1`, with `with subresource "status"` when it wrote one.
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * ManagedFields.describe({ manager: "kubectl-client-side-apply", operation: "Update", apiVersion: "apps/v1" })
 * // '"kubectl-client-side-apply" using apps/v1'
 */
export const describe = (owner: {
  readonly manager: string
  readonly operation: Operation
  readonly apiVersion: string
  readonly subresource?: string | undefined
}): string => {
  const name = owner.subresource === undefined
    ? JSON.stringify(owner.manager)
    : `${JSON.stringify(owner.manager)} with subresource ${JSON.stringify(owner.subresource)}`
  return owner.operation === "Update" ? `${name} using ${owner.apiVersion}` : name
}

/**
 * The changes between two versions of an object that ownership cares about: identity fields and
 * managedFields themselves are left out.
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * import * as FieldSet from "./FieldSet.ts"
 * const c = ManagedFields.changes(undefined, { metadata: { name: "x" }, data: { a: "1" } }, {})
 * FieldSet.paths(c.added) // [["f:data"], ["f:data", "f:a"]]
 */
export const changes = (
  before: Json.JsonObject | undefined,
  after: Json.JsonObject,
  structure: Structure.Structure
): FieldSet.Comparison => {
  const c = FieldSet.compare(before === undefined ? undefined : strip(before), strip(after), structure)
  return {
    added: FieldSet.difference(c.added, ignored),
    modified: FieldSet.difference(c.modified, ignored),
    removed: FieldSet.difference(c.removed, ignored)
  }
}

const isReset = (entries: Json.Json | undefined): boolean =>
  Json.isArray(entries) && entries.length === 1 && Json.isObject(entries[0]) && Object.keys(entries[0]).length === 0

// A write may set managedFields itself: `[{}]` clears them, a valid non-empty list replaces them;
// anything else (absent, `[]`, malformed) keeps the stored ones, so that a client unaware of the
// field never clears it (kube's rule). Subresource writes cannot set them.
const startingOwners = (
  live: Json.JsonObject | undefined,
  next: Json.JsonObject,
  subresource: string | undefined
): ReadonlyArray<Owner> => {
  const stored = live === undefined ? [] : Result.getOrElse(decode(live), () => [])
  if (subresource !== undefined) return stored
  const entries = metadataOf(next).managedFields
  if (isReset(entries)) return []
  // Most writes carry the stored entries along untouched (a patch that leaves metadata alone, an
  // update of what was read): they decode as the stored ones did.
  if (live !== undefined && sameEntries(entries, metadataOf(live).managedFields)) return stored
  const given = decode(next)
  return Result.isSuccess(given) && given.success.length > 0 ? given.success : stored
}

const sameEntries = (a: Json.Json | undefined, b: Json.Json | undefined): boolean =>
  a === b || (Json.isArray(a) && Json.isArray(b) && a.length === b.length && a.every((entry, i) => entry === b[i]))

/** What {@link update} needs to know about a non-apply write. */
export interface UpdateOptions {
  /** The stored object, or `undefined` for a create. */
  readonly live: Json.JsonObject | undefined
  /** The object about to be stored. */
  readonly next: Json.JsonObject
  /** The `fieldManager` of the request (the server defaults it from the user agent). */
  readonly manager: string
  /** The apiVersion the request was made in, e.g. "apps/v1". */
  readonly apiVersion: string
  /** "status" for a write to the /status subresource. */
  readonly subresource?: string | undefined
  /**
   * The kind has a /status subresource: a write to the main resource owns none of `.status`
   * (kube-apiserver's reset fields), even a status the server filled in on create.
   */
  readonly statusSubresource?: boolean | undefined
  /** RFC 3339 time of the write, e.g. "2024-05-01T10:00:00Z". */
  readonly time: string
  readonly structure: Structure.Structure
}

const statusPath = FieldSet.make([[FieldSet.field("status")]])

/**
 * `next` with the managedFields a create, update or non-apply patch leaves: the writer's Update
 * entry gains the fields it added or changed (which every other entry loses), removed fields lose
 * every owner, empty entries are dropped. A write that changes nothing leaves managedFields as
 * they were (the entry's time included).
 *
 * @example
 * import * as ManagedFields from "./ManagedFields.ts"
 * const created = ManagedFields.update({
 *   live: undefined,
 *   next: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { a: "1" } },
 *   manager: "kubectl-create", apiVersion: "v1", time: "2024-05-01T10:00:00Z", structure: {}
 * })
 * // created.metadata.managedFields:
 * // [{ manager: "kubectl-create", operation: "Update", apiVersion: "v1", time: "2024-05-01T10:00:00Z",
 * //    fieldsType: "FieldsV1", fieldsV1: { "f:data": { ".": {}, "f:a": {} } } }]
 */
export const update = (options: UpdateOptions): Json.JsonObject => {
  const { apiVersion, live, manager, next, structure, subresource, time } = options
  const c = changes(live, next, structure)
  const all = FieldSet.union(c.modified, c.added)
  const changed = options.statusSubresource === true && subresource === undefined
    ? FieldSet.difference(all, FieldSet.under(all, statusPath))
    : all
  const writer = identity({ manager, operation: "Update", subresource })
  const owners = startingOwners(live, next, subresource).map((owner): Owner => ({
    ...owner,
    fields: FieldSet.difference(FieldSet.difference(owner.fields, changed), c.removed)
  }))
  if (FieldSet.isEmpty(changed)) return withOwners(next, owners)
  const previous = owners.find((owner) => identity(owner) === writer)
  const mine: Owner = {
    manager,
    operation: "Update",
    apiVersion,
    time,
    fields: FieldSet.union(previous?.fields ?? FieldSet.empty, changed),
    ...(subresource === undefined ? {} : { subresource })
  }
  return withOwners(next, [...owners.filter((owner) => identity(owner) !== writer), mine])
}
