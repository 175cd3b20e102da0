/**
 * The client over HTTP/2, as it talks to a cluster's API server (and to the embedded one): every
 * request and watch of an operator shares one connection, and a server gone with requests queued
 * on that connection fails each of them, sent again or not, without throwing past the client.
 */
import { assert, describe, it } from "@effect/vitest"
import { ApiServer } from "@kubefx/apiserver"
import { Builtins, Kube, type KubeError, type Resource } from "@kubefx/kube"
import { Context, Effect, Exit, Layer, Scope, Stream } from "effect"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

// A directory for the test's kubeconfigs, removed with the scope.
const directory = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "kubefx-http2-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const clientOf = (kubeconfigPath: string) =>
  Effect.map(Layer.build(Kube.layer({ _tag: "File", path: kubeconfigPath })), (context) => Context.get(context, Kube.Kube))

// A TCP relay to `port` on loopback that counts the connections made through it.
const countingRelay = (port: number) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly port: number; readonly connections: () => number; readonly server: net.Server }>((resume) => {
      let connections = 0
      const sockets = new Set<net.Socket>()
      const server = net.createServer((client) => {
        connections++
        const upstream = net.connect(port, "127.0.0.1")
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          socket.on("error", () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      server.on("close", () => sockets.forEach((socket) => socket.destroy()))
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ port: (server.address() as net.AddressInfo).port, connections: () => connections, server })))
    }),
    ({ server }) => Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.emit("close")
    })
  )

const configMap = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { n: name } })

describe("the client over HTTP/2", () => {
  it.live("sends an operator's watches and concurrent writes over one connection", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const kubeconfigPath = join(dir, "kubeconfig")
      const server = yield* ApiServer.make({ kubeconfigPath })
      const relay = yield* countingRelay(server.port)
      const relayed = join(dir, "relayed")
      writeFileSync(relayed, readFileSync(kubeconfigPath, "utf8").replace(`127.0.0.1:${server.port}`, `127.0.0.1:${relay.port}`))
      const kube = yield* clientOf(relayed)
      // Five watches at once from a cold start, then 40 creates 16 at a time, each watch seeing them.
      const seen = yield* Effect.forEach([Builtins.ConfigMap, Builtins.Secret, Builtins.Service, Builtins.Pod, Builtins.Namespace], (resource) =>
        Stream.runDrain(kube.watch(resource as typeof Builtins.ConfigMap, { resourceVersion: "0" })).pipe(Effect.forkScoped))
      const names = Array.from({ length: 40 }, (_, i) => `over-one-${i}`)
      yield* Effect.forEach(names, (name) => kube.create(Builtins.ConfigMap, configMap(name)), { concurrency: 16 })
      const listed = yield* kube.listAll(Builtins.ConfigMap, { namespace: "default" })
      assert.includeMembers(listed.items.map((cm) => cm.metadata.name), names)
      assert.isTrue(seen.every((fiber) => fiber.pollUnsafe() === undefined), "every watch still open")
      // Over HTTP/1.1 each open watch and each request in flight holds a connection of its own.
      assert.strictEqual(relay.connections(), 1)
    }).pipe(Effect.scoped))

  it.live("fails every request queued on the connection of a server that is gone, sent again at once, and throws nothing", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const kubeconfigPath = join(dir, "kubeconfig")
      const serverScope = yield* Scope.make()
      yield* ApiServer.make({ kubeconfigPath }).pipe(Scope.provide(serverScope))
      const kube = yield* clientOf(kubeconfigPath)
      yield* kube.listAll(Builtins.ConfigMap, { namespace: "default" })
      yield* Scope.close(serverScope, Exit.void)
      // Twenty requests queued on the connection, each sent again as soon as it fails: undici fails
      // the queue of a connection it cannot make, and must find it empty after.
      const attempt = (left: number): Effect.Effect<unknown, KubeError.KubeError | Resource.DecodeError> =>
        kube.get(Builtins.ConfigMap, "gone", "default").pipe(Effect.catch((error) => left > 0 ? attempt(left - 1) : Effect.fail(error)))
      const failures = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.flip(attempt(5)), { concurrency: 20 })
      assert.deepStrictEqual([...new Set(failures.map((error) => error._tag))], ["Transport"])
    }).pipe(Effect.scoped))
})
