/**
 * HTTPS as kube-apiserver serves it: HTTP/2 to a client that offers it (client-go, undici), with
 * kube's stream and frame limits, every request and watch of a client on one connection; HTTP/1.1
 * to a client that offers only that, or nothing.
 */
import * as http2 from "node:http2"
import * as https from "node:https"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
  await createNamespace(server, "over-h2")
})
afterAll(async () => {
  await server?.close()
})

// A stream's whole answer: its status and its body.
const answer = (stream: http2.ClientHttp2Stream) =>
  new Promise<{ readonly status: number; readonly body: string }>((resolve, reject) => {
    let status = 0
    let body = ""
    stream.on("response", (headers) => (status = Number(headers[":status"])))
    stream.setEncoding("utf8")
    stream.on("data", (chunk: string) => (body += chunk))
    stream.on("end", () => resolve({ status, body }))
    stream.on("error", reject)
  })

const overHttp1 = (alpn: ReadonlyArray<string> | undefined) =>
  new Promise<{ readonly version: string; readonly status: number }>((resolve, reject) => {
    const request = https.get(`${server.httpsUrl}/api`, {
      ca: server.certificateAuthority,
      headers: { authorization: `Bearer ${server.token}` },
      ...(alpn === undefined ? {} : { ALPNProtocols: [...alpn] })
    }, (response) => {
      response.resume()
      response.on("end", () => resolve({ version: response.httpVersion, status: response.statusCode ?? 0 }))
    })
    request.on("error", reject)
  })

describe("HTTPS", () => {
  it("speaks HTTP/2 to a client that offers it, with kube's limits, a watch and writes sharing the connection", async () => {
    const session = http2.connect(server.httpsUrl, { ca: server.certificateAuthority })
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve))
      expect(session.alpnProtocol).toBe("h2")
      expect(settings).toMatchObject({ maxConcurrentStreams: 100, maxFrameSize: 256 * 1024, initialWindowSize: 256 * 1024 })
      const authorization = `Bearer ${server.token}`
      const collection = "/api/v1/namespaces/over-h2/configmaps"
      const watch = session.request({ ":path": `${collection}?watch=true`, authorization })
      watch.setEncoding("utf8")
      let events = ""
      const added = new Promise<void>((resolve) =>
        watch.on("data", (chunk: string) => {
          events += chunk
          if (events.includes("\"name\":\"shared\"")) resolve()
        }))
      const create = session.request({ ":method": "POST", ":path": collection, authorization, "content-type": "application/json" })
      create.end(JSON.stringify(configMap("shared", { a: "1" })))
      expect((await answer(create)).status).toBe(201)
      await added
      expect(JSON.parse(events.split("\n")[0]!)).toMatchObject({ type: "ADDED", object: { metadata: { name: "shared" }, data: { a: "1" } } })
      // An error is a Status over HTTP/2 too.
      const missing = await answer(session.request({ ":path": `${collection}/missing`, authorization }))
      expect(missing.status).toBe(404)
      expect(JSON.parse(missing.body)).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 })
      watch.close()
    } finally {
      session.destroy()
    }
  })

  it("speaks HTTP/1.1 to a client that offers only HTTP/1.1, or no protocol at all", async () => {
    expect(await overHttp1(["http/1.1"])).toEqual({ version: "1.1", status: 200 })
    expect(await overHttp1(undefined)).toEqual({ version: "1.1", status: 200 })
  })
})
