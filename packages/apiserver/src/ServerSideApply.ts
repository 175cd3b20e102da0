/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`): merges an applied configuration
 * into the stored object and records what the applier owns in `metadata.managedFields`.
 *
 * - Applied values win. Map-lists merge per key, set-lists per value, atomic lists and
 *   `mapType: atomic` objects are replaced whole.
 * - Fields the manager applied before and omits now are removed, unless another manager owns them.
 * - Changing a value another manager owns is a conflict, unless `force` (the applier then takes the
 *   field from them). Applying the same value shares ownership.
 * - A `null` in the configuration removes the field (a conflict if another manager owns it).
 * - The manager `kubectl` (`kubectl apply --server-side`) takes over, as if forced, the fields of
 *   the object's `kubectl.kubernetes.io/last-applied-configuration` that still hold the values
 *   client-side apply last applied: moving from client-side to server-side apply has no conflicts.
 *   That annotation, where the object has one, then holds the configuration it applied.
 */
import { Result, Schema } from "effect"
import * as JsYaml from "js-yaml"
import * as FieldSet from "./FieldSet.ts"
import * as ManagedFields from "./ManagedFields.ts"
import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
import * as Structure from "./Structure.ts"
import { Json } from "@kubefx/schema/internal"

const ConflictSchema = Schema.Struct({
  manager: Schema.String,
  operation: Schema.Literals(["Apply", "Update"]),
  apiVersion: Schema.String,
  subresource: Schema.optionalKey(Schema.String),
  /** The field as Kubernetes prints it, e.g. ".spec.replicas". */
  field: Schema.String
})

/** A field the apply would change that another manager owns. */
export interface Conflict extends Schema.Schema.Type<typeof ConflictSchema> {}

/**
 * The apply changes fields other managers own and `force` was not set (HTTP 409, reason
 * `Conflict`, with {@link conflictCauses} as `details.causes`).
 *
 * @example
 * import * as ServerSideApply from "./ServerSideApply.ts"
 * const conflicts = [{ manager: "kubectl", operation: "Apply" as const, apiVersion: "v1", field: ".data.a" }]
 * new ServerSideApply.ApplyConflict({ conflicts, message: ServerSideApply.conflictMessage(conflicts) }).message
 * // 'Apply failed with 1 conflict: conflict with "kubectl": .data.a'
 */
export class ApplyConflict extends Schema.TaggedError<ApplyConflict>()("ApplyConflict", {
  conflicts: Schema.Array(ConflictSchema),
  message: Schema.String
}) {}

/**
 * The applied configuration cannot be merged, e.g. a map-list with duplicate keys (HTTP 422).
 *
 * @example
 * import * as ServerSideApply from "./ServerSideApply.ts"
 * new ServerSideApply.ApplyInvalid({ message: "the applied configuration must be an object" })._tag // "ApplyInvalid"
 */
export class ApplyInvalid extends Schema.TaggedError<ApplyInvalid>()("ApplyInvalid", {
  message: Schema.String
}) {}

/**
 * The 409 message, exactly as the API server writes it.
 *
 * @example
 * import * as ServerSideApply from "./ServerSideApply.ts"
 * ServerSideApply.conflictMessage([{ manager: "kubectl-client-side-apply", operation: "Update", apiVersion: "apps/v1", field: ".spec.replicas" }])
 * // 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas'
 */
export const conflictMessage = (conflicts: ReadonlyArray<Conflict>): string => {
  const [only] = conflicts
  if (conflicts.length === 1 && only !== undefined) {
    return `Apply failed with 1 conflict: conflict with ${ManagedFields.describe(only)}: ${only.field}`
  }
  const byManager = new Map<string, Array<string>>()
  for (const conflict of conflicts) {
    const name = ManagedFields.describe(conflict)
    byManager.set(name, [...(byManager.get(name) ?? []), conflict.field])
  }
  const lines = [...byManager].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flatMap(([name, fields]) => [
    `conflicts with ${name}:`,
    ...fields.map((field) => `- ${field}`)
  ])
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`
}

/**
 * The `details.causes` of the 409 Status, one per conflicting field.
 *
 * @example
 * import * as ServerSideApply from "./ServerSideApply.ts"
 * ServerSideApply.conflictCauses([{ manager: "kubectl", operation: "Apply", apiVersion: "v1", field: ".data.a" }])
 * // [{ reason: "FieldManagerConflict", message: 'conflict with "kubectl"', field: ".data.a" }]
 */
export const conflictCauses = (
  conflicts: ReadonlyArray<Conflict>
): Array<{ readonly reason: "FieldManagerConflict"; readonly message: string; readonly field: string }> =>
  conflicts.map((conflict) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${ManagedFields.describe(conflict)}`,
    field: conflict.field
  }))

/**
 * Which part of the object a write may touch: `all`; `status` for a write to `/status` (only
 * `.status` is merged and owned); `withoutStatus` for the main resource of a kind with a status
 * subresource (`.status` in the configuration is ignored).
 */
export type Scope = "all" | "status" | "withoutStatus"

/** What {@link apply} needs to know about an apply request. */
export interface ApplyOptions {
  /** The stored object, or `undefined` when the apply creates it. */
  readonly live: Json.JsonObject | undefined
  /** The applied configuration (the request body). */
  readonly applied: Json.JsonObject
  /** The `fieldManager` query parameter. */
  readonly manager: string
  /** The apiVersion of the request, e.g. "apps/v1". */
  readonly apiVersion: string
  /** Defaults to "status" when `scope` is "status". */
  readonly subresource?: string | undefined
  readonly force: boolean
  readonly structure: Structure.Structure
  /** RFC 3339 time of the write, e.g. "2024-05-01T10:00:00Z". */
  readonly time: string
  readonly scope?: Scope | undefined
}

const statusPath = FieldSet.make([["f:status"]])

const restrict = (object: Json.JsonObject, scope: Scope): Json.JsonObject => {
  if (scope === "all") return object
  const { status, ...rest } = object
  return scope === "withoutStatus" ? rest : status === undefined ? {} : { status }
}

const restrictSet = (set: FieldSet.FieldSet, scope: Scope): FieldSet.FieldSet =>
  scope === "all" ? set : scope === "status" ? FieldSet.under(set, statusPath) :
  FieldSet.difference(set, FieldSet.under(set, statusPath))

// The configuration's first list item that repeats an earlier item's key or value.
const findDuplicate = (value: Json.Json, structure: Structure.Structure, path: FieldSet.Path): string | undefined => {
  const kids = FieldSet.children(value, structure)
  if (kids === undefined) return undefined
  const seen = new Set<string>()
  for (const kid of kids) {
    if (kid.kind === "item") {
      if (seen.has(kid.element)) {
        return `${FieldSet.formatPath(path)}: duplicate entries for key ${FieldSet.formatPath([kid.element])}`
      }
      seen.add(kid.element)
    }
    const inner = findDuplicate(kid.value, kid.structure, [...path, kid.element])
    if (inner !== undefined) return inner
  }
  return undefined
}

const nullPaths = (value: Json.Json, structure: Structure.Structure): FieldSet.FieldSet => {
  const out: Array<FieldSet.Path> = []
  const walk = (at: Json.Json, s: Structure.Structure, path: FieldSet.Path) => {
    for (const kid of FieldSet.children(at, s) ?? []) {
      if (kid.value === null) out.push([...path, kid.element])
      else walk(kid.value, kid.structure, [...path, kid.element])
    }
  }
  walk(value, structure, [])
  return FieldSet.make(out)
}

// The configuration as it would be stored on its own: nulls in granular objects are removals.
// What holds no such null is returned as it is (most configurations hold none), so the walk
// copies only the objects above a removal.
const withoutNulls = (value: Json.Json, structure: Structure.Structure): Json.Json => {
  if (!FieldSet.isGranular(value, structure)) return value
  if (Json.isArray(value)) {
    const itemStructure = Structure.items(structure)
    let out: Array<Json.Json> | undefined
    for (let i = 0; i < value.length; i++) {
      const item = value[i]!
      const next = withoutNulls(item, itemStructure)
      if (out === undefined && next !== item) out = value.slice(0, i)
      out?.push(next)
    }
    return out ?? value
  }
  if (!Json.isObject(value)) return value
  const keys = Object.keys(value)
  let out: Record<string, Json.Json> | undefined
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const field = value[key]!
    const next = field === null ? undefined : withoutNulls(field, Structure.field(structure, key))
    if (out === undefined && next !== field) {
      out = {}
      for (let j = 0; j < i; j++) out[keys[j]!] = value[keys[j]!]!
    }
    if (out !== undefined && next !== undefined) out[key] = next
  }
  return out ?? value
}

// Items keep the live order; items the configuration also lists take the configuration's order,
// and items only in the configuration go right after the configuration item before them.
const mergeList = (
  live: ReadonlyArray<FieldSet.Child>,
  applied: ReadonlyArray<FieldSet.Child>
): Json.JsonArray => {
  const left = FieldSet.byElement(live)
  const right = FieldSet.byElement(applied)
  const leftOrder = [...left.keys()]
  const rightOrder = [...right.keys()]
  const shared = rightOrder.filter((element) => left.has(element))
  const out: Array<Json.Json> = []
  const emitRight = (element: FieldSet.PathElement) => {
    const kid = right.get(element)!
    out.push(merge(left.get(element)?.value, kid.value, kid.structure))
    if (shared[0] === element) shared.shift()
  }
  let l = 0
  let r = 0
  while (l < leftOrder.length || r < rightOrder.length) {
    const here = leftOrder[l]
    const there = rightOrder[r]
    if (here !== undefined && here === there) {
      emitRight(there)
      l++
      r++
    } else if (here !== undefined && !right.has(here)) {
      out.push(left.get(here)!.value)
      l++
    } else if (here !== undefined && (there === undefined || shared[0] !== here)) {
      l++ // listed by the configuration too: placed when the configuration reaches it
    } else if (there !== undefined) {
      emitRight(there)
      r++
    }
  }
  return out
}

const merge = (live: Json.Json | undefined, applied: Json.Json, structure: Structure.Structure): Json.Json => {
  const appliedKids = FieldSet.children(applied, structure)
  const liveKids = live === undefined ? undefined : FieldSet.children(live, structure)
  if (appliedKids === undefined || liveKids === undefined || Json.isArray(live) !== Json.isArray(applied)) {
    return withoutNulls(applied, structure)
  }
  if (Json.isArray(applied)) return mergeList(liveKids, appliedKids)
  const out = new Map(Object.entries(live as Json.JsonObject))
  for (const kid of appliedKids) {
    const name = kid.element.slice(2)
    if (kid.value === null) out.delete(name)
    else out.set(name, merge(out.get(name), kid.value, kid.structure))
  }
  return Object.fromEntries(out)
}

// Removes what the manager owned before (`last`) and nobody owns now (`owned` covers the new
// configuration, every other manager and the identity fields). The key fields of a kept map-list
// item stay (`keys`), or the item would lose its identity.
const prune = (
  value: Json.Json,
  structure: Structure.Structure,
  last: FieldSet.FieldSet,
  owned: FieldSet.FieldSet,
  keys: ReadonlyArray<string> = []
): Json.Json => {
  const kids = FieldSet.children(value, structure)
  if (kids === undefined || FieldSet.isEmpty(last)) return value
  const itemKeys = structure.listType?._tag === "Map" ? structure.listType.keys : []
  const kept: Array<[FieldSet.Child, Json.Json]> = []
  for (const kid of kids) {
    const wasMine = FieldSet.child(last, kid.element)
    const stillOwned = FieldSet.child(owned, kid.element)
    if (FieldSet.isEmpty(wasMine)) kept.push([kid, kid.value])
    else if (!FieldSet.isEmpty(stillOwned)) {
      kept.push([kid, prune(kid.value, kid.structure, wasMine, stillOwned, itemKeys)])
    } else if (kid.kind === "field" && keys.includes(kid.element.slice(2))) kept.push([kid, kid.value])
  }
  if (Json.isArray(value)) return kept.map(([, v]) => v)
  return Object.fromEntries(kept.map(([kid, v]) => [kid.element.slice(2), v]))
}

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// The fields of the object's last-applied-configuration whose values the object still holds.
const lastAppliedFields = (stored: Json.JsonObject, live: Json.JsonObject, structure: Structure.Structure): FieldSet.FieldSet | undefined => {
  const metadata = stored.metadata
  const annotations = Json.isObject(metadata) && Json.isObject(metadata.annotations) ? metadata.annotations : undefined
  const text = annotations?.[lastAppliedAnnotation]
  if (typeof text !== "string" || text === "") return undefined
  let lastApplied: Json.Json
  try {
    lastApplied = JSON.parse(text) as Json.Json
  } catch {
    return undefined
  }
  if (!Json.isObject(lastApplied)) return undefined
  const differing = ManagedFields.changes(lastApplied, live, structure).modified
  return FieldSet.difference(FieldSet.fromObject(lastApplied, structure), differing)
}

/**
 * Applies a configuration: the new object with its managedFields, or the conflicts.
 *
 * A no-op apply (same values, same ownership) returns an object deep-equal to `live`, managedFields
 * and their times included, so `Json.equals(live, result)` tells the caller not to write.
 *
 * @example
 * import * as ServerSideApply from "./ServerSideApply.ts"
 * import { Result } from "effect"
 * const created = ServerSideApply.apply({
 *   live: undefined,
 *   applied: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" }, data: { a: "1" } },
 *   manager: "kubectl", apiVersion: "v1", force: false, structure: {}, time: "2024-05-01T10:00:00Z"
 * })
 * Result.getOrThrow(created).metadata
 * // { name: "x", managedFields: [{ manager: "kubectl", operation: "Apply", apiVersion: "v1",
 * //   time: "2024-05-01T10:00:00Z", fieldsType: "FieldsV1", fieldsV1: { "f:data": { "f:a": {} } } }] }
 */
export const apply = (options: ApplyOptions): Result.Result<Json.JsonObject, ApplyConflict | ApplyInvalid> => {
  const { apiVersion, force, manager, structure, time } = options
  const scope = options.scope ?? "all"
  const subresource = options.subresource ?? (scope === "status" ? "status" : undefined)
  const config = restrict(ManagedFields.strip(options.applied), scope)
  const duplicate = findDuplicate(config, structure, [])
  if (duplicate !== undefined) return Result.fail(new ApplyInvalid({ message: duplicate }))

  const live = options.live === undefined ? {} : ManagedFields.strip(options.live)
  const owners = options.live === undefined ? [] : Result.getOrElse(ManagedFields.decode(options.live), () => [])
  const self = ManagedFields.identity({ manager, operation: "Apply", subresource })
  const previous = owners.find((owner) => ManagedFields.identity(owner) === self)
  const others = owners.filter((owner) => ManagedFields.identity(owner) !== self)

  const nulls = nullPaths(config, structure)
  // A null removes the field rather than setting it: nobody owns what is not there.
  const applying = [ManagedFields.ignored, nulls].reduce(FieldSet.difference, FieldSet.fromObject(config, structure))
  const owned = [applying, ManagedFields.ignored, ...others.map((owner) => owner.fields)].reduce(FieldSet.union)
  const last = restrictSet(previous?.fields ?? FieldSet.empty, scope)
  const merged = prune(merge(live, config, structure), structure, last, owned) as Json.JsonObject

  const c = ManagedFields.changes(live, merged, structure)
  const changed = [c.modified, c.added, FieldSet.under(c.removed, nulls)].reduce(FieldSet.union)
  const contested = (fields: FieldSet.FieldSet) =>
    others.flatMap((owner) =>
      FieldSet.paths(FieldSet.intersection(owner.fields, fields)).map((path): Conflict => ({
        manager: owner.manager,
        operation: owner.operation,
        apiVersion: owner.apiVersion,
        ...(owner.subresource === undefined ? {} : { subresource: owner.subresource }),
        field: FieldSet.formatPath(path)
      }))
    )
  let conflicts = contested(changed)
  let forced = force
  // kube's lastAppliedManager: `kubectl apply --server-side` takes over, without conflicts, the
  // fields client-side apply last applied that still hold what it applied.
  if (conflicts.length > 0 && !force && manager === "kubectl" && options.live !== undefined) {
    const allowed = lastAppliedFields(options.live, live, structure)
    if (allowed !== undefined) {
      conflicts = contested(FieldSet.difference(changed, allowed))
      forced = conflicts.length === 0
    }
  }
  if (conflicts.length > 0 && !forced) {
    return Result.fail(new ApplyConflict({ conflicts, message: conflictMessage(conflicts) }))
  }

  const fields = FieldSet.difference(applying, c.removed)
  const same = previous !== undefined && previous.apiVersion === apiVersion && FieldSet.equals(previous.fields, fields) &&
    Json.equals(live, merged)
  const mine: ManagedFields.Owner = {
    ...previous,
    manager,
    operation: "Apply",
    apiVersion,
    fields,
    ...(same && previous.time !== undefined ? { time: previous.time } : { time }),
    ...(subresource === undefined ? {} : { subresource })
  }
  const rest = others.map((owner): ManagedFields.Owner => ({
    ...owner,
    fields: FieldSet.difference(FieldSet.difference(owner.fields, changed), c.removed)
  }))
  const result = ManagedFields.withOwners(merged, [...rest, mine])
  return Result.succeed(manager === "kubectl" && options.live !== undefined ? withLastApplied(result, options.applied) : result)
}

const sortedKeys = (value: Json.Json): Json.Json =>
  Json.isArray(value)
    ? value.map(sortedKeys)
    : Json.isObject(value)
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys(value[key]!)]))
    : value

// kube's lastAppliedUpdater: after `kubectl apply --server-side`, an object that has a
// last-applied-configuration holds the applied configuration there (as Go encodes it: sorted keys,
// a final newline), so that a later client-side apply diffs against what was applied last. When
// that would take the annotations past their 256 KiB, the annotation is dropped instead (a large
// CRD applied server-side over a client-side apply), as kube's SetLastApplied does.
const withLastApplied = (result: Json.JsonObject, applied: Json.JsonObject): Json.JsonObject => {
  const resultMeta = Json.isObject(result.metadata) ? result.metadata : {}
  const resultAnnotations = Json.isObject(resultMeta.annotations) ? resultMeta.annotations : {}
  const current = resultAnnotations[lastAppliedAnnotation]
  if (typeof current !== "string" || current === "") return result
  const appliedMeta = Json.isObject(applied.metadata) ? applied.metadata : undefined
  const appliedAnnotations = appliedMeta !== undefined && Json.isObject(appliedMeta.annotations) ? appliedMeta.annotations : undefined
  const { [lastAppliedAnnotation]: _, ...otherAnnotations } = appliedAnnotations ?? {}
  const configuration = appliedMeta === undefined
    ? applied
    : { ...applied, metadata: appliedAnnotations === undefined ? appliedMeta : { ...appliedMeta, annotations: otherAnnotations } }
  const { [lastAppliedAnnotation]: _current, ...kept } = resultAnnotations
  const annotations = { ...kept, [lastAppliedAnnotation]: `${JSON.stringify(sortedKeys(configuration))}\n` }
  return { ...result, metadata: { ...resultMeta, annotations: ObjectMetaValidation.annotationsTooLarge(annotations) ? kept : annotations } }
}

/**
 * Decodes an apply body, JSON or YAML, into the configuration object.
 *
 * @example
 * import * as ServerSideApply from "./ServerSideApply.ts"
 * import { Result } from "effect"
 * Result.getOrThrow(ServerSideApply.decodeBody("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")).kind // "ConfigMap"
 */
export const decodeBody = (body: string): Result.Result<Json.JsonObject, ApplyInvalid> => {
  const json = Json.parse(body)
  let decoded: unknown
  if (Result.isSuccess(json)) decoded = json.success
  else {
    try {
      decoded = JsYaml.load(body)
    } catch (e) {
      return Result.fail(new ApplyInvalid({ message: `error decoding YAML: ${e instanceof Error ? e.message : String(e)}` }))
    }
  }
  return Json.isObject(decoded as Json.Json)
    ? Result.succeed(decoded as Json.JsonObject)
    : Result.fail(new ApplyInvalid({ message: "the applied configuration must be an object" }))
}
