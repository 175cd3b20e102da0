/**
 * `npm run bench:start`: what an operator process pays to start, from the process's start to its
 * first list answered, and its RSS then: in its pod (the service account, over HTTPS), from a plain
 * kubeconfig file (a server, its CA, a token: read directly), and from a kubeconfig whose user is an
 * exec plugin (through `@kubernetes/client-node`), against one embedded API server. Medians of
 * repeated starts after one warm-up start of each (the disk cache), with the machine's load. The
 * processes run the packages' TypeScript sources, as the other benches do; when they are built
 * (`npm run build`), two more ways start in its pod from their JavaScript, as a packed install does:
 * without Node's compile cache, and with it filled by the warm-up start, as the image of a project
 * that `kubefx init` writes fills it at build time. No other way uses a compile cache.
 *
 *   npx node --conditions=@kubefx/source packages/kube/bench/start.ts [--runs N]
 */
import { ApiServer } from "@kubefx/apiserver"
import { Effect } from "effect"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import * as Connected from "./connected.ts"
import * as Kubeconfigs from "./kubeconfigs.ts"

const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 7

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted.length % 2 === 1
    ? sorted[(sorted.length - 1) / 2]!
    : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
}

const program = Effect.scoped(Effect.gen(function*() {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-bench-start-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  const kubeconfig = join(dir, "kubeconfig")
  const server = yield* ApiServer.make({ port: 0, kubeconfigPath: kubeconfig })
  const serviceAccount = join(dir, "serviceaccount")
  mkdirSync(serviceAccount)
  writeFileSync(join(serviceAccount, "token"), server.token)
  writeFileSync(join(serviceAccount, "ca.crt"), server.certificateAuthority)
  // The same credentials from an exec plugin.
  const execKubeconfig = join(dir, "exec-kubeconfig")
  const ca = Buffer.from(server.certificateAuthority).toString("base64")
  writeFileSync(execKubeconfig, Kubeconfigs.kubeconfig({ server: server.httpsUrl, "certificate-authority-data": ca }, Kubeconfigs.execUser(server.token)))
  const url = new URL(server.httpsUrl)
  // No compile cache but where a way names one.
  const { NODE_COMPILE_CACHE: _named, ...env } = process.env
  const inPod = { ...env, KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port }
  const ways: Array<{ readonly name: string; readonly env: NodeJS.ProcessEnv; readonly args: ReadonlyArray<string>; readonly compiled?: boolean }> = [
    { name: "in its pod (the service account)", env: inPod, args: ["InCluster", serviceAccount] },
    { name: "from a kubeconfig file (a server, its CA, a token)", env, args: ["File", kubeconfig] },
    { name: "from a kubeconfig with an exec plugin (client-node)", env, args: ["File", execKubeconfig] }
  ]
  // What a packed install loads; its warm-up start fills the compile cache, as the image that
  // `kubefx init` writes does at build time.
  if (existsSync(new URL("../dist/index.js", import.meta.url))) {
    const cache = { ...inPod, NODE_COMPILE_CACHE: join(dir, "compile-cache") }
    ways.push(
      { name: "in its pod, from the built JavaScript (a packed install)", env: inPod, args: ["InCluster", serviceAccount], compiled: true },
      { name: "the same, with Node's compile cache filled (the image of `kubefx init`)", env: cache, args: ["InCluster", serviceAccount], compiled: true }
    )
  } else console.log("(no built JavaScript: `npm run build` first for the packed install's starts)\n")
  const [before] = loadavg()
  console.log(`| an operator process, to its first list answered | median | range over ${runs} starts | RSS then (median) | client-node loaded |`)
  console.log("|---|---|---|---|---|")
  for (const way of ways) {
    const options = { compiled: way.compiled === true }
    yield* Connected.run(way.args, way.env, options) // warm-up: the disk cache
    const samples: Array<Connected.Connected> = []
    for (let i = 0; i < runs; i++) samples.push(yield* Connected.run(way.args, way.env, options))
    const ready = samples.map((s) => s.readyMs)
    console.log(
      `| ${way.name} | ${median(ready).toFixed(0)} ms | ${Math.min(...ready).toFixed(0)} – ${Math.max(...ready).toFixed(0)} ms | ` +
        `${median(samples.map((s) => s.rssMb)).toFixed(0)} MiB | ${samples.every((s) => s.clientNode) ? "yes" : samples.some((s) => s.clientNode) ? "some" : "no"} |`
    )
  }
  const [after] = loadavg()
  console.log(`\nload average ${before!.toFixed(2)} at the start, ${after!.toFixed(2)} at the end`)
}))

Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exit(1)
})
