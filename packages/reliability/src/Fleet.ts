/**
 * The workload most scenarios share: Buckets (one external bucket each, in the examples' fake
 * object store) and Widgets (one ConfigMap each), written as a user would (server-side apply,
 * retried on what a user retries), and a check of the final state against the desired one:
 * how many objects converged, how many external buckets are duplicates or orphans, how many
 * acknowledged user writes are missing.
 */
import { ObjectStore } from "@kubefx/example-buckets"
import { Bucket } from "@kubefx/example-buckets"
import { configMapName, Widget } from "@kubefx/example-widgets"
import { Builtins, Kube, type KubeError, type Resource } from "@kubefx/kube"
import { Duration, Effect, Schedule } from "effect"

/** The field manager of the user's writes. */
export const userManager = "reliability-user"

const retriable = (error: KubeError.KubeError | Resource.DecodeError) =>
  error._tag === "ServerError" || error._tag === "Timeout" || error._tag === "Transport" ||
  error._tag === "TooManyRequests" || error._tag === "Conflict"

// Back-off from 20 ms to 1 s, or the server's Retry-After.
const userRetry = Schedule.exponential("20 millis").pipe(
  Schedule.setInputType<KubeError.KubeError | Resource.DecodeError>(),
  Schedule.modifyDelay(({ input, duration }) =>
    Effect.succeed(
      input._tag === "TooManyRequests"
        ? Duration.seconds(input.retryAfterSeconds)
        : Duration.min(duration, Duration.seconds(1))
    )
  )
)

/**
 * Retries a request the way a careful user does: on 5xx, 429 (after Retry-After), 409, timeouts
 * and connection failures, with capped back-off, until it succeeds or fails otherwise.
 *
 * @example
 * import { Builtins, Kube } from "@kubefx/kube"
 * import { Effect } from "effect"
 * import * as Fleet from "./Fleet.ts"
 * const namespaces = Effect.flatMap(Kube.Kube, (kube) => Fleet.persistently(kube.list(Builtins.Namespace)))
 */
export const persistently = <A, E extends KubeError.KubeError | Resource.DecodeError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => Effect.retry(effect, { schedule: userRetry, while: retriable })

/**
 * The name of the i-th object of a kind.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * Fleet.name("b", 7) // "b-7"
 */
export const name = (prefix: string, i: number): string => `${prefix}-${i}`

/**
 * Applies a Widget with `message` as a user would.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * const write = Fleet.applyWidget("default", "w-1", "hello")
 */
export const applyWidget = (namespace: string, widget: string, message: string) =>
  Effect.flatMap(Kube.Kube, (kube) =>
    persistently(kube.apply(Widget, {
      metadata: { name: widget, namespace },
      spec: { replicas: 1, message }
    }, { fieldManager: userManager, force: true })))

/**
 * Applies a Bucket, with labels and a spec, as a user would.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * const write = Fleet.applyBucket("default", "b-1", { round: "1" }, { region: "eu" })
 */
export const applyBucket = (
  namespace: string,
  bucket: string,
  labels: Readonly<Record<string, string>> = {},
  spec: Bucket["spec"] = {}
) =>
  Effect.flatMap(Kube.Kube, (kube) =>
    persistently(kube.apply(Bucket, {
      metadata: { name: bucket, namespace, labels },
      spec
    }, { fieldManager: userManager, force: true })))

/**
 * Deletes a Bucket as a user would (already gone counts as deleted).
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * const remove = Fleet.deleteBucket("default", "b-1")
 */
export const deleteBucket = (namespace: string, bucket: string) =>
  Effect.flatMap(Kube.Kube, (kube) =>
    persistently(kube.delete(Bucket, bucket, namespace)).pipe(Effect.catchTag("NotFound", () => Effect.void)))

/** What the user wants in the end. */
export interface Desired {
  /** Widget name to its last acknowledged message. */
  readonly widgets: ReadonlyMap<string, string>
  /** Buckets that must exist, each with exactly one external bucket. */
  readonly buckets: ReadonlySet<string>
  /** Buckets that must be gone (their external bucket too). */
  readonly deleted?: ReadonlySet<string> | undefined
}

/** The desired state as the user's acknowledged writes build it up. */
export interface Tracked extends Desired {
  readonly widgets: Map<string, string>
  readonly buckets: Set<string>
  readonly deleted: Set<string>
}

/**
 * An empty desired state, filled by `create`, `change` and `remove`.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * const desired = Fleet.tracked()
 */
export const tracked = (): Tracked => ({ widgets: new Map(), buckets: new Set(), deleted: new Set() })

const concurrency = 16

/**
 * Creates `widgets` Widgets (message "first") and `buckets` Buckets, recording each acknowledged write.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * const desired = Fleet.tracked()
 * const write = Fleet.create("default", { widgets: 10, buckets: 10 }, desired)
 */
export const create = (namespace: string, counts: { readonly widgets: number; readonly buckets: number }, desired: Tracked) =>
  Effect.andThen(
    Effect.forEach(Array.from({ length: counts.widgets }, (_, i) => name("w", i)), (widget) =>
      Effect.andThen(applyWidget(namespace, widget, "first"), Effect.sync(() => desired.widgets.set(widget, "first"))), {
      concurrency,
      discard: true
    }),
    Effect.forEach(Array.from({ length: counts.buckets }, (_, i) => name("b", i)), (bucket) =>
      Effect.andThen(applyBucket(namespace, bucket), Effect.sync(() => desired.buckets.add(bucket))), { concurrency, discard: true })
  )

/**
 * Changes everything: a new message for every Widget (a new generation), a label on every Bucket.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * declare const desired: Fleet.Tracked
 * const write = Fleet.change("default", "second", desired)
 */
export const change = (namespace: string, message: string, desired: Tracked) =>
  Effect.andThen(
    Effect.forEach([...desired.widgets.keys()], (widget) =>
      Effect.andThen(applyWidget(namespace, widget, message), Effect.sync(() => desired.widgets.set(widget, message))), {
      concurrency,
      discard: true
    }),
    Effect.forEach([...desired.buckets], (bucket) => applyBucket(namespace, bucket, { message }), { concurrency, discard: true })
  )

/**
 * Deletes the first `n` Buckets still desired.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * declare const desired: Fleet.Tracked
 * const write = Fleet.remove("default", 10, desired)
 */
export const remove = (namespace: string, n: number, desired: Tracked) =>
  Effect.forEach([...desired.buckets].slice(0, n), (bucket) =>
    Effect.andThen(
      deleteBucket(namespace, bucket),
      Effect.sync(() => {
        desired.buckets.delete(bucket)
        desired.deleted.add(bucket)
      })
    ), { concurrency, discard: true })

export interface Verdict {
  /** Objects in their desired final state (a deleted Bucket: gone). */
  readonly converged: number
  /** External buckets beyond one per Bucket. */
  readonly duplicates: number
  /** External buckets whose Bucket no longer exists. */
  readonly orphans: number
  /** Objects whose stored spec is not what the user last wrote, or that vanished. */
  readonly lostUpdates: number
  /** Bucket objects still present though not desired (deleted but not finalized). */
  readonly leftover: number
  /** A few names that are not converged, for the failure message. */
  readonly pending: ReadonlyArray<string>
}

// What a stuck object looks like, so a failed run says why without a rerun.
const describe = (
  object: { readonly metadata: { readonly generation?: number | undefined }; readonly status?: { readonly observedGeneration?: number | undefined; readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string; readonly message?: string | undefined }> | undefined } | undefined } | undefined,
  configMapMessage?: string | undefined
) => {
  if (object === undefined) return " (missing)"
  const ready = object.status?.conditions?.find((c) => c.type === "Ready")
  return ` (generation ${object.metadata.generation}, observed ${object.status?.observedGeneration}, Ready ${ready?.status ?? "none"}` +
    `${ready?.message ? ` "${ready.message.slice(0, 80)}"` : ""}${configMapMessage === undefined ? "" : `, ConfigMap "${configMapMessage}"`})`
}

const isReady = (object: { readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }> } | undefined }) =>
  object.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true

/**
 * Compares the cluster and the object store with what the user wants; without a store, only Widgets.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * declare const store: import("@kubefx/example-buckets").ObjectStore.ObjectStore["Service"]
 * const verdict = Fleet.verdict("default", { widgets: new Map([["w-1", "hello"]]), buckets: new Set() }, store)
 */
export const verdict = (namespace: string, desired: Desired, store?: ObjectStore.ObjectStore["Service"] | undefined) =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    // Without Widgets to check, the Widget kind need not be installed.
    const checksWidgets = desired.widgets.size > 0
    const widgets = new Map(
      (checksWidgets ? (yield* persistently(kube.listAll(Widget, { namespace }))).items : []).map((w) => [w.metadata.name ?? "", w])
    )
    const configMaps = new Map(
      (checksWidgets ? (yield* persistently(kube.listAll(Builtins.ConfigMap, { namespace }))).items : []).map((c) => [c.metadata.name ?? "", c])
    )
    const buckets = store === undefined ? [] : (yield* persistently(kube.listAll(Bucket, { namespace }))).items
    const external = store === undefined ? [] : yield* Effect.orDie(store.list())

    const pending: Array<string> = []
    let converged = 0
    let lostUpdates = 0
    for (const [name, message] of desired.widgets) {
      const widget = widgets.get(name)
      if (widget === undefined || widget.spec.message !== message) lostUpdates++
      const configMap = configMaps.get(configMapName({ metadata: { name } } as Widget))
      const done = widget !== undefined && widget.spec.message === message && isReady(widget) &&
        widget.status?.observedGeneration === widget.metadata.generation &&
        widget.status?.configMapName === configMapName(widget) &&
        configMap?.data?.message === message
      if (done) converged++
      else pending.push(`Widget ${name}${describe(widget, configMap?.data?.message)}`)
    }

    const owned = new Map<string, Array<string>>()
    for (const bucket of external) owned.set(bucket.owner, [...(owned.get(bucket.owner) ?? []), bucket.id])
    const live = new Set(buckets.map((b) => b.metadata.uid ?? ""))
    let duplicates = 0
    let orphans = 0
    for (const [owner, ids] of owned) {
      duplicates += ids.length - 1
      if (!live.has(owner)) orphans++
    }
    let leftover = 0
    const present = new Set<string>()
    for (const bucket of buckets) {
      const name = bucket.metadata.name ?? ""
      present.add(name)
      if (!desired.buckets.has(name)) {
        leftover++
        pending.push(`Bucket ${name} (deleted)`)
        continue
      }
      const ids = owned.get(bucket.metadata.uid ?? "") ?? []
      const done = isReady(bucket) && bucket.status?.observedGeneration === bucket.metadata.generation && ids.length === 1 &&
        bucket.status?.bucketId === ids[0]
      if (done) converged++
      else pending.push(`Bucket ${name}${describe(bucket)}, ${ids.length} external`)
    }
    for (const name of desired.buckets) if (!present.has(name)) lostUpdates++
    for (const name of desired.deleted ?? []) if (!present.has(name)) converged++
    return { converged, duplicates, orphans, lostUpdates, leftover, pending: pending.slice(0, 5) } satisfies Verdict
  })

/**
 * Whether a verdict is the desired state: everything converged, nothing duplicated, orphaned,
 * left over or lost.
 *
 * @example
 * import * as Fleet from "./Fleet.ts"
 * Fleet.isDone({ converged: 2, duplicates: 0, orphans: 0, lostUpdates: 0, leftover: 0, pending: [] }, 2) // true
 */
export const isDone = (verdict: Verdict, objects: number): boolean =>
  verdict.converged === objects && verdict.duplicates === 0 && verdict.orphans === 0 && verdict.lostUpdates === 0 &&
  verdict.leftover === 0
