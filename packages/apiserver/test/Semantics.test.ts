/**
 * Object semantics over HTTP: generation and resourceVersion rules, no-op writes, dryRun,
 * generateName, the status and scale subresources, managedFields after each kind of write,
 * pagination, and the two views of Events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, crontab, deployment, installCrd } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
  await installCrd(server)
  await createNamespace(server, "sem")
})
afterAll(() => server.close())

const cms = "/api/v1/namespaces/sem/configmaps"
const cts = "/apis/stable.example.com/v1/namespaces/sem/crontabs"
const merge = { "content-type": "application/merge-patch+json" }
const applyYaml = { "content-type": "application/apply-patch+yaml" }

const patch = (path: string, body: unknown, headers = merge) => server.request("PATCH", path, { body, headers })

describe("generation and resourceVersion", () => {
  it("starts custom resources at generation 1 and moves it only for spec changes", async () => {
    const created = await server.request("POST", cts, { body: crontab("gen") })
    expect(created.status).toBe(201)
    expect(created.json.metadata.generation).toBe(1)
    const rv1 = created.json.metadata.resourceVersion
    const spec = await patch(`${cts}/gen`, { spec: { cronSpec: "5 * * * *" } })
    expect(spec.json.metadata.generation).toBe(2)
    const labels = await patch(`${cts}/gen`, { metadata: { labels: { a: "b" } } })
    expect(labels.json.metadata.generation).toBe(2)
    const status = await patch(`${cts}/gen/status`, { status: { phase: "Running" } })
    expect(status.json.metadata.generation).toBe(2)
    expect(status.json.status).toEqual({ phase: "Running" })
    expect(Number(status.json.metadata.resourceVersion)).toBeGreaterThan(Number(labels.json.metadata.resourceVersion))
    expect(Number(labels.json.metadata.resourceVersion)).toBeGreaterThan(Number(rv1))
  })

  it("keeps no generation for ConfigMaps and counts Deployment spec changes", async () => {
    const cm = await server.request("POST", cms, { body: configMap("nogen", { a: "1" }) })
    expect(cm.json.metadata.generation).toBeUndefined()
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: { replicas: 1, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx" }] } } }
    }
    const created = await server.request("POST", "/apis/apps/v1/namespaces/sem/deployments", { body: deployment })
    expect(created.json.metadata.generation).toBe(1)
    const scaled = await patch("/apis/apps/v1/namespaces/sem/deployments/web", { spec: { replicas: 2 } })
    expect(scaled.json.metadata.generation).toBe(2)
  })

  it("answers a no-op write with the stored object: same resourceVersion", async () => {
    const created = await server.request("POST", cms, { body: configMap("noop", { a: "1" }) })
    const again = await patch(`${cms}/noop`, { data: { a: "1" } })
    expect(again.status).toBe(200)
    expect(again.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion)
    const put = await server.request("PUT", `${cms}/noop`, { body: created.json })
    expect(put.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion)
  })

  it("keeps uid and creationTimestamp whatever an update sends, and accepts built-in updates without resourceVersion", async () => {
    const created = await server.request("POST", cms, { body: configMap("keep", { a: "1" }) })
    const updated = await server.request("PUT", `${cms}/keep`, {
      body: configMap("keep", { a: "2" }, { creationTimestamp: "2000-01-01T00:00:00Z" })
    })
    expect(updated.status).toBe(200)
    expect(updated.json.metadata.uid).toBe(created.json.metadata.uid)
    expect(updated.json.metadata.creationTimestamp).toBe(created.json.metadata.creationTimestamp)
    expect(updated.json.data).toEqual({ a: "2" })
  })

  it("treats resourceVersion inside a patch as a precondition", async () => {
    const created = await server.request("POST", cms, { body: configMap("precondition") })
    await patch(`${cms}/precondition`, { data: { x: "1" } })
    const stale = await patch(`${cms}/precondition`, { metadata: { resourceVersion: created.json.metadata.resourceVersion }, data: { x: "2" } })
    expect(stale.status).toBe(409)
  })

  it("generates names from generateName", async () => {
    const created = await server.request("POST", cms, { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "gen-" } } })
    expect(created.status).toBe(201)
    expect(created.json.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
  })

  it("stores nothing on dryRun=All", async () => {
    const created = await server.request("POST", `${cms}?dryRun=All`, { body: configMap("dry") })
    expect(created.status).toBe(201)
    expect(created.json.metadata.uid).toBeTruthy()
    expect((await server.request("GET", `${cms}/dry`)).status).toBe(404)
    await server.request("POST", cms, { body: configMap("drydelete") })
    expect((await server.request("DELETE", `${cms}/drydelete?dryRun=All`)).status).toBe(200)
    expect((await server.request("GET", `${cms}/drydelete`)).status).toBe(200)
  })

  it("checks delete preconditions", async () => {
    const created = await server.request("POST", cms, { body: configMap("pre") })
    const wrong = await server.request("DELETE", `${cms}/pre`, { body: { preconditions: { uid: "not-it" } } })
    expect(wrong.status).toBe(409)
    const right = await server.request("DELETE", `${cms}/pre`, { body: { preconditions: { uid: created.json.metadata.uid } } })
    expect(right.json).toMatchObject({ kind: "Status", status: "Success", details: { name: "pre", kind: "configmaps", uid: created.json.metadata.uid } })
  })
})

describe("lists at a resourceVersion", () => {
  it("waits for a version the server has not reached, and answers 504 when it is not reached in 3 s", async () => {
    const current = Number((await server.request("GET", cms)).json.metadata.resourceVersion)
    // Reached while the list waits: answered with the state at (at least) that version.
    const waiting = server.request("GET", `${cms}?resourceVersion=${current + 1}`)
    await server.request("POST", cms, { body: configMap("awaited") })
    const answered = await waiting
    expect(answered.status).toBe(200)
    expect(Number(answered.json.metadata.resourceVersion)).toBeGreaterThanOrEqual(current + 1)
    expect(answered.json.items.map((i: any) => i.metadata.name)).toContain("awaited")

    const ahead = current + 1000
    const tooLarge = await server.request("GET", `${cms}?resourceVersion=${ahead}&resourceVersionMatch=NotOlderThan`)
    expect(tooLarge.status).toBe(504)
    expect(tooLarge.json).toMatchObject({
      kind: "Status",
      reason: "Timeout",
      code: 504,
      message: expect.stringMatching(new RegExp(`^Timeout: Too large resource version: ${ahead}, current: \\d+$`)),
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 }
    })
  })
})

describe("finalizers", () => {
  it("marks a held object for deletion, then deletes it when the last finalizer goes", async () => {
    await server.request("POST", cts, { body: crontab("held", {}, { finalizers: ["example.com/hold"] }) })
    const deleting = await server.request("DELETE", `${cts}/held`)
    expect(deleting.status).toBe(200)
    expect(deleting.json.metadata.deletionTimestamp).toBeTruthy()
    expect(deleting.json.metadata.deletionGracePeriodSeconds).toBe(0)
    expect(deleting.json.metadata.generation).toBe(2)
    const again = await server.request("DELETE", `${cts}/held`)
    expect(again.json.metadata.resourceVersion).toBe(deleting.json.metadata.resourceVersion)
    const released = await patch(`${cts}/held`, { metadata: { finalizers: null } })
    expect(released.status).toBe(200)
    expect((await server.request("GET", `${cts}/held`)).status).toBe(404)
  })
})

describe("the status subresource", () => {
  it("drops status on create, keeps it on main updates and takes only status on /status", async () => {
    const created = await server.request("POST", cts, { body: { ...crontab("st"), status: { phase: "Fake" } } })
    expect(created.json.status).toBeUndefined()
    await server.request("PUT", `${cts}/st/status`, {
      body: { ...created.json, spec: { cronSpec: "changed" }, metadata: { ...created.json.metadata, labels: { sneaky: "yes" } }, status: { phase: "Ok" } }
    })
    const afterStatus = await server.request("GET", `${cts}/st`)
    expect(afterStatus.json.status).toEqual({ phase: "Ok" })
    expect(afterStatus.json.spec.cronSpec).toBe("* * * * *")
    expect(afterStatus.json.metadata.labels).toBeUndefined()
    const main = await server.request("PUT", `${cts}/st`, { body: { ...afterStatus.json, status: { phase: "Overwritten" } } })
    expect(main.json.status).toEqual({ phase: "Ok" })
  })
})

describe("the scale subresource", () => {
  it("reads and writes replicas through a Scale", async () => {
    await server.request("POST", cts, { body: crontab("sc", { replicas: 2 }) })
    await patch(`${cts}/sc/status`, { status: { replicas: 1, selector: "app=sc" } })
    const scale = await server.request("GET", `${cts}/sc/scale`)
    expect(scale.json).toMatchObject({ kind: "Scale", apiVersion: "autoscaling/v1", spec: { replicas: 2 }, status: { replicas: 1, selector: "app=sc" } })
    const put = await server.request("PUT", `${cts}/sc/scale`, { body: { ...scale.json, spec: { replicas: 4 } } })
    expect(put.json.spec.replicas).toBe(4)
    const patched = await patch(`${cts}/sc/scale`, { spec: { replicas: 5 } })
    expect(patched.json.spec.replicas).toBe(5)
    expect((await server.request("GET", `${cts}/sc`)).json.spec.replicas).toBe(5)
  })

  it("refuses negative replicas of a built-in kind as an invalid Scale, by a PUT or a patch", async () => {
    const deployments = "/apis/apps/v1/namespaces/sem/deployments"
    await server.request("POST", deployments, { body: deployment("negative", 1) })
    const scale = (await server.request("GET", `${deployments}/negative/scale`)).json
    const put = await server.request("PUT", `${deployments}/negative/scale`, { body: { ...scale, spec: { replicas: -2 } } })
    const patched = await patch(`${deployments}/negative/scale`, { spec: { replicas: -2 } })
    for (const reply of [put, patched]) {
      expect([reply.status, reply.json.message]).toEqual([
        422,
        'Scale.autoscaling "negative" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0'
      ])
      expect(reply.json.details).toMatchObject({ name: "negative", group: "autoscaling", kind: "Scale" })
    }
  })
})

describe("managedFields", () => {
  it("records an Update entry for the creator and moves changed fields to later writers", async () => {
    await server.request("POST", `${cms}?fieldManager=creator`, { body: configMap("owned", { a: "1", b: "1" }) })
    const updated = await patch(`${cms}/owned?fieldManager=editor`, { data: { b: "2" } })
    const entries = updated.json.metadata.managedFields
    expect(entries).toEqual([
      expect.objectContaining({ manager: "creator", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:data": { ".": {}, "f:a": {} } } }),
      expect.objectContaining({ manager: "editor", operation: "Update", apiVersion: "v1", fieldsV1: { "f:data": { "f:b": {} } } })
    ])
    expect(entries[0].time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
  })

  it("records an Apply entry with exactly the applied fields, and status writes with subresource status", async () => {
    const applied = await patch(`${cts}/ssa?fieldManager=applier`, crontab("ssa", { replicas: 3 }), applyYaml)
    expect(applied.status).toBe(201)
    expect(applied.json.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: "applier",
        operation: "Apply",
        apiVersion: "stable.example.com/v1",
        fieldsV1: { "f:spec": { "f:cronSpec": {}, "f:replicas": {} } }
      })
    ])
    const status = await patch(`${cts}/ssa/status?fieldManager=reporter`, { status: { phase: "Up" } })
    expect(status.json.metadata.managedFields).toContainEqual(expect.objectContaining({
      manager: "reporter",
      operation: "Update",
      subresource: "status",
      fieldsV1: { "f:status": { ".": {}, "f:phase": {} } }
    }))
    const statusApply = await patch(
      `${cts}/ssa/status?fieldManager=status-applier&force=true`,
      { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "ssa" }, status: { replicas: 3 } },
      applyYaml
    )
    expect(statusApply.json.metadata.managedFields).toContainEqual(expect.objectContaining({
      manager: "status-applier",
      operation: "Apply",
      subresource: "status",
      fieldsV1: { "f:status": { "f:replicas": {} } }
    }))
    expect(statusApply.json.spec.replicas).toBe(3)
  })

  it("shares ownership of equal values, removes fields an applier stops applying, and takes ownership with force", async () => {
    const path = `${cts}/shared`
    await patch(`${path}?fieldManager=a`, crontab("shared", { replicas: 2, color: "red" }), applyYaml)
    const same = await patch(`${path}?fieldManager=b`, crontab("shared", { replicas: 2 }), applyYaml)
    expect(same.status).toBe(200)
    const dropped = await patch(`${path}?fieldManager=a`, crontab("shared", { replicas: 2 }), applyYaml)
    expect(dropped.json.spec.color).toBeUndefined()
    expect(dropped.json.spec.replicas).toBe(2)
    const conflict = await patch(`${path}?fieldManager=c`, crontab("shared", { replicas: 7 }), applyYaml)
    expect(conflict.status).toBe(409)
    const forced = await patch(`${path}?fieldManager=c&force=true`, crontab("shared", { replicas: 7 }), applyYaml)
    expect(forced.json.spec.replicas).toBe(7)
    const noop = await patch(`${path}?fieldManager=c&force=true`, crontab("shared", { replicas: 7 }), applyYaml)
    expect(noop.json.metadata.resourceVersion).toBe(forced.json.metadata.resourceVersion)
  })

  it("treats resourceVersion in an applied configuration as a precondition, also on /status", async () => {
    const created = await patch(`${cts}/locked?fieldManager=a`, crontab("locked"), applyYaml)
    await patch(`${cts}/locked`, { metadata: { labels: { moved: "on" } } })
    const stale = { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "locked", resourceVersion: created.json.metadata.resourceVersion } }
    expect((await patch(`${cts}/locked/status?fieldManager=s`, { ...stale, status: { phase: "x" } }, applyYaml)).status).toBe(409)
    expect((await patch(`${cts}/locked?fieldManager=a`, { ...stale, spec: { cronSpec: "x" } }, applyYaml)).status).toBe(409)
  })

  it("merges map lists by key under apply", async () => {
    const path = `${cts}/ports`
    await patch(`${path}?fieldManager=a`, crontab("ports", { ports: [{ name: "http", port: 80 }] }), applyYaml)
    const both = await patch(`${path}?fieldManager=b`, crontab("ports", { ports: [{ name: "metrics", port: 9090 }] }), applyYaml)
    expect(both.json.spec.ports).toEqual([{ name: "http", port: 80 }, { name: "metrics", port: 9090 }])
  })
})

describe("lists", () => {
  it("pages with limit and continue at the first page's revision", async () => {
    await createNamespace(server, "pages")
    const path = "/api/v1/namespaces/pages/configmaps"
    for (const name of ["e", "a", "d", "c", "b"]) await server.request("POST", path, { body: configMap(name) })
    const first = await server.request("GET", `${path}?limit=2`)
    expect(first.json.items.map((i: any) => i.metadata.name)).toEqual(["a", "b"])
    expect(first.json.metadata.remainingItemCount).toBe(3)
    await server.request("DELETE", `${path}/c`)
    await server.request("POST", path, { body: configMap("bb") })
    const second = await server.request("GET", `${path}?limit=2&continue=${first.json.metadata.continue}`)
    expect(second.json.items.map((i: any) => i.metadata.name)).toEqual(["c", "d"])
    expect(second.json.metadata.resourceVersion).toBe(first.json.metadata.resourceVersion)
    const last = await server.request("GET", `${path}?limit=2&continue=${second.json.metadata.continue}`)
    expect(last.json.items.map((i: any) => i.metadata.name)).toEqual(["e"])
    expect(last.json.metadata.continue).toBeUndefined()
  })

  it("leaves apiVersion and kind out of a built-in list's items, as kube's conversion of the list does; custom resources keep them", async () => {
    await createNamespace(server, "typemeta")
    await server.request("POST", "/api/v1/namespaces/typemeta/configmaps", { body: configMap("plain") })
    await server.request("POST", "/apis/stable.example.com/v1/namespaces/typemeta/crontabs", { body: crontab("typed") })
    const builtin = (await server.request("GET", "/api/v1/namespaces/typemeta/configmaps")).json
    expect([builtin.apiVersion, builtin.kind]).toEqual(["v1", "ConfigMapList"])
    expect(builtin.items.map((i: any) => [i.metadata.name, i.apiVersion, i.kind])).toEqual([["plain", undefined, undefined]])
    const custom = (await server.request("GET", "/apis/stable.example.com/v1/namespaces/typemeta/crontabs")).json
    expect(custom.items.map((i: any) => [i.apiVersion, i.kind])).toEqual([["stable.example.com/v1", "CronTab"]])
    // An object read alone has them.
    expect((await server.request("GET", "/api/v1/namespaces/typemeta/configmaps/plain")).json.kind).toBe("ConfigMap")
  })

  it("filters by labels and fields, across namespaces too", async () => {
    await server.request("POST", cts, { body: crontab("red", { color: "red" }, { labels: { tier: "a" } }) })
    await server.request("POST", cts, { body: crontab("blue", { color: "blue" }, { labels: { tier: "b" } }) })
    const byField = await server.request("GET", `${cts}?fieldSelector=spec.color%3Dred`)
    expect(byField.json.items.map((i: any) => i.metadata.name)).toEqual(["red"])
    const byLabel = await server.request("GET", `/apis/stable.example.com/v1/crontabs?labelSelector=tier%20in%20(b)`)
    expect(byLabel.json.items.map((i: any) => i.metadata.name)).toEqual(["blue"])
    expect(byLabel.json.kind).toBe("CronTabList")
  })

  it("answers kubectl's Table request with printer columns", async () => {
    const table = await server.request("GET", `${cts}?labelSelector=tier%3Da`, {
      headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" }
    })
    expect(table.json.kind).toBe("Table")
    expect(table.json.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Spec", "Replicas"])
    expect(table.json.rows[0].cells).toEqual(["red", "* * * * *", 1])
  })

  it("attaches to each row what includeObject asks: metadata by default, the whole object, or nothing", async () => {
    const accept = { accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" }
    const rowObject = async (query: string) =>
      (await server.request("GET", `${cts}?labelSelector=tier%3Da${query}`, { headers: accept })).json.rows[0].object
    expect(await rowObject("")).toEqual({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: expect.objectContaining({ name: "red" }) })
    expect(await rowObject("&includeObject=Metadata")).toMatchObject({ kind: "PartialObjectMetadata" })
    // kubectl --sort-by asks for whole objects, to sort by any field of them.
    expect(await rowObject("&includeObject=Object")).toMatchObject({ kind: "CronTab", apiVersion: "stable.example.com/v1", spec: { color: "red" } })
    expect(await rowObject("&includeObject=None")).toBeNull()
    const one = await server.request("GET", `${cts}/red?includeObject=Object`, { headers: accept })
    expect(one.json.rows[0].object).toMatchObject({ kind: "CronTab", metadata: { name: "red" } })
    const refused = await server.request("GET", `${cts}?includeObject=All`, { headers: accept })
    expect(refused.status).toBe(400)
    expect(refused.json.message).toBe(
      `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`
    )
    // Only a Table reads it: a plain list ignores it, as kube-apiserver does.
    expect((await server.request("GET", `${cts}?includeObject=All`)).status).toBe(200)
  })
})

describe("defaults and pruning", () => {
  it("applies schema defaults, keeps preserved unknown fields and warns about pruned ones", async () => {
    const created = await server.request("POST", cts, { body: crontab("defaults", { extra: true, free: { anything: [1] } }) })
    expect(created.json.spec).toEqual({ cronSpec: "* * * * *", replicas: 1, free: { anything: [1] } })
    expect(created.headers.get("warning")).toBe('299 - "unknown field \\"spec.extra\\""')
    const ignored = await server.request("POST", `${cts}?fieldValidation=Ignore`, { body: crontab("ignored", { extra: true }) })
    expect(ignored.headers.get("warning")).toBeNull()
    // Refused for what it holds, it is still told of the field it should not have sent.
    const refused = await server.request("POST", cts, { body: crontab("refused", { extra: true, replicas: 11 }) })
    expect(refused.status).toBe(422)
    expect(refused.headers.get("warning")).toBe('299 - "unknown field \\"spec.extra\\""')
  })
})

describe("Events and Leases", () => {
  it("serves one stored Event as core/v1 and events.k8s.io/v1", async () => {
    const event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "e1" },
      involvedObject: { kind: "ConfigMap", name: "x", namespace: "sem" },
      reason: "Tested",
      message: "hello",
      type: "Normal",
      eventTime: "2024-01-01T00:00:00.000000Z",
      reportingComponent: "tests",
      reportingInstance: "t-1",
      action: "Test"
    }
    expect((await server.request("POST", "/api/v1/namespaces/sem/events", { body: event })).status).toBe(201)
    const v1 = await server.request("GET", "/apis/events.k8s.io/v1/namespaces/sem/events/e1")
    expect(v1.json).toMatchObject({ apiVersion: "events.k8s.io/v1", note: "hello", regarding: { name: "x" }, reportingController: "tests" })
    const incomplete = await server.request("POST", "/apis/events.k8s.io/v1/namespaces/sem/events", {
      body: { apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "e2" }, note: "n" }
    })
    expect(incomplete.status).toBe(422)
    const byField = await server.request("GET", "/api/v1/namespaces/sem/events?fieldSelector=involvedObject.name%3Dx")
    expect(byField.json.items).toHaveLength(1)
    // Written through the new API, it reads through the old with the fields Go always writes.
    const newStyle = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "e3" },
      eventTime: "2024-01-01T00:00:00.000000Z",
      reportingController: "example.com/app",
      reportingInstance: "app-0",
      action: "Reconcile",
      reason: "Synced",
      type: "Normal",
      regarding: { kind: "ConfigMap", name: "x", namespace: "sem" }
    }
    expect((await server.request("POST", "/apis/events.k8s.io/v1/namespaces/sem/events", { body: newStyle })).status).toBe(201)
    const core = (await server.request("GET", "/api/v1/namespaces/sem/events/e3")).json
    expect([core.source, core.firstTimestamp, core.lastTimestamp, core.reportingComponent]).toEqual([{}, null, null, "example.com/app"])
    const minimal = { apiVersion: "v1", kind: "Event", metadata: { name: "e4" }, involvedObject: { kind: "ConfigMap", name: "x", namespace: "sem" } }
    const written = (await server.request("POST", "/api/v1/namespaces/sem/events", { body: minimal })).json
    expect([written.source, written.eventTime, written.reportingComponent, written.reportingInstance]).toEqual([{}, null, "", ""])
  })

  it("round-trips Lease MicroTimes exactly and guards renewals with resourceVersion", async () => {
    const leases = "/apis/coordination.k8s.io/v1/namespaces/sem/leases"
    const lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "leader" },
      spec: { holderIdentity: "a", leaseDurationSeconds: 15, acquireTime: "2024-05-01T10:00:00.123456Z", renewTime: "2024-05-01T10:00:00.123456Z", leaseTransitions: 0 }
    }
    const created = await server.request("POST", leases, { body: lease })
    expect(created.json.spec.renewTime).toBe("2024-05-01T10:00:00.123456Z")
    const renewed = await server.request("PUT", `${leases}/leader`, {
      body: { ...created.json, spec: { ...created.json.spec, renewTime: "2024-05-01T10:00:05.654321Z" } }
    })
    expect(renewed.json.spec.renewTime).toBe("2024-05-01T10:00:05.654321Z")
    // A time with an offset (Python's isoformat) is stored as Go writes it: UTC.
    const offset = await server.request("PUT", `${leases}/leader`, {
      body: { ...renewed.json, spec: { ...renewed.json.spec, renewTime: "2024-05-01T12:00:06.500000+02:00" } }
    })
    expect([offset.status, offset.json.message, offset.json.spec?.renewTime]).toEqual([200, undefined, "2024-05-01T10:00:06.500000Z"])
    const rival = await server.request("PUT", `${leases}/leader`, {
      body: { ...created.json, spec: { ...created.json.spec, holderIdentity: "b" } }
    })
    expect(rival.status).toBe(409)
  })
})

describe("discovery and OpenAPI", () => {
  it("lists a CRD's resource before its subresources and serves its OpenAPI document", async () => {
    const list = await server.request("GET", "/apis/stable.example.com/v1")
    expect(list.json.resources.map((r: any) => r.name)).toEqual(["crontabs", "crontabs/status", "crontabs/scale"])
    const index = await server.request("GET", "/openapi/v3")
    const url = index.json.paths["apis/stable.example.com/v1"].serverRelativeURL
    const doc = await server.request("GET", url)
    expect(JSON.stringify(doc.json)).toContain('"fieldValidation"')
    expect(index.json.paths["api/v1"]).toBeDefined()
    // Aggregated discovery lists it as one resource with its subresources.
    const groups = await server.request("GET", "/apis", { headers: { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json" } })
    const crontabs = groups.json.items.find((g: any) => g.metadata.name === "stable.example.com").versions[0].resources[0]
    expect([crontabs.resource, ...crontabs.subresources.map((s: any) => s.subresource)]).toEqual(["crontabs", "status", "scale"])
  })
})

describe("health probes", () => {
  it("answer ok, list their checks with ?verbose (some excluded), and answer one check by its path", async () => {
    for (const probe of ["healthz", "livez", "readyz"]) expect((await server.request("GET", `/${probe}`)).text).toBe("ok")
    const verbose = (await server.request("GET", "/readyz?verbose&exclude=etcd&exclude=nonsense")).text.split("\n")
    expect(verbose.slice(0, 5)).toEqual(["[+]ping ok", "[+]log ok", "[+]etcd excluded: ok", "[+]etcd-readiness ok", "[+]informer-sync ok"])
    expect(verbose).toContain("[+]poststarthook/rbac/bootstrap-roles ok")
    expect(verbose.slice(-4)).toEqual(["[+]shutdown ok", 'warn: some health checks cannot be excluded: no matches for "nonsense"', "readyz check passed", ""])
    expect((await server.request("GET", "/livez?verbose")).text.endsWith("[+]autoregister-completion ok\nlivez check passed\n")).toBe(true)
    const one = await server.request("GET", "/livez/poststarthook/rbac/bootstrap-roles")
    expect([one.status, one.text]).toEqual([200, "ok"])
    expect((await server.request("GET", "/readyz/nothing")).status).toBe(404)
  })
})
