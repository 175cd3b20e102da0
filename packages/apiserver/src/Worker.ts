/**
 * The work loop of the server's own controllers (garbage collector, namespace and CRD
 * lifecycle): keys are queued synchronously from store listeners (deduplicated while queued) and
 * handled one at a time by a fiber; a failed key is retried after a short delay.
 */
import { Cause, Effect, Queue } from "effect"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

export interface Worker<K> {
  readonly enqueue: (key: K) => void
  /** Completes when no key is queued or being handled. */
  readonly idle: Effect.Effect<void>
  /** Keys queued or being handled now. */
  readonly pending: () => number
}

/**
 * Starts a worker in the current scope. Keys are compared by `id`.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Worker from "./Worker.ts"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const worker = yield* Worker.make("echo", (key: string) => Effect.log(key), (key) => key)
 *   worker.enqueue("a")
 *   yield* worker.idle
 * }))
 */
export const make = Effect.fnUntraced(function*<K, E>(
  name: string,
  handle: (key: K) => Effect.Effect<void, E>,
  id: (key: K) => string
) {
  const scope = yield* Effect.scope
  const queue = yield* Queue.unbounded<K, Cause.Done>()
  const queued = new Set<string>()
  let busy = 0
  const idleWaiters = new Set<() => void>()
  const settle = () => {
    if (queued.size === 0 && busy === 0) for (const w of [...idleWaiters]) w()
  }
  const enqueue = (key: K) => {
    const k = id(key)
    if (queued.has(k)) return
    queued.add(k)
    Queue.offerUnsafe(queue, key)
  }
  const attempts = new Map<string, number>()
  const loop = Effect.gen(function*() {
    while (true) {
      const key = yield* Queue.take(queue)
      const k = id(key)
      queued.delete(k)
      busy++
      const result = yield* Effect.exit(handle(key))
      busy--
      if (result._tag === "Failure" && !Cause.hasInterruptsOnly(result.cause)) {
        const n = (attempts.get(k) ?? 0) + 1
        attempts.set(k, n)
        if (n <= 50) {
          yield* Effect.logDebug(`kubefx ${name}: retrying ${k}`, Cause.pretty(result.cause))
          yield* Effect.sync(() => enqueue(key)).pipe(Effect.delay(Math.min(20 * n, 500)), Effect.forkIn(scope))
        } else {
          attempts.delete(k)
          yield* Effect.logWarning(`kubefx ${name}: giving up on ${k}`, Cause.pretty(result.cause))
        }
      } else {
        attempts.delete(k)
      }
      settle()
    }
  })
  yield* Effect.forkScoped(loop, { startImmediately: true })
  const worker: Worker<K> = {
    enqueue,
    pending: () => queued.size + busy,
    idle: Effect.callback<void>((resume) => {
      if (queued.size === 0 && busy === 0) return resume(Effect.void)
      const done = () => {
        idleWaiters.delete(done)
        resume(Effect.void)
      }
      idleWaiters.add(done)
      return Effect.sync(() => idleWaiters.delete(done))
    })
  }
  return worker
})

/**
 * Starts a worker that runs `ensure` for namespaces, in the current scope: for every namespace at
 * the start and whenever one is made or changes, and for the namespace of any other event
 * `concerns` picks (the controller's own object deleted or changed by someone else).
 *
 * @example
 * import { Effect } from "effect"
 * import * as Worker from "./Worker.ts"
 * declare const store: import("./Store.ts").Store
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const worker = yield* Worker.perNamespace(store, "echo", (namespace) => Effect.log(namespace), () => false)
 *   yield* worker.idle
 * }))
 */
export const perNamespace = Effect.fnUntraced(function*<E>(
  store: Store.Store,
  name: string,
  ensure: (namespace: string) => Effect.Effect<void, E>,
  concerns: (event: Store.Event) => boolean
) {
  const worker = yield* make(name, ensure, (namespace: string) => namespace)
  const onEvent = (event: Store.Event) => {
    if (event.storage === "namespaces") {
      if (event.type !== "DELETED") worker.enqueue(String(KubeObject.meta(event.object).name))
    } else if (concerns(event)) {
      worker.enqueue(event.namespace)
    }
  }
  for (const ns of store.list("namespaces", undefined)) worker.enqueue(String(KubeObject.meta(ns).name))
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return worker
})
