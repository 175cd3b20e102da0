/**
 * Response compression as kube-apiserver does it: an answer over 128 KiB goes gzipped to a client
 * whose Accept-Encoding names gzip, anything smaller or streamed goes as it is, the sizes /metrics
 * reports are the bytes sent, and kubectl (which asks for gzip) reads a compressed list.
 */
import { request as httpRequest } from "node:http"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, metricValue } from "./fixtures.ts"
import { forServer } from "./kubectl.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
})
afterAll(async () => {
  await server?.close()
})

interface Raw {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

// node:http, so the bytes are the ones sent (fetch would inflate them, and asks for gzip itself).
const raw = (path: string, headers: Record<string, string> = {}, until?: (received: number) => boolean) =>
  new Promise<Raw>((resolve, reject) => {
    const url = new URL(path, server.url)
    const sent = httpRequest(url, { headers: { authorization: `Bearer ${server.token}`, ...headers } }, (answer) => {
      const chunks: Array<Buffer> = []
      let received = 0
      const done = () => resolve({ status: answer.statusCode!, headers: answer.headers, body: Buffer.concat(chunks) })
      answer.on("data", (chunk: Buffer) => {
        chunks.push(chunk)
        received += chunk.length
        if (until?.(received) === true) {
          done()
          sent.destroy()
        }
      })
      answer.on("end", done)
    })
    sent.on("error", reject)
    sent.end()
  })

const namespace = "compressed"
const list = `/api/v1/namespaces/${namespace}/configmaps`
const count = 60

describe("response compression", () => {
  beforeAll(async () => {
    await createNamespace(server, namespace)
    for (let i = 0; i < count; i++) {
      // About 4 KiB each: the list is well over the threshold, one object well under it.
      const data = { text: Array.from({ length: 200 }, (_, line) => `line ${line} of configmap ${i}`).join("\n") }
      const created = await server.request("POST", list, { body: configMap(`cm-${i}`, data) })
      expect(created.status).toBe(201)
    }
  })

  it("gzips a list over 128 KiB for a client that asks, and nothing else", async () => {
    const gzipped = await raw(list, { "accept-encoding": "gzip" })
    expect(gzipped.status).toBe(200)
    expect(gzipped.headers["content-encoding"]).toBe("gzip")
    expect(gzipped.headers["vary"]).toContain("Accept-Encoding")
    expect(gzipped.headers["content-type"]).toBe("application/json")
    const inflated = gunzipSync(gzipped.body).toString("utf8")
    expect(JSON.parse(inflated).items).toHaveLength(count)

    const plain = await raw(list)
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(plain.body.length).toBeGreaterThan(128 * 1024)
    expect(JSON.parse(plain.body.toString("utf8")).items).toHaveLength(count)
    expect(gzipped.body.length).toBeLessThan(plain.body.length / 4)

    // Only the token gzip itself counts, as kube reads the header.
    for (const encoding of ["br", "deflate", "gzip;q=1", "x-gzip"]) {
      const other = await raw(list, { "accept-encoding": encoding })
      expect(other.headers["content-encoding"], encoding).toBeUndefined()
      expect(other.body.length, encoding).toBe(plain.body.length)
    }
    expect((await raw(list, { "accept-encoding": "deflate, gzip" })).headers["content-encoding"]).toBe("gzip")

    // An answer under the threshold goes as it is.
    const one = await raw(`${list}/cm-0`, { "accept-encoding": "gzip" })
    expect(one.headers["content-encoding"]).toBeUndefined()
    expect(JSON.parse(one.body.toString("utf8")).metadata.name).toBe("cm-0")

    // A watch is a stream: never compressed, whatever its size.
    const watched = await raw(`${list}?watch=true&resourceVersion=0`, { "accept-encoding": "gzip" }, (received) => received > 200 * 1024)
    expect(watched.headers["content-encoding"]).toBeUndefined()
    expect(JSON.parse(watched.body.toString("utf8").split("\n")[0]!).type).toBe("ADDED")
  })

  it("reports the bytes sent in apiserver_response_sizes", async () => {
    const fresh = await Testing.start()
    try {
      const path = "/api/v1/namespaces/default/configmaps"
      for (let i = 0; i < count; i++) {
        const data = { text: Array.from({ length: 200 }, (_, line) => `line ${line} of ${i}`).join("\n") }
        await fresh.request("POST", path, { body: configMap(`cm-${i}`, data) })
      }
      const sent = async (headers: Record<string, string>) => {
        const url = new URL(path, fresh.url)
        return new Promise<number>((resolve, reject) => {
          httpRequest(url, { headers: { authorization: `Bearer ${fresh.token}`, ...headers } }, (answer) => {
            let bytes = 0
            answer.on("data", (chunk: Buffer) => (bytes += chunk.length))
            answer.on("end", () => resolve(bytes))
          }).on("error", reject).end()
        })
      }
      const compressed = await sent({ "accept-encoding": "gzip" })
      const plain = await sent({})
      const metrics = (await fresh.request("GET", "/metrics")).text
      const labels = { verb: "LIST", resource: "configmaps", scope: "namespace" }
      expect(metricValue(metrics, "apiserver_response_sizes_count", labels)).toBe(2)
      expect(metricValue(metrics, "apiserver_response_sizes_sum", labels)).toBe(compressed + plain)
    } finally {
      await fresh.close()
    }
  })

  it("kubectl, which asks for gzip, reads the compressed list", async () => {
    const { ok } = forServer(() => server, { namespace })
    const labels = { verb: "LIST", resource: "configmaps", scope: "namespace" }
    const sentSoFar = async () => metricValue((await server.request("GET", "/metrics")).text, "apiserver_response_sizes_sum", labels)
    const before = await sentSoFar()
    const listed = JSON.parse(await ok("get", "configmaps", "-o", "json"))
    expect(listed.items.filter((cm: any) => cm.metadata.name.startsWith("cm-"))).toHaveLength(count)
    expect(listed.items[0].data.text).toContain("line 199 of configmap")
    const sent = await sentSoFar() - before
    const plain = (await raw(list)).body.length
    // kubectl's list went compressed: it was sent in a fraction of its JSON's bytes.
    expect(sent).toBeGreaterThan(0)
    expect(sent).toBeLessThan(plain / 4)
  })
})
