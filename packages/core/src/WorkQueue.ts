/**
 * A keyed work queue with client-go's guarantees: a key is queued at most once (adds merge), never
 * processed by two workers at once (an add while it runs marks it dirty and gives exactly one
 * follow-up run), and delayed adds per key that an immediate add supersedes ("at the latest").
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, FiberMap, Latch, Queue, Scope } from "effect"
import * as EngineMetrics from "./EngineMetrics.ts"
import * as Trigger from "./Trigger.ts"

/** A key handed to a worker, with why it was queued. */
export interface Item {
  readonly key: string
  /** The triggers merged into this run, first of each kind. */
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  /** When the key was queued (ms). */
  readonly queuedAt: number
}

/** A delayed add to run after `after`, unless an immediate add comes first. */
export interface FollowUp {
  readonly after: Duration.Duration
  readonly trigger: Trigger.Trigger
}

export interface WorkQueue {
  /** Queues the key now, merging with a queued run, or marking a running key dirty. Supersedes a delayed add. */
  readonly add: (key: string, trigger: Trigger.Trigger) => Effect.Effect<void>
  /** Queues the key after a delay, replacing the key's pending delayed add. */
  readonly addAfter: (key: string, followUp: FollowUp) => Effect.Effect<void>
  /** Drops the key's pending delayed add, if any. */
  readonly cancelDelayed: (key: string) => Effect.Effect<void>
  /** Drops everything pending for the key: its queued run, a follow-up of its running one, its delayed add. */
  readonly remove: (key: string) => Effect.Effect<void>
  /** When the key's delayed add is due (ms), if it has one. */
  readonly dueAt: (key: string) => number | undefined
  /** Waits for the next key and marks it running. Interrupted once the queue is shut down. */
  readonly take: Effect.Effect<Item>
  /**
   * Ends a key's run. A dirty key is queued again at once (which supersedes `followUp`); otherwise
   * `followUp`, when given, becomes the key's delayed add, and any other delayed add is dropped.
   */
  readonly done: (key: string, followUp?: FollowUp) => Effect.Effect<void>
  /** Keys queued and not yet taken. */
  readonly depth: () => number
  /** Keys being processed. */
  readonly running: () => number
  /** Waits until nothing is queued or running (delayed adds may still be pending). */
  readonly awaitIdle: Effect.Effect<void>
  /**
   * Puts a taken key back, for a run that was interrupted before `done`: it is queued again with
   * the triggers it was taken with (merged with any that came while it ran). False once `done` ran.
   */
  readonly requeue: (item: Item) => boolean
  /**
   * Stops accepting adds. "drain" first lets everything queued or running finish; "interrupt" does
   * not wait. Then pending delayed adds are dropped and waiting takers are interrupted.
   */
  readonly shutdown: (mode: "drain" | "interrupt") => Effect.Effect<void>
}

interface Entry {
  queued: boolean
  running: boolean
  dirty: boolean
  triggers: ReadonlyArray<Trigger.Trigger>
  queuedAt: number
  startedAt: number
}

/**
 * A queue whose delayed adds live in the current scope. `name` labels its metrics.
 *
 * @example
 * import { Effect } from "effect"
 * import { Trigger, WorkQueue } from "@kubefx/core"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const queue = yield* WorkQueue.make("widgets")
 *   yield* queue.add("default/a", Trigger.event())
 *   yield* queue.add("default/a", Trigger.event()) // merged
 *   const item = yield* queue.take
 *   yield* queue.done(item.key)
 *   return queue.depth() // 0
 * }))
 */
export const make = (name: string): Effect.Effect<WorkQueue, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const ready = yield* Queue.unbounded<string>()
    const timers = yield* FiberMap.make<string>()
    const idle = yield* Latch.make(true)
    // Hot-path state, touched only inside `Effect.sync` blocks of this queue.
    const entries = new Map<string, Entry>()
    const delayed = new Map<string, number>()
    let queuedCount = 0
    let runningCount = 0
    let accepting = true

    let adds = 0
    const attributes = { name }
    yield* EngineMetrics.observeGauge(EngineMetrics.depth, attributes, () => queuedCount)
    yield* EngineMetrics.observeCounter(EngineMetrics.adds, attributes, () => adds)
    const queueDuration = yield* EngineMetrics.observeHistogram(EngineMetrics.queueDuration, EngineMetrics.queueBuckets, attributes)
    const workDuration = yield* EngineMetrics.observeHistogram(EngineMetrics.workDuration, EngineMetrics.queueBuckets, attributes)

    const enqueue = (key: string, trigger: Trigger.Trigger): void => {
      const entry = entries.get(key)
      if (entry === undefined) {
        entries.set(key, {
          queued: true,
          running: false,
          dirty: false,
          triggers: [trigger],
          queuedAt: clock.currentTimeMillisUnsafe(),
          startedAt: 0
        })
        if (queuedCount++ === 0 && runningCount === 0) idle.closeUnsafe()
        Queue.offerUnsafe(ready, key)
        adds++
      } else if (entry.running && !entry.dirty) {
        entry.dirty = true
        entry.triggers = [trigger]
        entry.queuedAt = clock.currentTimeMillisUnsafe()
        adds++
      } else {
        entry.triggers = Trigger.merge(entry.triggers, trigger)
      }
    }

    const cancelDelayed = (key: string): Effect.Effect<void> =>
      Effect.suspend(() => delayed.delete(key) ? FiberMap.remove(timers, key) : Effect.void)

    const addAfter = (key: string, followUp: FollowUp): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!accepting) return Effect.void
        delayed.set(key, clock.currentTimeMillisUnsafe() + Duration.toMillis(followUp.after))
        return FiberMap.run(
          timers,
          key,
          Effect.sleep(followUp.after).pipe(Effect.andThen(Effect.sync(() => {
            delayed.delete(key)
            if (accepting) enqueue(key, followUp.trigger)
          })))
        ).pipe(Effect.asVoid)
      })

    const add = (key: string, trigger: Trigger.Trigger): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (!accepting) return Effect.void
        enqueue(key, trigger)
        return delayed.has(key) ? cancelDelayed(key) : Effect.void
      })

    const remove = (key: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const entry = entries.get(key)
        if (entry?.running === true) {
          entry.dirty = false
        } else if (entry?.queued === true) {
          // The key stays in the ready queue; `take` skips keys without a queued entry.
          entries.delete(key)
          queuedCount--
          if (queuedCount === 0 && runningCount === 0) idle.openUnsafe()
        }
        return cancelDelayed(key)
      })

    const take: Effect.Effect<Item> = Effect.flatMap(Queue.take(ready), (key) => {
      const entry = entries.get(key)
      return entry === undefined || !entry.queued ? take : Effect.succeed(start(key, entry))
    })

    const start = (key: string, entry: Entry): Item => {
      const now = clock.currentTimeMillisUnsafe()
      const item: Item = { key, triggers: entry.triggers, queuedAt: entry.queuedAt }
      entry.queued = false
      entry.running = true
      entry.triggers = []
      entry.startedAt = now
      queuedCount--
      runningCount++
      queueDuration.record((now - item.queuedAt) / 1000)
      return item
    }

    const done = (key: string, followUp?: FollowUp): Effect.Effect<void> =>
      Effect.suspend(() => {
        const entry = entries.get(key)
        if (entry === undefined || !entry.running) return Effect.void
        entry.running = false
        runningCount--
        workDuration.record((clock.currentTimeMillisUnsafe() - entry.startedAt) / 1000)
        if (entry.dirty) {
          entry.dirty = false
          entry.queued = true
          queuedCount++
          Queue.offerUnsafe(ready, key)
          return cancelDelayed(key)
        }
        entries.delete(key)
        if (followUp === undefined && !delayed.has(key)) {
          if (queuedCount === 0 && runningCount === 0) idle.openUnsafe()
          return Effect.void
        }
        // Arm or drop the timer before reporting idle, so a waiter sees the key's final timer state.
        return Effect.andThen(
          followUp !== undefined ? addAfter(key, followUp) : cancelDelayed(key),
          Effect.sync(() => {
            if (queuedCount === 0 && runningCount === 0) idle.openUnsafe()
          })
        )
      })

    const requeue = (item: Item): boolean => {
      const entry = entries.get(item.key)
      if (entry === undefined || !entry.running) return false
      entry.running = false
      runningCount--
      entry.triggers = entry.dirty ? entry.triggers.reduce(Trigger.merge, item.triggers) : item.triggers
      entry.dirty = false
      entry.queued = true
      entry.queuedAt = item.queuedAt
      queuedCount++
      Queue.offerUnsafe(ready, item.key)
      return true
    }

    const shutdown = (mode: "drain" | "interrupt"): Effect.Effect<void> =>
      Effect.gen(function*() {
        accepting = false
        if (mode === "drain") yield* idle.await
        delayed.clear()
        yield* FiberMap.clear(timers)
        yield* Queue.shutdown(ready)
      })

    return {
      add,
      addAfter,
      cancelDelayed,
      remove,
      dueAt: (key) => delayed.get(key),
      take,
      done,
      depth: () => queuedCount,
      running: () => runningCount,
      awaitIdle: idle.await,
      requeue,
      shutdown
    } satisfies WorkQueue
  })
