/**
 * Events expire their time to live after their last write, as kube-apiserver's `--event-ttl`
 * (an hour by default; shortened here), whichever API wrote them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Events from "../src/Events.ts"
import * as Testing from "../src/Testing.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({ eventTtlMs: 400 })
})
afterAll(async () => {
  await server?.close()
})

const event = (name: string) => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name },
  involvedObject: { kind: "ConfigMap", namespace: "default", name: "settings" },
  reason: "Changed",
  message: "changed",
  type: "Normal",
  firstTimestamp: new Date().toISOString(),
  lastTimestamp: new Date().toISOString(),
  count: 1
})

describe("event TTL", () => {
  it("deletes an Event its time to live after its last write", async () => {
    const path = "/api/v1/namespaces/default/events"
    expect((await server.request("POST", path, { body: event("fresh.1") })).status).toBe(201)
    expect((await server.request("GET", `${path}/fresh.1`)).status).toBe(200)
    let status = 200
    for (let i = 0; i < 100 && status !== 404; i++) {
      await new Promise((r) => setTimeout(r, 50))
      status = (await server.request("GET", `${path}/fresh.1`)).status
    }
    expect(status).toBe(404)
  })

  it("counts the latest of an Event's times as its last write", () => {
    const at = (iso: string) => Date.parse(iso)
    expect(Events.lastWritten({ metadata: { creationTimestamp: "2026-01-01T00:00:00Z" }, lastTimestamp: "2026-01-01T00:10:00Z" })).toBe(at("2026-01-01T00:10:00Z"))
    expect(Events.lastWritten({ metadata: { creationTimestamp: "2026-01-01T00:00:00Z" }, series: { lastObservedTime: "2026-01-01T00:20:00.000000Z" } })).toBe(at("2026-01-01T00:20:00Z"))
  })
})
