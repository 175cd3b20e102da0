/**
 * A `Map` for entries that come and go (a write remembered until its watch echo, a key recorded until
 * its event): after as many deletes as it holds, it starts afresh as a copy of itself.
 *
 * V8 keeps a `Map` that is added to and deleted from in order by rehashing its table in place, and
 * the table it replaces keeps a link to the new one. Once a table has lived long enough to be in the
 * old generation, the young collector treats everything the next table holds as alive, then
 * everything the table after it holds, until a full collection: every entry that passed through the
 * map is copied into the old generation. A copy made before V8 rehashes has no such link.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */

export interface TransientMap<K, V> {
  readonly get: (key: K) => V | undefined
  readonly has: (key: K) => boolean
  readonly set: (key: K, value: V) => void
  /** Whether the key was there. */
  readonly delete: (key: K) => boolean
  readonly size: () => number
  /** The key set longest ago (a key set again keeps its place). */
  readonly oldest: () => K | undefined
}

// A copy costs one insert per entry; starting afresh after `size + slack` deletes keeps that to about
// one insert per delete, and a small map from copying at every other delete.
const slack = 32

/**
 * An empty map.
 *
 * @example
 * import * as TransientMap from "./TransientMap.ts"
 * const pending = TransientMap.make<string, number>()
 * pending.set("default/a", 7)
 * pending.delete("default/a") // true
 * pending.oldest() // undefined
 */
export const make = <K, V>(): TransientMap<K, V> => {
  let map = new Map<K, V>()
  let deletes = 0
  return {
    get: (key) => map.get(key),
    has: (key) => map.has(key),
    set: (key, value) => {
      map.set(key, value)
    },
    delete: (key) => {
      if (!map.delete(key)) return false
      if (++deletes > map.size + slack) {
        map = new Map(map)
        deletes = 0
      }
      return true
    },
    size: () => map.size,
    oldest: () => map.keys().next().value
  }
}
