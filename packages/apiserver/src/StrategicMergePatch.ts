/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), for built-in kinds, as
 * `kubectl apply` (client-side) and `kubectl patch --type strategic` send it.
 *
 * The patch strategy of a list comes from its {@link Structure}: a map-list merges items by its
 * first key (the patch merge key: `name` for containers, `containerPort` for container ports, `port`
 * for service ports), a set-list merges primitive values, any other list is replaced whole.
 * Objects merge key by key and `null` deletes. Directives:
 * - `$patch: replace | delete | merge` in an object (replace it, empty it, merge as usual), and
 *   `{ $patch: delete, <key>: ... }` / `{ $patch: replace }` items in a map-list;
 * - `$retainKeys: [...]`: keys of the stored object not listed are cleared;
 * - `$setElementOrder/<list>: [...]`: the order of the patched list;
 * - `$deleteFromPrimitiveList/<list>: [...]`: values removed from a primitive list.
 */
import { Result } from "effect"
import * as Structure from "./Structure.ts"
import { Json } from "@kubefx/schema/internal"

const setElementOrder = "$setElementOrder/"
const deleteFromPrimitiveList = "$deleteFromPrimitiveList/"

// Thrown inside the recursion, turned into a failure by `apply`. `plain`: an error kube-apiserver
// does not turn into a status (a 500 of no reason), where the others are its 422.
class Invalid {
  readonly message: string
  readonly plain: boolean
  constructor(message: string, plain = false) {
    this.message = message
    this.plain = plain
  }
}

/** Why a strategic merge patch cannot be applied: its message, and whether kube answers it with a plain 500. */
export interface Failure {
  readonly message: string
  readonly plain: boolean
}

// Go's %v of a decoded JSON value: maps as map[k:v] with their keys sorted, lists as [a b].
const goValue = (value: Json.Json): string =>
  value === null
    ? "<nil>"
    : Json.isArray(value)
    ? `[${value.map(goValue).join(" ")}]`
    : Json.isObject(value)
    ? `map[${Object.keys(value).sort().map((k) => `${k}:${goValue(value[k]!)}`).join(" ")}]`
    : String(value)

const list = (value: Json.Json | undefined, what: string): Json.JsonArray => {
  if (!Json.isArray(value)) throw new Invalid(`invalid patch: ${what} must be a list`)
  return value
}

const identify = (item: Json.Json, mergeKey: string | undefined): string | undefined => {
  if (mergeKey === undefined) return Json.canonical(item)
  if (!Json.isObject(item) || item[mergeKey] === undefined) return undefined
  return Json.canonical(item[mergeKey])
}

// Patched items first in `order` (the $setElementOrder list, else the patch's own order); items only
// the server had keep their relative order and are slotted in before the first patched item that
// came after them on the server.
const normalizeOrder = (
  merged: ReadonlyArray<Json.Json>,
  order: ReadonlyArray<Json.Json>,
  original: ReadonlyArray<Json.Json>,
  mergeKey: string | undefined
): Array<Json.Json> => {
  const orderIds = order.map((item) => identify(item, mergeKey))
  const serverIds = original.map((item) => identify(item, mergeKey))
  const position = (ids: ReadonlyArray<string | undefined>, item: Json.Json) => {
    const id = identify(item, mergeKey)
    return id === undefined ? -1 : ids.indexOf(id)
  }
  const patched = merged.filter((item) => position(orderIds, item) >= 0)
    .sort((a, b) => position(orderIds, a) - position(orderIds, b))
  const serverOnly = merged.filter((item) => position(orderIds, item) < 0)
  const out: Array<Json.Json> = []
  let i = 0
  let j = 0
  while (i < serverOnly.length || j < patched.length) {
    const left = serverOnly[i]
    const right = patched[j]
    if (right === undefined || left === undefined) {
      out.push((left ?? right)!)
      if (left === undefined) j++
      else i++
      continue
    }
    const l = position(serverIds, left)
    const r = position(serverIds, right)
    if (l >= 0 && r >= 0 && l < r) {
      out.push(left)
      i++
    } else {
      out.push(right)
      j++
    }
  }
  return out
}

const dedupe = (items: ReadonlyArray<Json.Json>): Array<Json.Json> => {
  const seen = new Set<string>()
  return items.filter((item) => {
    const id = Json.canonical(item)
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}

const mergeMapList = (
  original: ReadonlyArray<Json.Json>,
  patch: Json.JsonArray,
  structure: Structure.Structure,
  mergeKey: string,
  order: Json.Json | undefined
): Array<Json.Json> => {
  const itemStructure = Structure.items(structure)
  const directiveOf = (item: Json.Json) => (Json.isObject(item) ? item.$patch : undefined)
  const plain = patch.filter((item) => directiveOf(item) === undefined)
  if (patch.some((item) => directiveOf(item) === "replace")) return plain.map((item) => mergeValue(undefined, item, itemStructure))
  let merged = [...original]
  for (const item of patch) {
    const directive = directiveOf(item)
    if (directive === undefined) continue
    if (directive !== "delete") throw new Invalid(`invalid patch: unknown patch type ${JSON.stringify(directive)} in a list`)
    const id = identify(item, mergeKey)
    if (id === undefined) throw new Invalid(`map: ${goValue(item)} does not contain declared merge key: ${mergeKey}`, true)
    merged = merged.filter((existing) => identify(existing, mergeKey) !== id)
  }
  for (const item of plain) {
    const id = identify(item, mergeKey)
    if (id === undefined) throw new Invalid(`map: ${goValue(item)} does not contain declared merge key: ${mergeKey}`, true)
    const at = merged.findIndex((existing) => identify(existing, mergeKey) === id)
    if (at >= 0) merged[at] = mergeValue(merged[at], item, itemStructure)
    else merged.push(mergeValue(undefined, item, itemStructure))
  }
  return normalizeOrder(merged, order === undefined ? plain : list(order, setElementOrder + "list"), original, mergeKey)
}

const mergeList = (
  original: Json.Json | undefined,
  patch: Json.JsonArray,
  structure: Structure.Structure,
  order: Json.Json | undefined
): Json.JsonArray => {
  const listType = structure.listType
  const before = Json.isArray(original) ? original : []
  if (listType?._tag === "Map") return mergeMapList(before, patch, structure, listType.keys[0] ?? "name", order)
  if (listType?._tag === "Set") {
    const merged = dedupe([...before, ...patch])
    return normalizeOrder(merged, order === undefined ? patch : list(order, setElementOrder + "list"), before, undefined)
  }
  return patch
}

const mergeValue = (original: Json.Json | undefined, patch: Json.Json, structure: Structure.Structure): Json.Json =>
  Json.isObject(patch)
    ? mergeObject(Json.isObject(original) ? original : undefined, patch, structure)
    : Json.isArray(patch)
    ? mergeList(original, patch, structure, undefined)
    : patch

const mergeObject = (
  original: Json.JsonObject | undefined,
  patch: Json.JsonObject,
  structure: Structure.Structure
): Json.JsonObject => {
  const { $patch: directive, $retainKeys: retainKeys, ...fields } = patch
  if (directive === "delete") return {}
  if (directive === "replace") return mergeObject(undefined, fields, structure)
  if (directive !== undefined && directive !== "merge") {
    throw new Invalid(`invalid patch: unknown patch type ${JSON.stringify(directive)}`)
  }
  // A Map, not property assignment: a "__proto__" key must stay an ordinary key.
  const out = new Map(Object.entries(original ?? {}))
  if (retainKeys !== undefined) {
    const retained = new Set(list(retainKeys, "$retainKeys").map(String))
    for (const [key, value] of Object.entries(fields)) {
      if (value !== null && !key.startsWith("$") && !retained.has(key)) {
        throw new Invalid(`invalid patch: the field ${JSON.stringify(key)} is not in $retainKeys`)
      }
    }
    for (const key of out.keys()) if (!retained.has(key)) out.delete(key)
  }
  for (const [key, value] of Object.entries(fields)) {
    if (!key.startsWith(deleteFromPrimitiveList)) continue
    const name = key.slice(deleteFromPrimitiveList.length)
    const doomed = list(value, key).map(Json.canonical)
    const current = out.get(name)
    if (Json.isArray(current)) out.set(name, current.filter((item) => !doomed.includes(Json.canonical(item))))
  }
  for (const [key, value] of Object.entries(fields)) {
    if (key.startsWith(setElementOrder) || key.startsWith(deleteFromPrimitiveList)) continue
    if (value === null) out.delete(key)
    else if (Json.isArray(value)) {
      out.set(key, mergeList(out.get(key), value, Structure.field(structure, key), fields[setElementOrder + key]))
    } else out.set(key, mergeValue(out.get(key), value, Structure.field(structure, key)))
  }
  // Reordering without changing the list: only the $setElementOrder list was sent.
  for (const [key, order] of Object.entries(fields)) {
    if (!key.startsWith(setElementOrder)) continue
    const name = key.slice(setElementOrder.length)
    const current = out.get(name)
    if (fields[name] === undefined && Json.isArray(current)) {
      out.set(name, mergeList(current, [], Structure.field(structure, name), order))
    }
  }
  return Object.fromEntries(out)
}

/**
 * Applies a strategic merge patch to a stored object; fails with the message of a 422 when the
 * patch is malformed (an unknown `$patch`, a map-list item without its merge key, a field outside
 * `$retainKeys`).
 *
 * @example
 * import * as StrategicMergePatch from "./StrategicMergePatch.ts"
 * import { Result } from "effect"
 * const containers = { listType: { _tag: "Map", keys: ["name"] } } as const
 * const spec = { fields: { containers } }
 * const live = { spec: { containers: [{ name: "app", image: "app:1" }, { name: "sidecar", image: "proxy:1" }] } }
 * Result.getOrThrow(StrategicMergePatch.apply(live, { spec: { containers: [{ name: "app", image: "app:2" }] } }, { fields: { spec } }))
 * // { spec: { containers: [{ name: "app", image: "app:2" }, { name: "sidecar", image: "proxy:1" }] } }
 */
export const apply = (
  original: Json.JsonObject,
  patch: Json.JsonObject,
  structure: Structure.Structure
): Result.Result<Json.JsonObject, Failure> => {
  try {
    return Result.succeed(mergeObject(original, patch, structure))
  } catch (e) {
    if (e instanceof Invalid) return Result.fail({ message: e.message, plain: e.plain })
    throw e
  }
}
