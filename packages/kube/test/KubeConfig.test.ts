/**
 * Connections: an operator in its pod connects with its service account, without
 * `@kubernetes/client-node`, over HTTPS to the API server (the embedded one's TLS side here),
 * reading its token again once a minute; a kubeconfig goes through client-node.
 */
import { assert, describe, it } from "@effect/vitest"
import { ApiServer, Certificate } from "@kubefx/apiserver"
import { Builtins, Kube, KubeConfig } from "@kubefx/kube"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import * as Connected from "../bench/connected.ts"
import { execUser, kubeconfig } from "../bench/kubeconfigs.ts"

// The embedded server's TLS side, as a pod sees its API server: the service's host and port in the
// environment, the token and CA in a mounted directory.
const pod = Effect.gen(function*() {
  const server = yield* ApiServer.make({ port: 0 })
  const directory = mkdtempSync(join(tmpdir(), "kubefx-service-account-"))
  // With a line break, which the token is read without, as client-go reads it.
  writeFileSync(join(directory, "token"), `${server.token}\n`)
  writeFileSync(join(directory, "ca.crt"), server.certificateAuthority)
  writeFileSync(join(directory, "namespace"), "default")
  const url = new URL(server.httpsUrl)
  const before = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT }
  process.env.KUBERNETES_SERVICE_HOST = url.hostname
  process.env.KUBERNETES_SERVICE_PORT = url.port
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      restore("KUBERNETES_SERVICE_HOST", before.host)
      restore("KUBERNETES_SERVICE_PORT", before.port)
      rmSync(directory, { recursive: true, force: true })
    })
  )
  return { server, directory }
})

const restore = (name: string, value: string | undefined) => {
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}

const namespaces = (kube: Kube.Client) => Effect.map(kube.list(Builtins.Namespace), (list) => list.items.map((n) => n.metadata.name))

const connectInChild = (tag: "InCluster" | "File" | "Default", location: string, env: NodeJS.ProcessEnv = process.env) =>
  Connected.run([tag, location], env)

describe("KubeConfig", () => {
  it.effect("in its pod, an operator reaches the API server over HTTPS with the service account's token and CA", () =>
    Effect.gen(function*() {
      const { directory, server } = yield* pod
      const connection = yield* KubeConfig.inCluster(directory)
      assert.strictEqual(connection.server, server.httpsUrl)
      const names = yield* namespaces(yield* Kube.make(connection))
      assert.include(names, "default")
      // The same through client-node, for a caller who wants its KubeConfig (which sends the
      // token file as it is: kubelet writes it without a line break).
      writeFileSync(join(directory, "token"), server.token)
      const loaded = yield* KubeConfig.load({ _tag: "InCluster", directory })
      assert.strictEqual(loaded.getContextObject(loaded.getCurrentContext())?.namespace, "default")
      assert.include(yield* namespaces(yield* Kube.make(yield* KubeConfig.connect(loaded))), "default")
    }).pipe(Effect.scoped))

  it.effect("the token is read again once it is a minute old, and a token that cannot be read leaves the last one", () =>
    Effect.gen(function*() {
      const { directory, server } = yield* pod
      const kube = yield* Kube.make(yield* KubeConfig.inCluster(directory))
      const tokenFile = join(directory, "token")
      writeFileSync(tokenFile, "rotated-to-a-token-the-server-refuses")
      // Under a minute: the token read at the start is still the one sent.
      yield* TestClock.adjust("59 seconds")
      assert.include(yield* namespaces(kube), "default")
      yield* TestClock.adjust("2 seconds")
      const refused = yield* Effect.flip(namespaces(kube))
      assert.strictEqual(refused._tag, "Unauthorized")
      writeFileSync(tokenFile, server.token)
      yield* TestClock.adjust("61 seconds")
      assert.include(yield* namespaces(kube), "default")
      unlinkSync(tokenFile)
      yield* TestClock.adjust("61 seconds")
      assert.include(yield* namespaces(kube), "default")
    }).pipe(Effect.scoped))

  it.effect("outside a cluster, or without the service account's files, the error says what is missing", () =>
    Effect.gen(function*() {
      const { directory } = yield* pod
      unlinkSync(join(directory, "ca.crt"))
      const noCa = yield* Effect.flip(KubeConfig.inCluster(directory))
      assert.match(noCa.message, /cannot read the service account's CA certificate: .*ca\.crt/)
      const host = process.env.KUBERNETES_SERVICE_HOST
      delete process.env.KUBERNETES_SERVICE_HOST
      const outside = yield* Effect.flip(KubeConfig.inCluster(directory))
      const outsideLoaded = yield* Effect.flip(KubeConfig.load({ _tag: "InCluster", directory }))
      process.env.KUBERNETES_SERVICE_HOST = host
      assert.strictEqual(outside.message, "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set")
      assert.include(outsideLoaded.message, "not in a cluster")
    }).pipe(Effect.scoped))

  it.effect("an IPv6 service host is bracketed in the server URL", () =>
    Effect.gen(function*() {
      const { directory } = yield* pod
      process.env.KUBERNETES_SERVICE_HOST = "fd00::1"
      const connection = yield* KubeConfig.inCluster(directory)
      assert.strictEqual(connection.server, `https://[fd00::1]:${process.env.KUBERNETES_SERVICE_PORT}`)
    }).pipe(Effect.scoped))

  it.effect("a kubeconfig file of a server, its CA and a token is read directly: the CA trusted, paths from the file's directory", () =>
    Effect.gen(function*() {
      const { directory, server } = yield* pod
      const write = (name: string, cluster: Record<string, unknown>, user: Record<string, unknown>) => {
        const path = join(directory, name)
        writeFileSync(path, kubeconfig(cluster, user))
        return path
      }
      const listed = (path: string, context?: string) =>
        Effect.flatMap(KubeConfig.connection({ _tag: "File", path, context }), (connection) => Effect.flatMap(Kube.make(connection), namespaces))
      const ca = Buffer.from(server.certificateAuthority).toString("base64")
      assert.include(yield* listed(write("data", { server: server.httpsUrl, "certificate-authority-data": ca }, { token: server.token })), "default")
      // Relative to the kubeconfig's directory, whatever the process's.
      assert.include(yield* listed(write("file", { server: server.httpsUrl, "certificate-authority": "ca.crt" }, { token: server.token })), "default")
      assert.include(yield* listed(write("insecure", { server: server.httpsUrl, "insecure-skip-tls-verify": true }, { token: server.token })), "default")
      // Another CA is not trusted: the request fails rather than going on unverified.
      const stranger = Buffer.from(Certificate.selfSigned(["127.0.0.1"]).cert).toString("base64")
      const refused = yield* Effect.flip(listed(write("stranger", { server: server.httpsUrl, "certificate-authority-data": stranger }, { token: server.token })))
      assert.strictEqual(refused._tag, "Transport")
      // A context that names no cluster goes to client-node, which says so.
      const missing = yield* Effect.flip(listed(join(directory, "data"), "nowhere"))
      assert.include(missing.message, "nowhere")
    }).pipe(Effect.scoped))

  it.effect("a kubeconfig with an exec plugin goes through client-node, which runs the plugin for the token", () =>
    Effect.gen(function*() {
      const { directory, server } = yield* pod
      const path = join(directory, "exec")
      writeFileSync(path, kubeconfig({ server: server.httpsUrl, "certificate-authority-data": Buffer.from(server.certificateAuthority).toString("base64") }, execUser(server.token)))
      const connection = yield* KubeConfig.connection({ _tag: "File", path })
      assert.include(yield* namespaces(yield* Kube.make(connection)), "default")
    }).pipe(Effect.scoped))

  it.live("Default reads the one file of $KUBECONFIG, or ~/.kube/config, directly, gives several files to client-node, and in a pod takes its service account", () =>
    Effect.gen(function*() {
      const { directory, server } = yield* pod
      const ca = Buffer.from(server.certificateAuthority).toString("base64")
      const plain = kubeconfig({ server: server.httpsUrl, "certificate-authority-data": ca }, { token: server.token })
      const { KUBECONFIG: _, ...withoutKubeconfig } = process.env
      // A home with its kubeconfig, and no $KUBECONFIG.
      const home = join(directory, "home")
      mkdirSync(join(home, ".kube"), { recursive: true })
      writeFileSync(join(home, ".kube", "config"), plain)
      const fromHome = yield* connectInChild("Default", "", { ...withoutKubeconfig, HOME: home })
      assert.include(fromHome.names, "default")
      assert.isFalse(fromHome.clientNode)
      // $KUBECONFIG first, over the home's (which names a server that is not there).
      writeFileSync(join(home, ".kube", "config"), kubeconfig({ server: "https://127.0.0.1:1" }, { token: "none" }, "elsewhere"))
      const one = join(directory, "one")
      writeFileSync(one, plain)
      const fromVariable = yield* connectInChild("Default", "", { ...withoutKubeconfig, HOME: home, KUBECONFIG: one })
      assert.include(fromVariable.names, "default")
      assert.isFalse(fromVariable.clientNode)
      // Several files are merged, by client-node.
      const two = join(directory, "two")
      writeFileSync(two, kubeconfig({ server: server.httpsUrl, "certificate-authority-data": ca }, { token: server.token }, "two"))
      const merged = yield* connectInChild("Default", "", { ...withoutKubeconfig, HOME: home, KUBECONFIG: [one, two].join(delimiter) })
      assert.include(merged.names, "default")
      assert.isTrue(merged.clientNode)
      // Neither $KUBECONFIG nor ~/.kube/config, in a pod (its service account mount stood in for by
      // the fixture): the service account, directly.
      const bare = join(directory, "bare-home")
      mkdirSync(bare)
      const inPod = yield* connectInChild("Default", "", { ...withoutKubeconfig, HOME: bare, KUBEFX_TEST_SERVICE_ACCOUNT_DIRECTORY: directory })
      assert.include(inPod.names, "default")
      assert.isFalse(inPod.clientNode)
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("an operator process in its pod, or with a plain kubeconfig, never loads client-node (nor the CEL interpreter); one with an exec plugin does", () =>
    Effect.gen(function*() {
      const { directory, server } = yield* pod
      const inPod = yield* connectInChild("InCluster", directory)
      assert.include(inPod.names, "default")
      assert.isFalse(inPod.clientNode)
      assert.isFalse(inPod.cel)
      const ca = Buffer.from(server.certificateAuthority).toString("base64")
      const plain = join(directory, "plain")
      writeFileSync(plain, kubeconfig({ server: server.httpsUrl, "certificate-authority-data": ca }, { token: server.token }))
      const fromPlain = yield* connectInChild("File", plain)
      assert.include(fromPlain.names, "default")
      assert.isFalse(fromPlain.clientNode)
      const exec = join(directory, "exec")
      writeFileSync(exec, kubeconfig({ server: server.httpsUrl, "certificate-authority-data": ca }, execUser(server.token)))
      const fromExec = yield* connectInChild("File", exec)
      assert.include(fromExec.names, "default")
      assert.isTrue(fromExec.clientNode)
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
