/**
 * `kubefx dev --watch` as a user runs it while editing: a change to the operator's module restarts
 * the operator, which then acts on the new code, while the API server (its port and its objects)
 * stays up; SIGTERM ends both, and so does a SIGKILL of the watcher (its child sees the watcher go).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Dev, eventually, refused, startDev } from "./dev.ts"

// Inside the workspace, so the module resolves @kubefx/* as the examples do.
const dir = mkdtempSync(join(fileURLToPath(new URL(".", import.meta.url)), ".watch-"))
const module = join(dir, "greeter.ts")
let dev: Dev | undefined

afterAll(async () => {
  await dev?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const greeter = (greeting: string) => `import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Operator, Resource } from "@kubefx/kube"
import { Effect, Schema } from "effect"

export const Greeter = Resource.custom({
  group: "watch.kubefx.dev", version: "v1", kind: "Greeter", plural: "greeters",
  spec: Schema.Struct({ name: Schema.String }),
  status: Schema.Struct(Conditions.statusFields)
})

export const definition = Controller.define({
  name: "greeters",
  for: Greeter,
  owns: [Builtins.ConfigMap],
  reconcile: (greeter, ctx) =>
    ctx.applyOwned(Builtins.ConfigMap, {
      metadata: { name: \`\${greeter.metadata.name}-greeting\` },
      data: { message: \`${greeting}, \${greeter.spec.name}!\` }
    }).pipe(Effect.as(Outcome.done))
})
`



describe("kubefx dev --watch", () => {
  it("restarts the operator on a change to its module, keeping the API server and its objects", async () => {
    writeFileSync(module, greeter("Hello"))
    dev = await startDev(join(dir, ".kubefx"), { modules: [module], args: ["--watch"] })
    const apiPort = Number(/API server https:\/\/127\.0\.0\.1:(\d+)/.exec(dev.output())![1])
    await dev.kubectl(["apply", "-f", "-"], "apiVersion: watch.kubefx.dev/v1\nkind: Greeter\nmetadata:\n  name: world\n  namespace: default\nspec:\n  name: World\n")
    const message = async () => JSON.parse(await dev!.kubectl(["get", "configmap", "world-greeting", "-n", "default", "-o", "json"])).data.message
    await eventually(async () => assert.strictEqual(await message(), "Hello, World!"))

    writeFileSync(module, greeter("Hi"))
    await eventually(async () => assert.include(dev!.output(), "greeter.ts changed; restarting the operator"))
    await eventually(async () => assert.strictEqual(await message(), "Hi, World!"))
    assert.strictEqual(Number(/API server https:\/\/127\.0\.0\.1:(\d+)/.exec(dev.output())![1]), apiPort)
    assert.strictEqual((dev.output().match(/API server https/g) ?? []).length, 1, "the API server started once")

    // A module that does not load: the operator waits for the next change, the server stays.
    writeFileSync(module, "export const broken = ;\n")
    await eventually(async () => assert.include(dev!.output(), "waiting for a change to start it again"))
    assert.isFalse(await refused(apiPort))
    writeFileSync(module, greeter("Hey"))
    await eventually(async () => assert.strictEqual(await message(), "Hey, World!"))

    await dev.stop()
    assert.strictEqual(dev.process.exitCode, 0)
    assert.isTrue(await refused(apiPort))
    assert.strictEqual(await left(), "", "the operator child is gone too")
  }, 120_000)

  it("killed outright (SIGKILL, no finalizer runs), it still leaves no operator behind", async () => {
    writeFileSync(module, greeter("Hello"))
    dev = await startDev(join(dir, ".kubefx-killed"), { modules: [module], args: ["--watch"] })
    const apiPort = Number(/API server https:\/\/127\.0\.0\.1:(\d+)/.exec(dev.output())![1])
    const operatorPort = Number(new URL(dev.operatorUrl).port)
    assert.isFalse(await refused(operatorPort))
    dev.process.kill("SIGKILL")
    // The operator child's channel to it closes, which stops the child as SIGTERM would.
    await eventually(async () => assert.strictEqual(await left(), "", "the operator child is gone"))
    assert.isTrue(await refused(operatorPort))
    assert.isTrue(await refused(apiPort))
  }, 120_000)
})

// The processes still running this test's modules.
const left = () => new Promise<string>((resolve) => execFile("pgrep", ["-af", dir], (_, stdout) => resolve(stdout.trim())))
