/**
 * `npm run bench:testkit`: how long `TestCluster.layer` takes to be usable with five CRDs (server up
 * on a random port, every CRD established, the client's first list answered), and to close.
 * Medians of repeated starts in one process, after one warm-up start, with the machine's load.
 * envtest, the controller-runtime equivalent, takes 5-7 s per environment and about 2 s per CRD.
 */
import { Conditions, Kube, Resource } from "@kubefx/kube"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { loadavg } from "node:os"
import * as TestCluster from "../src/TestCluster.ts"

const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 20

const kinds = ["Alpha", "Bravo", "Charlie", "Delta", "Echo"] as const
const resources = kinds.map((kind) =>
  Resource.custom({
    group: "bench.kubefx.dev",
    version: "v1",
    kind,
    plural: `${kind.toLowerCase()}s`,
    spec: Schema.Struct({ size: Schema.Int, labels: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)) }),
    status: Schema.Struct(Conditions.statusFields)
  })
)

const once = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const started = performance.now()
  const context = yield* Layer.buildWithScope(TestCluster.layer({ resources }), scope)
  const kube = Context.get(context, Kube.Kube)
  yield* kube.list(resources[0]!)
  const ready = performance.now() - started
  const closing = performance.now()
  yield* Scope.close(scope, Exit.void)
  return { ready, close: performance.now() - closing }
})

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const program = Effect.gen(function*() {
  yield* once // warm-up: module loading and the JIT
  const samples = []
  for (let i = 0; i < runs; i++) samples.push(yield* once)
  const ready = samples.map((s) => s.ready)
  const close = samples.map((s) => s.close)
  const [load1] = loadavg()
  console.log(`| TestCluster.layer with 5 CRDs, to first list | median ${median(ready).toFixed(1)} ms | ` +
    `min ${Math.min(...ready).toFixed(1)} – max ${Math.max(...ready).toFixed(1)} ms over ${runs} starts | close median ${median(close).toFixed(1)} ms | load ${load1!.toFixed(2)} |`)
})

Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exit(1)
})
