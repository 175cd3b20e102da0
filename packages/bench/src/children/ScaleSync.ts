/**
 * Scale sync child: fills the scale scenario's two caches (every Widget and every ConfigMap) the
 * way `initialList` says, from paginated lists or from a streaming list, and reports how long that
 * took and the process's peak RSS. It only reads: nothing it does changes what the scale child finds.
 */
import { Builtins, Informer, Kube, type Watcher } from "@kubefx/kube"
import { Effect } from "effect"
import * as Child from "../Child.ts"
import * as Workload from "../Workload.ts"

export interface Input {
  readonly kubeconfigPath: string
  readonly initialList: Watcher.InitialListStrategy
}

export interface Report {
  readonly syncSeconds: number
  readonly cached: number
  readonly peakRssMb: number
}

const input = Child.input<Input>()

const program = Effect.gen(function*() {
  const kube = yield* Kube.Kube
  yield* kube.list(Workload.Widget, { limit: 1 })
  const startedAt = performance.now()
  const informers = [
    yield* Informer.make(Workload.Widget, { initialList: input.initialList }),
    yield* Informer.make(Builtins.ConfigMap, { initialList: input.initialList })
  ]
  yield* Effect.forEach(informers, (informer) => informer.awaitSynced, { concurrency: "unbounded", discard: true })
  return {
    syncSeconds: (performance.now() - startedAt) / 1000,
    cached: informers.reduce((sum, informer) => sum + informer.size(), 0),
    peakRssMb: Child.peakRssMb()
  } satisfies Report
})

Child.runEffect(program, Kube.layer({ _tag: "File", path: input.kubeconfigPath }))
