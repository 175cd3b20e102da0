/**
 * Watches send only durable writes: with a data directory, an event waits until its revision is
 * on disk, so a client never resumes after a revision that a crash lost and a restarted server
 * hands out again.
 */
import { Effect, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import * as Builtins from "../src/Builtins.ts"
import * as Faults from "../src/Faults.ts"
import * as Store from "../src/Store.ts"
import * as Watch from "../src/Watch.ts"

describe("Watch with a durability gate", () => {
  it("sends an event only once its revision is durable", async () => {
    const store = Store.make()
    let durableUpTo = 0
    const waiting: Array<() => void> = []
    const durable = (revision: number) =>
      Effect.callback<void>((resume) => {
        const check = () => {
          if (revision > durableUpTo) return false
          resume(Effect.void)
          return true
        }
        if (!check()) waiting.push(() => void check())
      })
    const makeDurable = (revision: number) => {
      durableUpTo = revision
      for (const wake of waiting.splice(0)) wake()
    }
    const watches = Watch.make({ store, faults: Faults.make(), durable })
    const configmaps = Builtins.make().find((r) => r.type.plural === "configmaps")!
    const body = await Effect.runPromise(watches.stream({
      resource: configmaps,
      namespace: "default",
      labelSelector: [],
      fieldSelector: [],
      resourceVersion: String(store.revision()),
      resourceVersionMatch: undefined,
      allowWatchBookmarks: false,
      sendInitialEvents: undefined,
      timeoutSeconds: undefined,
      present: (o) => o,
      representation: "json"
    }))
    let received = ""
    const consumer = Effect.runFork(Stream.runForEach(Stream.decodeText(body), (text) => Effect.sync(() => void (received += text))))

    const written = store.put("configmaps", { metadata: { namespace: "default", name: "a" } }, 0)
    expect(written._tag).toBe("Written")
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(received).toBe("")

    makeDurable(store.revision())
    await expect.poll(() => received, { timeout: 5000 }).toContain(`"type":"ADDED"`)
    await Effect.runPromise(Fiber.interrupt(consumer))
  })
})
