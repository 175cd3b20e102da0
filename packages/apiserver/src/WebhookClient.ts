/**
 * The API server's client for webhooks (admission and conversion): a JSON POST over HTTPS to a
 * webhook's `clientConfig` (its `url`, or a Service's DNS name), trusting its `caBundle`, with
 * `?timeout=<n>s` and a deadline, failing with Go's net/http wording for what went wrong.
 */
import { Effect, Result } from "effect"
import { request as httpsRequest } from "node:https"
import { Json, KubeObject } from "@kubefx/schema/internal"

/**
 * The URL a clientConfig names, or undefined when it names none.
 *
 * @example
 * import * as WebhookClient from "./WebhookClient.ts"
 * WebhookClient.urlOf({ service: { name: "hooks", namespace: "ops", path: "/convert" } }) // "https://hooks.ops.svc:443/convert"
 */
export const urlOf = (config: KubeObject.KubeObject): string | undefined => {
  if (typeof config.url === "string") return config.url
  const service = KubeObject.record(config.service)
  if (typeof service.name !== "string") return undefined
  const port = typeof service.port === "number" ? service.port : 443
  return `https://${service.name}.${service.namespace}.svc:${port}${typeof service.path === "string" ? service.path : ""}`
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

/** Go's net/http wording for a failed POST. */
const transportError = (url: string, error: NodeJS.ErrnoException): string => {
  const target = new URL(url)
  const host = `${target.hostname}:${target.port || "443"}`
  const what = error.code === "ECONNREFUSED"
    ? `dial tcp ${host}: connect: connection refused`
    : error.code === "ENOTFOUND" || error.code === "EAI_AGAIN"
    ? `dial tcp: lookup ${target.hostname}: no such host`
    : error.code === "DEPTH_ZERO_SELF_SIGNED_CERT" || error.code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" || error.code === "SELF_SIGNED_CERT_IN_CHAIN"
    ? "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    : error.code === "ERR_TLS_CERT_ALTNAME_INVALID"
    ? `tls: failed to verify certificate: x509: certificate is valid for other names, not ${target.hostname}`
    : error.message
  return `Post "${url}": ${what}`
}

/**
 * POSTs `body` (JSON) and answers the parsed JSON reply; fails with the reason, worded as
 * kube-apiserver words it after "failed to call webhook: " (or "could not get REST client").
 *
 * @example
 * import * as WebhookClient from "./WebhookClient.ts"
 * const reply = WebhookClient.post({ url: "https://127.0.0.1:9443/validate" }, 10, "{}")
 */
export const post = (config: KubeObject.KubeObject, timeoutSeconds: number, body: string): Effect.Effect<unknown, string> => {
  const base = urlOf(config)
  if (base === undefined) return Effect.fail("could not get REST client: no clientConfig url or service")
  const url = `${base}${base.includes("?") ? "&" : "?"}timeout=${timeoutSeconds}s`
  const caBundle = config.caBundle
  return Effect.callback<unknown, string>((resume, signal) => {
    const timer = setTimeout(() => {
      request.destroy()
      resume(Effect.fail(`failed to call webhook: Post "${url}": context deadline exceeded`))
    }, timeoutSeconds * 1000)
    const request = httpsRequest(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
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
      if (!signal.aborted) resume(Effect.fail(`failed to call webhook: ${transportError(url, error)}`))
    })
    request.end(body)
    return Effect.sync(() => {
      clearTimeout(timer)
      request.destroy()
    })
  })
}
