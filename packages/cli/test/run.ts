/**
 * Runs the real `kubefx` bin in a child process, as users run it, from the test directory.
 */
import { Yaml } from "effect/encoding"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const bin = fileURLToPath(new URL("../bin/kubefx.js", import.meta.url))
const cwd = fileURLToPath(new URL(".", import.meta.url))

/** The exit code and output of `kubefx ...args`. */
export const kubefx = (...args: ReadonlyArray<string>) =>
  promisify(execFile)(process.execPath, [bin, ...args], { cwd, timeout: 30_000 }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr })
  )

/** The documents of a YAML stream. */
export const documents = (yaml: string) => yaml.split(/^---$/m).map((d) => Yaml.parse(d))

/** A value as it reads back from JSON or YAML (undefined fields gone). */
export const json = (value: unknown) => JSON.parse(JSON.stringify(value))
