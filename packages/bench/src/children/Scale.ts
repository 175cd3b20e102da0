/**
 * Scale child (run with `--expose-gc`): the widgets example's controller over every Widget. It
 * reports when its caches synced; once the harness says the fleet is done, it measures the heap and
 * RSS it holds, then samples spec-edit-to-reconcile latency one edit at a time, as the latency child.
 */
import { Builtins, Controller, Kube } from "@kubefx/kube"
import { reconcile } from "@kubefx/example-widgets"
import { Effect } from "effect"
import * as Arrivals from "../Arrivals.ts"
import * as Child from "../Child.ts"
import * as Latency from "../Latency.ts"
import * as Raw from "../Raw.ts"
import type * as Scale from "../Scale.ts"
import * as Workload from "../Workload.ts"

const waiting: Latency.Waiting = new Map()
const input = Child.input<Scale.Input>()
const stop = Child.stopRequested()
const warmup = 20

const collect = () => {
  for (let i = 0; i < 4; i++) globalThis.gc?.()
  return process.memoryUsage()
}

const program = Effect.gen(function*() {
  const kube = yield* Kube.Kube
  yield* kube.list(Workload.Widget, { limit: 1 })
  const before = collect()
  Child.started()
  const startedAt = performance.now()
  const controller = yield* Controller.start(Controller.define({
    name: "widgets",
    for: Workload.Widget,
    owns: [Builtins.ConfigMap],
    concurrency: input.concurrency,
    reconcile: (widget, ctx) =>
      Effect.suspend(() => {
        Latency.seen(waiting, widget.metadata.name, widget.spec.message)
        return reconcile(widget, ctx)
      })
  }))
  const syncSeconds = (performance.now() - startedAt) / 1000
  yield* Effect.promise(() => stop)
  yield* controller.awaitIdle
  const converged = collect()
  const cached = controller.informers.reduce((sum, informer) => sum + informer.size(), 0)

  const raw = Raw.make(input.url, input.token, 1)
  yield* Effect.addFinalizer(() => Effect.sync(raw.close))
  const latency = yield* Latency.sample({ raw, waiting, objects: input.objects, warmup, samples: input.samples, awaitIdle: controller.awaitIdle })
  return {
    syncSeconds,
    heapBytesPerObject: Math.round((converged.heapUsed - before.heapUsed) / cached),
    rssBytesPerObject: Math.round((converged.rss - before.rss) / cached),
    ...latency
  } satisfies Scale.Report
})

Child.runEffect(program, Arrivals.layer(input.kubeconfigPath, waiting))
