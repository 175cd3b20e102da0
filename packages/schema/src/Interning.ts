/**
 * One copy of each short string that many objects repeat (namespaces, kinds, label values,
 * condition reasons, timestamps): `JSON.parse` gives every parsed object its own copy, a cache of
 * thousands of objects holds thousands of equal strings. Bounded: a table that fills up starts
 * over, so strings that stop recurring are not kept.
 *
 * @since 0.1.0
 */

export interface Table {
  /** The table's copy of `value` (a string up to the table's length limit), or `value` itself. */
  readonly intern: <A>(value: A) => A
}

/**
 * A table of at most `capacity` strings of at most `longest` characters.
 *
 * @example
 * import { Interning } from "@kubefx/schema/internal"
 * const table = Interning.make()
 * const a = table.intern(JSON.parse('"default"'))
 * const b = table.intern(JSON.parse('"default"'))
 * // a and b are one string in memory
 */
export const make = (capacity = 8192, longest = 64): Table => {
  let strings = new Map<string, string>()
  return {
    intern: <A>(value: A): A => {
      if (typeof value !== "string" || value.length > longest) return value
      const known = strings.get(value)
      if (known !== undefined) return known as A
      if (strings.size >= capacity) strings = new Map()
      strings.set(value, value)
      return value
    }
  }
}
