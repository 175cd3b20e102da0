/**
 * Durability for `--data-dir`: every committed write is appended to a log and fsynced before the
 * request that made it is answered; every `snapshotEvery` records the whole state is written to a
 * snapshot (to a temporary file, fsynced, renamed) and the log is truncated. Recovery loads the
 * snapshot and replays the log after it; a torn last record (a crash mid-append) is ignored,
 * since its write was never acknowledged.
 */
import { Cause, Effect, Fiber, Queue, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

export class PersistenceError extends Schema.TaggedError<PersistenceError>()("PersistenceError", {
  message: Schema.String
}) {}

export interface Options {
  readonly dir: string
  /** Log records between snapshots (default 10,000). */
  readonly snapshotEvery?: number
}

export interface Persistence {
  /** Waits until the write at `revision` (and all before it) is on disk. */
  readonly durable: (revision: number) => Effect.Effect<void, PersistenceError>
}

/** One log line: revision, storage, namespace, name, and the object (null for a delete). */
interface Record {
  readonly r: number
  readonly s: string
  readonly n: string
  readonly k: string
  readonly o: KubeObject.KubeObject | null
}

const snapshotFile = (dir: string) => path.join(dir, "snapshot.json")
const logFile = (dir: string) => path.join(dir, "log.ndjson")

/**
 * Reads the state kept in `dir` (undefined when it holds none yet).
 *
 * @example
 * import { Effect } from "effect"
 * import * as Persistence from "./Persistence.ts"
 * const state = Effect.runSync(Persistence.recover("/tmp/kubefx-empty-dir")) // undefined
 */
export const recover = (dir: string): Effect.Effect<Store.Snapshot | undefined, PersistenceError> =>
  Effect.try({
    try: () => {
      const snapFile = snapshotFile(dir)
      const wal = logFile(dir)
      if (!fs.existsSync(snapFile) && !fs.existsSync(wal)) return undefined
      const base: Store.Snapshot = fs.existsSync(snapFile)
        ? JSON.parse(fs.readFileSync(snapFile, "utf8"))
        : { revision: 0, objects: [] }
      const state = new Map<string, { readonly storage: string; readonly object: KubeObject.KubeObject }>()
      for (const entry of base.objects) {
        const m = KubeObject.meta(entry.object)
        state.set(`${entry.storage}|${KubeObject.key(m.namespace, m.name ?? "")}`, entry)
      }
      let revision = base.revision
      for (const record of readLog(wal)) {
        if (record.r <= revision) continue
        revision = record.r
        const id = `${record.s}|${KubeObject.key(record.n, record.k)}`
        if (record.o === null) state.delete(id)
        else state.set(id, { storage: record.s, object: record.o })
      }
      return { revision, objects: [...state.values()] }
    },
    catch: (cause) => new PersistenceError({ message: `cannot recover ${dir}: ${String(cause)}` })
  })

const readLog = (file: string): Array<Record> => {
  if (!fs.existsSync(file)) return []
  const text = fs.readFileSync(file, "utf8")
  const records: Array<Record> = []
  const lines = text.split("\n")
  // The piece after the last newline is a torn append, if anything.
  for (const line of lines.slice(0, -1)) {
    try {
      records.push(JSON.parse(line))
    } catch {
      break
    }
  }
  return records
}

/**
 * Makes `store` durable in `options.dir`: writes a snapshot of its current state, then logs every
 * write. The log writer runs until the scope closes (after flushing what is pending).
 *
 * @example
 * import { Effect } from "effect"
 * import * as Persistence from "./Persistence.ts"
 * import * as Store from "./Store.ts"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const store = Store.make({ initial: yield* Persistence.recover("/tmp/kubefx-data") })
 *   const persistence = yield* Persistence.attach(store, { dir: "/tmp/kubefx-data" })
 *   const written = store.put("configmaps", { metadata: { namespace: "default", name: "a" } }, 0)
 *   if (written._tag === "Written") yield* persistence.durable(written.event.revision)
 * }))
 */
export const attach = Effect.fnUntraced(function*(store: Store.Store, options: Options) {
  const dir = options.dir
  const snapshotEvery = options.snapshotEvery ?? 10_000
  const io = <A>(what: string, f: () => A) =>
    Effect.try({ try: f, catch: (cause) => new PersistenceError({ message: `${what}: ${String(cause)}` }) })

  yield* io("create data dir", () => fs.mkdirSync(dir, { recursive: true, mode: 0o700 }))
  const writeSnapshot = (snapshot: Store.Snapshot) =>
    io("write snapshot", () => {
      const tmp = `${snapshotFile(dir)}.tmp`
      const fd = fs.openSync(tmp, "w", 0o600)
      try {
        fs.writeSync(fd, JSON.stringify(snapshot))
        fs.fsyncSync(fd)
      } finally {
        fs.closeSync(fd)
      }
      fs.renameSync(tmp, snapshotFile(dir))
      syncDir(dir)
    })
  const openLog = () => io("open log", () => fs.openSync(logFile(dir), "w", 0o600))

  yield* writeSnapshot(store.snapshot())
  let log = yield* openLog()
  let sinceSnapshot = 0
  let durableRevision = store.revision()
  let failure: PersistenceError | undefined
  const waiters = new Set<{ readonly revision: number; readonly resume: (e: Effect.Effect<void, PersistenceError>) => void }>()
  const settle = () => {
    for (const w of waiters) {
      if (failure !== undefined) w.resume(Effect.fail(failure))
      else if (w.revision <= durableRevision) w.resume(Effect.void)
      else continue
      waiters.delete(w)
    }
  }

  const pending = yield* Queue.unbounded<Record, Cause.Done>()
  const unsubscribe = store.subscribe((event) => {
    Queue.offerUnsafe(pending, {
      r: event.revision,
      s: event.storage,
      n: event.namespace,
      k: String(KubeObject.meta(event.object).name ?? ""),
      o: event.type === "DELETED" ? null : event.object
    })
  })

  const appendBatch = (batch: ReadonlyArray<Record>) =>
    Effect.callback<void, PersistenceError>((resume) => {
      const text = batch.map((r) => JSON.stringify(r)).join("\n") + "\n"
      fs.write(log, text, (error) => {
        if (error) return resume(Effect.fail(new PersistenceError({ message: `append: ${error.message}` })))
        fs.fsync(log, (error) =>
          resume(error ? Effect.fail(new PersistenceError({ message: `fsync: ${error.message}` })) : Effect.void))
      })
    })

  const rotate = Effect.gen(function*() {
    const snapshot = store.snapshot()
    yield* writeSnapshot(snapshot)
    yield* io("truncate log", () => fs.closeSync(log))
    log = yield* openLog()
    sinceSnapshot = 0
    durableRevision = Math.max(durableRevision, snapshot.revision)
  })

  const writer = Effect.gen(function*() {
    while (true) {
      const batch = (yield* Queue.takeAll(pending)).filter((r) => r.r > durableRevision)
      if (batch.length > 0) {
        // Uninterruptible: a stop must not leave an append in flight behind the final flush.
        yield* Effect.uninterruptible(appendBatch(batch))
        durableRevision = batch[batch.length - 1]!.r
        sinceSnapshot += batch.length
      }
      if (sinceSnapshot >= snapshotEvery) yield* rotate
      settle()
    }
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.sync(() => {
        if (!Cause.hasInterruptsOnly(cause)) {
          failure = new PersistenceError({ message: `data dir writer stopped: ${Cause.pretty(cause)}` })
          settle()
        }
      })
    )
  )
  const writerFiber = yield* Effect.forkScoped(writer, { startImmediately: true })
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      unsubscribe()
      yield* Fiber.interrupt(writerFiber)
      // What is still queued was never acknowledged; write it anyway so a clean stop loses nothing.
      const tail = (yield* Queue.clear(pending)).filter((r) => r.r > durableRevision)
      try {
        if (tail.length > 0) fs.writeSync(log, tail.map((r) => JSON.stringify(r)).join("\n") + "\n")
        fs.fsyncSync(log)
        fs.closeSync(log)
      } catch {
        // The process is stopping; nothing acknowledged depends on this.
      }
    })
  )

  const persistence: Persistence = {
    durable: (revision) =>
      Effect.callback<void, PersistenceError>((resume) => {
        if (failure !== undefined) return resume(Effect.fail(failure))
        if (revision <= durableRevision) return resume(Effect.void)
        const waiter = { revision, resume }
        waiters.add(waiter)
        return Effect.sync(() => waiters.delete(waiter))
      })
  }
  return persistence
})

const syncDir = (dir: string) => {
  const fd = fs.openSync(dir, "r")
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}
