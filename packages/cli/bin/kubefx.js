#!/usr/bin/env node
// Runs the CLI from TypeScript source inside the repository (Node 24 strips types), or from the
// published build otherwise. The source build resolves workspace packages through "@kubefx/source".
import { existsSync } from "node:fs"
import { registerHooks } from "node:module"

const source = new URL("../src/bin.ts", import.meta.url)
if (existsSync(source)) {
  registerHooks({
    resolve: (specifier, context, next) =>
      next(specifier, { ...context, conditions: [...context.conditions, "@kubefx/source"] })
  })
  await import(source.href)
} else {
  await import(new URL("../dist/bin.js", import.meta.url).href)
}
