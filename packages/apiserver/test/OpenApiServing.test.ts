/**
 * How `/openapi/v3` and `/openapi/v2` are served, over HTTP and to the real kubectl: ETags and
 * caching headers, the redirect of an outdated `?hash=`, content negotiation, and what kubectl
 * makes of `/openapi/v2` when it applies a kind the server does not serve.
 */
import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import * as Protobuf from "../src/Protobuf.ts"
import { crontabCrd, installCrd } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

const { file, kubectl, ok, server } = Kubectl.withServer()
beforeAll(async () => {
  await installCrd(server(), crontabCrd())
})

// Raw requests that do not follow redirects.
const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${server().url}${path}`, { headers: { authorization: `Bearer ${server().token}`, ...headers }, redirect: "manual" })

const documentUrl = async (path: string): Promise<string> => {
  const index = await (await get("/openapi/v3")).json() as { paths: Record<string, { serverRelativeURL: string }> }
  return index.paths[path]!.serverRelativeURL
}

const hashOf = (url: string) => new URL(url, "http://x").searchParams.get("hash")!

describe("/openapi/v3", () => {
  it("tags the index with an ETag and answers a matching If-None-Match with 304", async () => {
    const index = await get("/openapi/v3")
    expect(index.status).toBe(200)
    const etag = index.headers.get("etag")
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/)
    expect((await get("/openapi/v3", { "if-none-match": etag! })).status).toBe(304)
    expect((await get("/openapi/v3", { "if-none-match": "\"other\"" })).status).toBe(200)
  })

  it("serves a document without hash uncached, with the current hash for good, and redirects an outdated one", async () => {
    const url = await documentUrl("apis/stable.example.com/v1")
    const hash = hashOf(url)
    const plain = await get("/openapi/v3/apis/stable.example.com/v1")
    expect(plain.status).toBe(200)
    expect(plain.headers.get("etag")).toBe(`"${hash}"`)
    expect(plain.headers.get("vary")).toBe("Accept")
    expect(plain.headers.get("cache-control")).toBeNull()
    expect(plain.headers.get("expires")).toBeNull()

    const current = await get(url)
    expect(current.status).toBe(200)
    expect(current.headers.get("cache-control")).toBe("public, immutable")
    const expires = Date.parse(current.headers.get("expires")!.replace(/UTC$/, "GMT"))
    expect(expires - Date.now()).toBeGreaterThan(360 * 24 * 3600 * 1000)
    expect(current.headers.get("expires")).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} UTC$/)
    expect(JSON.parse(await current.text()).paths).toHaveProperty(["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"])

    const stale = await get("/openapi/v3/apis/stable.example.com/v1?hash=0123ABCD")
    expect(stale.status).toBe(301)
    expect(stale.headers.get("location")).toBe(url)
    expect(await stale.text()).toBe("")
  })

  it("redirects the URL a CRD change made outdated to the new document", async () => {
    const before = await documentUrl("apis/stable.example.com/v1")
    const crd = crontabCrd()
    const changed = structuredClone(crd) as any
    changed.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.extra = { type: "string", description: "Added later." }
    const current = await server().request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)
    changed.metadata.resourceVersion = current.json.metadata.resourceVersion
    expect((await server().request("PUT", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, { body: changed })).status).toBe(200)
    await Effect.runPromise(server().settled)
    const after = await documentUrl("apis/stable.example.com/v1")
    expect(after).not.toBe(before)
    const redirected = await get(before)
    expect(redirected.status).toBe(301)
    expect(redirected.headers.get("location")).toBe(after)
    // kubectl follows it: a client still holding the old URL reads the current document.
    const raw = JSON.parse(await ok("get", "--raw", before))
    expect(raw.components.schemas["com.example.stable.v1.CronTab"].properties.spec.properties.extra.description).toBe("Added later.")
    // And kubectl reusing its cache directory sees the new field.
    expect(await ok("explain", "crontabs.spec.extra")).toContain("Added later.")
  })

  it("refuses a document in a representation it does not serve (406)", async () => {
    const reply = await get("/openapi/v3/api/v1", { accept: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf" })
    expect(reply.status).toBe(406)
    expect(((await reply.json()) as { reason: string }).reason).toBe("NotAcceptable")
    expect((await get("/openapi/v3/api/v1", { accept: "application/com.github.proto-openapi.spec.v3.v1.0+protobuf, application/json;q=0.5" })).status).toBe(200)
  })
})

describe("/openapi/v2", () => {
  it("serves an empty Swagger 2.0 document as JSON", async () => {
    const reply = await get("/openapi/v2", { accept: "application/json" })
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toBe("application/json")
    expect(reply.headers.get("vary")).toBe("Accept")
    expect(await reply.json()).toEqual({ swagger: "2.0", info: { title: "Kubernetes", version: "v1.32.0" }, paths: {}, definitions: {} })
    expect((await get("/openapi/v2/apps")).status).toBe(404)
    expect((await fetch(`${server().url}/openapi/v2`, { method: "POST", headers: { authorization: `Bearer ${server().token}` } })).status).toBe(405)
  })

  it("serves the same document as gnostic protobuf, under the current media type name, with the JSON's ETag", async () => {
    const json = await get("/openapi/v2", { accept: "application/json" })
    const reply = await get("/openapi/v2", { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" })
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    expect(reply.headers.get("etag")).toBe(json.headers.get("etag"))
    const bytes = new Uint8Array(await reply.arrayBuffer())
    const info = Protobuf.encode([[1, "Kubernetes"], [2, "v1.32.0"]])
    expect([...bytes]).toEqual([...Protobuf.encode([[1, "2.0"], [2, info], [8, new Uint8Array()], [9, new Uint8Array()]])])
    expect([...bytes.slice(0, 5)]).toEqual([0x0a, 3, 0x32, 0x2e, 0x30])
    expect((await get("/openapi/v2", { "if-none-match": reply.headers.get("etag")! })).status).toBe(304)
    expect((await get("/openapi/v2", { accept: "application/xml" })).status).toBe(406)
  })

  const widget = {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "w1" },
    spec: { size: 1 }
  }
  const unserved = "error: resource mapping not found for name: \"w1\" namespace: \"\" from \"PATH\": " +
    "no matches for kind \"Widget\" in version \"example.com/v1\"\nensure CRDs are installed first\n"

  it("lets kubectl apply -f of a kind the server does not serve fail as against 1.32", async () => {
    const path = file("widget.json", widget)
    const applied = await kubectl("apply", "-f", path)
    expect(applied.code).toBe(1)
    expect(applied.stderr).toBe(unserved.replace("PATH", path))
  })

  it("lets kubectl create -f of a kind the server does not serve fail as against 1.32", async () => {
    const path = file("widget-create.json", widget)
    const created = await kubectl("create", "-f", path)
    expect(created.code).toBe(1)
    expect(created.stderr).toBe(unserved.replace("PATH", path))
  })

  it("lets kubectl apply a v1 List, which it validates against /openapi/v2", async () => {
    const path = file("list.json", {
      apiVersion: "v1",
      kind: "List",
      items: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "listed" }, data: { a: "1" } }]
    })
    const applied = await kubectl("apply", "-f", path)
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toBe("configmap/listed created\n")
  })
})
