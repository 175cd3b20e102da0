/**
 * kube-aggregator's APIServices, running in the server: a local APIService for every group version
 * the server serves itself (its built-in groups on start, a custom resource's as its CRD serves it),
 * and the availability of every APIService backed by a Service, checked as kube-aggregator checks it
 * (the Service, its port, its endpoints, then a discovery request to it) and kept in its
 * `Available` condition. A remote group is listed in discovery; its requests are answered 503
 * while it is not available, and sent on by {@link AggregatorProxy} once it is.
 */
import { Duration, Effect, Result } from "effect"
import { request as httpsRequest } from "node:https"
import * as Discovery from "./Discovery.ts"
import * as Rest from "./Rest.ts"
import type * as Status from "./Status.ts"
import * as StatusConditions from "./StatusConditions.ts"
import type * as Store from "./Store.ts"
import * as WebhookClient from "./WebhookClient.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

const storage = "apiservices.apiregistration.k8s.io"
const record = KubeObject.record

/** The label of the APIServices the server manages itself: `onstart` for built-in groups, `true` for CRDs'. */
export const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "kube-apiserver",
  fieldValidation: "Ignore"
}

/**
 * The local APIService of a group version the server serves: `<version>.<group>`, no Service; a
 * CRD's at the priorities kube's CRD registration gives them (1000, 100).
 *
 * @example
 * import * as ApiServices from "./ApiServices.ts"
 * ApiServices.local("apps", "v1", false).spec // { group: "apps", version: "v1", groupPriorityMinimum: 17800, versionPriority: 15 }
 */
export const local = (group: string, version: string, custom: boolean): KubeObject.KubeObject & { readonly spec: Record<string, unknown> } => {
  const [groupPriorityMinimum, versionPriority] = Discovery.priority(group, version, custom)
  return {
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name: `${version}.${group}`, labels: { [automanagedLabel]: custom ? "true" : "onstart" } },
    spec: { group, version, groupPriorityMinimum, versionPriority }
  }
}

const serviceOf = (apiService: KubeObject.KubeObject) => {
  const service = record(record(apiService.spec).service)
  return typeof service.name === "string"
    ? { namespace: String(service.namespace ?? ""), name: service.name, port: KubeObject.number(service.port, 443) }
    : undefined
}

/**
 * The APIService that serves `group`/`version` from a Service, if one does.
 *
 * @example
 * import * as ApiServices from "./ApiServices.ts"
 * declare const store: import("./Store.ts").Store
 * const metrics = ApiServices.remote(store, "metrics.k8s.io", "v1beta1")
 */
export const remote = (store: Store.Store, group: string, version: string): KubeObject.KubeObject | undefined => {
  const found = store.get(storage, "", `${version}.${group}`)
  return found !== undefined && serviceOf(found) !== undefined ? found : undefined
}

/**
 * Whether an APIService's `Available` condition holds.
 *
 * @example
 * import * as ApiServices from "./ApiServices.ts"
 * ApiServices.available({ status: { conditions: [{ type: "Available", status: "True" }] } }) // true
 */
export const available = (apiService: KubeObject.KubeObject): boolean =>
  KubeObject.records(record(apiService.status).conditions).some((c) => c.type === "Available" && c.status === "True")

/** What a remote APIService's server last listed in its discovery, and whether that is current. */
export interface Discovered {
  readonly resources: ReadonlyArray<unknown>
  readonly current: boolean
}

/**
 * The group versions served by APIServices from Services, for discovery: each with its
 * priorities and what its server's discovery last listed (`discovered`, by APIService name).
 *
 * @example
 * import * as ApiServices from "./ApiServices.ts"
 * declare const store: import("./Store.ts").Store
 * const versions = ApiServices.remoteVersions(store, () => undefined)
 */
export const remoteVersions = (store: Store.Store, discovered: (name: string) => Discovered | undefined): ReadonlyArray<Discovery.RemoteVersion> =>
  store.list(storage, undefined).flatMap((apiService) => {
    const spec = record(apiService.spec)
    if (serviceOf(apiService) === undefined || typeof spec.group !== "string" || typeof spec.version !== "string") return []
    const found = discovered(KubeObject.meta(apiService).name ?? "")
    return [{
      group: spec.group,
      version: spec.version,
      groupPriority: KubeObject.number(spec.groupPriorityMinimum),
      versionPriority: KubeObject.number(spec.versionPriority),
      resources: found?.resources ?? [],
      current: found?.current ?? false
    }]
  })

interface Verdict {
  readonly status: "True" | "False"
  readonly reason: string
  readonly message: string
  /** The resources a passed discovery request listed. */
  readonly resources?: ReadonlyArray<unknown>
}

// The `resources` of an APIResourceList body; undefined for anything else.
const listedResources = (body: string): ReadonlyArray<unknown> | undefined => {
  try {
    const parsed: unknown = JSON.parse(body)
    const resources = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>).resources : undefined
    return Array.isArray(resources) ? resources : undefined
  } catch {
    return undefined
  }
}

// A discovery document is small; a server sending more is not read further.
const maxDiscoveryBytes = 4 * 1024 * 1024

// A discovery GET to the Service, as the availability controller sends it; the error as it words it.
const discover = (apiService: KubeObject.KubeObject, dial: { readonly host: string; readonly port: number }, url: string): Effect.Effect<Verdict> => {
  const spec = record(apiService.spec)
  const service = serviceOf(apiService)!
  const caBundle = typeof spec.caBundle === "string" ? Buffer.from(spec.caBundle, "base64").toString("utf8") : undefined
  return Effect.callback<Verdict>((resume, signal) => {
    const failed = (why: string): Verdict => ({ status: "False", reason: "FailedDiscoveryCheck", message: `failing or missing response from ${url}: ${why}` })
    const request = httpsRequest({
      hostname: dial.host,
      port: dial.port,
      path: new URL(url).pathname,
      method: "GET",
      servername: `${service.name}.${service.namespace}.svc`,
      rejectUnauthorized: spec.insecureSkipTLSVerify !== true,
      ...(caBundle === undefined ? {} : { ca: caBundle }),
      timeout: 5000,
      signal
    }, (response) => {
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size <= maxDiscoveryBytes) chunks.push(chunk)
      })
      response.on("end", () => {
        const code = response.statusCode ?? 0
        const resources = size <= maxDiscoveryBytes ? listedResources(Buffer.concat(chunks).toString("utf8")) : undefined
        resume(Effect.succeed(code >= 200 && code < 300
          ? { status: "True", reason: "Passed", message: "all checks passed", ...(resources === undefined ? {} : { resources }) }
          : { status: "False", reason: "FailedDiscoveryCheck", message: `failing or missing response from ${url}: bad status from ${url}: ${code}` }))
      })
    })
    request.on("timeout", () => request.destroy(new Error("context deadline exceeded")))
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (signal.aborted) return
      resume(Effect.succeed(failed(WebhookClient.transportError(url, dial, error, "Get"))))
    })
    request.end()
    return Effect.sync(() => request.destroy())
  })
}

/**
 * Whether an APIService is available, as kube-aggregator's availability controller finds it: a
 * local one always; a remote one once its Service exists, listens on its port, has endpoints on
 * it, and answers a discovery request at its address (a connection to the Service's cluster IP is
 * refused unless a loopback endpoint serves it).
 *
 * @example
 * import * as ApiServices from "./ApiServices.ts"
 * declare const store: import("./Store.ts").Store
 * declare const metrics: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const verdict = ApiServices.check(store, metrics)
 */
export const check = (store: Store.Store, apiService: KubeObject.KubeObject): Effect.Effect<Verdict> => {
  const service = serviceOf(apiService)
  if (service === undefined) return Effect.succeed({ status: "True", reason: "Local", message: "Local APIServices are always available" })
  const { namespace, name, port } = service
  const found = store.get("services", namespace, name)
  if (found === undefined) return Effect.succeed({ status: "False", reason: "ServiceNotFound", message: `service/${name} in "${namespace}" is not present` })
  const spec = record(found.spec)
  const servicePort = spec.type === "ExternalName" ? undefined : KubeObject.records(spec.ports).find((p) => p.port === port)
  if (spec.type !== "ExternalName") {
    if (servicePort === undefined) {
      return Effect.succeed({ status: "False", reason: "ServicePortError", message: `service/${name} in "${namespace}" is not listening on port ${port}` })
    }
    const portName = typeof servicePort.name === "string" ? servicePort.name : ""
    const endpoints = store.get("endpoints", namespace, name)
    if (endpoints === undefined) return Effect.succeed({ status: "False", reason: "EndpointsNotFound", message: `cannot find endpoints for service/${name} in "${namespace}"` })
    const active = KubeObject.records(endpoints.subsets).some((s) =>
      KubeObject.records(s.addresses).length > 0 && KubeObject.records(s.ports).some((p) => (typeof p.name === "string" ? p.name : "") === portName))
    if (!active) {
      return Effect.succeed({ status: "False", reason: "MissingEndpoints", message: `endpoints for service/${name} in "${namespace}" have no addresses with port name "${portName}"` })
    }
  }
  const apiSpec = record(apiService.spec)
  const host = spec.type === "ExternalName" ? String(spec.externalName ?? "") : String(spec.clusterIP ?? "")
  const url = `https://${host}:${port}/apis/${String(apiSpec.group)}/${String(apiSpec.version)}`
  const resolved = WebhookClient.resolver(store)(namespace, name, port)
  if (Result.isFailure(resolved)) {
    return Effect.succeed({ status: "False", reason: "FailedDiscoveryCheck", message: `failing or missing response from ${url}: Get "${url}": ${resolved.failure}` })
  }
  return discover(apiService, resolved.success, url)
}

/** The controller's handle. */
export interface ApiServices {
  /** Completes when nothing is queued. */
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
  /** What a remote APIService's server last listed in its discovery, by APIService name. */
  readonly discovered: (name: string) => Discovered | undefined
}

type Key = { readonly _tag: "Local" } | { readonly _tag: "Check"; readonly name: string }

/**
 * Starts the APIService controllers over `env.store` in the current scope: the local APIServices
 * kept to what the registry serves, each remote one's availability checked on its changes, its
 * Service's and endpoints' changes, and every 30 seconds.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ApiServices from "./ApiServices.ts"
 * declare const env: import("./Rest.ts").Env
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const controller = yield* ApiServices.make(env)
 *   yield* controller.idle
 * }))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env) {
  const { store } = env
  const resource = env.registry.byStorage(storage)[0]
  if (resource === undefined) return { idle: Effect.void, pending: () => 0, discovered: () => undefined } satisfies ApiServices
  // As kube-aggregator's discovery manager: a failed request keeps the last listing, stale.
  const discovered = new Map<string, Discovered>()
  const settled = (error: Status.ApiError) => error.code === 404 || error.code === 409

  // The local APIServices: one per group version served here, none for one no longer served.
  const syncLocal = Effect.gen(function*() {
    const wanted = new Map<string, KubeObject.KubeObject>()
    wanted.set("v1.", local("", "v1", false))
    for (const group of env.registry.groups()) {
      for (const version of group.versions) {
        const custom = env.registry.groupVersion(group.name, version).some((r) => r.type.custom)
        const made = local(group.name, version, custom)
        wanted.set(KubeObject.meta(made).name!, made)
      }
    }
    for (const [name, made] of wanted) {
      if (store.get(storage, "", name) === undefined) yield* Effect.ignore(Rest.create(env, resource, undefined, made, writeOptions))
    }
    for (const stored of store.list(storage, undefined)) {
      const name = KubeObject.meta(stored).name ?? ""
      if (KubeObject.meta(stored).labels?.[automanagedLabel] === "true" && !wanted.has(name)) {
        yield* Effect.ignore(Rest.remove(env, { resource, namespace: undefined, name }, { propagationPolicy: undefined, preconditions: undefined, dryRun: false }))
      }
    }
  })

  const checkOne = (name: string) =>
    Effect.gen(function*() {
      const apiService = store.get(storage, "", name)
      if (apiService === undefined) return
      const { resources, ...condition } = yield* check(store, apiService)
      if (serviceOf(apiService) === undefined) discovered.delete(name)
      else discovered.set(name, { resources: resources ?? discovered.get(name)?.resources ?? [], current: condition.status === "True" })
      yield* Rest.update(env, { resource, namespace: undefined, name }, "status", writeOptions, (current) => {
        const conditions = StatusConditions.set(record(current.status).conditions, [{ type: "Available", ...condition }], { keep: () => true })
        return Effect.succeed({ ...current, status: { ...record(current.status), conditions } })
      }).pipe(Effect.asVoid, Effect.catchIf(settled, () => Effect.void))
    })

  const worker = yield* Worker.make(
    "apiservices",
    (key: Key) => key._tag === "Local" ? syncLocal : checkOne(key.name),
    (key: Key) => key._tag === "Local" ? "local" : key.name
  )
  const checkAll = (namespace?: string) => {
    for (const apiService of store.list(storage, undefined)) {
      const service = serviceOf(apiService)
      if (namespace === undefined || service?.namespace === namespace) worker.enqueue({ _tag: "Check", name: KubeObject.meta(apiService).name ?? "" })
    }
  }
  const onEvent = (event: Store.Event) => {
    if (event.storage === storage) {
      const name = KubeObject.meta(event.object).name ?? ""
      if (event.type !== "DELETED") worker.enqueue({ _tag: "Check", name })
      else {
        discovered.delete(name)
        if (KubeObject.meta(event.object).labels?.[automanagedLabel] !== undefined) worker.enqueue({ _tag: "Local" })
      }
    } else if (event.storage === "customresourcedefinitions.apiextensions.k8s.io") {
      worker.enqueue({ _tag: "Local" })
    } else if (event.storage === "services" || event.storage === "endpoints" || event.storage === "endpointslices.discovery.k8s.io") {
      checkAll(event.namespace)
    }
  }
  worker.enqueue({ _tag: "Local" })
  checkAll()
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  // kube-aggregator checks again on its own, every 30 seconds.
  yield* Effect.forkScoped(Effect.forever(Effect.sleep(Duration.seconds(30)).pipe(Effect.andThen(Effect.sync(() => checkAll())))))
  return { idle: worker.idle, pending: worker.pending, discovered: (name: string) => discovered.get(name) } satisfies ApiServices
})
