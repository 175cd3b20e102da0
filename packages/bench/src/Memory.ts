/**
 * The memory scenario: the heap a kubefx Informer holds per cached Widget, with managedFields
 * stripped (the default), kept, and with the Widgets read as their metadata alone
 * (`Resource.metadataOnly`), each measured in a fresh child (`children/Memory.ts`) against the same
 * seeded server.
 */
import { Effect } from "effect"
import * as BenchServer from "./BenchServer.ts"
import * as Child from "./Child.ts"

/** What the memory child gets. */
export interface Input {
  readonly url: string
  readonly token: string
  readonly kubeconfigPath: string
  readonly objects: number
  /** What the informer caches: whole Widgets with managedFields stripped (the default) or kept, or their metadata alone. */
  readonly cache: "stripped" | "kept" | "metadata"
}

/** What it reports. */
export interface Report {
  readonly cachedObjects: number
  /** Once the watch has delivered a few events after the sync. */
  readonly bytesPerObject: number
  /** Right after the sync, while the list it synced from is still held. */
  readonly bytesPerObjectAtSync: number
}

/**
 * Seeds `objects` reconciled Widgets (two field managers each) and measures the three caches.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Memory from "./Memory.ts"
 * const report = Effect.runPromise(Memory.run({ objects: 10_000 }))
 */
export const run = (options: { readonly objects: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const bench = yield* BenchServer.make
    yield* Effect.promise(() => BenchServer.seed(bench, options.objects, { reconciled: true }))
    const measure = (cache: Input["cache"]) =>
      Effect.scoped(Effect.flatMap(
        Child.spawn(
          new URL("children/Memory.ts", import.meta.url),
          {
            url: bench.server.url,
            token: bench.server.token,
            kubeconfigPath: bench.kubeconfigPath,
            objects: options.objects,
            cache
          } satisfies Input,
          { nodeOptions: ["--expose-gc"] }
        ),
        (child) => child.result as Effect.Effect<Report, Error>
      ))
    const stripped = yield* measure("stripped")
    const kept = yield* measure("kept")
    const metadata = yield* measure("metadata")
    return { stripped, kept, metadata }
  }))
