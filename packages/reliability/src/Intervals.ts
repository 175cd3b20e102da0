/**
 * Reconcile intervals from an external log that replicas append to ("S identity key millis" when a
 * reconcile starts, "E identity key millis" when it ends), and the pairs of intervals of different
 * replicas that overlap: with leader election there must be none.
 */

export interface Interval {
  readonly identity: string
  readonly key: string
  readonly start: number
  readonly end: number
  /** The replica died before logging the end; `end` is when it was seen to exit. */
  readonly cut: boolean
}

/**
 * The intervals of a log. A start without an end is closed at its replica's exit time from
 * `exits` (a killed replica), or at `now`.
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.parse("S a k 1\nE a k 3\nS b k 5\n", { b: 6 }, 10)
 * // [{ identity: "a", key: "k", start: 1, end: 3, cut: false }, { identity: "b", key: "k", start: 5, end: 6, cut: true }]
 */
export const parse = (log: string, exits: Readonly<Record<string, number>>, now: number): ReadonlyArray<Interval> => {
  const open = new Map<string, Array<number>>()
  const intervals: Array<Interval> = []
  for (const line of log.split("\n")) {
    const [mark, identity, key, at] = line.split(" ")
    if (identity === undefined || key === undefined || at === undefined) continue
    const id = `${identity} ${key}`
    if (mark === "S") open.set(id, [...(open.get(id) ?? []), Number(at)])
    else if (mark === "E") {
      const starts = open.get(id) ?? []
      const start = starts.shift()
      if (start !== undefined) intervals.push({ identity, key, start, end: Number(at), cut: false })
    }
  }
  for (const [id, starts] of open) {
    const [identity, key] = id.split(" ") as [string, string]
    for (const start of starts) intervals.push({ identity, key, start, end: exits[identity] ?? now, cut: true })
  }
  return intervals.sort((a, b) => a.start - b.start)
}

/**
 * Pairs of intervals of different replicas that overlap in time.
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.overlaps([
 *   { identity: "a", key: "k", start: 1, end: 5, cut: false },
 *   { identity: "b", key: "j", start: 4, end: 6, cut: false }
 * ]).length // 1
 */
export const overlaps = (intervals: ReadonlyArray<Interval>): ReadonlyArray<readonly [Interval, Interval]> => {
  const sorted = [...intervals].sort((a, b) => a.start - b.start)
  const found: Array<readonly [Interval, Interval]> = []
  const active: Array<Interval> = []
  for (const interval of sorted) {
    for (let i = active.length - 1; i >= 0; i--) if (active[i]!.end <= interval.start) active.splice(i, 1)
    for (const other of active) if (other.identity !== interval.identity) found.push([other, interval])
    active.push(interval)
  }
  return found
}
