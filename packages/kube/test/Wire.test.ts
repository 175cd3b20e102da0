/**
 * The client's wire behaviour against a canned loopback server, where the embedded API server
 * cannot show it: a server URL with a path, watch lines cut anywhere by the network (a multi-byte
 * character too), a refused watch, an unreadable answer, an interrupted request that frees its
 * connection, and the watch line of the client's own write taken without parsing it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Builtins, Kube } from "@kubefx/kube"
import { Deferred, Effect, Fiber, Stream } from "effect"
import * as http from "node:http"
import { vi } from "vitest"

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void

// A server on a random loopback port answering with `handler`, and a client of it at `path`.
const canned = (handler: Handler, path = "") =>
  Effect.gen(function*() {
    const server = http.createServer(handler)
    yield* Effect.callback<void>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    })
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
    )
    const { port } = server.address() as { readonly port: number }
    const kube = yield* Kube.make({ server: `http://127.0.0.1:${port}${path}`, dispatcher: undefined, headers: Effect.succeed({ authorization: "Bearer t" }) })
    return { server, kube }
  })

const json = (response: http.ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const configMap = (name: string, message: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion: "5" },
  data: { message }
})

describe("Kube on the wire", () => {
  it.live("sends every request under the server URL's path, with its query and headers", () =>
    Effect.scoped(Effect.gen(function*() {
      const seen: Array<{ readonly url: string | undefined; readonly authorization: string | undefined; readonly body: string }> = []
      const { kube } = yield* canned((request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => {
          seen.push({ url: request.url, authorization: request.headers.authorization, body })
          json(response, 200, request.method === "GET"
            ? { kind: "ConfigMapList", apiVersion: "v1", metadata: { resourceVersion: "9" }, items: [configMap("a", "hi")] }
            : configMap("a", "hi"))
        })
      }, "/k8s/clusters/c-1")
      const list = yield* kube.list(Builtins.ConfigMap, { namespace: "default", labelSelector: "app in (a,b)", limit: 2 })
      assert.deepStrictEqual(list.items.map((item) => item.metadata.name), ["a"])
      yield* kube.apply(Builtins.ConfigMap, { metadata: { name: "a", namespace: "default" }, data: { message: "hi" } }, { fieldManager: "me", force: true })
      assert.strictEqual(seen[0]!.url, "/k8s/clusters/c-1/api/v1/namespaces/default/configmaps?labelSelector=app%20in%20(a%2Cb)&limit=2")
      assert.strictEqual(seen[1]!.url, "/k8s/clusters/c-1/api/v1/namespaces/default/configmaps/a?fieldManager=me&force=true")
      assert.deepStrictEqual(JSON.parse(seen[1]!.body), { metadata: { name: "a", namespace: "default" }, data: { message: "hi" }, apiVersion: "v1", kind: "ConfigMap" })
      assert.isTrue(seen.every((request) => request.authorization === "Bearer t"))
    })))

  it.live("reads watch events whatever the network cuts them into", () =>
    Effect.scoped(Effect.gen(function*() {
      const lines = [configMap("a", "grüße"), configMap("b", "東京")].map((object) => JSON.stringify({ type: "ADDED", object }) + "\n")
      const bytes = Buffer.from(lines.join("") + JSON.stringify({ type: "MODIFIED", object: configMap("a", "last") }))
      const { kube } = yield* canned((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        // One byte at a time, so lines and characters are cut everywhere; the last line has no newline.
        let at = 0
        const next = () => {
          if (at === bytes.length) return response.end()
          response.write(bytes.subarray(at, ++at), next)
        }
        next()
      })
      const events = yield* kube.watch(Builtins.ConfigMap, { namespace: "default", resourceVersion: "1" }).pipe(Stream.runCollect)
      assert.deepStrictEqual(
        events.map((event) => event.type === "BOOKMARK" ? event.type : `${event.type} ${event.object.metadata.name} ${event.object.data?.message}`),
        ["ADDED a grüße", "ADDED b 東京", "MODIFIED a last"]
      )
    })))

  it.live("a watch the consumer falls behind on pauses its socket and resumes it: every event comes, in order", () =>
    Effect.scoped(Effect.gen(function*() {
      const count = 20_000
      const { kube } = yield* canned((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ type: "ADDED", object: configMap(`cm-${i}`, "x") }) + "\n")
        response.end(lines.join(""))
      })
      let seen = 0
      let ordered = true
      yield* kube.watch(Builtins.ConfigMap, { resourceVersion: "1" }).pipe(
        Stream.runForEach((event) =>
          Effect.suspend(() => {
            if (event.type !== "BOOKMARK" && event.object.metadata.name !== `cm-${seen}`) ordered = false
            seen++
            // A slow start: the whole answer arrives before the first events are handled.
            return seen < 10 ? Effect.sleep("20 millis") : Effect.void
          })),
        Effect.timeout("30 seconds")
      )
      assert.strictEqual(seen, count)
      assert.isTrue(ordered)
    })))

  it.live("the watch line of the client's own write is its answer's object, not parsed; other lines are parsed", () =>
    Effect.scoped(Effect.gen(function*() {
      const mine = (resourceVersion: string) => ({
        ...configMap("a", `mine ${resourceVersion}`),
        metadata: { ...configMap("a", "mine").metadata, resourceVersion }
      })
      const [first, second] = [mine("7"), mine("8")]
      // Go's encoder ends an answer with a line break; the watch line carries the same JSON without it.
      const answers = [JSON.stringify(first), JSON.stringify(second)]
      let writes = 0
      const { kube } = yield* canned((request, response) => {
        request.resume()
        request.on("end", () => {
          response.writeHead(200, { "content-type": "application/json" })
          if (request.method === "PATCH") return response.end(answers[writes++] + "\n")
          response.end([
            `{"type":"MODIFIED","object":${answers[0]}}`,
            // the second write's version with its fields in another order: found by uid and version
            JSON.stringify({
              type: "MODIFIED",
              object: { data: second.data, metadata: second.metadata, kind: second.kind, apiVersion: second.apiVersion }
            }),
            JSON.stringify({ type: "ADDED", object: configMap("b", "theirs") })
          ].join("\n") + "\n")
        })
      })
      const apply = kube.apply(Builtins.ConfigMap, { metadata: { name: "a", namespace: "default" }, data: { message: "mine" } }, { fieldManager: "me", force: true })
      const applied = [yield* apply, yield* apply]
      const parse = vi.spyOn(JSON, "parse")
      yield* Effect.addFinalizer(() => Effect.sync(() => parse.mockRestore()))
      const events = yield* Stream.runCollect(kube.watch(Builtins.ConfigMap, { resourceVersion: "7" }))
      const parsedLines = parse.mock.calls.filter(([text]) => String(text).startsWith(`{"type":`)).length
      assert.strictEqual(events.length, 3)
      assert.strictEqual(events[0]!.type, "MODIFIED")
      assert.strictEqual(events[0]!.type !== "BOOKMARK" && events[0]!.object, applied[0])
      assert.strictEqual(events[1]!.type !== "BOOKMARK" && events[1]!.object, applied[1])
      assert.strictEqual(events[2]!.type !== "BOOKMARK" && events[2]!.object.data?.message, "theirs")
      assert.strictEqual(parsedLines, 2)
    })))

  it.live("a refused watch fails with the typed error of its status body", () =>
    Effect.scoped(Effect.gen(function*() {
      const { kube } = yield* canned((_, response) =>
        json(response, 410, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Expired", message: "too old resource version: 1 (7)", code: 410 }))
      const error = yield* Effect.flip(Stream.runDrain(kube.watch(Builtins.ConfigMap, { resourceVersion: "1" })))
      assert.strictEqual(error._tag, "Gone")
      assert.strictEqual(error.message, "too old resource version: 1 (7)")
    })))

  it.live("an answer that is not JSON is a Transport error; a Status without a body keeps its code", () =>
    Effect.scoped(Effect.gen(function*() {
      const { kube } = yield* canned((request, response) => {
        if (request.url!.includes("broken")) {
          response.writeHead(200, { "content-type": "application/json" })
          response.end("{\"kind\":")
        } else {
          response.writeHead(503)
          response.end()
        }
      })
      const broken = yield* Effect.flip(kube.get(Builtins.ConfigMap, "broken", "default"))
      assert.strictEqual(broken._tag, "Transport")
      assert.match(broken.message, /unreadable answer/)
      const unavailable = yield* Effect.flip(kube.get(Builtins.ConfigMap, "other", "default"))
      assert.strictEqual(unavailable._tag, "ServerError")
      assert.strictEqual((unavailable as { readonly code?: number }).code, 503)
    })))

  it.live("interrupting a request aborts it: the server sees the connection close", () =>
    Effect.scoped(Effect.gen(function*() {
      const arrived = yield* Deferred.make<void>()
      const closed = yield* Deferred.make<void>()
      // Never answers.
      const { kube } = yield* canned((_, response) => {
        Deferred.doneUnsafe(arrived, Effect.void)
        response.on("close", () => Deferred.doneUnsafe(closed, Effect.void))
      })
      const fiber = yield* Effect.forkChild(kube.get(Builtins.ConfigMap, "slow", "default"))
      yield* Deferred.await(arrived)
      yield* Fiber.interrupt(fiber)
      yield* Deferred.await(closed).pipe(Effect.timeout("5 seconds"))
    })))
})
