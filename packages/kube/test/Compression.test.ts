/**
 * Compressed answers, as client-go asks for them: every request read whole asks for gzip (the
 * server compresses only large answers, a list's pages), watches do not, a kubeconfig cluster's
 * `disable-compression` turns it off or, for a loopback server (not asked by default), on (read
 * directly or through client-node), and an answer that does not inflate is a Transport error.
 */
import { assert, describe, it } from "@effect/vitest"
import { ApiServer } from "@kubefx/apiserver"
import { Builtins, Kube, KubeConfig } from "@kubefx/kube"
import { Effect, Stream } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"

const directory = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "kubefx-compression-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const kubeconfig = (dir: string, name: string, cluster: Record<string, unknown>, user: Record<string, unknown>) => {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x"
  }))
  return path
}

const clientOf = (path: string) => Effect.flatMap(KubeConfig.connection({ _tag: "File", path }), Kube.make)

// The bytes the server sent for lists of ConfigMaps so far, by its own /metrics.
const listBytes = (server: ApiServer.ApiServer) =>
  Effect.promise(async () => {
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } })).text()
    return text.split("\n")
      .filter((line) => line.startsWith("apiserver_response_sizes_sum{") && line.includes(`verb="LIST"`) && line.includes(`resource="configmaps"`))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)
  })

const count = 60

describe("compressed answers", () => {
  it.effect("a large list comes gzipped and reads the same; plain from loopback by default or with disable-compression, read directly or by client-node", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make({ port: 0 })
      const dir = yield* directory
      const cluster = { server: server.httpsUrl, "certificate-authority-data": Buffer.from(server.certificateAuthority).toString("base64") }
      const kube = yield* clientOf(kubeconfig(dir, "asking", { ...cluster, "disable-compression": false }, { token: server.token }))
      for (let i = 0; i < count; i++) {
        const text = Array.from({ length: 200 }, (_, line) => `line ${line} of ${i}`).join("\n")
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: "default" }, data: { text } })
      }
      const listed = (client: Kube.Client) =>
        Effect.gen(function*() {
          const before = yield* listBytes(server)
          const list = yield* client.list(Builtins.ConfigMap, { namespace: "default" })
          const names = list.items.map((cm) => cm.metadata.name).filter((name) => name?.startsWith("cm-") === true)
          assert.lengthOf(names, count)
          assert.include(list.items.find((cm) => cm.metadata.name === "cm-7")?.data?.["text"], "line 199 of 7")
          return (yield* listBytes(server)) - before
        })
      const compressed = yield* listed(kube)
      const uncompressed = yield* listed(yield* clientOf(kubeconfig(dir, "disabled", { ...cluster, "disable-compression": true }, { token: server.token })))
      assert.isAbove(uncompressed, 128 * 1024)
      assert.isBelow(compressed, uncompressed / 4)
      // Unsaid, a loopback server is not asked: its bytes cross no network.
      assert.isAbove(yield* listed(yield* clientOf(kubeconfig(dir, "loopback", cluster, { token: server.token }))), compressed * 4)
      // A token file is client-node's to read: the flag is read beside it.
      const tokenFile = join(dir, "token")
      writeFileSync(tokenFile, server.token)
      const throughClientNode = kubeconfig(dir, "client-node", { ...cluster, "disable-compression": true }, { "token-file": tokenFile })
      assert.isAbove(yield* listed(yield* clientOf(throughClientNode)), compressed * 4)
      const asking = kubeconfig(dir, "client-node-on", { ...cluster, "disable-compression": false }, { "token-file": tokenFile })
      assert.isBelow(yield* listed(yield* clientOf(asking)), uncompressed / 4)
    }).pipe(Effect.scoped))

  it.effect("asks for gzip on reads and writes, not on watches; a gzipped answer of any size inflates; a broken one is a Transport error", () =>
    Effect.gen(function*() {
      const asked: Array<{ readonly path: string; readonly headers: IncomingHttpHeaders }> = []
      const namespaceList = JSON.stringify({ kind: "NamespaceList", apiVersion: "v1", metadata: { resourceVersion: "5" }, items: [{ metadata: { name: "small" } }] })
      const http = createServer((request, response) => {
        asked.push({ path: request.url!, headers: request.headers })
        if (request.url!.includes("watch=true")) {
          response.writeHead(200, { "content-type": "application/json" })
          response.end(`${JSON.stringify({ type: "ADDED", object: { kind: "Namespace", apiVersion: "v1", metadata: { name: "w", resourceVersion: "6" } } })}\n`)
        } else if (request.url!.startsWith("/api/v1/namespaces/broken")) {
          response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
          response.end(Buffer.from("not gzip at all"))
        } else {
          response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
          response.end(gzipSync(namespaceList))
        }
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void http.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.callback<void>((resume) => void http.close(() => resume(Effect.void)))
      )
      http.unref()
      const port = (http.address() as { readonly port: number }).port
      const dir = yield* directory
      const kube = yield* clientOf(kubeconfig(dir, "fake", { server: `http://127.0.0.1:${port}`, "disable-compression": false }, { token: "t" }))

      const list = yield* kube.list(Builtins.Namespace)
      assert.deepStrictEqual(list.items.map((ns) => ns.metadata.name), ["small"])
      const event = yield* Stream.runHead(kube.watch(Builtins.Namespace, { resourceVersion: "5" }))
      assert.strictEqual(event._tag === "Some" && "object" in event.value ? event.value.object.metadata.name : undefined, "w")
      const broken = yield* Effect.flip(kube.get(Builtins.Namespace, "broken"))
      assert.strictEqual(broken._tag, "Transport")
      assert.include(broken.message, "unreadable gzip answer")

      const listed = asked.find((request) => request.path.startsWith("/api/v1/namespaces?") || request.path === "/api/v1/namespaces")
      assert.strictEqual(listed?.headers["accept-encoding"], "gzip")
      assert.strictEqual(asked.find((request) => request.path.startsWith("/api/v1/namespaces/broken"))?.headers["accept-encoding"], "gzip")
      const watched = asked.find((request) => request.path.includes("watch=true"))
      assert.isDefined(watched)
      assert.isUndefined(watched?.headers["accept-encoding"])

      // A loopback server not told otherwise is not asked, and what it gzips anyway still inflates.
      asked.length = 0
      const unasked = yield* clientOf(kubeconfig(dir, "loopback", { server: `http://127.0.0.1:${port}` }, { token: "t" }))
      assert.deepStrictEqual((yield* unasked.list(Builtins.Namespace)).items.map((ns) => ns.metadata.name), ["small"])
      assert.isUndefined(asked[0]?.headers["accept-encoding"])
    }).pipe(Effect.scoped))
})
