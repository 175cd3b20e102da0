import { assert, describe, it } from "@effect/vitest"
import type { Controller as Engine } from "@kubefx/core"
import * as ReconcileRates from "../src/operator/ReconcileRates.ts"

const run = (controller: string, endsAt: number, result: Engine.RunResult = { _tag: "Done" }) => ({
  controller,
  startedAt: endsAt - 5,
  durationMillis: 5,
  result
})
const failed: Engine.RunResult = { _tag: "Transient", message: "boom" }

describe("ReconcileRates", () => {
  it("counts runs and failed runs in the bucket their run ended in, oldest bucket first", () => {
    const rates = ReconcileRates.make({ bucketMillis: 1000, buckets: 4 })
    rates.record(run("a", 10_100))
    rates.record(run("a", 10_900, failed))
    rates.record(run("a", 12_000, { _tag: "Permanent", message: "bad" }))
    rates.record(run("a", 12_500, { _tag: "Defect", message: "died" }))
    rates.record(run("a", 13_200, { _tag: "RequeueAfter", afterMillis: 1000 }))
    rates.record(run("b", 13_300, failed))
    assert.deepStrictEqual(rates.window("a", 13_999), { bucketMillis: 1000, lastBucketAt: 13_000, runs: [2, 0, 2, 1], errors: [1, 0, 2, 0] })
    assert.deepStrictEqual(rates.window("b", 13_999).errors, [0, 0, 0, 1])
  })

  it("forgets buckets older than the window, also when their slot is reused", () => {
    const rates = ReconcileRates.make({ bucketMillis: 1000, buckets: 3 })
    rates.record(run("a", 1_500))
    rates.record(run("a", 2_500, failed))
    assert.deepStrictEqual(rates.window("a", 3_000).runs, [1, 1, 0])
    assert.deepStrictEqual(rates.window("a", 5_000).runs, [0, 0, 0])
    // The slot of the failed run's bucket (2) is reused for bucket 5: its counts start again.
    rates.record(run("a", 5_500))
    assert.deepStrictEqual(rates.window("a", 5_999), { bucketMillis: 1000, lastBucketAt: 5_000, runs: [0, 0, 1], errors: [0, 0, 0] })
    // A late report for a bucket whose slot now holds a newer one is dropped, not mixed in.
    rates.record(run("a", 2_200, failed))
    assert.deepStrictEqual(rates.window("a", 5_999).errors, [0, 0, 0])
  })

  it("does not count interrupted runs, and knows nothing of controllers that never ran", () => {
    const rates = ReconcileRates.make()
    rates.record(run("a", 50_000, { _tag: "Interrupted" }))
    const window = rates.window("a", 55_000)
    assert.strictEqual(window.runs.length, 60)
    assert.strictEqual(window.bucketMillis, 10_000)
    assert.isTrue(window.runs.every((n) => n === 0))
    assert.deepStrictEqual(rates.window("unknown", 55_000).errors, Array(60).fill(0))
  })
})
