import { assert, describe, expect, it } from "@effect/vitest"
import { Conditions, StructuralSchema } from "@kubefx/kube"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"

const t0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678)
const synced: Conditions.Update = { type: "Synced", status: "True", reason: "Applied", message: "all good" }

describe("Conditions", () => {
  it("set adds a condition with the time as RFC 3339 seconds", () => {
    const conditions = Conditions.set([], synced, t0)
    expect(conditions).toEqual([{
      type: "Synced",
      status: "True",
      lastTransitionTime: "2026-01-02T03:04:05Z",
      reason: "Applied",
      message: "all good"
    }])
  })

  it.effect("lastTransitionTime moves only when the status changes (TestClock)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(t0)
      const first = yield* Conditions.setNow([], Conditions.ready({ observedGeneration: 1 }))
      assert.strictEqual(Conditions.get(first, "Ready")?.lastTransitionTime, "2026-01-02T03:04:05Z")

      // same status, new reason/message/generation: updated, transition time kept
      yield* TestClock.adjust("1 minute")
      const second = yield* Conditions.setNow(first, Conditions.ready({ observedGeneration: 2, message: "done", reason: "AllDone" }))
      expect(Conditions.get(second, "Ready")).toEqual({
        type: "Ready",
        status: "True",
        observedGeneration: 2,
        lastTransitionTime: "2026-01-02T03:04:05Z",
        reason: "AllDone",
        message: "done"
      })

      // status changes: transition time moves to now
      yield* TestClock.adjust("1 minute")
      const third = yield* Conditions.setNow(second, Conditions.notReady("boom", { observedGeneration: 3 }))
      expect(Conditions.get(third, "Ready")).toMatchObject({
        status: "False",
        reason: "ReconcileError",
        message: "boom",
        observedGeneration: 3,
        lastTransitionTime: "2026-01-02T03:06:05Z"
      })
    }))

  it("setting what is already there returns the same array", () => {
    const conditions = Conditions.set([], synced, t0)
    assert.strictEqual(Conditions.set(conditions, synced, t0 + 60_000), conditions)
  })

  it("other conditions keep their place and values", () => {
    const conditions = Conditions.merge([], [synced, Conditions.ready()], t0)
    const next = Conditions.set(conditions, Conditions.notReady("down"), t0 + 1000)
    expect(next.map((c) => c.type)).toEqual(["Synced", "Ready"])
    assert.strictEqual(next[0], conditions[0])
  })

  it("merge applies a list of updates with the same rule", () => {
    const before = Conditions.merge([], [synced, Conditions.ready()], t0)
    const after = Conditions.merge(before, [
      { ...synced, message: "still good" },
      Conditions.notReady("broken"),
      { type: "Degraded", status: "Unknown", reason: "Checking" }
    ], t0 + 5000)
    expect(after.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ["Synced", "True", "2026-01-02T03:04:05Z"],
      ["Ready", "False", "2026-01-02T03:04:10Z"],
      ["Degraded", "Unknown", "2026-01-02T03:04:10Z"]
    ])
    expect(Conditions.get(after, "Synced")?.message).toBe("still good")
  })

  it("remove, get, isTrue and isFalse", () => {
    const conditions = Conditions.merge([], [synced, Conditions.notReady("no")], t0)
    expect(Conditions.isTrue(conditions, "Synced")).toBe(true)
    expect(Conditions.isFalse(conditions, "Synced")).toBe(false)
    expect(Conditions.isFalse(conditions, "Ready")).toBe(true)
    expect(Conditions.isTrue(conditions, "Missing")).toBe(false)
    expect(Conditions.isFalse(conditions, "Missing")).toBe(false)
    const removed = Conditions.remove(conditions, "Synced")
    expect(removed.map((c) => c.type)).toEqual(["Ready"])
    expect(Conditions.get(removed, "Synced")).toBeUndefined()
    assert.strictEqual(Conditions.remove(removed, "Synced"), removed)
  })

  it("a failure message is cut to 256 characters, or to a given length", () => {
    const long = "x".repeat(1000)
    const cut = Conditions.notReady(long).message!
    expect(cut.length).toBe(256)
    expect(cut.endsWith("…")).toBe(true)
    expect(Conditions.notReady(long, { maxMessageLength: 20 }).message!.length).toBe(20)
    expect(Conditions.ready({ message: long }).message!.length).toBe(256)
    expect(Conditions.notReady("short").message).toBe("short")
    const stored = Conditions.set([], Conditions.notReady(long), t0)
    expect(stored[0]!.message.length).toBe(256)
  })

  it("a 403 cut to 256 characters keeps the RBAC rule it ends with whole", () => {
    const rule = ` (rbac: {"apiGroups":[""],"resources":["configmaps"],"verbs":["delete"]})`
    const denied = `configmaps "website-hello-content" is forbidden: User "system:serviceaccount:websites-operator:websites-operator" ` +
      `cannot delete resource "configmaps" in API group "" in the namespace "production-europe-west"${rule}`
    expect(denied.length).toBeGreaterThan(256)
    const message = Conditions.notReady(denied).message!
    expect(message.length).toBe(256)
    expect(message.endsWith(`…${rule}`)).toBe(true)
    expect(message.startsWith(`configmaps "website-hello-content" is forbidden`)).toBe(true)
    // Through a workflow's node condition too, whose message names the node first.
    expect(Conditions.cut(`content failed: ${denied}`).endsWith(rule)).toBe(true)
    // Any other message is cut at its end.
    expect(Conditions.cut(`${denied} and more`).endsWith("…")).toBe(true)
  })

  it("the Schema accepts what set produces and rejects what the API server would", () => {
    const decode = Schema.decodeUnknownResult(Conditions.Conditions)
    expect(decode(Conditions.set([], Conditions.ready({ observedGeneration: 4 }), t0))._tag).toBe("Success")
    const valid = { type: "Ready", status: "True", lastTransitionTime: "2026-01-02T03:04:05Z", reason: "Reconciled", message: "" }
    expect(decode([{ ...valid, status: "Maybe" }])._tag).toBe("Failure")
    expect(decode([{ ...valid, reason: "has spaces" }])._tag).toBe("Failure")
    expect(decode([{ ...valid, reason: "" }])._tag).toBe("Failure")
    expect(decode([{ ...valid, observedGeneration: -1 }])._tag).toBe("Failure")
  })

  it("in a CRD, conditions are a list map keyed by type with the Kubernetes limits", () => {
    const schema = StructuralSchema.make(Conditions.Conditions)
    expect(schema).toMatchObject({ type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] })
    expect(schema.items).toMatchObject({
      type: "object",
      required: ["type", "status", "lastTransitionTime", "reason", "message"],
      properties: {
        status: { type: "string", enum: ["True", "False", "Unknown"] },
        reason: { type: "string", minLength: 1, maxLength: 1024 },
        message: { type: "string", maxLength: 32768 },
        observedGeneration: { type: "integer", minimum: 0 }
      }
    })
  })
})
