/**
 * Scale child (run with `--expose-gc`): the widgets example's controller over every Widget. It
 * reports when its caches synced; once the harness says the fleet is done, it measures the heap and
 * RSS it holds, then samples spec-edit-to-reconcile latency one edit at a time, as the latency child.
 */
import { Builtins, Controller, Kube } from "@kubefx/kube"
import { reconcile } from "@kubefx/example-widgets"
import { Deferred, Effect } from "effect"
import * as Child from "../Child.ts"
import * as Latency from "../Latency.ts"
import * as Raw from "../Raw.ts"
import type * as Scale from "../Scale.ts"
import * as Workload from "../Workload.ts"

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
  const waiting = new Map<string, { readonly message: string; readonly started: Deferred.Deferred<number> }>()
  Child.started()
  const startedAt = performance.now()
  const controller = yield* Controller.start(Controller.define({
    name: "widgets",
    for: Workload.Widget,
    owns: [Builtins.ConfigMap],
    concurrency: input.concurrency,
    reconcile: (widget, ctx) =>
      Effect.suspend(() => {
        const sample = waiting.get(widget.metadata.name)
        if (sample !== undefined && sample.message === widget.spec.message) {
          Deferred.doneUnsafe(sample.started, Effect.succeed(performance.now()))
        }
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
  const latencies: Array<number> = []
  for (let i = 0; i < warmup + input.samples; i++) {
    const name = Workload.widgetName((i * 7919) % input.objects)
    const message = `edit ${i}`
    const started = Deferred.makeUnsafe<number>()
    waiting.set(name, { message, started })
    const sent = performance.now()
    yield* Effect.promise(() =>
      raw.ok("PATCH", `${Workload.apiPath}/namespaces/${Workload.namespace}/widgets/${name}`, { spec: { message } }, Raw.mergePatch)
    )
    const at = yield* Deferred.await(started)
    waiting.delete(name)
    if (i >= warmup) latencies.push(at - sent)
    yield* controller.awaitIdle
  }
  return {
    syncSeconds,
    heapBytesPerObject: Math.round((converged.heapUsed - before.heapUsed) / cached),
    rssBytesPerObject: Math.round((converged.rss - before.rss) / cached),
    p50Ms: Latency.quantile(latencies, 0.5),
    p99Ms: Latency.quantile(latencies, 0.99),
    maxMs: Math.max(...latencies)
  } satisfies Scale.Report
})

Child.runEffect(program, Kube.layer({ _tag: "File", path: input.kubeconfigPath }))
