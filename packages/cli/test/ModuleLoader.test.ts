/**
 * How `kubefx crd|rbac|dev` read a user's module, run as users run them: a package directory works
 * like its entry file, and every way a module can be wrong is one line naming the command, exit 1.
 */
import { afterAll, describe, expect, it } from "vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { kubefx } from "./run.ts"

const dir = mkdtempSync(join(tmpdir(), "kubefx-modules-test-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const write = (name: string, text: string) => {
  const path = join(dir, name)
  mkdirSync(join(path, ".."), { recursive: true })
  writeFileSync(path, text)
  return path
}

const resources = fileURLToPath(new URL("fixtures/resources.ts", import.meta.url))
const devFlags = ["--port", "0", "--http-port", "0", "--store-port", "0", "--dir", join(dir, "dev")]

describe("a module given to kubefx", () => {
  it("may be a package directory, resolved through its package.json", async () => {
    write("pkg/package.json", JSON.stringify({ name: "pkg", type: "module", exports: { ".": { import: "./lib/entry.ts" } } }))
    write("pkg/lib/entry.ts", `export * from ${JSON.stringify(resources)}\n`)
    const byDirectory = await kubefx("crd", join(dir, "pkg"))
    const byFile = await kubefx("crd", resources)
    expect(byDirectory.code).toBe(0)
    expect(byDirectory.stdout).toBe(byFile.stdout)
  })

  it("that does not exist, or a directory without an entry, is one line", async () => {
    const missing = await kubefx("rbac", join(dir, "nope.ts"))
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([1, "", `kubefx rbac: ${join(dir, "nope.ts")} does not exist\n`])
    mkdirSync(join(dir, "empty-dir"))
    const noEntry = await kubefx("crd", join(dir, "empty-dir"))
    expect(noEntry.code).toBe(1)
    expect(noEntry.stderr).toMatch(/^kubefx crd: .*empty-dir is a directory without an entry: .*\n$/)
  })

  it("with a syntax error is reported at file:line:column, TypeScript or JavaScript", async () => {
    const ts = write("broken.ts", "export const a = 1\nexport const b = ;\n")
    const tsResult = await kubefx("crd", ts)
    expect([tsResult.code, tsResult.stderr]).toEqual([1, `kubefx crd: ${ts}:2:18: SyntaxError: Expression expected\n`])
    const js = write("broken.js", "export const config = {\n  a: 1\n  b: 2\n}\n")
    const jsResult = await kubefx("rbac", js)
    expect([jsResult.code, jsResult.stderr]).toEqual([1, `kubefx rbac: ${js}:3:3: SyntaxError: Unexpected identifier 'b'\n`])
  })

  it("that exports nothing kubefx needs says so, for each command", async () => {
    const empty = write("empty.ts", "export const answer = 42\n")
    expect((await kubefx("crd", empty)).stderr).toBe("kubefx crd: the module exports no custom Resource (declared with Resource.custom)\n")
    expect((await kubefx("rbac", empty)).stderr).toBe(
      "kubefx rbac: the module exports no operator (Operator.make) or controller (Controller.define)\n"
    )
    const dev = await kubefx("dev", empty, ...devFlags)
    expect([dev.code, dev.stderr]).toEqual([1, `kubefx dev: ${empty} exports no controller: export a \`definition\` made with Controller.define\n`])
  })

  it("that never finishes loading (it starts the operator when imported) is given up after 10 s", async () => {
    const running = write("running.ts", "await new Promise(() => setInterval(() => {}, 1000))\nexport const answer = 42\n")
    const result = await kubefx("crd", running)
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `kubefx crd: ${running} did not finish loading within 10s: a module kubefx reads must not start the operator ` +
        "when imported; run Operator.main from a separate main module, or guard it with `if (import.meta.main)`\n"
    )
  }, 30_000)

  it("that would use a second copy of effect is refused before it loads, naming both copies", async () => {
    write("two-copies/node_modules/effect/package.json", JSON.stringify({ name: "effect", version: "4.1.0", type: "module", exports: "./index.js" }))
    write("two-copies/node_modules/effect/index.js", "throw new Error('this copy must never load')\n")
    const operator = write("two-copies/operator.ts", 'import { Effect } from "effect"\nexport const program = Effect.void\n')
    const kubefxEffect = fileURLToPath(new URL("../../../node_modules/effect", import.meta.url))
    for (const command of ["crd", "rbac"]) {
      const result = await kubefx(command, operator)
      expect([result.code, result.stdout]).toEqual([1, ""])
      expect(result.stderr).toBe(
        `kubefx ${command}: two copies of effect: ${operator} would use ${join(dir, "two-copies", "node_modules", "effect")}, ` +
          `kubefx uses ${kubefxEffect}; install effect once, in the project (\`npm dedupe\`), as a peer of the @kubefx packages\n`
      )
    }
  })
})
