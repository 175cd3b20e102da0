/**
 * Latency child: a kubefx controller caches every Widget and runs its first reconciles; then one
 * Widget at a time gets a spec edit (a raw merge patch), timed from just before the edit is sent to
 * the start of the reconcile that sees it: API round trip, watch delivery, informer, queue and worker;
 * and from the edit's arrival at its HTTP client (`Arrivals`), where kubefx's part begins.
 */
import { Outcome } from "@kubefx/core"
import { Builtins, Controller } from "@kubefx/kube"
import { Effect } from "effect"
import * as Arrivals from "../Arrivals.ts"
import * as Child from "../Child.ts"
import * as Latency from "../Latency.ts"
import * as Raw from "../Raw.ts"
import * as Workload from "../Workload.ts"

const waiting: Latency.Waiting = new Map()
const input = Child.input<Latency.Input>()

const program = Effect.gen(function*() {
  const raw = Raw.make(input.url, input.token, 1)
  yield* Effect.addFinalizer(() => Effect.sync(raw.close))
  const controller = yield* Controller.start(Controller.define({
    name: "widgets",
    for: Workload.Widget,
    owns: [Builtins.ConfigMap],
    concurrency: 4,
    reconcile: (widget) =>
      Effect.sync(() => {
        Latency.seen(waiting, widget.metadata.name, widget.spec.message)
        return Outcome.done
      })
  }))
  yield* controller.awaitIdle
  return yield* Latency.sample({ raw, waiting, objects: input.objects, warmup: input.warmup, samples: input.samples, awaitIdle: controller.awaitIdle })
})

Child.runEffect(program, Arrivals.layer(input.kubeconfigPath, waiting))
