/**
 * One embedded API server for one measurement, in the harness process (the measured operator runs
 * in a child process, so the two do not share an event loop): a kubeconfig for plain HTTP on
 * loopback, the Widget CRD, a seeded fleet, and a count of the Widgets that are done, kept from the
 * server's own store so watching it costs no requests.
 */
import { ApiServer } from "@kubefx/apiserver"
import { Crd } from "@kubefx/kube"
import * as k8s from "@kubernetes/client-node"
import { Deferred, Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Raw from "./Raw.ts"
import * as Workload from "./Workload.ts"

export interface BenchServer {
  readonly server: ApiServer.ApiServer
  /** A kubeconfig for `server.url` (plain HTTP, `insecure-skip-tls-verify`, as client-node requires). */
  readonly kubeconfigPath: string
  /** A raw client for seeding and edits. */
  readonly raw: Raw.Raw
  /** How many Widgets are `Ready=True` for their current generation. */
  readonly readyCount: () => number
  /** Completes once `count` Widgets are done. */
  readonly awaitReady: (count: number) => Effect.Effect<void>
}

// Big enough that no watch in the run is dropped for falling behind, and no paginated list expires:
// the figures compare operators, not recoveries.
const historySize = 200_000

const kubeconfig = (server: ApiServer.ApiServer): string => {
  const config = new k8s.KubeConfig()
  config.loadFromOptions({
    clusters: [{ name: "bench", server: server.url, skipTLSVerify: true }],
    users: [{ name: "bench", token: server.token }],
    contexts: [{ name: "bench", cluster: "bench", user: "bench", namespace: Workload.namespace }],
    currentContext: "bench"
  })
  return config.exportConfig()
}

/**
 * Starts a server in the current scope with the Widget CRD and the `bench` namespace.
 *
 * @example
 * import { Effect } from "effect"
 * import * as BenchServer from "./BenchServer.ts"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const bench = yield* BenchServer.make
 *   yield* Effect.promise(() => BenchServer.seed(bench, 100))
 * }))
 */
export const make = Effect.gen(function*() {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-bench-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  const server = yield* ApiServer.make({ port: 0, historySize, watchBufferSize: historySize }).pipe(Effect.orDie)
  const kubeconfigPath = join(dir, "kubeconfig")
  writeFileSync(kubeconfigPath, kubeconfig(server), { mode: 0o600 })
  const raw = Raw.make(server.url, server.token, 32)
  yield* Effect.addFinalizer(() => Effect.sync(raw.close))

  const ready = new Set<string>()
  const waiters: Array<{ readonly count: number; readonly done: Deferred.Deferred<void> }> = []
  const release = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (ready.size >= waiters[i]!.count) Deferred.doneUnsafe(waiters.splice(i, 1)[0]!.done, Effect.void)
    }
  }
  const unsubscribe = server.store.subscribe((event) => {
    if (event.object.kind !== Workload.Widget.kind) return
    if (event.type !== "DELETED" && Workload.isReady(event.object as Workload.WidgetLike)) ready.add(event.key)
    else ready.delete(event.key)
    if (waiters.length > 0) release()
  })
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))

  yield* Effect.promise(async () => {
    await raw.ok("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: Workload.namespace } })
    await raw.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Crd.make(Workload.Widget))
    // The CRD controller serves the kind a moment after the create.
    for (let attempt = 0; ; attempt++) {
      const reply = await raw.request("GET", `${Workload.apiPath}/namespaces/${Workload.namespace}/widgets?limit=1`)
      if (reply.status === 200) break
      if (attempt > 200) throw new Error(`widgets are not served: ${reply.status} ${reply.body}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })

  const bench: BenchServer = {
    server,
    kubeconfigPath,
    raw,
    readyCount: () => ready.size,
    awaitReady: (count) =>
      Effect.suspend(() => {
        if (ready.size >= count) return Effect.void
        const done = Deferred.makeUnsafe<void>()
        waiters.push({ count, done })
        return Deferred.await(done)
      })
  }
  return bench
})

/**
 * Creates Widgets `0 .. count-1`; with `reconciled`, also gives each a ConfigMap and a Ready status,
 * as an operator would have, so cached Widgets carry the managedFields of two writers (creator, status).
 *
 * @example
 * import * as BenchServer from "./BenchServer.ts"
 * declare const bench: BenchServer.BenchServer
 * await BenchServer.seed(bench, 1000, { reconciled: true })
 */
export const seed = async (bench: BenchServer, count: number, options: { readonly reconciled?: boolean } = {}) => {
  const indexes = Array.from({ length: count }, (_, i) => i)
  const collection = `${Workload.apiPath}/namespaces/${Workload.namespace}/widgets`
  await Raw.forEach(indexes, 32, async (index) => {
    const created = JSON.parse((await bench.raw.ok("POST", `${collection}?fieldManager=kubectl-create`, Workload.widget(index))).body)
    if (options.reconciled !== true) return
    const configMap = Workload.configMap(created)
    await bench.raw.ok(
      "PATCH",
      `/api/v1/namespaces/${Workload.namespace}/configmaps/${configMap.metadata.name}?fieldManager=seed&force=true`,
      configMap,
      Raw.applyPatch
    )
    await bench.raw.ok("PATCH", `${collection}/${created.metadata.name}/status?fieldManager=seed&force=true`, {
      apiVersion: Workload.Widget.apiVersion,
      kind: Workload.Widget.kind,
      metadata: { name: created.metadata.name, namespace: Workload.namespace },
      status: Workload.readyStatus(created, new Date())
    }, Raw.applyPatch)
  })
}
