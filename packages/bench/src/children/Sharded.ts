/**
 * Sharding child: one replica of a sharded operator (its own member Lease, a candidate for the
 * sharder Lease) with one controller of Widgets at a fixed concurrency. Each reconcile is I/O-bound:
 * it waits on a simulated external call (an `Effect.sleep`) and then states `Ready`, with this
 * replica's identity in its message, in the run's one status write. Until the harness says `Go`,
 * every reconcile waits at a gate, and the replica tells the harness how many Widgets it caches,
 * so the clock starts with every key labelled and cached by its owner and no run done yet.
 */
import { Outcome } from "@kubefx/core"
import { Controller, Kube, Operator } from "@kubefx/kube"
import { Cause, Effect } from "effect"
import * as Child from "../Child.ts"
import type * as Sharding from "../Sharding.ts"
import * as Workload from "../Workload.ts"

const input = Child.input<Sharding.Input>()
const stop = Child.stopRequested()
const go = Child.goRequested()

let reconciles = 0
let goAt = 0
let lastDoneAt = 0

const program = Effect.gen(function*() {
  const running = yield* Operator.start(Operator.make({
    name: input.operatorName,
    http: false,
    sharding: {
      namespace: Workload.namespace,
      identity: input.identity,
      leaseDuration: input.leaseDurationMs,
      renewDeadline: input.renewDeadlineMs,
      retryPeriod: input.retryPeriodMs,
      drainTimeout: input.drainTimeoutMs
    },
    controllers: [Controller.define({
      name: "widgets",
      for: Workload.Widget,
      concurrency: input.concurrency,
      reconcile: (_widget, ctx) =>
        Effect.gen(function*() {
          yield* Effect.promise(() => go)
          yield* Effect.sleep(input.ioWaitMs)
          yield* ctx.setReadyCondition({ status: "True", reason: "Reconciled", message: input.readyMessage })
          reconciles++
          lastDoneAt = performance.now()
          return Outcome.done
        })
    })]
  }))
  // As `Operator.main`, a replica that lost its member Lease exits (the harness then fails the run).
  yield* running.done.pipe(
    Effect.catchCause((cause) =>
      Effect.sync(() => {
        console.error(`${input.identity} stopped: ${Cause.pretty(cause)}`)
        process.exit(1)
      })
    ),
    Effect.forkScoped
  )
  // The member Lease is held: the sharder may give this replica keys.
  Child.started()
  const cached = () => running.controllers[0]?.controller()?.informer.size() ?? 0
  let told = -1
  yield* Effect.suspend(() => {
    if (cached() !== told) Child.progress(told = cached())
    return Effect.sleep("20 millis")
  }).pipe(Effect.repeat({ until: () => goAt > 0 }), Effect.forkScoped)
  yield* Effect.promise(() => go)
  goAt = performance.now()
  const cpuAtGo = Child.cpuSeconds()
  const keysAtGo = cached()
  yield* Effect.promise(() => stop)
  return {
    identity: input.identity,
    keysAtGo,
    keys: cached(),
    reconciles,
    busySeconds: lastDoneAt > goAt ? (lastDoneAt - goAt) / 1000 : 0,
    cpuSeconds: Child.cpuSeconds() - cpuAtGo,
    peakRssMb: Child.peakRssMb()
  } satisfies Sharding.Report
})

Child.runEffect(program, Kube.layer({ _tag: "File", path: input.kubeconfigPath }))
