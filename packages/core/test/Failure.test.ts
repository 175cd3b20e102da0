import { assert, describe, it } from "@effect/vitest"
import { Cause, Duration } from "effect"
import { Failure, Outcome, ReconcileError } from "@kubefx/core"

describe("Failure", () => {
  it("classifies typed errors, permanent errors and defects", () => {
    assert.strictEqual(Failure.fromCause(Cause.fail(new ReconcileError.Transient({ message: "x" })))._tag, "Transient")
    assert.strictEqual(Failure.fromCause(Cause.fail({ _tag: "DatabaseDown" }))._tag, "Transient")
    assert.strictEqual(Failure.fromCause(Cause.fail(new ReconcileError.Permanent({ message: "x" })))._tag, "Permanent")
    const defect = Failure.fromCause(Cause.die(new Error("boom")))
    assert.strictEqual(defect._tag, "Defect")
    assert.strictEqual(Failure.message(defect), "boom")
    assert.strictEqual(Failure.fromCause(Cause.interrupt())._tag, "Defect")
    assert.isFalse(Failure.isRetriable({ _tag: "Permanent", error: "x" }))
  })

  it("describes errors of any shape", () => {
    assert.strictEqual(Failure.message({ _tag: "Transient", error: "plain" }), "plain")
    assert.strictEqual(Failure.message({ _tag: "Transient", error: { _tag: "DatabaseDown" } }), "DatabaseDown")
    assert.strictEqual(Failure.message({ _tag: "Transient", error: { code: 7 } }), "{\"code\":7}")
    assert.strictEqual(
      Failure.message({ _tag: "Transient", error: new ReconcileError.Timeout({ after: Duration.millis(1500) }) }),
      "reconcile timed out after 1s 500ms"
    )
  })

  it("cuts messages to 256 characters, whatever their size", () => {
    assert.strictEqual(Failure.truncate("short"), "short")
    assert.strictEqual(Failure.truncate("x".repeat(256)), "x".repeat(256))
    const cut = Failure.truncate("y".repeat(1024 * 1024))
    assert.strictEqual(cut.length, 256)
    assert.isTrue(cut.endsWith("…"))
    const emoji = Failure.truncate("😀".repeat(300))
    assert.strictEqual(Array.from(emoji).length, 256)
    assert.isFalse(emoji.includes("\uFFFD"))
  })
})

describe("Outcome", () => {
  it("combines outcomes: done only if all are done, else the earliest requeue", () => {
    assert.deepStrictEqual(Outcome.combine([Outcome.done, Outcome.done]), Outcome.done)
    assert.deepStrictEqual(
      Outcome.combine([Outcome.requeueAfter("1 minute"), Outcome.done, Outcome.requeueAfter("5 seconds")]),
      Outcome.requeueAfter("5 seconds")
    )
    assert.deepStrictEqual(Outcome.combine([]), Outcome.done)
  })
})
