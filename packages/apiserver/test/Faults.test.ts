import { describe, expect, it } from "vitest"
import * as Faults from "../src/Faults.ts"

const request = (verb: Faults.Verb, plural = "configmaps"): Faults.RequestInfo => ({
  verb,
  group: "",
  plural,
  namespace: "default"
})

describe("Faults", () => {
  it("injects the same faults for the same seed and request sequence", () => {
    const run = () => {
      const faults = Faults.make()
      faults.set({ seed: 42, rules: [{ errorRate: 0.3, latencyMs: { min: 5, max: 50 } }] })
      return Array.from({ length: 50 }, () => {
        const d = faults.decide(request("get"))
        return `${d.error?.code ?? 200}:${d.delayMs.toFixed(3)}`
      })
    }
    const a = run()
    expect(run()).toEqual(a)
    expect(a.some((s) => s.startsWith("500"))).toBe(true)
    expect(a.some((s) => s.startsWith("200"))).toBe(true)
  })

  it("targets resources and verbs, and answers 409 only on writes", () => {
    const faults = Faults.make()
    faults.set({ rules: [{ resource: "configmaps", verbs: ["update", "get"], conflictRate: 1 }] })
    expect(faults.decide(request("update")).error?.code).toBe(409)
    expect(faults.decide(request("get")).error).toBeUndefined()
    expect(faults.decide(request("update", "secrets")).error).toBeUndefined()
  })

  it("answers 429 with retryAfterSeconds", () => {
    const faults = Faults.make()
    faults.set({ rules: [{ throttleRate: 1, retryAfterSeconds: 7 }] })
    const error = faults.decide(request("list")).error
    expect([error?.code, error?.details?.retryAfterSeconds]).toEqual([429, 7])
  })

  it("closes and expires registered watches by target", () => {
    const faults = Faults.make()
    const log: Array<string> = []
    const watch = (plural: string) =>
      faults.register({
        group: "",
        plural,
        namespace: undefined,
        close: () => log.push(`close ${plural}`),
        expire: () => log.push(`expire ${plural}`)
      })
    watch("configmaps")
    const unregister = watch("secrets")
    expect(faults.closeWatches({ resource: "configmaps" })).toBe(1)
    unregister()
    expect(faults.expireWatches()).toBe(1)
    expect(log).toEqual(["close configmaps", "expire configmaps"])
  })
})
