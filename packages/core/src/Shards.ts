/**
 * Which member of a group of replicas owns a key, and how a key moves from one member to another
 * without two members ever running it at once.
 *
 * Keys map to members by rendezvous hashing (each key goes to the member whose hash with the key
 * is highest): adding or removing one of N members moves 1/N of the keys, only to or from that
 * member, and shares stay within a few percent of even. (effect's `HashRing` was measured first:
 * its string hash left one of three replicas 47% of the keys, which caps the throughput of the
 * group at the busiest replica.) A key moves in steps that `decide` names: a key with no
 * owner, or whose owner is gone, is assigned at once; a key whose live owner is no longer the one
 * the ring names is first drained (the owner is asked to stop), and moved only once its owner has
 * acknowledged that it stopped. A member is gone only after it has stopped everything it owned
 * (the caller's membership guarantees it), so a move never overlaps two runs of the key.
 *
 * @since 0.1.0
 */
/** The members keys are spread over. */
export interface Ring {
  /** Sorted, without duplicates. */
  readonly members: ReadonlyArray<string>
  readonly seeds: ReadonlyArray<number>
}

// FNV-1a over UTF-16 units, then murmur3's finalizer: fast, and well mixed for similar strings.
const hash = (text: string, seed: number): number => {
  let h = seed ^ 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * A ring over the members (names in any order; the same set always gives the same owners).
 *
 * @example
 * import { Shards } from "@kubefx/core"
 * const ring = Shards.ring(["replica-b", "replica-a"])
 * ring.members // ["replica-a", "replica-b"]
 */
export const ring = (members: Iterable<string>): Ring => {
  const names = Array.from(new Set(members)).sort()
  return { members: names, seeds: names.map((name) => hash(name, 0)) }
}

/**
 * The member that owns the key, or undefined when there is none.
 *
 * @example
 * import { Shards } from "@kubefx/core"
 * Shards.owner(Shards.ring(["replica-a"]), "default/web") // "replica-a"
 */
export const owner = (self: Ring, key: string): string | undefined => {
  let best: string | undefined
  let bestScore = -1
  for (let i = 0; i < self.members.length; i++) {
    const score = hash(key, self.seeds[i]!)
    if (score > bestScore) {
      bestScore = score
      best = self.members[i]
    }
  }
  return best
}

/** Where a key stands, as recorded beside it. */
export interface Placement {
  /** The member that runs the key, if any. */
  readonly owner: string | undefined
  /** The member the key is being handed to, while its owner is asked to stop. */
  readonly draining: string | undefined
  /** The member that acknowledged it stopped running the key. */
  readonly acknowledged: string | undefined
}

/** The next step for a key. */
export type Step =
  /** Nothing to do (settled, or waiting for the owner's acknowledgement). */
  | { readonly _tag: "Keep" }
  /** Make `to` the owner and clear any drain: nobody runs the key now. */
  | { readonly _tag: "Assign"; readonly to: string }
  /** Ask the owner to stop running the key, which is to go to `to`. */
  | { readonly _tag: "Drain"; readonly to: string }
  /** The key stays with its owner after all: clear the drain, so the owner runs it again. */
  | { readonly _tag: "Cancel" }

const keep: Step = { _tag: "Keep" }
const cancel: Step = { _tag: "Cancel" }

/**
 * The next step for a key, given the live members and the ring over them.
 *
 * @example
 * import { Shards } from "@kubefx/core"
 * const members = Shards.ring(["replica-a"])
 * Shards.decide("default/web", { owner: undefined, draining: undefined, acknowledged: undefined }, members)
 * // { _tag: "Assign", to: "replica-a" }
 */
export const decide = (key: string, placement: Placement, live: Ring): Step => {
  const wanted = owner(live, key)
  if (wanted === undefined) return keep
  const current = placement.owner
  // An owner that is gone has stopped: the key moves at once.
  if (current === undefined || !live.members.includes(current)) return { _tag: "Assign", to: wanted }
  if (current === wanted) return placement.draining === undefined && placement.acknowledged === undefined ? keep : cancel
  if (placement.acknowledged === current) return { _tag: "Assign", to: wanted }
  return placement.draining === wanted ? keep : { _tag: "Drain", to: wanted }
}
