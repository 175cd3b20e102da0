/**
 * The packed packages as a user gets them: `npm run pack` writes the tarballs, a project outside the
 * workspace installs them with npm (no workspace links), type-checks the README's first reconciler
 * against their declarations, and runs it with their `kubefx`.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { type Dev, startDev } from "./dev.ts"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const packs = join(root, ".packs")
const project = mkdtempSync(join(tmpdir(), "kubefx-packs-test-"))
const tsc = join(root, "node_modules", "typescript", "bin", "tsc")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeout = 120_000, env: NodeJS.ProcessEnv = {}) =>
  new Promise<Run>((resolve) => {
    execFile(command, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
  })

const ok = async (command: string, args: ReadonlyArray<string>, cwd: string) => {
  const result = await run(command, args, cwd)
  if (result.code !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.code}):\n${result.stderr}`)
  return result
}

// The README's "A first reconciler", as a user copies it into their project.
const firstReconciler = (): string => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## A first reconciler"))
  return section.slice(section.indexOf("```ts") + 5, section.indexOf("```", section.indexOf("```ts") + 5))
}

// A test as a user writes it with the test kit: the reconciler in-process against its own server.
const greetingTest = `import { assert, layer } from "@effect/vitest"
import { Builtins } from "@kubefx/kube"
import { Await, Samples, TestCluster } from "@kubefx/testing"
import { Effect } from "effect"
import { definition, Greeting } from "./greeting.ts"

layer(TestCluster.layer({ resources: [Greeting], controllers: [definition] }), { excludeTestServices: true })("greetings", (it) => {
  it.effect("a Greeting gets its ConfigMap and Ready", () =>
    Effect.gen(function*() {
      const namespace = yield* TestCluster.namespace
      yield* Samples.apply(Greeting, { metadata: { name: "world", namespace }, spec: { name: "World" } })
      yield* Await.condition(Greeting, "world", namespace, "Ready")
      const configMap = yield* Await.until(Builtins.ConfigMap, "world-greeting", namespace, () => true)
      assert.strictEqual(configMap.data?.message, "Hello, World!")
    }))
})
`

const tarballs = () => readdirSync(packs).filter((f) => f.endsWith(".tgz")).sort()

const packedManifest = async (tarball: string) =>
  JSON.parse((await ok("tar", ["xzf", join(packs, tarball), "-O", "package/package.json"], root)).stdout)

const kubefx = join(project, "node_modules", ".bin", "kubefx")
let dev: Dev | undefined

beforeAll(async () => {
  await ok("npm", ["run", "pack", "--silent"], root)
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "my-operator", private: true, type: "module" }))
  await ok("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs().map((t) => join(packs, t))], project)
  await ok("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", "--save-dev", "vitest@5.1.1", "@effect/vitest@4.0.5"], project)
  writeFileSync(join(project, "greeting.ts"), firstReconciler())
}, 300_000)

afterAll(async () => {
  await dev?.stop()
  rmSync(project, { recursive: true, force: true })
})

describe("npm run pack", () => {
  it("writes a tarball per publishable package: built JavaScript and declarations, effect as a peer", async () => {
    assert.deepStrictEqual(tarballs(), [
      "kubefx-apiserver-0.1.0.tgz",
      "kubefx-cli-0.1.0.tgz",
      "kubefx-core-0.1.0.tgz",
      "kubefx-kube-0.1.0.tgz",
      "kubefx-schema-0.1.0.tgz",
      "kubefx-testing-0.1.0.tgz"
    ])
    for (const tarball of tarballs()) {
      const manifest = await packedManifest(tarball)
      assert.notInclude(JSON.stringify(manifest.exports), "@kubefx/source", tarball)
      assert.strictEqual(manifest.peerDependencies.effect, "4.1.0", tarball)
      assert.isUndefined(manifest.dependencies?.effect, tarball)
      assert.isUndefined(manifest.devDependencies, tarball)
      const files = (await ok("tar", ["tzf", join(packs, tarball)], root)).stdout.trim().split("\n")
      assert.isEmpty(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")), `${tarball} ships TypeScript sources`)
      const declarations = (await ok("tar", ["xzf", join(packs, tarball), "-O", "package/dist/index.d.ts"], root)).stdout
      assert.notMatch(declarations, /from "\.\/[^"]+\.ts"/, `${tarball} declarations import .ts`)
    }
  })
})

describe("a project outside the workspace, installed from the tarballs", () => {
  it("holds one copy of effect", async () => {
    const listed = await ok("npm", ["ls", "effect", "--all", "--parseable"], project)
    assert.deepStrictEqual(listed.stdout.trim().split("\n"), [join(project, "node_modules", "effect")])
  })

  // `@effect/platform-node`'s index loads every module of it, a Redis client among them: hundreds of
  // modules and about a third of a second before an operator's first line.
  it("imports the packed packages without loading modules they do not use", async () => {
    const script = "import { createRequire } from 'node:module';" +
      "await import('@kubefx/kube'); await import('@kubefx/apiserver'); await import('@kubefx/testing');" +
      "const loaded = Object.keys(createRequire(process.cwd() + '/').cache);" +
      "console.log(JSON.stringify({ loaded: loaded.length, redis: loaded.filter((m) => m.includes('redis')) }))"
    const { loaded, redis } = JSON.parse((await ok(process.execPath, ["--input-type=module", "-e", script], project)).stdout)
    assert.isAbove(loaded, 0)
    assert.deepStrictEqual(redis, [])
  })

  it("an operator importing the packed @kubefx/kube loads neither client-node nor the CEL interpreter until it needs them", async () => {
    const script = "import { registerHooks } from 'node:module';" +
      "const resolved = new Set();" +
      "registerHooks({ resolve: (specifier, context, next) => { resolved.add(specifier.split('/').slice(0, 2).join('/')); return next(specifier, context) } });" +
      "const { Crd, Resource } = await import('@kubefx/kube');" +
      "const atStart = [...resolved];" +
      "const Thing = Resource.custom({ group: 'demo.kubefx.dev', version: 'v1', kind: 'Thing', plural: 'things', spec: (await import('effect')).Schema.Struct({}) });" +
      "const { Effect } = await import('effect');" +
      "await Effect.runPromise(Crd.check(Thing, { apiVersion: 'demo.kubefx.dev/v1', kind: 'Thing', metadata: { name: 'a' }, spec: {} }));" +
      "console.log(JSON.stringify({ atStart, afterCheck: [...resolved] }))"
    const { atStart, afterCheck } = JSON.parse((await ok(process.execPath, ["--input-type=module", "-e", script], project)).stdout)
    assert.include(atStart, "@kubefx/schema")
    assert.notInclude(atStart, "@kubernetes/client-node")
    assert.notInclude(atStart, "@bufbuild/cel")
    assert.include(afterCheck, "@bufbuild/cel")
  })

  it("type-checks the README's first reconciler against the packed declarations, and catches a typo", async () => {
    const config = { compilerOptions: { target: "ES2023", module: "NodeNext", strict: true, noEmit: true, types: [] } }
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ ...config, include: ["greeting.ts"] }))
    await ok(process.execPath, [tsc, "-p", "."], project)
    writeFileSync(join(project, "typo.ts"), firstReconciler().replace("greeting.spec.name", "greeting.spec.nmae"))
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ ...config, include: ["typo.ts"] }))
    const typo = await run(process.execPath, [tsc, "-p", "."], project)
    assert.notStrictEqual(typo.code, 0)
    assert.include(typo.stdout, "Property 'nmae' does not exist")
  })

  it("prints the CRD of the reconciler's resource with the packed kubefx", async () => {
    const crd = await ok(process.execPath, [kubefx, "crd", "greeting.ts"], project)
    assert.include(crd.stdout, "name: greetings.demo.kubefx.dev")
  })

  it("runs the reconciler with kubefx dev: a Greeting gets its ConfigMap and Ready=True", async () => {
    dev = await startDev(join(project, ".kubefx"), { bin: kubefx, cwd: project, modules: ["greeting.ts"] })
    await dev.kubectl(["apply", "-f", "-"],
      "apiVersion: demo.kubefx.dev/v1\nkind: Greeting\nmetadata:\n  name: world\n  namespace: default\nspec:\n  name: World\n")
    const deadline = Date.now() + 30_000
    for (;;) {
      const greeting = JSON.parse(await dev.kubectl(["get", "greeting", "world", "-n", "default", "-o", "json"]))
      const ready = greeting.status?.conditions?.find((c: { type: string }) => c.type === "Ready")
      if (ready?.status === "True") break
      if (Date.now() > deadline) assert.fail(`not Ready: ${JSON.stringify(greeting.status)}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    const configMap = JSON.parse(await dev.kubectl(["get", "configmap", "world-greeting", "-n", "default", "-o", "json"]))
    assert.strictEqual(configMap.data.message, "Hello, World!")
    await dev.stop()
    assert.strictEqual(dev.process.exitCode ?? dev.process.signalCode, 0)
  }, 90_000)

  it("tests the reconciler with the packed test kit and vitest", async () => {
    writeFileSync(join(project, "greeting.test.ts"), greetingTest)
    const result = await run(process.execPath, [join(project, "node_modules", "vitest", "vitest.mjs"), "run", "greeting.test.ts"], project)
    assert.strictEqual(result.code, 0, result.stdout + result.stderr)
    assert.match(result.stdout.replace(/\u001b\[[0-9;]*m/g, ""), /Tests\s+1 passed/)
  }, 120_000)

  it("runs on the oldest Node.js it supports, 22.19, as well as on 24", async () => {
    const node22 = join(project, ".node22")
    mkdirSync(node22)
    writeFileSync(join(node22, "package.json"), JSON.stringify({ name: "node22", private: true }))
    await ok("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", "node@22.19.0"], node22)
    const node = join(node22, "node_modules", ".bin", "node")
    assert.strictEqual((await ok(node, ["--version"], project)).stdout.trim(), "v22.19.0")
    const crd = await ok(node, [kubefx, "crd", "greeting.ts"], project)
    assert.include(crd.stdout, "name: greetings.demo.kubefx.dev")
  }, 120_000)

  it("tells a Node.js older than 22.19 which version it needs, before loading anything", async () => {
    const pretend = (version: string) =>
      `data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"${version}"}})`
    const old = await run(process.execPath, ["--import", pretend("22.18.0"), kubefx, "--version"], project)
    assert.strictEqual(old.code, 1)
    assert.strictEqual(old.stderr, "kubefx needs Node.js 22.19 or newer (24 recommended); this is Node.js 22.18.0.\n")
    const enough = await run(process.execPath, ["--import", pretend("22.19.0"), kubefx, "--version"], project)
    assert.strictEqual(enough.code, 0)
    assert.include(enough.stdout, "0.1.0")
  })
})

describe("kubefx init, as a team starts its own operator", () => {
  const workspace = mkdtempSync(join(tmpdir(), "kubefx-init-test-"))
  const initProject = join(workspace, "hello-operator")
  const repoKubefx = join(root, "packages", "cli", "bin", "kubefx.js")
  let started: Dev | undefined

  afterAll(async () => {
    await started?.stop()
    rmSync(workspace, { recursive: true, force: true })
  })

  it("refuses a name that is not DNS-1123, a directory that is not empty, or a folder without tarballs, writing nothing", async () => {
    const badName = await run(process.execPath, [repoKubefx, "init", join(workspace, "Hello_Operator")], workspace)
    assert.deepStrictEqual([badName.code, badName.stdout], [1, ""])
    assert.strictEqual(badName.stderr, `kubefx init: "Hello_Operator" is not a valid name: use lowercase letters, digits and '-', ` +
      "starting and ending with a letter or digit (DNS-1123)\n")
    assert.isFalse(existsSync(join(workspace, "Hello_Operator")))

    mkdirSync(join(workspace, "taken"))
    writeFileSync(join(workspace, "taken", "notes.txt"), "mine")
    const taken = await run(process.execPath, [repoKubefx, "init", join(workspace, "taken")], workspace)
    assert.strictEqual(taken.code, 1)
    assert.strictEqual(taken.stderr, `kubefx init: ${join(workspace, "taken")} exists and is not empty: nothing written\n`)
    assert.deepStrictEqual(readdirSync(join(workspace, "taken")), ["notes.txt"])

    const noPacks = await run(process.execPath, [repoKubefx, "init", join(workspace, "fresh"), "--from", join(workspace, "nope")], workspace)
    assert.strictEqual(noPacks.code, 1)
    assert.include(noPacks.stderr, "no such directory (run npm run pack in kubefx first)")
    assert.isFalse(existsSync(join(workspace, "fresh")))
  })

  it("creates a project from the tarballs whose npm install && npm test pass outside the workspace", async () => {
    const created = await ok(process.execPath, [repoKubefx, "init", initProject, "--from", packs], workspace)
    assert.include(created.stdout, `kubefx init: created ${initProject}`)
    for (const file of ["package.json", "tsconfig.json", "src/greeting.ts", "src/operator.ts", "src/main.ts", "samples/greeting.yaml",
      "test/greeting.test.ts", "README.md", ".gitignore", "Dockerfile"]) {
      assert.isTrue(existsSync(join(initProject, file)), file)
    }
    const dockerfile = readFileSync(join(initProject, "Dockerfile"), "utf8")
    assert.match(dockerfile, /^FROM node:24-slim$/m)
    // A pod with runAsNonRoot (as `kubefx manifests` writes it) starts only an image whose user is a
    // number the kubelet can check: "node" would be a CreateContainerConfigError.
    assert.match(dockerfile, /^USER [1-9]\d*:\d+$/m)
    assert.match(dockerfile, /npm ci --omit=dev/)
    await ok("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], initProject)
    assert.isFalse(existsSync(join(initProject, "node_modules", "@kubefx", "kube", "src")), "installed from source")
    // npm runs a dependency's install script (the \`node\` package's puts Node in place) only when
    // the project allows it: every one the project installs is.
    const scripts = await ok("npm", ["install-scripts", "ls"], initProject)
    assert.include(scripts.stdout, "No packages with unreviewed install scripts", scripts.stdout)
    const tested = await run("npm", ["test"], initProject)
    assert.strictEqual(tested.code, 0, tested.stdout + tested.stderr)
    assert.match(tested.stdout.replace(/\u001b\[[0-9;]*m/g, ""), /Tests\s+1 passed/)
  }, 240_000)

  // No container runtime here: the image's build step runs as its RUN line says, with the cache in
  // a directory of the test's; then the operator's start, with Node's compile cache log, reads it.
  it("the image's build step fills Node's compile cache with the operator's modules, which its start then reads", async () => {
    const dockerfile = readFileSync(join(initProject, "Dockerfile"), "utf8")
    assert.match(dockerfile, /^ENV NODE_COMPILE_CACHE=\/home\/node\//m)
    const warm = /^RUN node (.+)$/m.exec(dockerfile.slice(dockerfile.indexOf("NODE_COMPILE_CACHE")))
    assert.isNotNull(warm, "no RUN node line after the cache is named")
    const cache = join(workspace, "compile-cache")
    const built = await run("sh", ["-c", `"${process.execPath}" ${warm![1]}`], initProject, 60_000, { NODE_COMPILE_CACHE: cache })
    assert.strictEqual(built.code, 0, built.stderr)
    // The start fails on the kubeconfig it is given (none), after its modules are loaded.
    const start = await run(process.execPath, ["src/main.ts"], initProject, 60_000, {
      NODE_COMPILE_CACHE: cache,
      NODE_DEBUG_NATIVE: "COMPILE_CACHE",
      KUBECONFIG: join(workspace, "no-kubeconfig")
    })
    const accepted = (file: string) => `V8 code cache for ESM ${pathToFileURL(join(initProject, file)).href} was accepted`
    assert.include(start.stderr, accepted("src/greeting.ts"))
    assert.include(start.stderr, accepted("node_modules/@kubefx/kube/dist/index.js"))
    assert.include(start.stderr, accepted("node_modules/effect/dist/index.js"))
  }, 120_000)

  it("npm start runs the operator on the embedded server and brings the sample to Ready; its manifests apply there; SIGTERM stops it", async () => {
    started = await startDev(join(initProject, ".kubefx"), { cwd: initProject, npm: true })
    const deadline = Date.now() + 30_000
    for (;;) {
      const greeting = JSON.parse(await started.kubectl(["get", "greeting", "world", "-n", "default", "-o", "json"]))
      if (greeting.status?.conditions?.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True")) break
      if (Date.now() > deadline) assert.fail(`not Ready: ${JSON.stringify(greeting.status)}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    // What the project deploys with, from the packed kubefx, accepted by the cluster it ran on.
    const packedKubefx = join(initProject, "node_modules", ".bin", "kubefx")
    const manifests = await ok(process.execPath, [packedKubefx, "manifests", "src/operator.ts", "--image", "hello-operator:0.1.0"], initProject)
    const applied = await started.kubectl(["apply", "-f", "-"], manifests.stdout)
    for (const line of [
      "namespace/hello-operator created",
      "serviceaccount/hello-operator created",
      "clusterrole.rbac.authorization.k8s.io/hello-operator created",
      "clusterrolebinding.rbac.authorization.k8s.io/hello-operator created",
      "deployment.apps/hello-operator created",
      "service/hello-operator-metrics created"
    ]) assert.include(applied, line)
    await started.stop()
    assert.strictEqual(started.process.exitCode ?? started.process.signalCode, 0)
  }, 90_000)
})
