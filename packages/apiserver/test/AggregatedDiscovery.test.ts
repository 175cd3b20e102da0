/**
 * Aggregated discovery as kube-apiserver 1.32 serves it: `/api` and `/apis` as an
 * `APIGroupDiscoveryList` for clients that ask for it first (kubectl, client-go), the same
 * resources as the legacy documents, groups in kube-aggregator's order, an ETag answered 304, and
 * kubectl discovering the whole server in two requests.
 */
import { mkdtempSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { crontabCrd, group, installCrd } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

const { kubectl, server } = Kubectl.withServer()

const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
const v2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
// What kubectl 1.32 sends.
const kubectlAccept = `${v2},${v2beta1},application/json`

const aggregated = (path: "/api" | "/apis", accept = kubectlAccept, headers: Record<string, string> = {}) =>
  server().request("GET", path, { headers: { accept, ...headers } })

// A legacy APIResourceList as the (resource, subresource) rows an aggregated one must match.
const legacyRows = (resources: ReadonlyArray<any>) =>
  resources.map((r) => JSON.stringify([r.name, r.kind, r.group ?? "", r.version ?? "", r.namespaced, [...r.verbs].sort(), r.shortNames ?? [], r.categories ?? []])).sort()
const aggregatedRows = (resources: ReadonlyArray<any>) =>
  resources.flatMap((r) => [
    JSON.stringify([r.resource, r.responseKind.kind, r.responseKind.group, r.responseKind.version, r.scope === "Namespaced", [...r.verbs].sort(), r.shortNames ?? [], r.categories ?? []]),
    ...(r.subresources ?? []).map((s: any) =>
      JSON.stringify([`${r.resource}/${s.subresource}`, s.responseKind.kind, s.responseKind.group, s.responseKind.version, r.scope === "Namespaced", [...s.verbs].sort(), [], []]))
  ]).sort()

describe("aggregated discovery", () => {
  it("lists every group served, in kube-aggregator's order, each version with the resources its legacy document lists", async () => {
    const response = await aggregated("/apis")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe(v2)
    expect(response.headers.get("vary")).toBe("Accept")
    const list = response.json
    expect([list.kind, list.apiVersion]).toEqual(["APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"])
    const names = list.items.map((g: any) => g.metadata.name)
    // apiregistration first, then by the APIServices' group priority, ties by name.
    expect(names.slice(0, 6)).toEqual(["apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io", "autoscaling"])
    expect(names.indexOf("admissionregistration.k8s.io")).toBe(names.indexOf("apiextensions.k8s.io") - 1)
    // autoscaling/v2 has the higher version priority: listed, and preferred, first.
    expect(list.items.find((g: any) => g.metadata.name === "autoscaling").versions.map((v: any) => v.version)).toEqual(["v2", "v1"])
    // The legacy list is in the same order.
    expect((await server().request("GET", "/apis")).json.groups.map((g: any) => g.name)).toEqual(names)

    for (const item of list.items) {
      for (const version of item.versions) {
        expect(version.freshness).toBe("Current")
        const legacy = await server().request("GET", `/apis/${item.metadata.name}/${version.version}`)
        expect(aggregatedRows(version.resources), `${item.metadata.name}/${version.version}`).toEqual(legacyRows(legacy.json.resources))
      }
    }
    const deployments = list.items.find((g: any) => g.metadata.name === "apps").versions[0].resources.find((r: any) => r.resource === "deployments")
    expect(deployments).toMatchObject({
      responseKind: { group: "", version: "", kind: "Deployment" },
      scope: "Namespaced",
      singularResource: "deployment",
      shortNames: ["deploy"],
      categories: ["all"],
      subresources: [
        { subresource: "scale", responseKind: { group: "autoscaling", version: "v1", kind: "Scale" }, verbs: ["get", "patch", "update"] },
        { subresource: "status", responseKind: { group: "", version: "", kind: "Deployment" }, verbs: ["get", "patch", "update"] }
      ]
    })
  })

  it("answers /api with the core group alone", async () => {
    const list = (await aggregated("/api")).json
    expect(list.items).toHaveLength(1)
    const [core] = list.items
    expect(core.metadata).toEqual({ creationTimestamp: null })
    expect(core.versions.map((v: any) => [v.version, v.freshness])).toEqual([["v1", "Current"]])
    const legacy = (await server().request("GET", "/api/v1")).json.resources
    expect(aggregatedRows(core.versions[0].resources)).toEqual(legacyRows(legacy))
    const pods = core.versions[0].resources.find((r: any) => r.resource === "pods")
    expect(pods.subresources.map((s: any) => s.subresource)).toEqual(["attach", "binding", "ephemeralcontainers", "eviction", "exec", "log", "portforward", "status"])
    const token = core.versions[0].resources.find((r: any) => r.resource === "serviceaccounts").subresources[0]
    expect(token).toEqual({ subresource: "token", responseKind: { group: "authentication.k8s.io", version: "v1", kind: "TokenRequest" }, verbs: ["create"] })
  })

  it("serves v2beta1 to a client asking for it, and the legacy document to one asking for plain JSON first", async () => {
    const beta = await aggregated("/apis", v2beta1)
    expect(beta.headers.get("content-type")).toBe(v2beta1)
    expect(beta.json.apiVersion).toBe("apidiscovery.k8s.io/v2beta1")
    expect((await aggregated("/apis", `application/json,${v2}`)).json.kind).toBe("APIGroupList")
    expect((await aggregated("/api", "application/json")).json.kind).toBe("APIVersions")
    // Protobuf is not served: the JSON entry after it is.
    const protobufFirst = await aggregated("/apis", `application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,${v2}`)
    expect(protobufFirst.headers.get("content-type")).toBe(v2)
  })

  it("tags the document: the same tag is answered 304 until a CRD changes what is served", async () => {
    const first = await aggregated("/apis")
    const tag = first.headers.get("etag")!
    expect(tag).toMatch(/^"[0-9A-F]{128}"$/)
    expect(first.headers.get("cache-control")).toBe("public")
    const again = await aggregated("/apis", kubectlAccept, { "if-none-match": tag })
    expect([again.status, again.text]).toEqual([304, ""])

    await installCrd(server(), crontabCrd())
    const withCrd = await pollAggregated((list) => list.items.some((g: any) => g.metadata.name === group))
    const custom = withCrd.items.find((g: any) => g.metadata.name === group)
    // A CRD's kinds carry their group version; status before scale, as the CRD's discovery lists them.
    expect(custom.versions[0].resources[0]).toMatchObject({
      resource: "crontabs",
      responseKind: { group, version: "v1", kind: "CronTab" },
      scope: "Namespaced",
      singularResource: "crontab",
      shortNames: ["crx"]
    })
    const changed = await aggregated("/apis", kubectlAccept, { "if-none-match": tag })
    expect(changed.status).toBe(200)
    expect(changed.headers.get("etag")).not.toBe(tag)
  })

  it("lets kubectl discover the server with two requests", async () => {
    const cache = mkdtempSync(join(server().dir, "discovery-"))
    const run = await kubectl("get", "crontabs", "-v=6", "--cache-dir", cache)
    expect(run.code, run.stderr).toBe(0)
    const requested = [...run.stderr.matchAll(/GET https:\/\/[^/]+([^ ?]*)/g)].map((m) => m[1])
    expect(requested).toEqual(["/api", "/apis", `/apis/${group}/v1/namespaces/default/crontabs`])
  })
})

const pollAggregated = async (check: (list: any) => boolean) => {
  for (let i = 0; i < 100; i++) {
    const list = (await aggregated("/apis")).json
    if (check(list)) return list
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("aggregated discovery never matched")
}
