import { Effect, Exit, Scope } from "effect"
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import * as Persistence from "../src/Persistence.ts"
import * as Store from "../src/Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-persistence-"))
  dirs.push(dir)
  return dir
}

const cm = (name: string, v: string) => ({ metadata: { namespace: "default", name }, data: { v } })

/** Opens the store kept in `dir`, runs `writes` durably, and closes it (as a clean stop). */
const session = (dir: string, options: { readonly snapshotEvery?: number }, writes: (store: Store.Store) => Array<Store.WriteResult>) =>
  Effect.runPromise(Effect.gen(function*() {
    const scope = yield* Scope.make()
    const store = Store.make({ initial: yield* Persistence.recover(dir) })
    const persistence = yield* Persistence.attach(store, { dir, ...options }).pipe(Scope.provide(scope))
    for (const result of writes(store)) {
      if (result._tag === "Written") yield* persistence.durable(result.event.revision)
    }
    const snapshot = store.snapshot()
    // No clean close: what was acknowledged must already be on disk.
    return { snapshot, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  }))

const recovered = (dir: string) => Effect.runPromise(Persistence.recover(dir))

const names = (snapshot: Store.Snapshot | undefined) =>
  (snapshot?.objects ?? []).map((o) => `${KubeObject.meta(o.object).name}=${(o.object.data as { v: string }).v}`).sort()

describe("Persistence", () => {
  it("recovers every acknowledged write and the revision counter", async () => {
    const dir = tempDir()
    const first = await session(dir, {}, (store) => [
      store.put("configmaps", cm("a", "1"), 0),
      store.put("configmaps", cm("b", "1"), 0),
      store.put("configmaps", cm("a", "2"), 1),
      store.remove("configmaps", "default", "b", undefined)
    ])
    const state = await recovered(dir)
    expect(names(state)).toEqual(["a=2"])
    expect(state?.revision).toBe(first.snapshot.revision)
    await first.close()
  })

  it("ignores a torn last record", async () => {
    const dir = tempDir()
    const first = await session(dir, {}, (store) => [store.put("configmaps", cm("a", "1"), 0)])
    await first.close()
    appendFileSync(join(dir, "log.ndjson"), '{"r":99,"s":"configmaps","n":"default","k":"torn","o":{"meta')
    const state = await recovered(dir)
    expect(names(state)).toEqual(["a=1"])
    expect(state?.revision).toBe(1)
  })

  it("snapshots and truncates the log, and recovers across snapshots", async () => {
    const dir = tempDir()
    const first = await session(dir, { snapshotEvery: 3 }, (store) =>
      Array.from({ length: 10 }, (_, i) => store.put("configmaps", cm(`o${i}`, "1"), 0)))
    expect(readFileSync(join(dir, "log.ndjson"), "utf8").split("\n").filter((l) => l !== "").length).toBeLessThan(3)
    await first.close()
    const second = await session(dir, { snapshotEvery: 3 }, (store) => [store.put("configmaps", cm("o0", "2"), undefined)])
    const state = await recovered(dir)
    expect(names(state).length).toBe(10)
    expect(names(state)).toContain("o0=2")
    expect(state?.revision).toBe(11)
    await second.close()
  })
})
