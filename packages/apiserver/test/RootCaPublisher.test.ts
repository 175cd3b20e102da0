/**
 * kube-controller-manager's root-ca-cert-publisher in the server, when asked for: every active
 * namespace's `kube-root-ca.crt`, kept as it should be.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { createNamespace } from "./fixtures.ts"

let server: Testing.TestServer
let plain: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({ publishRootCa: true, namespaceCleanupDelayMs: 0 })
  plain = await Testing.start()
})
afterAll(async () => {
  await server.close()
  await plain.close()
})

const rootCa = (namespace: string) => `/api/v1/namespaces/${namespace}/configmaps/kube-root-ca.crt`

/** Polls until `check` holds for the reply to GET `path`, and returns that reply. */
const until = async (path: string, check: (reply: Testing.Reply) => boolean): Promise<Testing.Reply> => {
  let last = await server.request("GET", path)
  for (let i = 0; i < 100 && !check(last); i++) {
    await new Promise((r) => setTimeout(r, 50))
    last = await server.request("GET", path)
  }
  return last
}

describe("kube-root-ca.crt", () => {
  it("holds the cluster's CA in every namespace from the start and in a new one, with kube's description", async () => {
    for (const namespace of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
      const published = await server.request("GET", rootCa(namespace))
      expect(published.status).toBe(200)
      expect(published.json.data).toEqual({ "ca.crt": server.certificateAuthority })
      expect(published.json.metadata.annotations["kubernetes.io/description"]).toMatch(/^Contains a CA bundle that can be used to verify the kube-apiserver/)
    }
    await createNamespace(server, "team")
    expect((await until(rootCa("team"), (r) => r.status === 200)).json.data["ca.crt"]).toBe(server.certificateAuthority)
  })

  it("is made again when deleted and put back when changed", async () => {
    await createNamespace(server, "kept")
    await until(rootCa("kept"), (r) => r.status === 200)
    await server.request("DELETE", rootCa("kept"))
    expect((await until(rootCa("kept"), (r) => r.status === 200)).status).toBe(200)
    await server.request("PATCH", rootCa("kept"), {
      body: { data: { "ca.crt": "forged", extra: "x" } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    const restored = await until(rootCa("kept"), (r) => r.json.data?.["ca.crt"] === server.certificateAuthority)
    expect(restored.json.data).toEqual({ "ca.crt": server.certificateAuthority })
  })

  it("is left out unless asked for, so tests that list ConfigMaps see only their own", async () => {
    expect((await plain.request("GET", rootCa("default"))).status).toBe(404)
  })
})
