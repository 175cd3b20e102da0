/**
 * A kubeconfig whose exec plugin gives a client certificate that expires (Teleport's `tsh`, say):
 * once the plugin gives a new one, each new connection is made with it, as client-go's rotating
 * dialer does, instead of the first one for as long as the process lives.
 */
import { assert, describe, it } from "@effect/vitest"
import { ApiServer, Certificate } from "@kubefx/apiserver"
import { Builtins, Kube } from "@kubefx/kube"
import { Context, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { X509Certificate } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as tls from "node:tls"
import { kubeconfig } from "../bench/kubeconfigs.ts"
import * as Tunnels from "./fixtures/Tunnels.ts"

const directory = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "kubefx-exec-certs-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

// A TLS front to the embedded server's port that asks each connection for a client certificate
// and keeps which one it presented; `drop` closes every connection it holds.
const front = (upstreamPort: number, certificate: Certificate.Certificate) =>
  Effect.gen(function*() {
    const presented: Array<string> = []
    const open: Tunnels.Open = new Set()
    const server = tls.createServer({ ...certificate, requestCert: true, rejectUnauthorized: false }, (client) => {
      presented.push(client.getPeerCertificate().fingerprint256 ?? "none")
      Tunnels.splice(client, net.connect(upstreamPort, "127.0.0.1"), open)
    })
    return { port: yield* Tunnels.listen(server, open), presented, drop: () => open.forEach((socket) => socket.destroy()) }
  })

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256

// Real time: client-node checks a credential's expiry against the wall clock.
const wait = (millis: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, millis)))

describe("an exec plugin's client certificate", () => {
  it.effect("a new connection after the plugin gives a new certificate presents the new one", () =>
    Effect.gen(function*() {
      const dir = yield* directory
      const server = yield* ApiServer.make({})
      const serving = Certificate.selfSigned(["127.0.0.1"])
      const fronted = yield* front(server.port, serving)
      const certificates = [Certificate.selfSigned(), Certificate.selfSigned()]
      writeFileSync(join(dir, "certificates.json"), JSON.stringify(certificates))
      // Each run of the plugin gives the next certificate, valid for two seconds, and the server's token.
      const plugin = `
        const fs = require("node:fs"), path = require("node:path")
        const counter = path.join(${JSON.stringify(dir)}, "runs")
        const runs = fs.existsSync(counter) ? Number(fs.readFileSync(counter, "utf8")) : 0
        fs.writeFileSync(counter, String(runs + 1))
        const certificate = JSON.parse(fs.readFileSync(path.join(${JSON.stringify(dir)}, "certificates.json"), "utf8"))[runs % 2]
        console.log(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: {
          token: ${JSON.stringify(server.token)}, clientCertificateData: certificate.cert, clientKeyData: certificate.key,
          expirationTimestamp: new Date(Date.now() + 2000).toISOString()
        } }))`
      const kubeconfigPath = join(dir, "kubeconfig")
      writeFileSync(kubeconfigPath, kubeconfig(
        { server: `https://127.0.0.1:${fronted.port}`, "certificate-authority-data": Buffer.from(serving.cert).toString("base64") },
        { exec: { apiVersion: "client.authentication.k8s.io/v1", command: process.execPath, args: ["-e", plugin], interactiveMode: "Never" } }
      ))
      const kube = Context.get(yield* Layer.build(Kube.layer({ _tag: "File", path: kubeconfigPath })), Kube.Kube)
      const [first, second] = certificates.map((certificate) => fingerprint(certificate.cert))

      yield* kube.get(Builtins.Namespace, "default")
      assert.deepStrictEqual([...new Set(fronted.presented)], [first])
      // The first certificate expires; the client's credentials are read again on its next request.
      yield* wait(2200)
      yield* TestClock.adjust("31 seconds")
      yield* kube.get(Builtins.Namespace, "default")
      // The connections made with the first are gone (the server closed them, say): new ones present the second.
      fronted.drop()
      yield* wait(100)
      yield* kube.get(Builtins.Namespace, "default")
      assert.strictEqual(fronted.presented.at(-1), second)
      assert.notStrictEqual(first, second)
    }), { timeout: 30_000 })
})
