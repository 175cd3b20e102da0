/**
 * The server's /metrics with kube-apiserver's names: every request counted by verb (as kube reports
 * verbs: LIST, WATCH, APPLY...), resource, scope and code, and timed (and its SLI latency); the sizes
 * of gets' and lists' answers and of watch events; discovery by its path, stored objects by
 * resource, requests in flight; each server its own counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, metricValue as value, watchEvents } from "./fixtures.ts"

let server: Testing.TestServer
let other: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
  other = await Testing.start()
})
afterAll(async () => {
  await server?.close()
  await other?.close()
})

describe("/metrics", () => {
  it("counts each request as kube-apiserver does, and the objects stored", async () => {
    await createNamespace(server, "metered")
    const cms = "/api/v1/namespaces/metered/configmaps"
    await server.request("POST", cms, { body: configMap("a") })
    await server.request("POST", cms, { body: configMap("b") })
    const listed = await server.request("GET", cms)
    await server.request("GET", `${cms}/a`)
    await server.request("GET", `${cms}/missing`)
    await server.request("PATCH", `${cms}/c?fieldManager=test`, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
      headers: { "content-type": "application/apply-patch+yaml" }
    })
    await watchEvents(server, `${cms}?watch=true&resourceVersion=0`, 3)
    await server.request("DELETE", `${cms}/a?dryRun=All`)
    await server.request("GET", "/apis")
    const reply = await server.request("GET", "/metrics")
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toContain("text/plain")
    const text = reply.text
    expect(text).toContain("# TYPE apiserver_request_total counter")
    const cm = { resource: "configmaps", group: "", version: "v1", component: "apiserver" }
    expect(value(text, "apiserver_request_total", { ...cm, verb: "POST", scope: "namespace", code: "201" })).toBe(2)
    expect(value(text, "apiserver_request_total", { ...cm, verb: "LIST", scope: "namespace", code: "200" })).toBe(1)
    expect(value(text, "apiserver_request_total", { ...cm, verb: "GET", scope: "resource", code: "200" })).toBe(1)
    expect(value(text, "apiserver_request_total", { ...cm, verb: "GET", scope: "resource", code: "404" })).toBe(1)
    expect(value(text, "apiserver_request_total", { ...cm, verb: "APPLY", scope: "resource", code: "201" })).toBe(1)
    expect(value(text, "apiserver_request_total", { ...cm, verb: "WATCH", scope: "namespace" })).toBe(1)
    expect(value(text, "apiserver_request_total", { ...cm, verb: "DELETE", dry_run: "All", code: "200" })).toBe(1)
    expect(value(text, "apiserver_request_total", { verb: "GET", subresource: "/apis", code: "200" })).toBe(1)
    expect(value(text, "apiserver_storage_objects", { resource: "configmaps" })).toBe(3)
    expect(value(text, "apiserver_storage_objects", { resource: "deployments.apps" })).toBe(0)
    // Each request timed, as kube's histogram: its count beside the counter's, its buckets cumulative.
    const timed = (labels: Record<string, string>) => value(text, "apiserver_request_duration_seconds_count", { ...cm, ...labels })
    expect(timed({ verb: "POST", scope: "namespace" })).toBe(2)
    expect(timed({ verb: "GET", scope: "resource" })).toBe(2)
    expect(timed({ verb: "APPLY", scope: "resource" })).toBe(1)
    expect(value(text, "apiserver_request_duration_seconds_bucket", { ...cm, verb: "POST", le: "+Inf" })).toBe(2)
    expect(value(text, "apiserver_request_duration_seconds_bucket", { ...cm, verb: "POST", le: "60" })).toBe(2)
    expect(value(text, "apiserver_request_duration_seconds_sum", { ...cm, verb: "POST" })).toBeGreaterThan(0)
    expect(text).toContain("# TYPE apiserver_request_duration_seconds histogram")
    // The SLI latency of every request but the watch (no webhooks here: the same counts), without a
    // dry-run label; the response sizes of gets and lists alone, the 404's Status included.
    const sli = (labels: Record<string, string>) => value(text, "apiserver_request_sli_duration_seconds_count", { ...cm, ...labels })
    expect(sli({ verb: "POST", scope: "namespace" })).toBe(2)
    expect(sli({ verb: "GET", scope: "resource" })).toBe(2)
    expect(sli({ verb: "WATCH" })).toBe(0)
    expect(sli({ verb: "DELETE" })).toBe(1)
    expect(text).not.toMatch(/apiserver_request_sli_duration_seconds_count\{[^}]*dry_run/)
    const sizes = (stat: "count" | "sum", labels: Record<string, string>) => value(text, `apiserver_response_sizes_${stat}`, { ...cm, ...labels })
    expect(sizes("count", { verb: "LIST" })).toBe(1)
    expect(sizes("count", { verb: "GET", scope: "resource" })).toBe(2)
    expect(sizes("sum", { verb: "LIST" })).toBe(Buffer.byteLength(listed.text))
    expect(sizes("count", { verb: "POST" })).toBe(0)
    expect(sizes("count", { verb: "APPLY" })).toBe(0)
    // Nothing is being served now but this scrape; a watch is never counted in flight.
    expect(value(text, "apiserver_current_inflight_requests", { request_kind: "readOnly" })).toBe(1)
    expect(value(text, "apiserver_current_inflight_requests", { request_kind: "mutating" })).toBe(0)
    // Another server in the process counts its own.
    const elsewhere = (await other.request("GET", "/metrics")).text
    expect(value(elsewhere, "apiserver_request_total", { ...cm, verb: "POST" })).toBe(0)
  })

  it("counts the watches open now and the events sent to watchers", async () => {
    await createNamespace(server, "watched")
    const cms = "/api/v1/namespaces/watched/configmaps"
    const metric = async (name: string, labels: Record<string, string>) => value((await server.request("GET", "/metrics")).text, name, labels)
    const watching = { verb: "WATCH", group: "", version: "v1", resource: "configmaps", scope: "namespace", component: "apiserver" }
    const sentBefore = await metric("apiserver_watch_events_total", { group: "", version: "v1", kind: "ConfigMap" })
    const sizedBefore = await metric("apiserver_watch_events_sizes_count", { group: "", version: "v1", kind: "ConfigMap" })
    const bytesBefore = await metric("apiserver_watch_events_sizes_sum", { group: "", version: "v1", kind: "ConfigMap" })
    let openDuring = -1
    // Two watchers, one namespaced and one of the cluster, each sent the one new ConfigMap.
    const cluster = watchEvents(server, "/api/v1/configmaps?watch=true&labelSelector=metered%3Dyes", 1, 5000)
    const seen = await watchEvents(server, `${cms}?watch=true&labelSelector=metered%3Dyes`, 1, 5000, async () => {
      await new Promise((resolve) => setTimeout(resolve, 200))
      openDuring = await metric("apiserver_longrunning_requests", watching)
      expect(await metric("apiserver_longrunning_requests", { ...watching, scope: "cluster" })).toBe(1)
      // The two open watches are long-running: the scrape is the one request in flight.
      expect(await metric("apiserver_current_inflight_requests", { request_kind: "readOnly" })).toBe(1)
      await server.request("POST", cms, { body: { ...configMap("w"), metadata: { name: "w", labels: { metered: "yes" } } } })
    })
    expect((await cluster).map((event) => event.type)).toEqual(["ADDED"])
    expect(seen.map((event) => event.type)).toEqual(["ADDED"])
    expect(openDuring).toBe(1)
    for (let i = 0; i < 50 && await metric("apiserver_longrunning_requests", { verb: "WATCH", resource: "configmaps" }) > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(await metric("apiserver_longrunning_requests", { verb: "WATCH", resource: "configmaps" })).toBe(0)
    // A watch's time is its whole life, counted once it ended (here, after its 200 ms wait at least).
    const watchTimes = async (stat: "count" | "sum") =>
      metric(`apiserver_request_duration_seconds_${stat}`, { verb: "WATCH", resource: "configmaps", scope: "namespace" })
    expect(await watchTimes("count")).toBeGreaterThanOrEqual(1)
    expect(await watchTimes("sum")).toBeGreaterThanOrEqual(0.2)
    expect(await metric("apiserver_watch_events_total", { group: "", version: "v1", kind: "ConfigMap" }) - sentBefore).toBe(2)
    // Each event's size: the line each watcher was sent, twice the same object here.
    const line = JSON.stringify({ type: "ADDED", object: seen[0]!.object }) + "\n"
    expect(await metric("apiserver_watch_events_sizes_count", { group: "", version: "v1", kind: "ConfigMap" }) - sizedBefore).toBe(2)
    expect(await metric("apiserver_watch_events_sizes_sum", { group: "", version: "v1", kind: "ConfigMap" }) - bytesBefore).toBe(2 * Buffer.byteLength(line))
  })
})
