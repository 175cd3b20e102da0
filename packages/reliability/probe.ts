import { Effect, Fiber } from "effect"
import * as Processes from "./src/Processes.ts"
import * as Cluster from "./src/Cluster.ts"
import { Builtins, Informer, Kube, ObjectMeta } from "@kubefx/kube"
import { join } from "node:path"
const program = Effect.gen(function*() {
  const dir = yield* Cluster.tempDir("probe-")
  const kubeconfig = join(dir, "kubeconfig")
  const opts = { kubeconfig, dataDir: join(dir, "data"), token: "t" }
  const first = yield* Processes.apiserver({ ...opts, port: 0 })
  const kube = yield* Cluster.client(kubeconfig)
  yield* Cluster.prepare("ns1", []).pipe(Effect.provideService(Kube.Kube, kube))
  const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: "ns1" }).pipe(Effect.provideService(Kube.Kube, kube))
  yield* informer.awaitSynced
  let n = 0
  const writers = yield* Effect.forkChild(Effect.forEach(Array.from({length: 16}, (_, w) => w), (w) => Effect.forever(Effect.suspend(() => kube.apply(Builtins.ConfigMap, { metadata: { name: `c-${w}-${n++ % 50}`, namespace: "ns1" }, data: { a: `${n}` } }, { fieldManager: "x", force: true })).pipe(Effect.ignore)), { concurrency: 16 }))
  yield* Effect.sleep("1500 millis")
  yield* first.child.kill("SIGKILL")
  const maxSeen = Math.max(...informer.list().map((o) => ObjectMeta.version(o)))
  yield* Fiber.interrupt(writers)
  yield* Processes.apiserver({ ...opts, port: first.port })
  const listed = yield* kube.list(Builtins.ConfigMap, { namespace: "ns1", limit: 1 })
  console.log("informer max RV seen before kill:", maxSeen, "recovered revision:", listed.resourceVersion)
})
Effect.runPromise(Effect.scoped(program)).then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })
