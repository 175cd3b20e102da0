/**
 * A Pod's exec, attach and portforward as kube-apiserver answers them when no kubelet can be
 * reached: the container checked, then `does not have a host assigned` for a pod on no node, and
 * the refused dial of the kubelet for a bound one.
 */
import { request } from "node:https"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
})
afterAll(async () => {
  await server?.close()
})

const pods = "/api/v1/namespaces/default/pods"
const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "app", image: "nginx" }, { name: "side", image: "busybox" }], ...spec }
})

// fetch refuses to send an Upgrade header; a websocket client sends this.
const upgrading = (path: string) =>
  new Promise<{ status: number; json: any }>((resolve, reject) => {
    const req = request(`${server.httpsUrl}${path}`, {
      ca: server.certificateAuthority,
      headers: { authorization: `Bearer ${server.token}`, connection: "Upgrade", upgrade: "websocket" }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
    })
    req.on("error", reject)
    req.end()
  })

describe("pod connections", () => {
  it("are listed in discovery as kube lists them", async () => {
    const resources = (await server.request("GET", "/api/v1")).json.resources.map((r: any) => [r.name, r.kind, r.verbs.join(",")])
    expect(resources).toContainEqual(["pods/exec", "PodExecOptions", "create,get"])
    expect(resources).toContainEqual(["pods/attach", "PodAttachOptions", "create,get"])
    expect(resources).toContainEqual(["pods/portforward", "PodPortForwardOptions", "create,get"])
  })

  it("check the container, then the node: none assigned is a 400, a bound pod's kubelet refuses", async () => {
    expect((await server.request("POST", pods, { body: pod("floating") })).status).toBe(201)
    const exec = (name: string, query: string) => server.request("POST", `${pods}/${name}/exec?${query}`)
    const unnamed = await exec("floating", "command=ls&stdout=true")
    expect([unnamed.status, unnamed.json.message]).toEqual([400, "a container name must be specified for pod floating, choose one of: [app side]"])
    const wrong = await exec("floating", "command=ls&container=nope")
    expect(wrong.json.message).toBe("container nope is not valid for pod floating")
    const floating = await exec("floating", "command=ls&container=app")
    expect([floating.status, floating.json.reason, floating.json.message]).toEqual([400, "BadRequest", "pod floating does not have a host assigned"])
    const forward = await server.request("POST", `${pods}/floating/portforward?ports=80`)
    expect(forward.json.message).toBe("pod floating does not have a host assigned")

    expect((await server.request("POST", "/api/v1/nodes", { body: { metadata: { name: "node-a" } } })).status).toBe(201)
    await server.request("PATCH", "/api/v1/nodes/node-a/status", {
      body: { status: { addresses: [{ type: "InternalIP", address: "172.18.0.9" }] } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    await server.request("POST", pods, { body: pod("bound", { nodeName: "node-a" }) })
    // A plain request is refused before any dial: these subresources only upgrade.
    const plain = await server.request("GET", `${pods}/bound/attach?container=app`)
    expect([plain.status, plain.json.message]).toEqual([400, "Upgrade request required"])
    const bound = await upgrading(`${pods}/bound/attach?container=app`)
    expect([bound.status, bound.json.message]).toEqual([500, "error dialing backend: dial tcp 172.18.0.9:10250: connect: connection refused"])
    expect((await server.request("POST", `${pods}/missing/exec?container=app`)).status).toBe(404)
  })
})
