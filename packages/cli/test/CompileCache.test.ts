/**
 * The `kubefx` bin keeps Node's module compile cache, so a second start skips compiling its modules.
 * (NODE_DISABLE_COMPILE_CACHE=1 turning it off is Node's own doing, whatever the bin asks: not
 * tested here, as no change to the bin could break it.)
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const bin = fileURLToPath(new URL("../bin/kubefx.js", import.meta.url))

// `kubefx --version` with its temporary directory in a fresh one of the test's, and no compile
// cache named by the environment: where the bin's own cache goes is the default, under it.
const version = async () => {
  const tmp = mkdtempSync(join(tmpdir(), "kubefx-compile-cache-"))
  const { NODE_COMPILE_CACHE: _named, ...env } = process.env
  const { stdout } = await promisify(execFile)(process.execPath, [bin, "--version"], {
    env: { ...env, TMPDIR: tmp },
    timeout: 30_000
  })
  return { stdout, tmp, cache: join(tmp, "node-compile-cache") }
}

describe("kubefx's compile cache", () => {
  it("is written under the temporary directory on a first start", async () => {
    const run = await version()
    try {
      assert.include(run.stdout, "0.1.0")
      assert.isTrue(existsSync(run.cache), "no node-compile-cache directory")
      // A directory per Node version, V8 flags and user, holding the cached modules.
      const entries = readdirSync(run.cache, { recursive: true })
      assert.isAbove(entries.length, 1)
    } finally {
      rmSync(run.tmp, { recursive: true, force: true })
    }
  })
})
