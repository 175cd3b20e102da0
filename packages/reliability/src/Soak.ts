/**
 * Soak: the buckets and widgets operators run in this process against `kubefx apiserver` (a child
 * process) under steady churn (Widgets created, changed and deleted, Buckets created and deleted,
 * the population kept constant) for a number of minutes. RSS, heap, active handles and open file
 * descriptors are sampled every 10 s; after a warm-up they must not grow. At the end the churn
 * stops and everything must converge.
 */
import * as Buckets from "@kubefx/example-buckets"
import * as Widgets from "@kubefx/example-widgets"
import { Kube, Operator } from "@kubefx/kube"
import { Effect, Fiber, Schedule } from "effect"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import * as Cluster from "./Cluster.ts"
import * as Fleet from "./Fleet.ts"
import * as Processes from "./Processes.ts"

export interface Sample {
  /** Seconds since the start. */
  readonly at: number
  readonly rssMiB: number
  readonly heapMiB: number
  readonly handles: number
  readonly fds: number
  /** Churn operations done so far. */
  readonly operations: number
}

export interface Options {
  readonly minutes: number
  readonly sampleSeconds?: number | undefined
  /** Called with each sample as it is taken. */
  readonly onSample?: ((sample: Sample) => void) | undefined
  /** Called once the soak's API server listens: where it is, its process, and a kubeconfig for it. */
  readonly onServer?: ((server: { readonly url: string; readonly pid: number; readonly kubeconfig: string }) => void) | undefined
}

export interface Growth {
  readonly metric: "rssMiB" | "heapMiB" | "handles" | "fds"
  /** The highest value in the first and in the last third of the samples after warm-up. */
  readonly early: number
  readonly late: number
  readonly allowed: number
  readonly grew: boolean
  /** The least-squares trend over the samples after warm-up, per minute. */
  readonly perMinute: number
}

export interface Result {
  readonly samples: ReadonlyArray<Sample>
  readonly warmupSamples: number
  readonly growth: ReadonlyArray<Growth>
  readonly operations: number
  readonly converged: number
  readonly objects: number
  readonly duplicates: number
  readonly orphans: number
  readonly passed: boolean
}

// What a late peak may add to an early one without counting as growth: GC timing moves RSS and
// heap by some MiB, and a handle or descriptor or two may be open at the moment of a sample.
const tolerance = {
  rssMiB: (early: number) => early * 0.15 + 16,
  heapMiB: (early: number) => early * 0.15 + 8,
  handles: (early: number) => Math.max(8, early * 0.25),
  fds: (early: number) => Math.max(8, early * 0.25)
}

/**
 * Whether each measure grew: after dropping the first `warmup` samples, the peak of the last third
 * against the peak of the first third, with some tolerance for GC timing.
 *
 * @example
 * import * as Soak from "./Soak.ts"
 * const flat = [1, 2, 3, 4, 5, 6].map((at) => ({ at, rssMiB: 100, heapMiB: 50, handles: 10, fds: 20, operations: at }))
 * Soak.growth(flat, 0).some((g) => g.grew) // false
 */
export const growth = (samples: ReadonlyArray<Sample>, warmup: number): ReadonlyArray<Growth> => {
  const steady = samples.slice(warmup)
  const third = Math.max(1, Math.floor(steady.length / 3))
  const early = steady.slice(0, third)
  const late = steady.slice(-third)
  return (["rssMiB", "heapMiB", "handles", "fds"] as const).map((metric) => {
    const earlyPeak = Math.max(...early.map((s) => s[metric]))
    const latePeak = Math.max(...late.map((s) => s[metric]))
    const allowed = tolerance[metric](earlyPeak)
    const perMinute = Math.round(trend(steady.map((s) => [s.at / 60, s[metric]] as const)) * 100) / 100
    return { metric, early: earlyPeak, late: latePeak, allowed, grew: latePeak > earlyPeak + allowed, perMinute }
  })
}

const trend = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length
  if (n < 2) return 0
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0)
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0)
  return variance === 0 ? 0 : covariance / variance
}

const collect = (global as { gc?: () => void }).gc

const sample = (startedAt: number, operations: number): Sample => {
  collect?.()
  const memory = process.memoryUsage()
  return {
    at: Math.round((Date.now() - startedAt) / 1000),
    rssMiB: Math.round(memory.rss / 1024 / 1024),
    heapMiB: Math.round(memory.heapUsed / 1024 / 1024),
    handles: process.getActiveResourcesInfo().length,
    fds: readdirSync("/proc/self/fd").length,
    operations
  }
}

const population = { widgets: 200, buckets: 100 }
const namespace = "soak"

/**
 * Runs the soak in the current scope and answers what it measured.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Soak from "./Soak.ts"
 * const result = Effect.scoped(Soak.run({ minutes: 1 }))
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const sampleMillis = (options.sampleSeconds ?? 10) * 1000
    const dir = yield* Cluster.tempDir("kubefx-soak-")
    const kubeconfig = join(dir, "kubeconfig")
    const server = yield* Processes.apiserver({ port: 0, kubeconfig, dataDir: join(dir, "data"), token: "soak" })
    options.onServer?.({ url: server.url, pid: server.child.pid, kubeconfig })
    const kube = yield* Cluster.client(kubeconfig)
    const { store } = yield* Cluster.objectStore("10 millis")
    yield* Cluster.prepare(namespace, [Buckets.Bucket, Widgets.Widget]).pipe(Effect.provideService(Kube.Kube, kube))
    const logs = Cluster.countingLogger()
    yield* Operator.start(Operator.make({
      name: "reliability-soak",
      controllers: [Buckets.definition, Widgets.definition],
      http: false,
      shutdownTimeout: "1 second"
    })).pipe(
      Effect.provideService(Kube.Kube, kube),
      Effect.provideService(Buckets.ObjectStore.ObjectStore, store),
      Effect.provide(logs.layer)
    )

    const desired = Fleet.tracked()
    yield* Fleet.create(namespace, population, desired).pipe(Effect.provideService(Kube.Kube, kube))

    // Steady churn: every 100 ms one operation, cycling through change, replace-a-Bucket and
    // delete-and-recreate-a-Widget, so the population stays the same.
    let operations = 0
    let running = true
    const churn = Effect.gen(function*() {
      for (let n = 0; running; n++) {
        const i = n % population.widgets
        const widget = Fleet.name("w", i)
        switch (n % 3) {
          case 0:
            yield* Fleet.applyWidget(namespace, widget, `m-${n}`)
            desired.widgets.set(widget, `m-${n}`)
            break
          case 1: {
            // A new Bucket under the old name, once the old one (and its external bucket) is gone.
            const bucket = Fleet.name("b", n % population.buckets)
            yield* Fleet.deleteBucket(namespace, bucket)
            yield* Effect.flatMap(Kube.Kube, (k) => k.get(Buckets.Bucket, bucket, namespace)).pipe(
              Effect.flip,
              Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo({ duration: "30 seconds" }))),
              Effect.ignore
            )
            yield* Fleet.applyBucket(namespace, bucket)
            break
          }
          case 2:
            yield* Effect.flatMap(Kube.Kube, (k) => Fleet.persistently(k.delete(Widgets.Widget, widget, namespace))).pipe(
              Effect.catchTag("NotFound", () => Effect.void)
            )
            yield* Fleet.applyWidget(namespace, widget, `m-${n}`)
            desired.widgets.set(widget, `m-${n}`)
            break
        }
        operations++
        yield* Effect.sleep("100 millis")
      }
    }).pipe(Effect.provideService(Kube.Kube, kube))
    const churning = yield* Effect.forkScoped(churn)

    const startedAt = Date.now()
    const samples: Array<Sample> = []
    const end = startedAt + options.minutes * 60_000
    while (Date.now() < end) {
      yield* Effect.sleep(Math.min(sampleMillis, end - Date.now()))
      const taken = sample(startedAt, operations)
      samples.push(taken)
      options.onSample?.(taken)
    }
    running = false
    yield* Fiber.join(churning)

    const objects = population.widgets + population.buckets
    const verdict = yield* Fleet.verdict(namespace, desired, store).pipe(
      Effect.provideService(Kube.Kube, kube),
      Effect.repeat({
        schedule: Schedule.spaced("1 second").pipe(Schedule.upTo({ duration: "120 seconds" })),
        until: (v) => Fleet.isDone(v, objects)
      })
    )
    const warmupSamples = Math.max(1, Math.floor(samples.length / 3))
    const measured = growth(samples, warmupSamples)
    return {
      samples,
      warmupSamples,
      growth: measured,
      operations,
      converged: verdict.converged,
      objects,
      duplicates: verdict.duplicates,
      orphans: verdict.orphans,
      passed: samples.length >= 4 && measured.every((g) => !g.grew) && Fleet.isDone(verdict, objects)
    } satisfies Result
  })
