import { describe, expect, it } from "vitest"
import * as Store from "../src/Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

const cm = (namespace: string, name: string, data: Record<string, string> = {}) => ({
  metadata: { namespace, name },
  data
})

const rv = (o: KubeObject.KubeObject | undefined) => KubeObject.meta(o ?? {}).resourceVersion

describe("Store", () => {
  it("gives every write the next global revision across resources", () => {
    const store = Store.make()
    store.put("configmaps", cm("a", "x"), 0)
    store.put("secrets", cm("a", "y"), 0)
    store.put("configmaps", cm("a", "x", { k: "v" }), 1)
    store.remove("secrets", "a", "y", undefined)
    expect(store.revision()).toBe(4)
    expect(rv(store.get("configmaps", "a", "x"))).toBe("3")
  })

  it("refuses writes whose expected revision does not match", () => {
    const store = Store.make()
    store.put("configmaps", cm("a", "x"), 0)
    expect(store.put("configmaps", cm("a", "x"), 0)._tag).toBe("Conflict")
    expect(store.put("configmaps", cm("a", "x"), 7)._tag).toBe("Conflict")
    expect(store.remove("configmaps", "a", "x", 9)._tag).toBe("Conflict")
    expect(store.put("configmaps", cm("a", "x", { v: "2" }), 1)._tag).toBe("Written")
  })

  it("lists by namespace then name", () => {
    const store = Store.make()
    for (const [ns, name] of [["b", "2"], ["a", "9"], ["ab", "1"], ["a", "10"]]) store.put("configmaps", cm(ns!, name!), 0)
    const keys = (items: ReadonlyArray<KubeObject.KubeObject>) =>
      items.map((o) => `${KubeObject.meta(o).namespace}/${KubeObject.meta(o).name}`)
    expect(keys(store.list("configmaps", undefined))).toEqual(["a/10", "a/9", "ab/1", "b/2"])
    expect(keys(store.list("configmaps", "a"))).toEqual(["a/10", "a/9"])
  })

  it("lists one namespace, or what sorts after a continue key, now and at an earlier revision", () => {
    const store = Store.make()
    // "b-c/..." sorts before "b/...": a namespace's keys are still one run of the order.
    for (const [ns, name] of [["b", "1"], ["b-c", "1"], ["b", "2"], ["a", "1"], ["c", "1"], ["b", "3"]]) {
      store.put("configmaps", cm(ns!, name!), 0)
    }
    const keys = (items: ReadonlyArray<KubeObject.KubeObject> | undefined) =>
      (items ?? []).map((o) => `${KubeObject.meta(o).namespace}/${KubeObject.meta(o).name}`)
    expect(keys(store.list("configmaps", "b"))).toEqual(["b/1", "b/2", "b/3"])
    expect(keys(store.list("configmaps", "b", "b/1"))).toEqual(["b/2", "b/3"])
    expect(keys(store.list("configmaps", "b", "b/15"))).toEqual(["b/2", "b/3"])
    expect(keys(store.list("configmaps", "b", "b-c/1"))).toEqual(["b/1", "b/2", "b/3"])
    expect(keys(store.list("configmaps", undefined, "b-c/1"))).toEqual(["b/1", "b/2", "b/3", "c/1"])
    expect(keys(store.list("configmaps", undefined, "c/1"))).toEqual([])
    expect(keys(store.list("configmaps", "d"))).toEqual([])
    const before = store.revision()
    store.remove("configmaps", "b", "2", undefined)
    store.put("configmaps", cm("b", "0"), 0)
    expect(keys(store.list("configmaps", "b", "b/0"))).toEqual(["b/1", "b/3"])
    expect(keys(store.listAt("configmaps", "b", before, "b/1"))).toEqual(["b/2", "b/3"])
    expect(keys(store.listAt("configmaps", undefined, before, "b/2"))).toEqual(["b/3", "c/1"])
    // A page cut out by the store, and the count of all that follow the continue key.
    expect(keys(store.list("configmaps", "b", "b/0", 1))).toEqual(["b/1"])
    expect(keys(store.list("configmaps", undefined, undefined, 2))).toEqual(["a/1", "b-c/1"])
    expect(keys(store.list("configmaps", "c", undefined, 5))).toEqual(["c/1"])
    expect(store.count("configmaps", "b", "b/0")).toBe(2)
    expect(store.count("configmaps", "b")).toBe(3)
    expect(store.count("configmaps", undefined, "b-c/1")).toBe(4)
    expect(store.count("configmaps", "d")).toBe(0)
    expect(store.count("secrets", undefined)).toBe(0)
  })

  it("lists the state of an earlier revision from its history", () => {
    const store = Store.make()
    store.put("configmaps", cm("a", "x", { v: "1" }), 0)
    store.put("configmaps", cm("a", "y"), 0)
    const at = store.revision()
    store.put("configmaps", cm("a", "x", { v: "2" }), 1)
    store.remove("configmaps", "a", "y", undefined)
    store.put("configmaps", cm("a", "z"), 0)
    const then = store.listAt("configmaps", "a", at)!
    expect(then.map((o) => [KubeObject.meta(o).name, (o.data as Record<string, string>).v])).toEqual([
      ["x", "1"],
      ["y", undefined]
    ])
  })

  it("expires revisions that fell out of the bounded history", () => {
    const store = Store.make({ historySize: 3 })
    for (let i = 0; i < 5; i++) store.put("configmaps", cm("a", `o${i}`), 0)
    expect(store.compactedRevision()).toBe(2)
    expect(store.listAt("configmaps", "a", 1)).toBeUndefined()
    expect(store.watch("configmaps", undefined, 1, () => {})).toBe("Expired")
    expect(store.listAt("configmaps", "a", 2)?.length).toBe(2)
  })

  it("replays history after a revision, then delivers live events, in order", () => {
    const store = Store.make()
    store.put("configmaps", cm("a", "x"), 0)
    store.put("configmaps", cm("b", "y"), 0)
    store.put("secrets", cm("a", "s"), 0)
    const seen: Array<string> = []
    const watch = store.watch("configmaps", "a", 0, (e) => seen.push(`${e.type} ${e.key} ${e.revision}`))
    if (watch === "Expired") throw new Error("expired")
    store.put("configmaps", cm("a", "x", { v: "1" }), undefined)
    store.remove("configmaps", "a", "x", undefined)
    watch.cancel()
    store.put("configmaps", cm("a", "later"), 0)
    expect(seen).toEqual(["ADDED a/x 1", "MODIFIED a/x 4", "DELETED a/x 5"])
  })

  it("gives a DELETED event the last state with the deletion revision", () => {
    const store = Store.make()
    store.put("configmaps", cm("a", "x", { v: "1" }), 0)
    const removed = store.remove("configmaps", "a", "x", undefined)
    expect(removed._tag === "Written" && removed.event.object).toMatchObject({
      data: { v: "1" },
      metadata: { resourceVersion: "2" }
    })
  })

  it("starts from a snapshot with the revision counter where it was", () => {
    const first = Store.make()
    first.put("configmaps", cm("a", "x"), 0)
    first.put("configmaps", cm("a", "y"), 0)
    const second = Store.make({ initial: first.snapshot() })
    expect(second.revision()).toBe(2)
    expect(second.get("configmaps", "a", "y")).toBeDefined()
    expect(second.watch("configmaps", undefined, 1, () => {})).toBe("Expired")
    second.put("configmaps", cm("a", "z"), 0)
    expect(rv(second.get("configmaps", "a", "z"))).toBe("3")
  })
})
