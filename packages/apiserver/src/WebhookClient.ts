/**
 * The API server's client for webhooks (admission and conversion): a JSON POST over HTTPS to a
 * webhook's `clientConfig` (its `url`, or a Service), trusting its `caBundle`, with
 * `?timeout=<n>s` and a deadline, failing with Go's net/http wording for what went wrong. A
 * Service is reached as kube-apiserver reaches it, by its name in the store, with its endpoints
 * standing in for the cluster network: a test can point a Service's EndpointSlice (or Endpoints)
 * at a webhook server on the loopback, and the webhook is called at that address with the
 * Service's DNS name for TLS, as in a cluster.
 */
import { Effect, Result } from "effect"
import { request as httpsRequest } from "node:https"
import * as ServiceEndpoints from "./ServiceEndpoints.ts"
import type * as Store from "./Store.ts"
import { Json, KubeObject } from "@kubefx/schema/internal"

/** Where a Service's port is reached, or why it cannot be (in kube-apiserver's words). */
export type Resolver = (namespace: string, name: string, port: number) => Result.Result<{ readonly host: string; readonly port: number }, string>

/** A resolver that knows no Service (nothing is stored): each is `not found`. */
export const noServices: Resolver = (_, name) => Result.fail(`service "${name}" not found`)

const record = KubeObject.record

// Only an endpoint on this machine's loopback is dialled: a Pod's address (the workload
// simulator's 10.244.x.y) has nothing listening, as its process does not run.
const loopback = (address: unknown): address is string =>
  typeof address === "string" && (address.startsWith("127.") || address === "::1")
const list = KubeObject.records

/**
 * kube-apiserver's cluster-IP service resolver over the store: the Service must exist, have a
 * cluster IP and the port; its first ready loopback endpoint (EndpointSlices labelled with its
 * name, then its Endpoints) on the port's name is the address dialled. Without one, the connection
 * to the cluster IP is refused, as a cluster's kube-proxy refuses it when nothing serves.
 *
 * @example
 * import * as WebhookClient from "./WebhookClient.ts"
 * declare const store: import("./Store.ts").Store
 * WebhookClient.resolver(store)("ops", "hooks", 443) // Result: { host: "127.0.0.1", port: 9443 }, or why not
 */
export const resolver = (store: Store.Store): Resolver => (namespace, name, port) => {
  const service = store.get("services", namespace, name)
  if (service === undefined) return Result.fail(`service "${name}" not found`)
  const spec = record(service.spec)
  if (spec.type === "ExternalName") return Result.succeed({ host: String(spec.externalName ?? ""), port })
  if (spec.clusterIP === "None") return Result.fail(`cannot route to service with ClusterIP "None"`)
  const servicePort = list(spec.ports).find((p) => p.port === port)
  if (servicePort === undefined) return Result.fail(`no service port ${port} found for service "${name}"`)
  const portName = typeof servicePort.name === "string" ? servicePort.name : ""
  const named = (p: Readonly<Record<string, unknown>>) => (typeof p.name === "string" ? p.name : "") === portName && typeof p.port === "number"
  for (const slice of store.list("endpointslices.discovery.k8s.io", namespace)) {
    if (KubeObject.meta(slice).labels?.[ServiceEndpoints.serviceNameLabel] !== name) continue
    const target = list(slice.ports).find(named)
    const endpoint = list(slice.endpoints).find((e) => record(e.conditions).ready !== false && Array.isArray(e.addresses) && e.addresses.some(loopback))
    const address = Array.isArray(endpoint?.addresses) ? endpoint.addresses.find(loopback) : undefined
    if (target !== undefined && typeof address === "string") return Result.succeed({ host: address, port: target.port as number })
  }
  const endpoints = store.get("endpoints", namespace, name)
  for (const subset of list(endpoints?.subsets)) {
    const target = list(subset.ports).find(named)
    const address = list(subset.addresses).map((a) => a.ip).find(loopback)
    if (target !== undefined && typeof address === "string") return Result.succeed({ host: address, port: target.port as number })
  }
  return Result.fail(`dial tcp ${String(spec.clusterIP ?? "")}:${port}: connect: connection refused`)
}

/**
 * The URL a clientConfig names, or undefined when it names none. Without a path it is the root,
 * `/`, as client-go's REST client makes it.
 *
 * @example
 * import * as WebhookClient from "./WebhookClient.ts"
 * WebhookClient.urlOf({ service: { name: "hooks", namespace: "ops", path: "/convert" } }) // "https://hooks.ops.svc:443/convert"
 * WebhookClient.urlOf({ service: { name: "hooks", namespace: "ops" } }) // "https://hooks.ops.svc:443/"
 */
export const urlOf = (config: KubeObject.KubeObject): string | undefined => {
  if (typeof config.url === "string") return /^[a-z][a-z0-9+.-]*:\/\/[^/]*$/i.test(config.url) ? `${config.url}/` : config.url
  const service = KubeObject.record(config.service)
  if (typeof service.name !== "string") return undefined
  const port = typeof service.port === "number" ? service.port : 443
  return `https://${service.name}.${service.namespace}.svc:${port}${typeof service.path === "string" && service.path !== "" ? service.path : "/"}`
}

/**
 * An object's group, version and kind as Go prints a GroupVersionKind (`group/v1, Kind=Widget`),
 * for the webhook errors that name what they got.
 *
 * @example
 * import * as WebhookClient from "./WebhookClient.ts"
 * WebhookClient.gvkOf({ apiVersion: "demo.kubefx.dev/v1", kind: "Widget" }) // "demo.kubefx.dev/v1, Kind=Widget"
 */
export const gvkOf = (object: KubeObject.KubeObject): string => {
  const apiVersion = String(object.apiVersion ?? "")
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/", 2) as [string, string] : ["", apiVersion]
  return `${group}/${version}, Kind=${String(object.kind ?? "")}`
}

/**
 * Go's net/http wording for a failed request (`method`, `Post` by default) to `url`, dialled at
 * `dial` (host and port).
 *
 * @example
 * import * as WebhookClient from "./WebhookClient.ts"
 * WebhookClient.transportError("https://10.96.0.9:443/x", { host: "10.96.0.9", port: 443 }, Object.assign(new Error("refused"), { code: "ECONNREFUSED" }), "Get")
 * // 'Get "https://10.96.0.9:443/x": dial tcp 10.96.0.9:443: connect: connection refused'
 */
export const transportError = (
  url: string,
  dial: { readonly host: string; readonly port: number },
  error: NodeJS.ErrnoException,
  method = "Post"
): string => {
  const target = new URL(url)
  const what = error.code === "ECONNREFUSED"
    ? `dial tcp ${dial.host}:${dial.port}: connect: connection refused`
    : error.code === "ENOTFOUND" || error.code === "EAI_AGAIN"
    ? `dial tcp: lookup ${dial.host}: no such host`
    : error.code === "DEPTH_ZERO_SELF_SIGNED_CERT" || error.code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" || error.code === "SELF_SIGNED_CERT_IN_CHAIN"
    ? "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    : error.code === "ERR_TLS_CERT_ALTNAME_INVALID"
    ? `tls: failed to verify certificate: x509: certificate is valid for other names, not ${target.hostname}`
    : error.message
  return `${method} "${url}": ${what}`
}

/**
 * POSTs `body` (JSON) and answers the parsed JSON reply; fails with the reason, worded as
 * kube-apiserver words it after "failed to call webhook: " (or "could not get REST client").
 *
 * @example
 * import * as WebhookClient from "./WebhookClient.ts"
 * const reply = WebhookClient.post({ url: "https://127.0.0.1:9443/validate" }, 10, "{}")
 */
export const post = (
  config: KubeObject.KubeObject,
  timeoutSeconds: number,
  body: string,
  resolve: Resolver = noServices
): Effect.Effect<unknown, string> => {
  const base = urlOf(config)
  if (base === undefined) return Effect.fail("could not get REST client: no clientConfig url or service")
  const url = `${base}${base.includes("?") ? "&" : "?"}timeout=${timeoutSeconds}s`
  const caBundle = config.caBundle
  const target = new URL(url)
  const service = typeof config.url === "string" ? undefined : record(config.service)
  const resolved = service === undefined
    ? Result.succeed({ host: target.hostname, port: Number(target.port || "443") })
    : resolve(String(service.namespace ?? ""), String(service.name ?? ""), Number(target.port || "443"))
  if (Result.isFailure(resolved)) return Effect.fail(`failed to call webhook: Post "${url}": ${resolved.failure}`)
  const dial = resolved.success
  // A Service is dialled at its endpoint, and verified by its DNS name, as kube-apiserver does.
  const routing = service === undefined ? {} : { hostname: dial.host, port: dial.port, servername: target.hostname, headers: { host: target.host } }
  return Effect.callback<unknown, string>((resume, signal) => {
    const timer = setTimeout(() => {
      request.destroy()
      resume(Effect.fail(`failed to call webhook: Post "${url}": context deadline exceeded`))
    }, timeoutSeconds * 1000)
    const request = httpsRequest(url, {
      method: "POST",
      ...routing,
      headers: { "content-type": "application/json", accept: "application/json", ...routing.headers },
      ...(typeof caBundle === "string" ? { ca: Buffer.from(caBundle, "base64").toString("utf8") } : {}),
      signal
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        clearTimeout(timer)
        const text = Buffer.concat(chunks).toString("utf8")
        const status = response.statusCode ?? 0
        if (status < 200 || status > 299) {
          return resume(Effect.fail(`failed to call webhook: an error on the server (${JSON.stringify(text.trim())}) has prevented the request from succeeding`))
        }
        const parsed = Json.parse(text)
        resume(Result.isSuccess(parsed) ? Effect.succeed(parsed.success) : Effect.fail(`failed to call webhook: ${parsed.failure}`))
      })
    })
    request.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (!signal.aborted) resume(Effect.fail(`failed to call webhook: ${transportError(url, dial, error)}`))
    })
    request.end(body)
    return Effect.sync(() => {
      clearTimeout(timer)
      request.destroy()
    })
  })
}
