/**
 * Reconciles and errors per controller over the last minutes, in fixed time buckets: what the
 * dashboard draws as sparklines and turns into a reconcile rate and an error rate. Memory is bounded
 * (one ring of buckets per controller), and a bucket is counted when a run ends.
 *
 * Internal to the operator: not exported from `@kubefx/kube`.
 *
 * @since 0.1.0
 */
import type { Controller as Engine } from "@kubefx/core"

export interface Options {
  /** Width of one bucket; default 10 s. */
  readonly bucketMillis?: number | undefined
  /** How many buckets the window holds; default 60 (10 minutes of 10 s). */
  readonly buckets?: number | undefined
}

/** One controller's window, oldest bucket first; the last bucket is the one `now` falls in. */
export interface Window {
  readonly bucketMillis: number
  /** When the last bucket began. */
  readonly lastBucketAt: number
  /** Runs that ended in each bucket (interrupted runs are not counted). */
  readonly runs: ReadonlyArray<number>
  /** Of those, runs that failed (transient, permanent or defect). */
  readonly errors: ReadonlyArray<number>
}

export interface ReconcileRates {
  readonly record: (report: Pick<Engine.RunReport, "controller" | "startedAt" | "durationMillis" | "result">) => void
  readonly window: (controller: string, now: number) => Window
}

interface Bucket {
  index: number
  runs: number
  errors: number
}

const isError = (result: Engine.RunResult): boolean =>
  result._tag === "Transient" || result._tag === "Permanent" || result._tag === "Defect"

/**
 * An empty set of windows.
 *
 * @example
 * import * as ReconcileRates from "./ReconcileRates.ts"
 * const rates = ReconcileRates.make({ bucketMillis: 1000, buckets: 5 })
 * rates.record({ controller: "widgets", startedAt: 0, durationMillis: 20, result: { _tag: "Done" } })
 * rates.window("widgets", 1500).runs // [0, 0, 0, 1, 0]
 */
export const make = (options: Options = {}): ReconcileRates => {
  const bucketMillis = options.bucketMillis ?? 10_000
  const size = options.buckets ?? 60
  const rings = new Map<string, Array<Bucket>>()
  return {
    record: (report) => {
      if (report.result._tag === "Interrupted") return
      let ring = rings.get(report.controller)
      if (ring === undefined) {
        ring = Array.from({ length: size }, () => ({ index: -1, runs: 0, errors: 0 }))
        rings.set(report.controller, ring)
      }
      const index = Math.floor((report.startedAt + report.durationMillis) / bucketMillis)
      const bucket = ring[index % size]!
      if (bucket.index > index) return
      if (bucket.index < index) {
        bucket.index = index
        bucket.runs = 0
        bucket.errors = 0
      }
      bucket.runs++
      if (isError(report.result)) bucket.errors++
    },
    window: (controller, now) => {
      const last = Math.floor(now / bucketMillis)
      const ring = rings.get(controller)
      const runs: Array<number> = []
      const errors: Array<number> = []
      for (let index = last - size + 1; index <= last; index++) {
        const bucket = ring?.[((index % size) + size) % size]
        const current = bucket !== undefined && bucket.index === index
        runs.push(current ? bucket.runs : 0)
        errors.push(current ? bucket.errors : 0)
      }
      return { bucketMillis, lastBucketAt: last * bucketMillis, runs, errors }
    }
  }
}
