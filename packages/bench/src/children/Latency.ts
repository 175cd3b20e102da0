/**
 * Latency child: a kubefx controller caches every Widget and runs its first reconciles; then one
 * Widget at a time gets a spec edit (a raw merge patch), timed from just before the edit is sent to
 * the start of the reconcile that sees it: API round trip, watch delivery, informer, queue and worker.
 */
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube } from "@kubefx/kube"
import { Deferred, Effect } from "effect"
import * as Child from "../Child.ts"
import * as Latency from "../Latency.ts"
import * as Raw from "../Raw.ts"
import * as Workload from "../Workload.ts"

const input = Child.input<Latency.Input>()

const program = Effect.gen(function*() {
  const raw = Raw.make(input.url, input.token, 1)
  yield* Effect.addFinalizer(() => Effect.sync(raw.close))
  // The edit each pending sample waits for, by Widget name.
  const waiting = new Map<string, { readonly message: string; readonly started: Deferred.Deferred<number> }>()
  const controller = yield* Controller.start(Controller.define({
    name: "widgets",
    for: Workload.Widget,
    owns: [Builtins.ConfigMap],
    concurrency: 4,
    reconcile: (widget) =>
      Effect.sync(() => {
        const sample = waiting.get(widget.metadata.name ?? "")
        if (sample !== undefined && sample.message === widget.spec.message) {
          Deferred.doneUnsafe(sample.started, Effect.succeed(performance.now()))
        }
        return Outcome.done
      })
  }))
  yield* controller.awaitIdle
  const latencies: Array<number> = []
  for (let i = 0; i < input.warmup + input.samples; i++) {
    // Spread over the fleet, each Widget at most once.
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
    if (i >= input.warmup) latencies.push(at - sent)
    // Let the Ready write of this run land before the next edit, so samples do not overlap.
    yield* controller.awaitIdle
  }
  return {
    p50Ms: Latency.quantile(latencies, 0.5),
    p99Ms: Latency.quantile(latencies, 0.99),
    maxMs: Math.max(...latencies)
  } satisfies Latency.Report
})

Child.runEffect(program, Kube.layer({ _tag: "File", path: input.kubeconfigPath }))
