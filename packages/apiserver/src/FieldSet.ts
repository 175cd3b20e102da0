/**
 * Sets of field paths, the unit of ownership in server-side apply, with the FieldsV1 wire format of
 * `metadata.managedFields[].fieldsV1`.
 *
 * A path is a list of elements, each written the way FieldsV1 writes it: `f:<field>`,
 * `k:<json of the key fields>` (an item of a map-list), `v:<json value>` (an item of a set-list) or
 * `i:<index>`. A set is a trie of elements; a node is a *member* when the path leading to it is in
 * the set itself (FieldsV1 writes that as `{}` for a leaf or `".": {}` beside children).
 */
import { Result } from "effect"
import * as Structure from "./Structure.ts"
import { Json, KubeObject } from "@kubefx/schema/internal"

/** One element of a path, in its FieldsV1 spelling (`f:spec`, `k:{"name":"app"}`, `v:"x"`, `i:0`). */
export type PathElement = string

/** A path from the object root, e.g. `["f:spec", "f:replicas"]`. */
export type Path = ReadonlyArray<PathElement>

/** A set of paths, as a trie of path elements (build with {@link make} or {@link fromFieldsV1}). */
export interface FieldSet {
  /** True when the path leading to this node is itself in the set. */
  readonly member: boolean
  readonly children: ReadonlyMap<PathElement, FieldSet>
}

/** The set with no paths. */
export const empty: FieldSet = { member: false, children: new Map() }

const node = (member: boolean, children: ReadonlyMap<PathElement, FieldSet>): FieldSet =>
  !member && children.size === 0 ? empty : { member, children }

/**
 * The element naming an object field.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.field("spec") // "f:spec"
 */
export const field = (name: string): PathElement => `f:${name}`

/**
 * The element naming a map-list item by its key fields.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.key({ name: "app" }) // 'k:{"name":"app"}'
 */
export const key = (fields: Json.JsonObject): PathElement => `k:${Json.canonical(fields)}`

/**
 * The element naming a set-list item by its value.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.value("example.com/finalizer") // 'v:"example.com/finalizer"'
 */
export const value = (item: Json.Json): PathElement => `v:${Json.canonical(item)}`

/**
 * The element naming a list item by position (only met in FieldsV1 written by others).
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.index(0) // "i:0"
 */
export const index = (i: number): PathElement => `i:${i}`

/**
 * The set holding exactly the given paths.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * const s = FieldSet.make([["f:spec", "f:replicas"]])
 * FieldSet.has(s, ["f:spec", "f:replicas"]) // true
 * FieldSet.has(s, ["f:spec"]) // false
 */
export const make = (paths: Iterable<Path>): FieldSet => {
  interface Mutable {
    member: boolean
    children: Map<PathElement, Mutable>
  }
  const root: Mutable = { member: false, children: new Map() }
  for (const path of paths) {
    let at = root
    for (const element of path) {
      let next = at.children.get(element)
      if (next === undefined) {
        next = { member: false, children: new Map() }
        at.children.set(element, next)
      }
      at = next
    }
    if (path.length > 0) at.member = true
  }
  return root.children.size === 0 ? empty : root
}

/**
 * The subset below one element (empty when there is nothing there).
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.has(FieldSet.child(FieldSet.make([["f:spec", "f:replicas"]]), "f:spec"), ["f:replicas"]) // true
 */
export const child = (set: FieldSet, element: PathElement): FieldSet => set.children.get(element) ?? empty

/**
 * True when the path is in the set.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.has(FieldSet.make([["f:a"]]), ["f:a"]) // true
 */
export const has = (set: FieldSet, path: Path): boolean => {
  let at = set
  for (const element of path) {
    const next = at.children.get(element)
    if (next === undefined) return false
    at = next
  }
  return path.length > 0 && at.member
}

/**
 * True when the set has no paths.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.isEmpty(FieldSet.empty) // true
 */
export const isEmpty = (set: FieldSet): boolean => !set.member && set.children.size === 0

/**
 * Paths in either set.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.paths(FieldSet.union(FieldSet.make([["f:a"]]), FieldSet.make([["f:b"]]))) // [["f:a"], ["f:b"]]
 */
export const union = (a: FieldSet, b: FieldSet): FieldSet => {
  if (isEmpty(a)) return b
  if (isEmpty(b)) return a
  const children = new Map(a.children)
  for (const [element, sub] of b.children) {
    const mine = children.get(element)
    children.set(element, mine === undefined ? sub : union(mine, sub))
  }
  return node(a.member || b.member, children)
}

/**
 * Paths in both sets.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * const a = FieldSet.make([["f:a"], ["f:b"]])
 * FieldSet.paths(FieldSet.intersection(a, FieldSet.make([["f:b"], ["f:c"]]))) // [["f:b"]]
 */
export const intersection = (a: FieldSet, b: FieldSet): FieldSet => {
  const children = new Map<PathElement, FieldSet>()
  for (const [element, sub] of a.children) {
    const theirs = b.children.get(element)
    if (theirs === undefined) continue
    const both = intersection(sub, theirs)
    if (!isEmpty(both)) children.set(element, both)
  }
  return node(a.member && b.member, children)
}

/**
 * Paths of `a` that are not in `b` (path by path: removing a path keeps the paths below it).
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * const a = FieldSet.make([["f:a"], ["f:b"]])
 * FieldSet.paths(FieldSet.difference(a, FieldSet.make([["f:b"]]))) // [["f:a"]]
 */
export const difference = (a: FieldSet, b: FieldSet): FieldSet => {
  if (isEmpty(b) || isEmpty(a)) return a
  const children = new Map<PathElement, FieldSet>()
  for (const [element, sub] of a.children) {
    const theirs = b.children.get(element)
    const rest = theirs === undefined ? sub : difference(sub, theirs)
    if (!isEmpty(rest)) children.set(element, rest)
  }
  return node(a.member && !b.member, children)
}

/**
 * Paths of `set` equal to or below some path of `prefixes`.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * const s = FieldSet.make([["f:spec", "f:a", "f:b"], ["f:status"]])
 * FieldSet.paths(FieldSet.under(s, FieldSet.make([["f:spec"]]))) // [["f:spec", "f:a", "f:b"]]
 */
export const under = (set: FieldSet, prefixes: FieldSet): FieldSet => {
  if (prefixes.member) return set
  const children = new Map<PathElement, FieldSet>()
  for (const [element, sub] of prefixes.children) {
    const mine = set.children.get(element)
    if (mine === undefined) continue
    const kept = under(mine, sub)
    if (!isEmpty(kept)) children.set(element, kept)
  }
  return node(false, children)
}

/**
 * True when both sets hold the same paths.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.equals(FieldSet.make([["f:a"], ["f:b"]]), FieldSet.make([["f:b"], ["f:a"]])) // true
 */
export const equals = (a: FieldSet, b: FieldSet): boolean => {
  if (a === b) return true
  if (a.member !== b.member || a.children.size !== b.children.size) return false
  for (const [element, sub] of a.children) {
    const theirs = b.children.get(element)
    if (theirs === undefined || !equals(sub, theirs)) return false
  }
  return true
}

const rank = (element: PathElement): number => "fkvi".indexOf(element[0] ?? "")

// FieldsV1 orders fields before keys before values before indices, then by name or value.
const compareElements = (a: PathElement, b: PathElement): number => {
  const byRank = rank(a) - rank(b)
  if (byRank !== 0) return byRank
  if (a.startsWith("i:")) return Number(a.slice(2)) - Number(b.slice(2))
  return a < b ? -1 : a > b ? 1 : 0
}

const sortedChildren = (set: FieldSet): Array<[PathElement, FieldSet]> =>
  [...set.children].sort(([a], [b]) => compareElements(a, b))

/**
 * Every path of the set, in FieldsV1 order.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.paths(FieldSet.make([["f:b"], ["f:a", "f:x"]])) // [["f:a", "f:x"], ["f:b"]]
 */
export const paths = (set: FieldSet): Array<Path> => {
  const out: Array<Path> = []
  const walk = (at: FieldSet, prefix: Path) => {
    for (const [element, sub] of sortedChildren(at)) {
      const path = [...prefix, element]
      if (sub.member) out.push(path)
      walk(sub, path)
    }
  }
  walk(set, [])
  return out
}

/**
 * The FieldsV1 encoding of a set, as stored in `managedFields[].fieldsV1`.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.toFieldsV1(FieldSet.make([["f:metadata", "f:labels"], ["f:metadata", "f:labels", "f:app"]]))
 * // { "f:metadata": { "f:labels": { ".": {}, "f:app": {} } } }
 */
export const toFieldsV1 = (set: FieldSet): Json.JsonObject => {
  const encode = (at: FieldSet, self: boolean): Json.JsonObject => {
    const out: Record<string, Json.Json> = {}
    if (self && at.children.size > 0) out["."] = {}
    for (const [element, sub] of sortedChildren(at)) out[element] = encode(sub, sub.member)
    return out
  }
  return encode(set, false)
}

const decodeElement = (text: string): PathElement | undefined => {
  // Most elements are fields, and a field's text is its element.
  if (text.startsWith("f:")) return text
  const rest = text.slice(2)
  switch (text.slice(0, 2)) {
    case "i:":
      return /^(0|[1-9][0-9]*)$/.test(rest) ? text : undefined
    case "k:": {
      const parsed = Json.parse(rest)
      return Result.isSuccess(parsed) && Json.isObject(parsed.success) ? key(parsed.success) : undefined
    }
    case "v:": {
      const parsed = Json.parse(rest)
      return Result.isSuccess(parsed) ? value(parsed.success) : undefined
    }
    default:
      return undefined
  }
}

/**
 * Decodes FieldsV1; fails with a message on anything that is not FieldsV1.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * import { Result } from "effect"
 * const s = Result.getOrThrow(FieldSet.fromFieldsV1({ "f:spec": { "f:replicas": {} } }))
 * FieldSet.has(s, ["f:spec", "f:replicas"]) // true
 */
export const fromFieldsV1 = (fields: Json.Json): Result.Result<FieldSet, string> => {
  // Every write decodes the managedFields it replaces: the walk allocates the set and nothing else
  // (the path for an error message is joined only when there is one).
  const path: Array<string> = []
  let failure = ""
  const fail = (message: string): undefined => {
    failure = `${path.map((text) => `${text}/`).join("")}: ${message}`
    return undefined
  }
  const decode = (at: Json.Json): FieldSet | undefined => {
    if (!Json.isObject(at)) return fail("expected an object")
    const children = new Map<PathElement, FieldSet>()
    let member = false
    for (const text in at) {
      if (text === ".") {
        member = true
        continue
      }
      const element = decodeElement(text)
      if (element === undefined) return fail(`invalid path element ${JSON.stringify(text)}`)
      const sub = at[text]!
      path.push(text)
      const decoded = decode(sub)
      path.pop()
      if (decoded === undefined) return undefined
      children.set(element, KubeObject.isEmptyObject(sub) ? leaf : decoded)
    }
    return { member, children }
  }
  const decoded = decode(fields)
  return decoded === undefined ? Result.fail(failure) : Result.succeed(node(false, decoded.children))
}

// A path in the set with nothing below it; sets are never changed in place, so it is shared.
const leaf: FieldSet = { member: true, children: new Map() }

const formatElement = (element: PathElement): string => {
  const rest = element.slice(2)
  switch (element.slice(0, 2)) {
    case "f:":
      return `.${rest}`
    case "k:": {
      const fields = JSON.parse(rest) as Json.JsonObject
      return `[${Object.keys(fields).map((k) => `${k}=${Json.canonical(fields[k]!)}`).join(",")}]`
    }
    case "v:":
      return `[=${rest}]`
    default:
      return `[${rest}]`
  }
}

/**
 * A path as Kubernetes prints it in conflicts: `.spec.containers[name="app"].image`.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.formatPath(["f:spec", 'k:{"name":"app"}', "f:image"]) // '.spec[name="app"].image'
 */
export const formatPath = (path: Path): string => path.map(formatElement).join("")

/** A child of an object or list node, with the element that names it and its structure. */
export interface Child {
  readonly element: PathElement
  readonly value: Json.Json
  readonly structure: Structure.Structure
  /** `entry`: a key of a map with arbitrary keys; `item`: a list item; `field`: anything else. */
  readonly kind: "field" | "entry" | "item"
}

const pick = (
  item: Json.JsonObject,
  names: ReadonlyArray<string>,
  defaults: Readonly<Record<string, Json.Json>> = {}
): Json.JsonObject =>
  Object.fromEntries(names.flatMap((n) =>
    Object.hasOwn(item, n) ? [[n, item[n]!]] : Object.hasOwn(defaults, n) ? [[n, defaults[n]!]] : []
  ))

/**
 * Whether server-side apply tracks the node's parts one by one (its `children`): a list marked
 * set or map, or an object not marked atomic. Scalars and atomic lists and maps are leaves.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.isGranular({ a: 1 }, {}) // true
 * FieldSet.isGranular(["a"], {}) // false (lists are atomic unless marked)
 */
export const isGranular = (node: Json.Json, structure: Structure.Structure): boolean =>
  Json.isArray(node) ? granularListType(structure) !== undefined : Json.isObject(node) && structure.mapType !== "atomic"

// A list's type when its items are tracked one by one.
const granularListType = (structure: Structure.Structure) => {
  const listType = structure.listType
  return listType === undefined || listType._tag === "Atomic" ? undefined : listType
}

/**
 * The children of a node whose parts are owned separately (a granular object, a map-list or a
 * set-list), or `undefined` for a leaf: a scalar, an atomic list or an atomic map. Duplicate list
 * items are all returned; callers keep the first.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * FieldSet.children([{ name: "a" }], { listType: { _tag: "Map", keys: ["name"] } })?.[0]?.element // 'k:{"name":"a"}'
 * FieldSet.children(["a"], {}) // undefined (lists are atomic unless marked)
 */
export const children = (node: Json.Json, structure: Structure.Structure): ReadonlyArray<Child> | undefined => {
  if (!isGranular(node, structure)) return undefined
  if (Json.isArray(node)) {
    const listType = granularListType(structure)!
    const itemStructure = Structure.items(structure)
    return node.map((item, i) => ({
      element: listType._tag === "Set"
        ? value(item)
        : Json.isObject(item)
        ? key(pick(item, listType.keys, listType.keyDefaults))
        : index(i),
      value: item,
      structure: itemStructure,
      kind: "item"
    }))
  }
  if (Json.isObject(node)) {
    return Object.keys(node).map((name) => ({
      element: field(name),
      value: node[name]!,
      structure: Structure.field(structure, name),
      kind: structure.additional !== undefined && structure.fields?.[name] === undefined ? "entry" : "field"
    }))
  }
  return undefined
}

/**
 * Children by element, the first of duplicates winning (live lists may hold duplicate items).
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * const kids = FieldSet.children([{ name: "a", v: 1 }, { name: "a", v: 2 }], { listType: { _tag: "Map", keys: ["name"] } })!
 * FieldSet.byElement(kids).get('k:{"name":"a"}')?.value // { name: "a", v: 1 }
 */
export const byElement = (kids: ReadonlyArray<Child>): Map<PathElement, Child> => {
  const byElement = new Map<PathElement, Child>()
  for (const kid of kids) if (!byElement.has(kid.element)) byElement.set(kid.element, kid)
  return byElement
}

/**
 * The fields an applied configuration sets, as server-side apply records them for its manager:
 * every leaf (scalar, atomic list or map), every list item, every key of a map with arbitrary keys
 * and every empty object or null.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * const s = FieldSet.fromObject({ spec: { replicas: 2 } }, {})
 * FieldSet.toFieldsV1(s) // { "f:spec": { "f:replicas": {} } }
 */
export const fromObject = (object: Json.Json, structure: Structure.Structure): FieldSet => {
  const out: Array<Path> = []
  const walk = (at: Json.Json, s: Structure.Structure, path: Path) => {
    const kids = children(at, s)
    if (kids === undefined) {
      out.push(path)
      return
    }
    for (const kid of byElement(kids).values()) {
      const p = [...path, kid.element]
      walk(kid.value, kid.structure, p)
      if (kid.kind !== "field" || KubeObject.isEmptyObject(kid.value)) out.push(p)
    }
  }
  walk(object, structure, [])
  return make(out)
}

// A path as the walk goes down, turned into a Path only when recorded: most nodes of two versions
// of an object are equal and record nothing. A field's element is spelled then too.
interface Trail {
  readonly up: Trail | undefined
  readonly element: string
  readonly field: boolean
}

const pathOf = (trail: Trail | undefined): Path => {
  const path: Array<PathElement> = []
  for (let at = trail; at !== undefined; at = at.up) path.push(at.field ? field(at.element) : at.element)
  return path.reverse()
}

/** What changed between two versions of an object, as sets of paths. */
export interface Comparison {
  /** Paths present only in the new version (for a new subtree: the node and everything below). */
  readonly added: FieldSet
  /** Leaves present in both with different values. */
  readonly modified: FieldSet
  /** Paths present only in the old version (the node and everything below). */
  readonly removed: FieldSet
}

/**
 * Compares two versions of an object leaf by leaf, as managedFields tracking does for updates.
 *
 * @example
 * import * as FieldSet from "./FieldSet.ts"
 * const c = FieldSet.compare({ spec: { replicas: 1, paused: true } }, { spec: { replicas: 2 } }, {})
 * FieldSet.paths(c.modified) // [["f:spec", "f:replicas"]]
 * FieldSet.paths(c.removed) // [["f:spec", "f:paused"]]
 */
export const compare = (
  before: Json.Json | undefined,
  after: Json.Json | undefined,
  structure: Structure.Structure
): Comparison => {
  const added: Array<Path> = []
  const modified: Array<Path> = []
  const removed: Array<Path> = []
  const all = (at: Json.Json, s: Structure.Structure, trail: Trail | undefined, out: Array<Path>) => {
    out.push(pathOf(trail))
    for (const kid of children(at, s) ?? []) all(kid.value, kid.structure, { up: trail, element: kid.element, field: false }, out)
  }
  const walk = (l: Json.Json | undefined, r: Json.Json | undefined, s: Structure.Structure, trail: Trail | undefined) => {
    if (l === undefined) return r === undefined ? undefined : all(r, s, trail, added)
    if (r === undefined) return all(l, s, trail, removed)
    // Two granular objects, most of the nodes compared: field by field, their children not built.
    if (Json.isObject(l) && Json.isObject(r) && isGranular(l, s)) {
      const leftNames = Object.keys(l)
      for (let i = 0; i < leftNames.length; i++) {
        const name = leftNames[i]!
        walk(l[name], Object.hasOwn(r, name) ? r[name] : undefined, Structure.field(s, name), { up: trail, element: name, field: true })
      }
      const rightNames = Object.keys(r)
      for (let i = 0; i < rightNames.length; i++) {
        const name = rightNames[i]!
        if (!Object.hasOwn(l, name)) walk(undefined, r[name], Structure.field(s, name), { up: trail, element: name, field: true })
      }
      return
    }
    const lk = children(l, s)
    const rk = children(r, s)
    if (lk === undefined || rk === undefined || Json.isArray(l) !== Json.isArray(r)) {
      if (Json.equals(l, r)) return
      modified.push(pathOf(trail))
      // A node changing between leaf and container: whatever was below it is gone or new.
      for (const kid of lk ?? []) all(kid.value, kid.structure, { up: trail, element: kid.element, field: false }, removed)
      for (const kid of rk ?? []) all(kid.value, kid.structure, { up: trail, element: kid.element, field: false }, added)
      return
    }
    const left = byElement(lk)
    const right = byElement(rk)
    for (const [element, kid] of left) walk(kid.value, right.get(element)?.value, kid.structure, { up: trail, element, field: false })
    for (const [element, kid] of right) {
      if (!left.has(element)) walk(undefined, kid.value, kid.structure, { up: trail, element, field: false })
    }
  }
  walk(before, after, structure, undefined)
  return { added: make(added), modified: make(modified), removed: make(removed) }
}
