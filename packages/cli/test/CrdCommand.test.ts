/**
 * `kubefx crd` run as users run it: the real bin in a child process, on a fixture module.
 */
import { Crd } from "@kubefx/kube"
import { Yaml } from "effect/encoding"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import * as Fixture from "./fixtures/resources.ts"

const bin = fileURLToPath(new URL("../bin/kubefx.js", import.meta.url))
const cwd = fileURLToPath(new URL(".", import.meta.url))

const kubefx = (...args: ReadonlyArray<string>) =>
  promisify(execFile)(process.execPath, [bin, ...args], { cwd, timeout: 30_000 }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr })
  )

const documents = (yaml: string) => yaml.split(/^---$/m).map((d) => Yaml.parse(d))

const json = (value: unknown) => JSON.parse(JSON.stringify(value))

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
    expect(missing.stderr).toContain("cannot load fixtures/missing.ts")
  })
})
