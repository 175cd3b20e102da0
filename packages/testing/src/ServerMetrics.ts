/**
 * What the test cluster's API server counted, read from its `/metrics` under kube-apiserver's
 * names: requests by verb, resource, subresource and code (`apiserver_request_total`), the watches
 * open (`apiserver_longrunning_requests`), the events sent to watchers by kind
 * (`apiserver_watch_events_total`) and the objects stored (`apiserver_storage_objects`). What a test
 * holds an operator's cost to: the requests a change costs, the watches it keeps open.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { TestCluster } from "./TestCluster.ts"

/** One series: its name, labels and value. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/**
 * The samples of a Prometheus text exposition (comments and blank lines skipped).
 *
 * @example
 * import { ServerMetrics } from "@kubefx/testing"
 * ServerMetrics.parse('apiserver_request_total{verb="LIST",resource="pods"} 3\n')
 * // [{ name: "apiserver_request_total", labels: { verb: "LIST", resource: "pods" }, value: 3 }]
 */
export const parse = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").flatMap((raw): ReadonlyArray<Sample> => {
    const match = line.exec(raw)
    if (match === null || raw.startsWith("#")) return []
    const labels: Record<string, string> = {}
    for (const [, key, value] of (match[2] ?? "").matchAll(label)) {
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => c === "n" ? "\n" : c)
    }
    return [{ name: match[1]!, labels, value: Number(match[3]) }]
  })

/**
 * The server's samples now.
 *
 * @example
 * import { Effect } from "effect"
 * import { ServerMetrics } from "@kubefx/testing"
 * const watchesOpen = Effect.map(ServerMetrics.scrape, (samples) => ServerMetrics.sum(samples, "apiserver_longrunning_requests"))
 */
export const scrape: Effect.Effect<ReadonlyArray<Sample>, never, TestCluster> = Effect.flatMap(
  TestCluster,
  (cluster) => Effect.map(cluster.metricsText, parse)
)

/**
 * The sum of the series of `name` whose labels include `labels`: 0 when none does.
 *
 * @example
 * import { ServerMetrics } from "@kubefx/testing"
 * declare const samples: ReadonlyArray<ServerMetrics.Sample>
 * ServerMetrics.sum(samples, "apiserver_request_total", { resource: "widgets", subresource: "status", verb: "APPLY" })
 */
export const sum = (samples: ReadonlyArray<Sample>, name: string, labels: Readonly<Record<string, string>> = {}): number => {
  let total = 0
  for (const sample of samples) {
    if (sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) total += sample.value
  }
  return total
}

/**
 * How much the series of `name` with `labels` grew while `effect` ran, beside its result: the
 * requests a change cost, say.
 *
 * @example
 * import { Effect } from "effect"
 * import { ServerMetrics } from "@kubefx/testing"
 * declare const change: Effect.Effect<void>
 * // [undefined, the applies to widgets the change cost]
 * const measured = ServerMetrics.counting(change, "apiserver_request_total", { resource: "widgets", verb: "APPLY" })
 */
export const counting = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): Effect.Effect<readonly [A, number], E, R | TestCluster> =>
  Effect.gen(function*() {
    const before = sum(yield* scrape, name, labels)
    const result = yield* effect
    return [result, sum(yield* scrape, name, labels) - before] as const
  })
