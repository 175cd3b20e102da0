/**
 * The checks the scenarios rely on can fail: overlapping reconcile intervals of two replicas or of
 * one key are found, so are a key arriving at a replica while another runs it and a drain
 * acknowledged while the key still runs, and a soak whose memory or handles keep growing is flagged.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Intervals from "../src/Intervals.ts"
import * as Soak from "../src/Soak.ts"

describe("Intervals", () => {
  it("pairs starts and ends per replica and key, closes a killed replica's open reconcile at its exit", () => {
    const log = "S a k1 10\nS a k2 12\nE a k1 20\nE a k2 25\nS b k1 30\n"
    assert.deepStrictEqual(Intervals.parse(log, { b: 40 }, 99), [
      { identity: "a", key: "k1", start: 10, end: 20, cut: false },
      { identity: "a", key: "k2", start: 12, end: 25, cut: false },
      { identity: "b", key: "k1", start: 30, end: 40, cut: true }
    ])
  })

  it("finds reconciles of different replicas that overlap, and only those", () => {
    const sequential = Intervals.parse("S a k 1\nE a k 5\nS b k 5\nE b k 9\nS a j 2\nE a j 4\n", {}, 99)
    assert.deepStrictEqual(Intervals.overlaps(sequential), [])
    const overlapping = Intervals.parse("S a k 1\nE a k 5\nS b j 4\nE b j 9\n", {}, 99)
    assert.deepStrictEqual(Intervals.overlaps(overlapping).map(([x, y]) => [x.identity, y.identity]), [["a", "b"]])
  })

  it("finds overlapping reconciles of one key, whichever replicas ran them, and only those", () => {
    // k: a then b back to back, then b twice at once; j: b and a at once.
    const log = "S a k 1\nE a k 5\nS b k 5\nS b k 6\nE b k 9\nE b k 9 draining\nS b j 2\nS a j 6\nE b j 7\nE a j 8\n"
    const found = Intervals.keyOverlaps(Intervals.parse(log, {}, 99))
    assert.deepStrictEqual(found.map(([x, y]) => [x.key, x.identity, x.start, y.identity, y.start]), [
      ["k", "b", 5, "b", 6],
      ["j", "b", 2, "a", 6]
    ])
  })

  it("finds a key arriving at a replica while another replica runs it", () => {
    const log = "S a k 1\nA b k 3\nE a k 5\nA b k 5\nS b k 6\nA a j 2\nE b k 8\n"
    const found = Intervals.arrivalsDuringRuns(Intervals.parse(log, {}, 99), Intervals.arrivals(log))
    assert.deepStrictEqual(found.map(([run, arrival]) => [run.identity, run.start, arrival.identity, arrival.at]), [["a", 1, "b", 3]])
  })

  it("finds a drain a replica acknowledged while it still ran the key", () => {
    const log = "S a k 1\nD a k 3\nS b k 2\nE a k 5\nD a k 6\nE b k 7\n"
    const found = Intervals.acknowledgedDuringRuns(Intervals.parse(log, {}, 99), Intervals.acknowledgements(log))
    assert.deepStrictEqual(found.map(([run, acknowledged]) => [run.identity, run.start, acknowledged.at]), [["a", 1, 3]])
  })
})

describe("Soak.growth", () => {
  const samples = (f: (i: number) => number) =>
    Array.from({ length: 12 }, (_, i) => ({ at: i * 10, rssMiB: f(i), heapMiB: 50, handles: 10, fds: 20, operations: i }))

  it("accepts a flat run with noise", () => {
    assert.isFalse(Soak.growth(samples((i) => 200 + (i % 3) * 5), 3).some((g) => g.grew))
  })

  it("flags memory that keeps growing after warm-up", () => {
    const grown = Soak.growth(samples((i) => 200 + i * 20), 3).find((g) => g.metric === "rssMiB")
    assert.isTrue(grown?.grew)
  })
})
