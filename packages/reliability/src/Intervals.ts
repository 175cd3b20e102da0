/**
 * Reconcile intervals from an external log that replicas append to ("S identity key millis" when a
 * reconcile starts, "E identity key millis" when it ends; anything after is ignored), and the pairs
 * of intervals that overlap: of different replicas (with leader election there must be none), or of
 * one key (with sharding there must be none). With sharding, replicas also log when a key enters
 * their cache ("A identity key millis"), which must not happen while another replica still runs it,
 * and when their cache shows that they acknowledged a drain of a key ("D identity key millis"),
 * which must not happen while they still run it.
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

// Pairs of overlapping intervals that `related` says count.
const sweep = (
  intervals: ReadonlyArray<Interval>,
  related: (earlier: Interval, later: Interval) => boolean
): Array<readonly [Interval, Interval]> => {
  const sorted = [...intervals].sort((a, b) => a.start - b.start)
  const found: Array<readonly [Interval, Interval]> = []
  const active: Array<Interval> = []
  for (const interval of sorted) {
    for (let i = active.length - 1; i >= 0; i--) if (active[i]!.end <= interval.start) active.splice(i, 1)
    for (const other of active) if (related(other, interval)) found.push([other, interval])
    active.push(interval)
  }
  return found
}

const byKey = (intervals: ReadonlyArray<Interval>): Map<string, Array<Interval>> => {
  const grouped = new Map<string, Array<Interval>>()
  for (const interval of intervals) {
    const runs = grouped.get(interval.key)
    if (runs === undefined) grouped.set(interval.key, [interval])
    else runs.push(interval)
  }
  return grouped
}

/**
 * Pairs of intervals of different replicas that overlap in time, whatever their keys.
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.overlaps([
 *   { identity: "a", key: "k", start: 1, end: 5, cut: false },
 *   { identity: "b", key: "j", start: 4, end: 6, cut: false }
 * ]).length // 1
 */
export const overlaps = (intervals: ReadonlyArray<Interval>): ReadonlyArray<readonly [Interval, Interval]> =>
  sweep(intervals, (earlier, later) => earlier.identity !== later.identity)

/**
 * Pairs of intervals of the same key that overlap in time, whichever replicas ran them (one
 * replica twice included): a key runs at most once at a time anywhere.
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.keyOverlaps([
 *   { identity: "a", key: "k", start: 1, end: 5, cut: false },
 *   { identity: "b", key: "j", start: 4, end: 6, cut: false },
 *   { identity: "b", key: "k", start: 4, end: 6, cut: false }
 * ]).length // 1
 */
export const keyOverlaps = (intervals: ReadonlyArray<Interval>): ReadonlyArray<readonly [Interval, Interval]> =>
  Array.from(byKey(intervals).values()).flatMap((runs) => sweep(runs, () => true))

/** Something a replica logged about a key: its arrival in the cache, its drain acknowledged. */
export interface Mark {
  readonly identity: string
  readonly key: string
  readonly at: number
}

const marked = (log: string, mark: "A" | "D"): ReadonlyArray<Mark> =>
  log.split("\n").flatMap((line) => {
    const [first, identity, key, at] = line.split(" ")
    return first === mark && identity !== undefined && key !== undefined && at !== undefined ? [{ identity, key, at: Number(at) }] : []
  })

/**
 * The arrivals of keys in replicas' caches ("A identity key millis" lines).
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.arrivals("S a k 1\nA b k 7\n") // [{ identity: "b", key: "k", at: 7 }]
 */
export const arrivals = (log: string): ReadonlyArray<Mark> => marked(log, "A")

/**
 * The drains replicas acknowledged, as their caches showed them ("D identity key millis" lines).
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.acknowledgements("E a k 5\nD a k 7\n") // [{ identity: "a", key: "k", at: 7 }]
 */
export const acknowledgements = (log: string): ReadonlyArray<Mark> => marked(log, "D")

// Each mark with the runs of its key that `related` picks and that were running at the mark.
const duringRuns = (
  intervals: ReadonlyArray<Interval>,
  marks: ReadonlyArray<Mark>,
  related: (run: Interval, mark: Mark) => boolean
): ReadonlyArray<readonly [Interval, Mark]> => {
  const runs = byKey(intervals)
  return marks.flatMap((mark) =>
    (runs.get(mark.key) ?? [])
      .filter((run) => related(run, mark) && run.start < mark.at && mark.at < run.end)
      .map((run) => [run, mark] as const)
  )
}

/**
 * Arrivals of a key at a replica while another replica was running it: a handover that did not wait
 * for the old owner, whether or not the new one ran the key soon enough to overlap.
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.arrivalsDuringRuns(
 *   [{ identity: "a", key: "k", start: 1, end: 5, cut: false }],
 *   [{ identity: "b", key: "k", at: 3 }, { identity: "b", key: "k", at: 6 }]
 * ).length // 1
 */
export const arrivalsDuringRuns = (
  intervals: ReadonlyArray<Interval>,
  arrived: ReadonlyArray<Mark>
): ReadonlyArray<readonly [Interval, Mark]> => duringRuns(intervals, arrived, (run, mark) => run.identity !== mark.identity)

/**
 * Drains a replica acknowledged while it was still running the key: the acknowledgement lets the
 * key move, so it must come after the replica's last run of it ended.
 *
 * @example
 * import * as Intervals from "./Intervals.ts"
 * Intervals.acknowledgedDuringRuns(
 *   [{ identity: "a", key: "k", start: 1, end: 5, cut: false }],
 *   [{ identity: "a", key: "k", at: 3 }, { identity: "b", key: "k", at: 4 }]
 * ).length // 1
 */
export const acknowledgedDuringRuns = (
  intervals: ReadonlyArray<Interval>,
  acknowledged: ReadonlyArray<Mark>
): ReadonlyArray<readonly [Interval, Mark]> => duringRuns(intervals, acknowledged, (run, mark) => run.identity === mark.identity)
