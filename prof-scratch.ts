import { Deferred, Effect, Queue } from "effect"
import { Controller, Outcome, Trigger, WorkQueue } from "@kubefx/core"
const keys = 100_000
const names = Array.from({ length: keys }, (_, i) => `default/object-${i}`)
const now = () => performance.now()
const run = Effect.scoped(Effect.gen(function*() {
  let runs = 0
  const controller = yield* Controller.make({ name: "bench", concurrency: 16, held: true, reconcile: () => Effect.sync(() => (runs++, Outcome.done)) })
  const t0 = now()
  for (let i = 0; i < keys; i++) yield* controller.enqueue(names[i]!)
  const t1 = now()
  yield* controller.resume
  yield* controller.awaitIdle
  const t2 = now()
  return [(t1 - t0) * 1000 / keys, (t2 - t1) * 1000 / keys]
}))
const wq = Effect.scoped(Effect.gen(function*() {
  const queue = yield* WorkQueue.make("ops")
  const t0 = now()
  for (let i = 0; i < keys; i++) yield* queue.add(names[i]!, Trigger.event())
  const t1 = now()
  for (let i = 0; i < keys; i++) yield* queue.take
  const t2 = now()
  for (let i = 0; i < keys; i++) yield* queue.done(names[i]!)
  const t3 = now()
  return [(t1 - t0) * 1000 / keys, (t2 - t1) * 1000 / keys, (t3 - t2) * 1000 / keys]
}))
for (let i = 0; i < 3; i++) {
  const [e, w] = await Effect.runPromise(run)
  const [a, t, d] = await Effect.runPromise(wq)
  console.log(`enqueue ${e.toFixed(2)}us  run ${w.toFixed(2)}us | wq add ${a.toFixed(2)} take ${t.toFixed(2)} done ${d.toFixed(2)} us`)
}
