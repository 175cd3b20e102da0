/**
 * Watch streams over HTTP: initial events, resuming from a resourceVersion, filtered watches,
 * bookmarks, timeoutSeconds, sendInitialEvents, and the watch faults (close, expire, pause).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, watch, watchEvents } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({ bookmarkIntervalMs: 100 })
  await createNamespace(server, "w")
})
afterAll(() => server.close())

const cms = "/api/v1/namespaces/w/configmaps"
const merge = { "content-type": "application/merge-patch+json" }
const summary = (events: ReadonlyArray<{ type: string; object: any }>) =>
  events.map((e) => `${e.type} ${e.object.metadata?.name ?? ""}`.trim())

describe("watch", () => {
  it("starts with ADDED for existing objects when resourceVersion is unset or 0, then streams changes", async () => {
    await server.request("POST", cms, { body: configMap("existing") })
    const events = await watchEvents(server, `${cms}?watch=true&resourceVersion=0`, 4, 5000, async () => {
      await server.request("POST", cms, { body: configMap("live") })
      await server.request("PATCH", `${cms}/live`, { body: { data: { a: "1" } }, headers: merge })
      await server.request("DELETE", `${cms}/live`)
    })
    expect(summary(events)).toEqual(["ADDED existing", "ADDED live", "MODIFIED live", "DELETED live"])
    const deleted = events[3]!.object
    expect(deleted.data).toEqual({ a: "1" })
    expect(Number(deleted.metadata.resourceVersion)).toBeGreaterThan(Number(events[2]!.object.metadata.resourceVersion))
  })

  it("reads its watch parameter as apimachinery reads booleans: True, yes and the empty value all watch", async () => {
    await server.request("POST", cms, { body: configMap("spelled") })
    for (const spelled of ["True", "yes", ""]) {
      const from = (await server.request("GET", `${cms}/spelled`)).json.metadata.resourceVersion
      const events = await watchEvents(server, `${cms}?watch=${spelled}&resourceVersion=${from}`, 1, 5000, async () => {
        await server.request("PATCH", `${cms}/spelled`, { body: { data: { spelled } }, headers: merge })
      })
      expect(summary(events)).toEqual(["MODIFIED spelled"])
    }
    for (const off of ["False", "0"]) {
      expect((await server.request("GET", `${cms}?watch=${off}`)).json.kind).toBe("ConfigMapList")
    }
  })

  it("from a resourceVersion sends only what changed after it", async () => {
    const created = await server.request("POST", cms, { body: configMap("resume") })
    await server.request("PATCH", `${cms}/resume`, { body: { data: { b: "1" } }, headers: merge })
    const events = await watchEvents(server, `${cms}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`, 1)
    expect(summary(events)).toEqual(["MODIFIED resume"])
  })

  it("turns objects starting and stopping to match a selector into ADDED and DELETED", async () => {
    const from = (await server.request("GET", cms)).json.metadata.resourceVersion
    await server.request("POST", cms, { body: configMap("flip") })
    await server.request("PATCH", `${cms}/flip`, { body: { metadata: { labels: { pick: "yes" } } }, headers: merge })
    await server.request("PATCH", `${cms}/flip`, { body: { data: { c: "1" } }, headers: merge })
    await server.request("PATCH", `${cms}/flip`, { body: { metadata: { labels: { pick: "no" } } }, headers: merge })
    const events = await watchEvents(server, `${cms}?watch=1&resourceVersion=${from}&labelSelector=pick%3Dyes`, 3)
    expect(summary(events)).toEqual(["ADDED flip", "MODIFIED flip", "DELETED flip"])
    const single = await watchEvents(server, `${cms}?watch=1&resourceVersion=${from}&fieldSelector=metadata.name%3Dflip`, 4)
    expect(summary(single)).toEqual(["ADDED flip", "MODIFIED flip", "MODIFIED flip", "MODIFIED flip"])
  })

  it("sends BOOKMARKs only when allowed", async () => {
    const rv = (await server.request("GET", cms)).json.metadata.resourceVersion
    const withBookmarks = await watchEvents(server, `${cms}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true`, 1)
    expect(withBookmarks[0]).toMatchObject({ type: "BOOKMARK", object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: rv } } })
    const without = await watchEvents(server, `${cms}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`, 1, 3000)
    expect(without).toEqual([])
  })

  it("sends a BOOKMARK 2 s before timeoutSeconds ends the watch, as kube's cacher, between the periodic ones", async () => {
    const slow = await Testing.start({ bookmarkIntervalMs: 60_000 })
    try {
      const rv = (await slow.request("GET", "/api/v1/namespaces/default/configmaps")).json.metadata.resourceVersion
      const watched = await watch(slow, `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=3`, 5, 6000)
      expect(watched.ended).toBe(true)
      // The periodic one is a minute away: this is the one before the end.
      expect(watched.events.map((e) => e.type)).toEqual(["BOOKMARK"])
    } finally {
      await slow.close()
    }
  })

  it("ends the stream at timeoutSeconds", async () => {
    const watched = await watch(server, `${cms}?watch=1&timeoutSeconds=1`, 1000, 20_000)
    expect(watched.ended).toBe(true)
    expect(watched.events.every((e) => e.type === "ADDED")).toBe(true)
  })

  it("supports sendInitialEvents with the initial-events-end bookmark", async () => {
    const events = await watchEvents(
      server,
      `${cms}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=pick%3Dno`,
      2
    )
    expect(summary(events)).toEqual(["ADDED flip", "BOOKMARK"])
    expect(events[1]!.object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" })
  })

  it("streams Table rows to a watcher that asks for them, beside a plain one", async () => {
    const path = `${cms}?watch=1&fieldSelector=metadata.name%3Dexisting`
    const table = { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" }
    const [rows, plain] = await Promise.all([
      watch(server, path, 1, 5000, undefined, table),
      watch(server, path, 1)
    ])
    expect(rows.events[0]).toMatchObject({ type: "ADDED", object: { kind: "Table", rows: [{ cells: ["existing", 0, expect.any(String)] }] } })
    expect(plain.events[0]).toMatchObject({ type: "ADDED", object: { kind: "ConfigMap", metadata: { name: "existing" } } })
  })

  it("streams rows with whole objects to one Table watcher and metadata to another, each as it asked", async () => {
    const path = `${cms}?watch=1&fieldSelector=metadata.name%3Dexisting`
    const table = { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" }
    const [whole, partial] = await Promise.all([
      watch(server, `${path}&includeObject=Object`, 1, 5000, undefined, table),
      watch(server, path, 1, 5000, undefined, table)
    ])
    expect(whole.events[0].object.rows[0].object).toMatchObject({ kind: "ConfigMap", metadata: { name: "existing" } })
    expect(partial.events[0].object.rows[0].object).toMatchObject({ kind: "PartialObjectMetadata", metadata: { name: "existing" } })
  })

  it("answers a legacy /watch/ path", async () => {
    const events = await watchEvents(server, "/api/v1/watch/namespaces/w/configmaps/existing", 1)
    expect(summary(events)).toEqual(["ADDED existing"])
  })

  it("answers a named object's GET with the object, whatever watch says, as kube reads watch only of collections", async () => {
    const got = await server.request("GET", `${cms}/existing?watch=true`)
    expect([got.status, got.json.kind, got.json.metadata.name]).toEqual([200, "ConfigMap", "existing"])
  })
})

describe("watch faults", () => {
  it("closes open watches", async () => {
    const rv = (await server.request("GET", cms)).json.metadata.resourceVersion
    let closed = 0
    const watched = await watch(server, `${cms}?watch=1&resourceVersion=${rv}`, 1, 20_000, async () => {
      await new Promise((r) => setTimeout(r, 200))
      closed = server.faults.closeWatches({ resource: "configmaps" })
    })
    expect(closed).toBeGreaterThanOrEqual(1)
    expect(watched).toMatchObject({ events: [], ended: true })
  })

  it("expires open watches with a 410 ERROR event", async () => {
    const rv = (await server.request("GET", cms)).json.metadata.resourceVersion
    const events = await watchEvents(server, `${cms}?watch=1&resourceVersion=${rv}`, 1, 5000, async () => {
      await new Promise((r) => setTimeout(r, 200))
      server.faults.expireWatches()
    })
    expect(events[0]).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } })
  })

  it("holds events while paused and delivers them in order on resume", async () => {
    const rv = (await server.request("GET", cms)).json.metadata.resourceVersion
    let resumedAt = Number.POSITIVE_INFINITY
    const watched = await watch(server, `${cms}?watch=1&resourceVersion=${rv}`, 3, 5000, async () => {
      await new Promise((r) => setTimeout(r, 100))
      server.faults.pauseWatches({ resource: "configmaps" })
      for (const name of ["p1", "p2", "p3"]) await server.request("POST", cms, { body: configMap(name) })
      await new Promise((r) => setTimeout(r, 300))
      resumedAt = Date.now()
      server.faults.resumeWatches()
    })
    expect(summary(watched.events)).toEqual(["ADDED p1", "ADDED p2", "ADDED p3"])
    expect(watched.arrivals.every((at) => at >= resumedAt)).toBe(true)
  })

  it("drops a watcher that falls too far behind, with a 410", async () => {
    const small = await Testing.start({ watchBufferSize: 5 })
    try {
      await createNamespace(small, "w")
      const rv = (await small.request("GET", cms)).json.metadata.resourceVersion
      small.faults.pauseWatches()
      const events = await watchEvents(small, `${cms}?watch=1&resourceVersion=${rv}`, 20, 5000, async () => {
        for (let i = 0; i < 10; i++) await small.request("POST", cms, { body: configMap(`o${i}`) })
        small.faults.resumeWatches()
      })
      expect(events.length).toBeLessThan(10)
      expect(events[events.length - 1]).toMatchObject({ type: "ERROR", object: { code: 410 } })
    } finally {
      await small.close()
    }
  })
})
