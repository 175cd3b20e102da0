/**
 * The shape of an object where merging and field ownership depend on it: how each list merges
 * (atomic, set, or map keyed by some fields) and whether a map is owned whole or per key.
 * Built from a CRD's openAPIV3Schema (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
 * `x-kubernetes-map-type`) or from the built-in kinds' known patch strategies.
 *
 * Where a node has no structure, lists are atomic and objects granular (the apiserver's rule for
 * custom resources without markers).
 */
import { type Json } from "@kubefx/schema/internal"

export type ListType =
  | { readonly _tag: "Atomic" }
  | { readonly _tag: "Set" }
  | {
    readonly _tag: "Map"
    readonly keys: ReadonlyArray<string>
    /**
     * Schema defaults of key fields: an item that omits such a key is identified by its default,
     * as structured-merge-diff does, so an applied `{ containerPort: 80 }` is the stored
     * `{ containerPort: 80, protocol: "TCP" }`.
     */
    readonly keyDefaults?: Readonly<Record<string, Json.Json>>
  }

export type MapType = "granular" | "atomic"

export interface Structure {
  /** For array nodes: how the list merges and who owns its items. */
  readonly listType?: ListType
  /** For object nodes: owned per key (granular, the default) or as a whole (atomic). */
  readonly mapType?: MapType
  /** Known fields of an object node. */
  readonly fields?: Readonly<Record<string, Structure>>
  /** Values of a map with arbitrary keys (`additionalProperties`). */
  readonly additional?: Structure
  /** Items of an array node. */
  readonly items?: Structure
}

/** The structure of a node nothing is known about: lists atomic, objects granular. */
export const unknown: Structure = {}

/**
 * The structure of a child field, or `unknown` when none is declared.
 *
 * @example
 * import * as Structure from "./Structure.ts"
 * const s: Structure.Structure = { fields: { spec: { fields: { ports: { listType: { _tag: "Set" } } } } } }
 * Structure.field(Structure.field(s, "spec"), "ports").listType // { _tag: "Set" }
 */
export const field = (structure: Structure, name: string): Structure =>
  structure.fields?.[name] ?? structure.additional ?? unknown

/**
 * The structure of an array's items, or `unknown`.
 *
 * @example
 * import * as Structure from "./Structure.ts"
 * Structure.items({ items: { mapType: "atomic" } }).mapType // "atomic"
 */
export const items = (structure: Structure): Structure => structure.items ?? unknown
