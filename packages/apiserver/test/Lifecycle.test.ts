/**
 * What the server's own controllers do: garbage collection with Background, Foreground and Orphan
 * propagation, namespace deletion, and CRD deletion with its custom resources.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, crontab, crontabCrd, installCrd, watch } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
  await createNamespace(server, "gc")
})
afterAll(() => server.close())

const cms = "/api/v1/namespaces/gc/configmaps"
const settled = () => Effect.runPromise(server.settled)

const owner = async (name: string) => (await server.request("POST", cms, { body: configMap(name) })).json
const dependent = async (name: string, owners: ReadonlyArray<any>, block = false) =>
  (await server.request("POST", cms, {
    body: configMap(name, {}, {
      ownerReferences: owners.map((o) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        name: o.metadata.name,
        uid: o.metadata.uid,
        ...(block ? { blockOwnerDeletion: true } : {})
      }))
    })
  })).json
const exists = async (name: string) => (await server.request("GET", `${cms}/${name}`)).status === 200

describe("garbage collection", () => {
  it("deletes dependents after their owner with Background propagation (the default)", async () => {
    const o = await owner("bg-owner")
    await dependent("bg-dep", [o])
    expect((await server.request("DELETE", `${cms}/bg-owner`)).json.status).toBe("Success")
    await settled()
    expect(await exists("bg-dep")).toBe(false)
  })

  it("keeps a Foreground owner until its blocking dependents are gone", async () => {
    const o = await owner("fg-owner")
    await dependent("fg-dep", [o], true)
    await server.request("PATCH", `${cms}/fg-dep`, {
      body: { metadata: { finalizers: ["example.com/slow"] } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    const deleting = await server.request("DELETE", `${cms}/fg-owner`, { body: { propagationPolicy: "Foreground" } })
    expect(deleting.json.metadata.finalizers).toContain("foregroundDeletion")
    await settled()
    expect(await exists("fg-owner")).toBe(true)
    expect((await server.request("GET", `${cms}/fg-dep`)).json.metadata.deletionTimestamp).toBeTruthy()
    await server.request("PATCH", `${cms}/fg-dep`, {
      body: { metadata: { finalizers: null } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    await settled()
    expect(await exists("fg-dep")).toBe(false)
    expect(await exists("fg-owner")).toBe(false)
  })

  it("orphans dependents with Orphan propagation", async () => {
    const o = await owner("or-owner")
    await dependent("or-dep", [o])
    await server.request("DELETE", `${cms}/or-owner?propagationPolicy=Orphan`)
    await settled()
    expect(await exists("or-owner")).toBe(false)
    const orphan = await server.request("GET", `${cms}/or-dep`)
    // 1.32 removes the key rather than leaving an empty list.
    expect(orphan.json.metadata).not.toHaveProperty("ownerReferences")
  })

  it("drops the reference to a deleted owner while another owner remains", async () => {
    const a = await owner("two-a")
    const b = await owner("two-b")
    await dependent("two-dep", [a, b])
    await server.request("DELETE", `${cms}/two-a`)
    await settled()
    const dep = await server.request("GET", `${cms}/two-dep`)
    expect(dep.json.metadata.ownerReferences.map((r: any) => r.name)).toEqual(["two-b"])
  })

  it("follows owner references an update adds or takes away, and not the updates that keep them", async () => {
    const a = await owner("upd-a")
    const b = await owner("upd-b")
    await server.request("POST", cms, { body: configMap("upd-dep") })
    const refs = (...owners: ReadonlyArray<any>) =>
      owners.map((o) => ({ apiVersion: "v1", kind: "ConfigMap", name: o.metadata.name, uid: o.metadata.uid }))
    const patch = (body: unknown) =>
      server.request("PATCH", `${cms}/upd-dep`, { body, headers: { "content-type": "application/merge-patch+json" } })
    await patch({ metadata: { ownerReferences: refs(a) } })
    // Updates that keep the owners (data, labels) leave the dependent indexed under a.
    await patch({ data: { step: "1" } })
    await patch({ metadata: { labels: { step: "2" } } })
    await patch({ metadata: { ownerReferences: refs(b) } })
    await server.request("DELETE", `${cms}/upd-a`)
    await settled()
    expect(await exists("upd-dep")).toBe(true)
    await patch({ data: { step: "3" } })
    await server.request("DELETE", `${cms}/upd-b`)
    await settled()
    expect(await exists("upd-dep")).toBe(false)
  })
})

describe("namespace deletion", () => {
  it("marks the namespace Terminating, refuses new content, empties it and then removes it", async () => {
    await createNamespace(server, "doomed")
    const path = "/api/v1/namespaces/doomed/configmaps"
    await server.request("POST", path, { body: configMap("plain") })
    await server.request("POST", path, { body: configMap("held", {}, { finalizers: ["example.com/hold"] }) })
    await server.request("POST", path, { body: configMap("deleted-by-hand") })
    const deleting = await server.request("DELETE", "/api/v1/namespaces/doomed")
    expect(deleting.status).toBe(200)
    expect(deleting.json.status.phase).toBe("Terminating")
    const refused = await server.request("POST", path, { body: configMap("late") })
    expect(refused.status).toBe(403)
    // Content stays for a moment, as on a cluster: `kubectl delete -f` of a bundle deletes it itself.
    expect((await server.request("GET", `${path}/plain`)).status).toBe(200)
    expect((await server.request("DELETE", `${path}/deleted-by-hand`)).status).toBe(200)
    await settled()
    expect((await server.request("GET", `${path}/plain`)).status).toBe(404)
    const held = (await server.request("GET", "/api/v1/namespaces/doomed")).json
    expect(held.status.phase).toBe("Terminating")
    // What holds it, in its conditions, as kubectl describe namespace shows them.
    expect(held.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message])).toEqual([
      ["NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"],
      ["NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions", "All legacy kube types successfully parsed"],
      ["NamespaceDeletionContentFailure", "False", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"],
      ["NamespaceContentRemaining", "True", "SomeResourcesRemain", "Some resources are remaining: configmaps. has 1 resource instances"],
      ["NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"]
    ])
    await server.request("PATCH", `${path}/held`, {
      body: { metadata: { finalizers: null } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    await settled()
    expect((await server.request("GET", "/api/v1/namespaces/doomed")).status).toBe(404)
  })
})

describe("CRD lifecycle", () => {
  it("serves the kind once Established and deletes its custom resources with it", async () => {
    const crd = crontabCrd("widgets", "Widget")
    const installed = await installCrd(server, crd)
    // The cleanup finalizer comes with the deletion, not the creation.
    expect(installed.metadata).not.toHaveProperty("finalizers")
    // The create answers Go's zero status, before the controllers set it: typed clients read its names.
    expect(installed.status).toEqual({ conditions: null, acceptedNames: { plural: "", kind: "" }, storedVersions: ["v1"] })
    const established = await server.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)
    expect(established.json.status.conditions).toEqual(expect.arrayContaining([
      expect.objectContaining({ type: "NamesAccepted", status: "True", reason: "NoConflicts" }),
      expect.objectContaining({ type: "Established", status: "True", reason: "InitialNamesAccepted" })
    ]))
    expect(established.json.status.acceptedNames.kind).toBe("Widget")
    const widgets = "/apis/stable.example.com/v1/namespaces/gc/widgets"
    const widget = { ...crontab("w1"), kind: "Widget" }
    expect((await server.request("POST", widgets, { body: widget })).status).toBe(201)
    // An open watch of the kind sees its objects deleted, then the server ends it.
    const watched = await watch(server, `${widgets}?watch=true`, 10, 10_000, async () => {
      await server.request("DELETE", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)
      await settled()
    })
    expect(watched.ended).toBe(true)
    expect(watched.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED w1", "DELETED w1"])
    expect((await server.request("GET", `${widgets}?watch=true`)).status).toBe(404)
    expect((await server.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)).status).toBe(404)
    expect((await server.request("GET", widgets)).status).toBe(404)
    expect((await server.request("GET", "/apis/stable.example.com/v1")).status).toBe(404)
  })

  it("deletes the custom resources of a CRD last applied server-side, so a re-created CRD has none", async () => {
    const crd = crontabCrd("gizmos", "Gizmo")
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`
    const apply = (body: unknown) =>
      server.request("PATCH", `${path}?fieldManager=kubectl&force=true`, {
        body,
        headers: { "content-type": "application/apply-patch+yaml" }
      })
    expect((await apply(crd)).status).toBe(201)
    await settled()
    const gizmos = "/apis/stable.example.com/v1/namespaces/gc/gizmos"
    expect((await server.request("POST", gizmos, { body: { ...crontab("g1"), kind: "Gizmo" } })).status).toBe(201)
    // The second apply (without finalizers, as every manifest is) must not strip what deletion relies on.
    expect((await apply(crd)).status).toBe(200)
    const deleting = await server.request("DELETE", path)
    expect(deleting.json.metadata.finalizers).toEqual(["customresourcecleanup.apiextensions.k8s.io"])
    // The DELETE's answer already says it is terminating, as kube's first deletion writes it.
    expect(deleting.json.status.conditions.find((c: { type: string }) => c.type === "Terminating")).toMatchObject({
      status: "True",
      reason: "InstanceDeletionPending"
    })
    await settled()
    expect((await server.request("GET", path)).status).toBe(404)
    expect((await apply(crd)).status).toBe(201)
    await settled()
    const listed = await server.request("GET", gizmos)
    expect(listed.status).toBe(200)
    expect(listed.json.items).toEqual([])
  })

  it("rejects an invalid CRD with 422", async () => {
    const bad = { ...crontabCrd("gadgets", "Gadget"), metadata: { name: "wrong.name" } }
    const reply = await server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: bad })
    expect(reply.status).toBe(422)
    expect(reply.json.details.causes[0].field).toBe("metadata.name")
  })
})
