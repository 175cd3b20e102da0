/**
 * The checks the scenarios rely on can fail: overlapping reconcile intervals of two replicas are
 * found, and a soak whose memory or handles keep growing is flagged.
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
