import { describe, expect, it } from "@effect/vitest"
import { Builtins, OwnerReferences } from "@kubefx/kube"
import { Effect } from "effect"
import { Widget } from "./fixtures/Widget.ts"

const owner = (name: string, uid: string) => ({
  apiVersion: Widget.apiVersion,
  kind: Widget.kind,
  metadata: { name, namespace: "default", uid },
  spec: { replicas: 1, message: "hi" }
})

const configMap = (ownerReferences?: ReadonlyArray<OwnerReferences.OwnerReference>): Builtins.ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "child", namespace: "default", ...(ownerReferences === undefined ? {} : { ownerReferences }) },
  data: { a: "1" }
})

const a = owner("a", "uid-a")
const b = owner("b", "uid-b")

describe("OwnerReferences", () => {
  it("the controller reference carries apiVersion, kind, name, uid and both flags", () => {
    expect(OwnerReferences.controllerReference(a, Widget)).toEqual({
      apiVersion: "demo.kubefx.dev/v1",
      kind: "Widget",
      name: "a",
      uid: "uid-a",
      controller: true,
      blockOwnerDeletion: true
    })
    expect(() => OwnerReferences.controllerReference({ metadata: { name: "unsaved" } }, Widget)).toThrow(/no uid/)
  })

  it.effect("setController makes the owner the controller and keeps other references", () =>
    Effect.gen(function*() {
      const namespaceRef = { apiVersion: "v1", kind: "Namespace", name: "default", uid: "uid-ns" }
      const child = yield* OwnerReferences.setController(configMap([namespaceRef]), a, Widget)
      expect(child.metadata.ownerReferences).toEqual([namespaceRef, OwnerReferences.controllerReference(a, Widget)])
      expect(child.data).toEqual({ a: "1" })
      expect(OwnerReferences.controllerOf(child)?.uid).toBe("uid-a")
      expect(OwnerReferences.isControlledBy(child, a)).toBe(true)
      expect(OwnerReferences.isControlledBy(child, b)).toBe(false)
      expect(OwnerReferences.isOwnedBy(child, { metadata: { uid: "uid-ns" } })).toBe(true)
      expect(OwnerReferences.isControlledBy(child, { metadata: { uid: "uid-ns" } })).toBe(false)

      // setting it again changes nothing; a recreated owner (same name, new uid) takes its place
      const again = yield* OwnerReferences.setController(child, a, Widget)
      expect(again.metadata.ownerReferences).toEqual(child.metadata.ownerReferences)
      const recreated = yield* OwnerReferences.setController(child, owner("a", "uid-a2"), Widget)
      expect(recreated.metadata.ownerReferences?.map((r) => r.uid)).toEqual(["uid-ns", "uid-a2"])
    }))

  it.effect("another controller is an AlreadyOwnedError", () =>
    Effect.gen(function*() {
      const child = yield* OwnerReferences.setController(configMap(), a, Widget)
      const error = yield* OwnerReferences.setController(child, b, Widget).pipe(Effect.flip)
      expect(error._tag).toBe("AlreadyOwnedError")
      expect(error.owner).toBe("Widget/a")
      expect(error.message).toContain("already controlled by Widget a")
    }))

  it("merge replaces a reference to the same owner across versions and appends new ones", () => {
    const v1 = { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", name: "a", uid: "uid-a" }
    const v2 = { apiVersion: "demo.kubefx.dev/v2", kind: "Widget", name: "a", uid: "uid-a" }
    const other = { apiVersion: "other.dev/v1", kind: "Widget", name: "a", uid: "uid-o" }
    const merged = OwnerReferences.merge(configMap([v1]), [v2, other])
    expect(merged.metadata.ownerReferences).toEqual([v2, other])
    expect(OwnerReferences.controllerOf(merged)).toBeUndefined()
    expect(OwnerReferences.isOwnedBy(configMap(), a)).toBe(false)
  })
})
