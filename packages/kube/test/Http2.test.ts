/**
 * The client against a server that offers HTTP/2, as a cluster's API server (and the embedded one)
 * does: it offers HTTP/1.1 alone and works over it, from a plain kubeconfig and from one client-node
 * loads, through an HTTP proxy a kubeconfig or the environment names too, every connection kept
 * alive by TCP after 30 s; and its exchanges, given a dispatcher that does
 * speak HTTP/2, fail every request queued on the connection of a server that is gone, sent again or
 * not, without throwing past the client.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ApiServer } from "@kubefx/apiserver"
import { Builtins, Kube, type KubeError } from "@kubefx/kube"
import { Context, Effect, Exit, Layer, Scope, Stream } from "effect"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { execUser, kubeconfig } from "../bench/kubeconfigs.ts"
import * as Exchange from "../src/client/Exchange.ts"
import * as Tunnels from "./fixtures/Tunnels.ts"

// A directory for the test's kubeconfigs, removed with the scope.
const directory = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "kubefx-http2-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const clientOf = (kubeconfigPath: string) =>
  Effect.map(Layer.build(Kube.layer({ _tag: "File", path: kubeconfigPath })), (context) => Context.get(context, Kube.Kube))

// The protocols a TLS ClientHello offers in its ALPN extension (16), read from its first record.
const offeredProtocols = (hello: Buffer): ReadonlyArray<string> => {
  let at = 5 + 4 + 2 + 32 // record header, handshake header, version, random
  at += 1 + hello[at]! // session id
  at += 2 + hello.readUInt16BE(at) // cipher suites
  at += 1 + hello[at]! // compression methods
  const end = at + 2 + hello.readUInt16BE(at)
  for (at += 2; at + 4 <= end;) {
    const type = hello.readUInt16BE(at)
    const length = hello.readUInt16BE(at + 2)
    if (type === 16) {
      const protocols: Array<string> = []
      for (let p = at + 6; p < at + 4 + length; p += 1 + hello[p]!) protocols.push(hello.toString("latin1", p + 1, p + 1 + hello[p]!))
      return protocols
    }
    at += 4 + length
  }
  return []
}

// A TCP relay to `port` on loopback that keeps what each connection offered in its TLS handshake.
const relay = (port: number) =>
  Effect.gen(function*() {
    const offers: Array<ReadonlyArray<string>> = []
    const open: Tunnels.Open = new Set()
    const server = net.createServer((client) => {
      client.once("data", (hello: Buffer) => offers.push(offeredProtocols(hello)))
      Tunnels.splice(client, net.connect(port, "127.0.0.1"), open)
    })
    return { port: yield* Tunnels.listen(server, open), offers }
  })

// An HTTP proxy answering CONNECT to `port` on loopback, keeping each tunnel's target and what its
// TLS handshake offered.
const proxy = (port: number) =>
  Effect.gen(function*() {
    const targets: Array<string> = []
    const offers: Array<ReadonlyArray<string>> = []
    const open: Tunnels.Open = new Set()
    const server = http.createServer((_, response) => response.writeHead(405).end())
    server.on("connect", (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      targets.push(request.url ?? "")
      const upstream = net.connect(port, "127.0.0.1")
      if (head.length > 0) upstream.write(head)
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
      client.once("data", (hello: Buffer) => offers.push(offeredProtocols(hello)))
      Tunnels.splice(client, upstream, open)
    })
    return { port: yield* Tunnels.listen(server, open), targets, offers }
  })

const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { n: name } })

describe("the client and HTTP/2", () => {
  it.live("offers a server that speaks HTTP/2 HTTP/1.1 alone, and watches and writes over it", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const kubeconfigPath = join(dir, "kubeconfig")
      const server = yield* ApiServer.make({ kubeconfigPath })
      const relayed = yield* relay(server.port)
      const relayedPath = join(dir, "relayed")
      writeFileSync(relayedPath, readFileSync(kubeconfigPath, "utf8").replace(`127.0.0.1:${server.port}`, `127.0.0.1:${relayed.port}`))
      const kube = yield* clientOf(relayedPath)
      const watches = yield* Effect.forEach([Builtins.ConfigMap, Builtins.Secret, Builtins.Service], (resource) =>
        Stream.runDrain(kube.watch(resource as typeof Builtins.ConfigMap, { resourceVersion: "0" })).pipe(Effect.forkScoped))
      const names = Array.from({ length: 20 }, (_, i) => `over-http1-${i}`)
      yield* Effect.forEach(names, (name) => kube.create(Builtins.ConfigMap, configMap(name)), { concurrency: 8 })
      const listed = yield* kube.listAll(Builtins.ConfigMap, { namespace: "default" })
      assert.includeMembers(listed.items.map((cm) => cm.metadata.name), names)
      assert.isTrue(watches.every((fiber) => fiber.pollUnsafe() === undefined), "every watch still open")
      assert.isAbove(relayed.offers.length, 0)
      for (const offered of relayed.offers) assert.deepStrictEqual(offered, ["http/1.1"])

      // A kubeconfig that client-node loads (an exec plugin for the token) is served the same way.
      const execPath = join(dir, "exec")
      const ca = Buffer.from(server.certificateAuthority).toString("base64")
      writeFileSync(execPath, kubeconfig({ server: `https://127.0.0.1:${relayed.port}`, "certificate-authority-data": ca }, execUser(server.token)))
      relayed.offers.length = 0
      const viaPlugin = yield* clientOf(execPath)
      yield* viaPlugin.create(Builtins.ConfigMap, configMap("over-http1-exec"))
      assert.strictEqual((yield* viaPlugin.get(Builtins.ConfigMap, "over-http1-exec", "default")).data?.n, "over-http1-exec")
      assert.isAbove(relayed.offers.length, 0)
      for (const offered of relayed.offers) assert.deepStrictEqual(offered, ["http/1.1"])
    }).pipe(Effect.scoped))

  it.live("a kubeconfig naming an HTTP proxy: every request goes through it, and the TLS inside offers HTTP/1.1 alone", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const server = yield* ApiServer.make({ kubeconfigPath: join(dir, "kubeconfig") })
      const tunnels = yield* proxy(server.port)
      const proxiedPath = join(dir, "proxied")
      const ca = Buffer.from(server.certificateAuthority).toString("base64")
      writeFileSync(proxiedPath, kubeconfig(
        { server: `https://127.0.0.1:${server.port}`, "certificate-authority-data": ca, "proxy-url": `http://127.0.0.1:${tunnels.port}` },
        { token: server.token }
      ))
      const kube = yield* clientOf(proxiedPath)
      const watch = yield* Stream.runDrain(kube.watch(Builtins.ConfigMap, { resourceVersion: "0" })).pipe(Effect.forkScoped)
      yield* kube.create(Builtins.ConfigMap, configMap("through-proxy"))
      assert.strictEqual((yield* kube.get(Builtins.ConfigMap, "through-proxy", "default")).data?.n, "through-proxy")
      assert.isUndefined(watch.pollUnsafe(), "the watch is open")
      assert.isAtLeast(tunnels.targets.length, 2)
      assert.deepStrictEqual([...new Set(tunnels.targets)], [`127.0.0.1:${server.port}`])
      for (const offered of tunnels.offers) assert.deepStrictEqual(offered, ["http/1.1"])
    }).pipe(Effect.scoped))

  it.live("HTTPS_PROXY: a kubeconfig that names no proxy goes through the environment's, as client-go's", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const server = yield* ApiServer.make({ kubeconfigPath: join(dir, "kubeconfig") })
      const tunnels = yield* proxy(server.port)
      // A name only the proxy resolves (it tunnels every target to the server), the certificate's for TLS.
      const cluster = {
        server: `https://apiserver.example:${server.port}`,
        "certificate-authority-data": Buffer.from(server.certificateAuthority).toString("base64"),
        "tls-server-name": "localhost"
      }
      const plainPath = join(dir, "plain")
      writeFileSync(plainPath, kubeconfig(cluster, { token: server.token }))
      const execPath = join(dir, "exec")
      writeFileSync(execPath, kubeconfig(cluster, execUser(server.token)))
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          process.env.HTTPS_PROXY = `http://127.0.0.1:${tunnels.port}`
        }),
        () => Effect.sync(() => delete process.env.HTTPS_PROXY)
      )
      for (const [path, name] of [[plainPath, "env-proxy-plain"], [execPath, "env-proxy-exec"]] as const) {
        const kube = yield* clientOf(path)
        yield* kube.create(Builtins.ConfigMap, configMap(name))
        assert.strictEqual((yield* kube.get(Builtins.ConfigMap, name, "default")).data?.n, name)
      }
      assert.isAtLeast(tunnels.targets.length, 2)
      assert.deepStrictEqual([...new Set(tunnels.targets)], [`apiserver.example:${server.port}`])
    }).pipe(Effect.scoped))

  it.live("connections are kept alive by TCP after 30 s idle, as client-go's, from every kind of kubeconfig", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const kubeconfigPath = join(dir, "kubeconfig")
      const server = yield* ApiServer.make({ kubeconfigPath })
      const tunnels = yield* proxy(server.port)
      const ca = Buffer.from(server.certificateAuthority).toString("base64")
      const execPath = join(dir, "exec")
      writeFileSync(execPath, kubeconfig({ server: server.httpsUrl, "certificate-authority-data": ca }, execUser(server.token)))
      const proxiedPath = join(dir, "proxied")
      writeFileSync(proxiedPath, kubeconfig({ server: server.httpsUrl, "certificate-authority-data": ca, "proxy-url": `http://127.0.0.1:${tunnels.port}` }, { token: server.token }))
      // Every keepalive a socket is given while each client makes its first connection.
      const calls: Array<ReadonlyArray<unknown>> = []
      const original = net.Socket.prototype.setKeepAlive
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          net.Socket.prototype.setKeepAlive = function(this: net.Socket, ...args: Array<unknown>) {
            calls.push(args)
            return original.apply(this, args as Parameters<typeof original>)
          }
        }),
        () => Effect.sync(() => {
          net.Socket.prototype.setKeepAlive = original
        })
      )
      for (const path of [kubeconfigPath, execPath, proxiedPath]) {
        calls.length = 0
        const kube = yield* clientOf(path)
        yield* kube.get(Builtins.Namespace, "default")
        assert.deepInclude(calls, [true, 30_000], path)
        assert.notDeepInclude(calls, [true, 60_000], path)
      }
    }).pipe(Effect.scoped))

  it.live("an exchange over an HTTP/2 dispatcher fails every request queued on a gone server's connection, sent again at once, and throws nothing", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const serverScope = yield* Scope.make()
      const server = yield* ApiServer.make({ kubeconfigPath: join(dir, "kubeconfig") }).pipe(Scope.provide(serverScope))
      const dispatcher = yield* NodeHttpClient.makeDispatcherOptions({ allowH2: true, connect: { ca: server.certificateAuthority } })
      const request: Exchange.Request = {
        method: "GET",
        path: "/api/v1/namespaces/default/configmaps/gone",
        headers: { authorization: `Bearer ${server.token}`, accept: "application/json" }
      }
      assert.strictEqual((yield* Exchange.send(dispatcher, server.httpsUrl, request)).status, 404)
      yield* Scope.close(serverScope, Exit.void)
      // Twenty requests queued on the connection, each sent again as soon as it fails: undici fails
      // the queue of a connection it cannot make, and must find it empty after.
      const attempt = (left: number): Effect.Effect<unknown, KubeError.Transport | KubeError.Timeout> =>
        Exchange.send(dispatcher, server.httpsUrl, request).pipe(Effect.catch((error) => left > 0 ? attempt(left - 1) : Effect.fail(error)))
      const failures = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.flip(attempt(5)), { concurrency: 20 })
      assert.deepStrictEqual([...new Set(failures.map((error) => error._tag))], ["Transport"])
    }).pipe(Effect.scoped))
})
