/**
 * Metadata-only views over HTTP, as client-go's metadata client asks for them (the Accept headers
 * below are its own): one object as PartialObjectMetadata, a list as PartialObjectMetadataList, a
 * watch's objects and bookmarks as PartialObjectMetadata, a patch answered with the patched
 * object's metadata; and the 406s kube-apiserver gives when the view asked for does not fit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, crontab, installCrd, watch } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
  await installCrd(server)
  await createNamespace(server, "pm")
  for (const name of ["a", "b", "c"]) {
    await server.request("POST", cms, { body: configMap(name, { secret: "value" }, { labels: { app: "pm" } }) })
  }
  await server.request("POST", cts, { body: crontab("tab") })
})
afterAll(() => server.close())

const cms = "/api/v1/namespaces/pm/configmaps"
const cts = "/apis/stable.example.com/v1/namespaces/pm/crontabs"
const one = (version = "v1") => ({
  accept: `application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=${version},application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=${version},application/json`
})
const list = (version = "v1") => ({
  accept: `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=${version},application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=${version},application/json`
})

describe("one object", () => {
  it("is its whole metadata, managedFields included, and nothing else", async () => {
    const full = await server.request("GET", `${cms}/a`)
    const partial = await server.request("GET", `${cms}/a`, { headers: one() })
    expect(partial.status).toBe(200)
    expect(partial.headers.get("content-type")).toBe("application/json")
    expect(partial.json).toEqual({ apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: full.json.metadata })
    expect(partial.json.metadata.managedFields).toHaveLength(1)
    expect(partial.text).not.toContain("value")
  })

  it("is served for custom resources and in meta.k8s.io/v1beta1", async () => {
    const partial = await server.request("GET", `${cts}/tab`, { headers: one("v1beta1") })
    expect(partial.json).toMatchObject({ apiVersion: "meta.k8s.io/v1beta1", kind: "PartialObjectMetadata", metadata: { name: "tab" } })
    expect(partial.json.spec).toBeUndefined()
  })

  it("answers a patch, as the garbage collector's of ownerReferences, with the patched metadata", async () => {
    const patched = await server.request("PATCH", `${cms}/b`, {
      body: { metadata: { labels: { patched: "yes" } } },
      headers: { "content-type": "application/merge-patch+json", ...one() }
    })
    expect(patched.status).toBe(200)
    expect(patched.json).toMatchObject({ kind: "PartialObjectMetadata", metadata: { name: "b", labels: { app: "pm", patched: "yes" } } })
    expect(patched.json.data).toBeUndefined()
    expect((await server.request("GET", `${cms}/b`)).json.metadata.labels.patched).toBe("yes")
  })

  it("leaves errors as Status", async () => {
    const missing = await server.request("GET", `${cms}/nope`, { headers: one() })
    expect(missing.status).toBe(404)
    expect(missing.json).toMatchObject({ kind: "Status", reason: "NotFound" })
  })
})

describe("lists", () => {
  it("are PartialObjectMetadataList, each item PartialObjectMetadata, with the list's metadata", async () => {
    const full = await server.request("GET", `${cms}?labelSelector=app%3Dpm`)
    const partial = await server.request("GET", `${cms}?labelSelector=app%3Dpm`, { headers: list() })
    expect(partial.json.apiVersion).toBe("meta.k8s.io/v1")
    expect(partial.json.kind).toBe("PartialObjectMetadataList")
    expect(partial.json.metadata.resourceVersion).toBe(full.json.metadata.resourceVersion)
    expect(partial.json.items).toEqual(
      full.json.items.map((item: any) => ({ apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: item.metadata }))
    )
  })

  it("page as full lists do", async () => {
    const first = await server.request("GET", `${cms}?limit=2`, { headers: list() })
    expect(first.json.kind).toBe("PartialObjectMetadataList")
    expect(first.json.items.map((item: any) => item.metadata.name)).toEqual(["a", "b"])
    expect(first.json.metadata.remainingItemCount).toBe(1)
    const rest = await server.request("GET", `${cms}?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`, {
      headers: list()
    })
    expect(rest.json.items).toMatchObject([{ kind: "PartialObjectMetadata", metadata: { name: "c" } }])
  })
})

describe("a view that does not fit, or is not served", () => {
  it("is a 406 for a list asked for as one object, and one object as a list", async () => {
    const asOne = await server.request("GET", cms, { headers: { accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1" } })
    expect(asOne.status).toBe(406)
    expect(asOne.json).toMatchObject({ kind: "Status", reason: "NotAcceptable", code: 406 })
    expect(asOne.json.message).toContain("you requested PartialObjectMetadata, but the requested object is a list")
    const asList = await server.request("GET", `${cms}/a`, {
      headers: { accept: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1" }
    })
    expect(asList.status).toBe(406)
    expect(asList.json.message).toContain("you requested PartialObjectMetadataList, but the requested object is not a list")
  })

  it("skips a version or group that holds no PartialObjectMetadata, for the next acceptable entry", async () => {
    const v2 = await server.request("GET", `${cms}/a`, { headers: { accept: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2" } })
    expect(v2.status).toBe(406)
    const fallback = await server.request("GET", `${cms}/a`, {
      headers: { accept: "application/json;as=PartialObjectMetadata;g=example.com;v=v1,application/json" }
    })
    expect(fallback.json.kind).toBe("ConfigMap")
  })
})

describe("watches", () => {
  it("carry each object, and the bookmarks, as PartialObjectMetadata", async () => {
    const path = `${cms}?watch=1&labelSelector=app%3Dpm&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`
    const watched = await watch(server, path, 5, 5000, async () => {
      await new Promise((resolve) => setTimeout(resolve, 100))
      await server.request("PATCH", `${cms}/c`, { body: { data: { more: "x" } }, headers: { "content-type": "application/merge-patch+json" } })
    }, one())
    expect(watched.events.map((event) => event.type)).toEqual(["ADDED", "ADDED", "ADDED", "BOOKMARK", "MODIFIED"])
    for (const event of watched.events) {
      expect(event.object.kind).toBe("PartialObjectMetadata")
      expect(event.object.apiVersion).toBe("meta.k8s.io/v1")
    }
    expect(watched.events[3]!.object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true" })
    expect(watched.events[4]!.object.metadata.name).toBe("c")
    expect(JSON.stringify(watched.events)).not.toContain("value")
  })

  it("do not change what a plain watcher of the same objects gets", async () => {
    const path = `${cms}?watch=1&fieldSelector=metadata.name%3Da`
    const [partial, plain] = await Promise.all([watch(server, path, 1, 5000, undefined, one()), watch(server, path, 1)])
    expect(partial.events[0]!.object.kind).toBe("PartialObjectMetadata")
    expect(plain.events[0]!.object).toMatchObject({ kind: "ConfigMap", data: { secret: "value" } })
  })
})
