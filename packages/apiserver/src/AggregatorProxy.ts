/**
 * kube-aggregator's proxy to an extension API server: a request for a group version an available
 * APIService serves from a Service is sent on to the Service's endpoint (a loopback one here), as
 * the caller, with the caller's credentials replaced by the front-proxy headers (`X-Remote-User`,
 * `X-Remote-Group`, `X-Remote-Extra-*`), over TLS trusting the APIService's CA bundle; the answer,
 * streamed (a watch included), is the client's. Unreachable, it is kube-aggregator's 503.
 */
import { Effect, Result, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import type { IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import type * as Authentication from "./Authentication.ts"
import type * as Store from "./Store.ts"
import * as WebhookClient from "./WebhookClient.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** What the proxy forwards of the client's request. */
export interface Forwarded {
  readonly method: string
  /** The path and query, as the client sent them. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Uint8Array | undefined
  readonly user: Authentication.User
}

// Hop-by-hop headers and the caller's own credentials never reach the extension server.
const dropped = new Set(["authorization", "connection", "host", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"])

/**
 * kube-aggregator's answer for a group version whose APIService is not available: a plain 503.
 *
 * @example
 * import * as AggregatorProxy from "./AggregatorProxy.ts"
 * AggregatorProxy.unavailable().status // 503
 */
export const unavailable = (): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text("service unavailable\n", { status: 503, headers: { "x-content-type-options": "nosniff" } })

/**
 * The headers sent on: the client's, without its credentials, impersonation or hop-by-hop headers,
 * with the front-proxy identity of the authenticated user.
 *
 * @example
 * import * as AggregatorProxy from "./AggregatorProxy.ts"
 * AggregatorProxy.headersFor({ authorization: "Bearer t", accept: "application/json" }, { username: "alice", groups: ["dev"] })
 * // { accept: "application/json", "X-Remote-User": "alice", "X-Remote-Group": ["dev"] }
 */
export const headersFor = (
  headers: Readonly<Record<string, string | undefined>>,
  user: Authentication.User
): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (value === undefined || dropped.has(lower) || lower.startsWith("impersonate-") || lower.startsWith("x-remote-")) continue
    out[name] = value
  }
  out["X-Remote-User"] = user.username
  out["X-Remote-Group"] = [...user.groups]
  for (const [key, values] of Object.entries(user.extra ?? {})) out[`X-Remote-Extra-${encodeURIComponent(key)}`] = [...values]
  return out
}

/**
 * Sends the request on to the APIService's Service, answering what the extension server answers
 * (503 when it cannot be reached).
 *
 * @example
 * import * as AggregatorProxy from "./AggregatorProxy.ts"
 * declare const store: import("./Store.ts").Store
 * declare const metrics: import("@kubefx/schema/internal").KubeObject.KubeObject
 * declare const forwarded: AggregatorProxy.Forwarded
 * const answer = AggregatorProxy.forward(store, metrics, forwarded)
 */
export const forward = (
  store: Store.Store,
  apiService: KubeObject.KubeObject,
  forwarded: Forwarded
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const spec = KubeObject.record(apiService.spec)
  const service = KubeObject.record(spec.service)
  const namespace = String(service.namespace ?? "")
  const name = String(service.name ?? "")
  const resolved = WebhookClient.resolver(store)(namespace, name, KubeObject.number(service.port, 443))
  if (Result.isFailure(resolved)) return Effect.succeed(unavailable())
  const dial = resolved.success
  const caBundle = typeof spec.caBundle === "string" ? Buffer.from(spec.caBundle, "base64").toString("utf8") : undefined
  return Effect.callback<IncomingMessage | undefined>((resume) => {
    const request = httpsRequest({
      hostname: dial.host,
      port: dial.port,
      path: forwarded.url,
      method: forwarded.method,
      servername: `${name}.${namespace}.svc`,
      rejectUnauthorized: spec.insecureSkipTLSVerify !== true,
      ...(caBundle === undefined ? {} : { ca: caBundle }),
      headers: headersFor(forwarded.headers, forwarded.user)
    }, (response) => resume(Effect.succeed(response)))
    request.on("error", () => resume(Effect.succeed(undefined)))
    request.end(forwarded.body === undefined || forwarded.body.length === 0 ? undefined : Buffer.from(forwarded.body))
    return Effect.sync(() => request.destroy())
  }).pipe(
    Effect.map((response) => {
      if (response === undefined) return unavailable()
      const headers: Record<string, string> = {}
      for (const [key, value] of Object.entries(response.headers)) {
        if (value === undefined || dropped.has(key) || key === "content-length" || key === "content-type") continue
        headers[key] = Array.isArray(value) ? value.join(", ") : value
      }
      const body = Stream.fromAsyncIterable(response as AsyncIterable<Buffer>, (error) => error).pipe(
        Stream.map((chunk) => new Uint8Array(chunk)),
        Stream.orDie
      )
      return HttpServerResponse.stream(body, {
        status: response.statusCode ?? 502,
        headers,
        ...(typeof response.headers["content-type"] === "string" ? { contentType: response.headers["content-type"] } : {})
      })
    })
  )
}
