/**
 * In-process pieces of a scenario, each living in the current scope: the embedded API server with
 * its kubeconfig in a temporary directory and a client for it, the examples' fake object store on
 * a free loopback port, a namespace, and a logger that keeps the operator's log lines out of the
 * test output while counting them.
 */
import { ApiServer, type Faults } from "@kubefx/apiserver"
import { ObjectStore, objectStoreLayer } from "@kubefx/example-buckets"
import { Builtins, Crd, Kube } from "@kubefx/kube"
import { Context, Effect, Layer, Logger, References } from "effect"
import { HttpServer } from "effect/http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * A temporary directory, removed when the scope closes.
 *
 * @example
 * import * as Cluster from "./Cluster.ts"
 * const dir = Cluster.tempDir("kubefx-crash-")
 */
export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), prefix))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/**
 * A client from a kubeconfig file, for the life of the scope.
 *
 * @example
 * import * as Cluster from "./Cluster.ts"
 * const kube = Cluster.client("/tmp/kubefx/kubeconfig")
 */
export const client = (kubeconfig: string) =>
  Effect.map(Layer.build(Kube.layer({ _tag: "File", path: kubeconfig })), (context) => Context.get(context, Kube.Kube))

/**
 * The embedded API server on a free port, and a client for it.
 *
 * @example
 * import * as Cluster from "./Cluster.ts"
 * const cluster = Cluster.embedded({ historySize: 1000 })
 */
export const embedded = (options: Omit<ApiServer.Options, "port" | "kubeconfigPath"> = {}) =>
  Effect.gen(function*() {
    const dir = yield* tempDir("kubefx-reliability-")
    const kubeconfig = join(dir, "kubeconfig")
    const server = yield* ApiServer.make({ bookmarkIntervalMs: 1000, ...options, port: 0, kubeconfigPath: kubeconfig })
    const kube = yield* client(kubeconfig)
    return { server, kube, kubeconfig }
  })

/**
 * The fake object store on a free loopback port, and a client for it.
 *
 * @example
 * import * as Cluster from "./Cluster.ts"
 * const store = Cluster.objectStore("10 millis")
 */
export const objectStore = (latency: `${number} millis`) =>
  Effect.gen(function*() {
    // Without its "Listening on" line in the test output.
    const context = yield* Layer.build(ObjectStore.server({ latency })).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))
    const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
    const store = Context.get(yield* Layer.build(objectStoreLayer(url)), ObjectStore.ObjectStore)
    return { url, store }
  })

/**
 * Creates a namespace and installs CRDs, through `kube`.
 *
 * @example
 * import { Bucket } from "@kubefx/example-buckets"
 * import * as Cluster from "./Cluster.ts"
 * const ready = Cluster.prepare("faults", [Bucket])
 */
export const prepare = (namespace: string, resources: ReadonlyArray<Crd.CustomResource>) =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    yield* Crd.install(resources, { fieldManager: "reliability" })
    yield* kube.create(Builtins.Namespace, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })
  })

/** Log lines by level, lines matching each watched pattern, and the last few errors. */
export interface LogCounts {
  readonly byLevel: Record<string, number>
  readonly matched: Record<string, number>
  readonly lastErrors: Array<string>
}

/**
 * A logger that only counts: the operator's expected errors stay out of the test output, and the
 * counts (lines by level, lines matching `patterns`, the last few error messages) go to the report.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Cluster from "./Cluster.ts"
 * const { counts, layer } = Cluster.countingLogger({ relists: /relisting/ })
 * const quiet = Effect.logError("boom").pipe(Effect.provide(layer))
 */
export const countingLogger = (patterns: Readonly<Record<string, RegExp>> = {}) => {
  const counts: LogCounts = { byLevel: {}, matched: {}, lastErrors: [] }
  const logger = Logger.make((options) => {
    const level = options.logLevel
    const text = Array.isArray(options.message) ? options.message.map(String).join(" ") : String(options.message)
    counts.byLevel[level] = (counts.byLevel[level] ?? 0) + 1
    for (const [name, pattern] of Object.entries(patterns)) {
      if (pattern.test(text)) counts.matched[name] = (counts.matched[name] ?? 0) + 1
    }
    if (level === "Error" || level === "Fatal") {
      counts.lastErrors.push(text.slice(0, 300))
      if (counts.lastErrors.length > 5) counts.lastErrors.shift()
    }
  })
  return { counts, layer: Logger.layer([logger]) }
}

/**
 * Counts the faults an in-process server injects, by HTTP status ("500", "503", "409", "429") and
 * "delayed", and all "requests", by wrapping its decision: the figures are what the server did,
 * not what was asked.
 *
 * @example
 * import * as Cluster from "./Cluster.ts"
 * declare const server: import("@kubefx/apiserver").ApiServer.ApiServer
 * const injected = Cluster.countInjected(server.faults)
 */
export const countInjected = (faults: Faults.Faults): Record<string, number> => {
  const counts: Record<string, number> = {}
  const add = (kind: string) => {
    counts[kind] = (counts[kind] ?? 0) + 1
  }
  const decide = faults.decide
  ;(faults as { decide: Faults.Faults["decide"] }).decide = (request) => {
    const decision = decide(request)
    add("requests")
    if (decision.error !== undefined) add(String(decision.error.code))
    if (decision.delayMs > 0) add("delayed")
    return decision
  }
  return counts
}
