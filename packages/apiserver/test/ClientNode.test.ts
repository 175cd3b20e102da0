/**
 * Conformance with @kubernetes/client-node: typed calls through the emitted kubeconfig (HTTPS with
 * the server's CA and the bearer token) and an informer that follows adds, updates and deletes and
 * relists after a 410.
 */
import * as k8s from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap } from "./fixtures.ts"

let server: Testing.TestServer
let kc: k8s.KubeConfig
let core: k8s.CoreV1Api
beforeAll(async () => {
  server = await Testing.start({ bookmarkIntervalMs: 500 })
  kc = new k8s.KubeConfig()
  kc.loadFromFile(server.kubeconfigPath)
  core = kc.makeApiClient(k8s.CoreV1Api)
  await core.createNamespace({ body: { metadata: { name: "informed" } } })
})
afterAll(() => server.close())

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200; i++) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe("client-node", () => {
  it("creates, reads, replaces and deletes through the typed API", async () => {
    const created = await core.createNamespacedConfigMap({ namespace: "informed", body: configMap("typed", { a: "1" }) })
    expect(created.metadata?.uid).toBeTruthy()
    const read = await core.readNamespacedConfigMap({ namespace: "informed", name: "typed" })
    expect(read.data).toEqual({ a: "1" })
    const replaced = await core.replaceNamespacedConfigMap({ namespace: "informed", name: "typed", body: { ...read, data: { a: "2" } } })
    expect(replaced.data).toEqual({ a: "2" })
    await expect(core.replaceNamespacedConfigMap({ namespace: "informed", name: "typed", body: { ...read, data: { a: "3" } } }))
      .rejects.toMatchObject({ code: 409 })
    await core.deleteNamespacedConfigMap({ namespace: "informed", name: "typed" })
    await expect(core.readNamespacedConfigMap({ namespace: "informed", name: "typed" })).rejects.toMatchObject({ code: 404 })
  })

  it("feeds an informer adds, updates and deletes, and it relists after a 410", async () => {
    const seen: Array<string> = []
    const informer = k8s.makeInformer(
      kc,
      "/api/v1/namespaces/informed/configmaps",
      () => core.listNamespacedConfigMap({ namespace: "informed" })
    )
    informer.on("add", (o) => seen.push(`add ${o.metadata?.name}`))
    informer.on("update", (o) => seen.push(`update ${o.metadata?.name} ${o.data?.v}`))
    informer.on("delete", (o) => seen.push(`delete ${o.metadata?.name}`))
    const errors: Array<unknown> = []
    informer.on("error", (e) => errors.push(e))
    await informer.start()
    try {
      await core.createNamespacedConfigMap({ namespace: "informed", body: configMap("one", { v: "1" }) })
      await until(() => seen.includes("add one"), "add")
      await core.patchNamespacedConfigMap(
        { namespace: "informed", name: "one", body: { data: { v: "2" } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch)
      )
      await until(() => seen.includes("update one 2"), "update")
      await core.deleteNamespacedConfigMap({ namespace: "informed", name: "one" })
      await until(() => seen.includes("delete one"), "delete")

      expect(server.faults.expireWatches({ resource: "configmaps" })).toBeGreaterThanOrEqual(1)
      await core.createNamespacedConfigMap({ namespace: "informed", body: configMap("two", { v: "1" }) })
      await until(() => seen.includes("add two"), "add after 410")
      expect(informer.list().map((o) => o.metadata?.name)).toEqual(["two"])
      expect(errors).toEqual([])
    } finally {
      await informer.stop()
    }
  })
})
