import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as FieldSelectors from "../src/FieldSelectors.ts"

describe("field selectors", () => {
  it("reads =, == and != requirements, trimmed, with backslash escapes", () => {
    expect(FieldSelectors.parse("metadata.name=web, status.phase != Running,spec.x==a\\,b")).toEqual(Result.succeed([
      { field: "metadata.name", op: "=", value: "web" },
      { field: "status.phase", op: "!=", value: "Running" },
      { field: "spec.x", op: "=", value: "a,b" }
    ]))
    expect(FieldSelectors.parse("")).toEqual(Result.succeed([]))
  })

  it("refuses a requirement without an operator, as kube-apiserver does", () => {
    expect(FieldSelectors.parse("metadata.name=web,spec")).toEqual(
      Result.fail("invalid selector: 'metadata.name=web,spec'; can't understand 'spec'")
    )
  })
})
