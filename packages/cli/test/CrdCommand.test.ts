/**
 * `kubefx crd` run as users run it: the real bin in a child process, on a fixture module.
 */
import { Crd } from "@kubefx/kube"
import { describe, expect, it } from "vitest"
import * as Fixture from "./fixtures/resources.ts"
import { documents, json, kubefx } from "./run.ts"

describe("kubefx crd", () => {
  it("prints every exported custom resource's CRD once, as a YAML stream", async () => {
    const result = await kubefx("crd", "fixtures/resources.ts")
    expect(result.code).toBe(0)
    // export-name order (Gadget, Widget); the alias and the built-in ConfigMap add nothing
    expect(documents(result.stdout)).toEqual(json([Crd.make(Fixture.Gadget), Crd.make(Fixture.Widget)]))
  })

  it("--export prints only the named resource", async () => {
    const result = await kubefx("crd", "fixtures/resources.ts", "--export", "Widget")
    expect(result.code).toBe(0)
    expect(documents(result.stdout)).toEqual(json([Crd.make(Fixture.Widget)]))
    expect(result.stdout).toContain("x-kubernetes-list-map-keys")
  })

  it("fails with a message for a name that is not a custom resource, or a missing module", async () => {
    const builtin = await kubefx("crd", "fixtures/resources.ts", "--export", "ConfigMap")
    expect(builtin.code).not.toBe(0)
    expect(builtin.stderr).toContain("the module exports no custom Resource named ConfigMap")
    expect(builtin.stdout).toBe("")

    const missing = await kubefx("crd", "fixtures/missing.ts")
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toBe("kubefx crd: fixtures/missing.ts does not exist\n")
  })
})
