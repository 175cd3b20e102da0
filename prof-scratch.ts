import { Deferred, Effect, Queue } from "effect"
import { Controller, Outcome } from "@kubefx/core"
const keys = 100_000
const names = Array.from({ length: keys }, (_, i) => `default/object-${i}`)
const secs = (_: bigint) => { const u = process.cpuUsage(cpu0); return (u.user + u.system) / 1e6 }
let cpu0 = process.cpuUsage()
const run = Effect.scoped(Effect.gen(function*() {
  let runs = 0
  const controller = yield* Controller.make({ name: "bench", concurrency: 16, reconcile: () => Effect.sync(() => (runs++, Outcome.done)) })
  cpu0 = process.cpuUsage(); const start = 0n
  for (let i = 0; i < keys; i++) yield* controller.enqueue(names[i]!)
  yield* controller.awaitIdle
  return keys / secs(start)
}))
const bare = Effect.scoped(Effect.gen(function*() {
  const queue = yield* Queue.unbounded<string>()
  const finished = yield* Deferred.make<void>()
  let processed = 0
  const worker = Effect.forever(Effect.flatMap(Queue.take(queue), () => Effect.suspend(() => ++processed === keys ? Deferred.succeed(finished, undefined) : Effect.void)))
  cpu0 = process.cpuUsage(); const start = 0n
  for (let i = 0; i < keys; i++) Queue.offerUnsafe(queue, names[i]!)
  for (let i = 0; i < 16; i++) yield* Effect.forkScoped(worker)
  yield* Deferred.await(finished)
  return keys / secs(start)
}))
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const a: number[] = [], b: number[] = []
for (let i = 0; i < 7; i++) { a.push(await Effect.runPromise(run)); b.push(await Effect.runPromise(bare)) }
console.log("engine", Math.round(median(a)), "bare", Math.round(median(b)), "ratio", (median(a) / median(b) * 100).toFixed(1) + "%")
