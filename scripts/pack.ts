/**
 * `npm run pack`: builds the publishable packages and writes their npm tarballs into `.packs/`, as
 * a user installs them: built JavaScript and declarations only, no workspace-only export condition,
 * declarations that import `.js` as the JavaScript does, `effect` and `@effect/platform-node` as peer
 * dependencies (one copy in the user's project).
 *
 * Each package is staged (its `files` copied, its package.json made publishable) and packed from
 * there, so the repository's own package.json files stay as the workspace needs them.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

/** The publishable packages, in dependency order. */
export const packages: ReadonlyArray<string> = ["core", "schema", "apiserver", "kube", "testing", "cli"]

const root = resolve(import.meta.dirname, "..")
const packs = join(root, ".packs")
const sourceCondition = "@kubefx/source"

type Manifest = Record<string, unknown> & { readonly files?: ReadonlyArray<string> }

// Export maps keep every condition but the workspace's source one, which points at files not packed.
const publishableExports = (exports: unknown): unknown =>
  typeof exports !== "object" || exports === null
    ? exports
    : Object.fromEntries(
      Object.entries(exports).filter(([key]) => key !== sourceCondition).map(([key, value]) => [key, publishableExports(value)])
    )

const publishableManifest = (manifest: Manifest): Manifest => {
  const { devDependencies: _dev, scripts: _scripts, ...rest } = manifest
  return { ...rest, exports: publishableExports(manifest.exports) }
}

// tsc keeps a declaration's relative specifiers as written (`./Outcome.ts`); consumers without
// allowImportingTsExtensions need the `.js` the JavaScript imports.
const relativeTs = /(["'])(\.{1,2}\/[^"'\n]+)\.ts\1/g

const rewriteDeclarations = (dir: string): void => {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) rewriteDeclarations(path)
    else if (entry.endsWith(".d.ts")) {
      writeFileSync(path, readFileSync(path, "utf8").replace(relativeTs, (_, quote, base) => `${quote}${base}.js${quote}`))
    }
  }
}

const pack = (name: string): string => {
  const dir = join(root, "packages", name)
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest
  const stage = join(packs, "stage", name)
  rmSync(stage, { recursive: true, force: true })
  mkdirSync(stage, { recursive: true })
  for (const file of manifest.files ?? []) {
    if (existsSync(join(dir, file))) {
      cpSync(join(dir, file), join(stage, file), { recursive: true, filter: (from) => !from.endsWith(".tsbuildinfo") })
    }
  }
  if (existsSync(join(stage, "dist"))) rewriteDeclarations(join(stage, "dist"))
  writeFileSync(join(stage, "package.json"), `${JSON.stringify(publishableManifest(manifest), null, 2)}\n`)
  const output = execFileSync("npm", ["pack", "--silent", "--pack-destination", packs, stage], { encoding: "utf8" })
  rmSync(stage, { recursive: true, force: true })
  return join(packs, output.trim().split("\n").at(-1)!)
}

const main = (): void => {
  for (const name of packages) rmSync(join(root, "packages", name, "dist"), { recursive: true, force: true })
  execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: "inherit" })
  rmSync(packs, { recursive: true, force: true })
  mkdirSync(packs, { recursive: true })
  const tarballs = packages.map(pack)
  rmSync(join(packs, "stage"), { recursive: true, force: true })
  for (const tarball of tarballs) console.log(tarball)
}

main()
