import { describe, expect, it } from "@effect/vitest"
import { Yaml } from "@kubefx/kube"

describe("Yaml", () => {
  it("parseObjects reads a stream as kubectl does: markers with comments, empty documents and scalars skipped", () => {
    const text = "# a leading comment\napiVersion: v1\nkind: A\n--- # the second\nkind: B\nwhen: 2026-01-02T15:04:05Z\n---\n---\njust a string\n...\n---\nkind: C\n"
    expect(Yaml.parseObjects(text)).toEqual([
      { apiVersion: "v1", kind: "A" },
      { kind: "B", when: "2026-01-02T15:04:05Z" },
      { kind: "C" }
    ])
  })

  it("parseObjects fails on malformed YAML with the place", () => {
    expect(() => Yaml.parseObjects("a: [1, 2\nb: 3\n")).toThrow(/\(\d+:\d+\)/)
  })

  it("stringify writes one document per object, leaves undefined out and repeats shared values instead of anchoring them", () => {
    const shared = { type: "string" }
    const text = Yaml.stringify([{ kind: "A", spec: { a: shared, b: shared }, skipped: undefined }, { kind: "B", value: "yes" }])
    expect(text).not.toContain("&")
    expect(text.split(/^---$/m)).toHaveLength(2)
    expect(Yaml.parseObjects(text)).toEqual([{ kind: "A", spec: { a: shared, b: shared } }, { kind: "B", value: "yes" }])
  })
})
