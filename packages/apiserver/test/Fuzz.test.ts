/**
 * Nothing a client sends crashes the server: random methods, paths, query strings, headers and
 * bodies (seeded, so a failure reproduces) all get an HTTP answer, and the server keeps serving.
 */
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Faults from "../src/Faults.ts"
import * as Testing from "../src/Testing.ts"
import { crontabCrd, installCrd } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
  await installCrd(server, crontabCrd())
})
afterAll(() => server.close())

const random = Faults.random(2024)
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!

const paths = [
  "/api/v1/namespaces/default/configmaps",
  "/api/v1/namespaces/default/configmaps/x",
  "/api/v1/namespaces/default/configmaps/x/status",
  "/apis/stable.example.com/v1/namespaces/default/crontabs/x",
  "/apis/stable.example.com/v1/namespaces/default/crontabs/x/scale",
  "/apis/apps/v1/namespaces/default/deployments/x/scale",
  "/api/v1/namespaces/x/finalize",
  "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
  "/api/v1/watch/namespaces/default/pods",
  "/openapi/v3/apis/stable.example.com/v1",
  "/kubefx/faults",
  "/%E0%A4%A",
  "/api/v1/namespaces/../../etc/passwd",
  "/apis/a/b/c/d/e/f/g/h"
]
const queries = ["", "?watch=1&timeoutSeconds=0", "?limit=-1", "?continue=%%%", "?labelSelector=a%20in%20(", "?fieldSelector=x", "?resourceVersion=abc", "?dryRun=Some", "?fieldManager=" + "m".repeat(200), "?force=true", "?propagationPolicy=Sideways"]
const types = ["application/json", "application/yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml", "text/plain", ""]
const bodies = [
  "",
  "{",
  "null",
  "[]",
  "42",
  '"str"',
  '{"metadata":null}',
  '{"metadata":{"name":123,"labels":[1],"finalizers":"x","ownerReferences":{}}}',
  '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":{"b":1}}}',
  '{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"},"spec":{"replicas":"many","ports":[{"name":"a"},{"name":"a"}]}}',
  '[{"op":"move","from":"/nope","path":"/x"}]',
  '{"spec":{"$patch":"delete"}}',
  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n: :",
  '{"__proto__":{"polluted":true},"metadata":{"name":"x"}}',
  "\u0000\u0001\u0002"
]

describe("fuzzing", () => {
  it("answers every random request and keeps serving", async () => {
    for (let i = 0; i < 300; i++) {
      const method = pick(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "PROPFIND"])
      const headers: Record<string, string> = { accept: pick(["application/json", "*/*", "text/html", "application/json;as=Table;g=meta.k8s.io;v=v1", ""]) }
      const type = pick(types)
      if (type !== "") headers["content-type"] = type
      const withBody = method !== "GET" && method !== "HEAD"
      const url = `${server.url}${pick(paths)}${pick(queries)}`
      const reply = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${server.token}`, ...headers },
        ...(withBody ? { body: pick(bodies) } : {})
      })
      // A watch that was accepted streams until the client leaves: stop reading it.
      const streaming = reply.status === 200 && (url.includes("/watch/") || url.includes("watch=1"))
      const text = streaming ? (await reply.body?.cancel(), "") : await reply.text()
      expect(reply.status).toBeGreaterThanOrEqual(200)
      expect(reply.status).toBeLessThan(600)
      if (reply.status >= 400 && method !== "HEAD") expect(JSON.parse(text).kind).toBe("Status")
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect((await server.request("GET", "/api/v1/namespaces/default")).status).toBe(200)
  })

  it("survives garbage on the wire, half-open TLS and abrupt disconnects", async () => {
    const send = (bytes: Buffer, wait = 50) =>
      new Promise<void>((resolve) => {
        const socket = connect(server.port, "127.0.0.1", () => {
          socket.write(bytes)
          setTimeout(() => {
            socket.destroy()
            resolve()
          }, wait)
        })
        socket.on("error", () => resolve())
      })
    await send(Buffer.from("GARBAGE\r\n\r\n"))
    await send(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3]))
    await send(Buffer.from("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"))
    await send(Buffer.from(`GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n\r\n`))
    expect((await server.request("GET", "/version")).status).toBe(200)
  })
})
