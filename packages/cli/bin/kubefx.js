#!/usr/bin/env node
// Runs the CLI from TypeScript source inside the repository (Node 24 strips types), or from the
// published build otherwise. The source build resolves workspace packages through "@kubefx/source".
// Only dynamic imports here: an older Node must reach the version check, not fail on an import.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`kubefx needs Node.js 22.19 or newer (24 recommended); this is Node.js ${process.versions.node}.`)
  process.exit(1)
}
// Node's module compile cache (V8's code cache on disk, under the OS temp directory unless
// NODE_COMPILE_CACHE names another; NODE_DISABLE_COMPILE_CACHE=1 turns it off): from the second
// start on, the command's modules are not parsed and compiled again, about a third of its start.
// Where the directory cannot be written, Node goes on without it.
const { enableCompileCache } = await import("node:module")
enableCompileCache?.()
const { existsSync } = await import("node:fs")
const source = new URL("../src/bin.ts", import.meta.url)
if (existsSync(source)) {
  const { registerHooks } = await import("node:module")
  registerHooks({
    resolve: (specifier, context, next) =>
      next(specifier, { ...context, conditions: [...context.conditions, "@kubefx/source"] })
  })
  await import(source.href)
} else {
  await import(new URL("../dist/bin.js", import.meta.url).href)
}
