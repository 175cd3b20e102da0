/**
 * The `kubernetes` Service every cluster has in `default`, as kube-apiserver's bootstrap controller
 * keeps it: 10.96.0.1:443 to the server's port, its Endpoints and EndpointSlice the server's
 * address, made again when deleted, its endpoints following the server to another port.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
})
afterAll(async () => {
  await server?.close()
})

const service = "/api/v1/namespaces/default/services/kubernetes"
const endpoints = "/api/v1/namespaces/default/endpoints/kubernetes"
const slice = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"

describe("the kubernetes Service", () => {
  it("is 10.96.0.1:443 to the server's port, its endpoints the server's address", async () => {
    const kubernetes = await poll(server, service, (s) => s.spec !== undefined)
    expect(kubernetes.metadata.labels).toEqual({ component: "apiserver", provider: "kubernetes" })
    expect(kubernetes.spec).toMatchObject({ type: "ClusterIP", clusterIP: "10.96.0.1", clusterIPs: ["10.96.0.1"], ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: server.port }] })
    expect((await server.request("GET", endpoints)).json.subsets).toEqual([{ addresses: [{ ip: "127.0.0.1" }], ports: [{ name: "https", port: server.port, protocol: "TCP" }] }])
    const served = (await server.request("GET", slice)).json
    expect([served.addressType, served.endpoints, served.ports, served.metadata.labels]).toEqual([
      "IPv4",
      [{ addresses: ["127.0.0.1"], conditions: { ready: true } }],
      [{ name: "https", port: server.port, protocol: "TCP" }],
      { "kubernetes.io/service-name": "kubernetes" }
    ])
  })

  it("is made again when deleted, and its endpoints put back when changed", async () => {
    expect((await server.request("DELETE", service)).status).toBe(200)
    const again = await poll(server, service, (s) => s.spec?.clusterIP === "10.96.0.1")
    expect(again.spec.ports[0].targetPort).toBe(server.port)
    const current = (await server.request("GET", endpoints)).json
    await server.request("PUT", endpoints, { body: { ...current, subsets: [{ addresses: [{ ip: "10.0.0.9" }], ports: [{ name: "https", port: 1 }] }] } })
    await poll(server, endpoints, (e) => e.subsets?.[0]?.addresses?.[0]?.ip === "127.0.0.1")
  })

  it("follows the server when it starts again on another port", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "kubefx-kubernetes-service-"))
    try {
      const first = await Testing.start({ dataDir })
      const firstPort = first.port
      await poll(first, endpoints, (e) => e.subsets?.[0]?.ports?.[0]?.port === firstPort)
      await first.close()
      const second = await Testing.start({ dataDir })
      try {
        expect(second.port).not.toBe(firstPort)
        await poll(second, endpoints, (e) => e.subsets?.[0]?.ports?.[0]?.port === second.port)
        await poll(second, service, (s) => s.spec?.ports?.[0]?.targetPort === second.port)
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
