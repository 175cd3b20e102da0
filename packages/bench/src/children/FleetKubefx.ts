/**
 * Fleet child: the controller of `examples/widgets`, its own reconciler: it applies the owned
 * ConfigMap and states the ConfigMap's name in status, which goes out with `Ready` and
 * `observedGeneration` (R10) in the run's one status write. Every request its client sends is
 * counted through the undici dispatcher, status writes apart. Once the fleet is done, it resyncs
 * every Widget and counts the requests and the CPU that costs, apart from the fleet's.
 */
import { Trigger } from "@kubefx/core"
import { Builtins, Controller, Kube } from "@kubefx/kube"
import { reconcile } from "@kubefx/example-widgets"
import { Effect, Layer } from "effect"
import * as Child from "../Child.ts"
import * as Intercepted from "../Intercepted.ts"
import type * as Fleet from "../Fleet.ts"
import * as Workload from "../Workload.ts"

const input = Child.input<Fleet.Input>()
const stop = Child.stopRequested()

const counts: Record<string, number> = {}
const count = (verb: string) => {
  counts[verb] = (counts[verb] ?? 0) + 1
}
const total = () => Object.values(counts).reduce((sum, n) => sum + n, 0)
let statusRequests = 0
let reconciles = 0
let cpuAtHalf = NaN
const countRun = Effect.sync(() => {
  if (reconciles++ === Math.floor(input.objects / 2)) cpuAtHalf = Child.cpuSeconds()
})

const program = Effect.gen(function*() {
  const kube = yield* Intercepted.kube(input.kubeconfigPath, (dispatch) => (options, handler) => {
    const path = String(options.path)
    count(options.method !== "GET" ? options.method : path.includes("watch=true") ? "WATCH" : "GET")
    if (options.method === "PATCH" && path.split("?")[0]!.endsWith("/status")) statusRequests++
    return dispatch(options, handler)
  })

  const cpuAtStart = Child.cpuSeconds()
  Child.started()
  const controller = yield* Controller.start(Controller.define({
    name: "widgets",
    for: Workload.Widget,
    owns: [Builtins.ConfigMap],
    concurrency: input.concurrency,
    reconcile: (widget, ctx) => Effect.andThen(countRun, reconcile(widget, ctx))
  })).pipe(Effect.provideService(Kube.Kube, kube))
  // The controller starts its workers once its caches have synced, and returns.
  const syncCpuSeconds = Child.cpuSeconds() - cpuAtStart
  const atSync = total()
  yield* Effect.promise(() => stop)
  const converged = total()
  const reconcilesToConverge = reconciles
  // A resync of the converged fleet: every Widget reconciled again, which should write nothing. The
  // fleet is done when the last status lands; the caches catch up with the last ConfigMaps first.
  const caught = () => controller.informers.every((informer) => informer.size() === input.objects)
  const catchingUp = Effect.suspend(function loop(): Effect.Effect<void> {
    return caught() ? Effect.void : Effect.andThen(Effect.sleep("10 millis"), loop)
  })
  // A cache that never catches up is reported as the requests the resync then sends, not a hang.
  yield* Effect.timeoutOrElse(catchingUp, { duration: "30 seconds", orElse: () => Effect.void })
  yield* controller.awaitIdle
  // The fleet's CPU ends here, with its writes' last watch events handled; the resync is not the
  // fleet's work (the raw writer does nothing like it) and is reported on its own.
  const cpuAtResync = Child.cpuSeconds()
  const beforeResync = total()
  yield* Effect.forEach(controller.informer.keys(), (key) => controller.enqueue(key, Trigger.resync), { discard: true })
  yield* controller.awaitIdle
  const resyncRequests = total() - beforeResync
  const resyncCpuSeconds = Child.cpuSeconds() - cpuAtResync
  return {
    resyncRequests,
    resyncCpuSeconds,
    syncCpuSeconds,
    secondHalfCpuSeconds: cpuAtResync - cpuAtHalf,
    requestsAfterSync: converged - atSync,
    peakRssMb: Child.peakRssMb(),
    cpuSeconds: cpuAtResync - cpuAtStart,
    requestsByVerb: counts,
    statusRequests,
    reconciles: reconcilesToConverge
  } satisfies Fleet.Report
})

Child.runEffect(program, Layer.empty)
