/**
 * Every status code of the guide's error table (section 8), each with a metav1.Status body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, crontab, installCrd, watchEvents } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({ historySize: 20 })
  await installCrd(server)
  await createNamespace(server, "errors")
})
afterAll(() => server.close())

const cms = "/api/v1/namespaces/errors/configmaps"
const cts = "/apis/stable.example.com/v1/namespaces/errors/crontabs"

const expectStatus = (reply: Testing.Reply, code: number, reason: string) => {
  expect(reply.status).toBe(code)
  expect(reply.headers.get("content-type")).toContain("application/json")
  expect(reply.json).toMatchObject({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason })
}

describe("400 BadRequest", () => {
  it("for a malformed body", async () => {
    expectStatus(await server.request("POST", cms, { body: "{not json" }), 400, "BadRequest")
  })
  it("for a name that differs from the URL's", async () => {
    await server.request("POST", cms, { body: configMap("named") })
    const reply = await server.request("PUT", `${cms}/named`, { body: configMap("other") })
    expectStatus(reply, 400, "BadRequest")
    expect(reply.json.message).toBe("the name of the object (other) does not match the name on the URL (named)")
  })
  it("for a PUT naming another object, before the existence and resourceVersion checks (1.32's order)", async () => {
    await server.request("POST", cts, { body: crontab("put-named") })
    // A custom resource without a resourceVersion would be a 422, a missing object a 404: the name comes first.
    for (const [path, body] of [[`${cts}/put-named`, crontab("other")], [`${cts}/put-missing`, crontab("other")], [`${cms}/put-missing`, configMap("other")]] as const) {
      const reply = await server.request("PUT", path, { body })
      expectStatus(reply, 400, "BadRequest")
      expect(reply.json.message).toBe(`the name of the object (other) does not match the name on the URL (${path.split("/").pop()})`)
    }
    const elsewhere = await server.request("PUT", `${cms}/put-missing`, { body: configMap("put-missing", {}, { namespace: "default" }) })
    expectStatus(elsewhere, 400, "BadRequest")
    expect(elsewhere.json.message).toBe("the namespace of the provided object does not match the namespace sent on the request")
  })
  it("for a namespace that differs from the URL's", async () => {
    expectStatus(await server.request("POST", cms, { body: configMap("x", {}, { namespace: "default" }) }), 400, "BadRequest")
  })
  it("for a malformed label selector and an unsupported field", async () => {
    expectStatus(await server.request("GET", `${cms}?labelSelector=${encodeURIComponent("a in (b")}`), 400, "BadRequest")
    const reply = await server.request("GET", `${cts}?fieldSelector=spec.size%3D1`)
    expectStatus(reply, 400, "BadRequest")
    expect(reply.json.message).toBe("field label not supported: spec.size")
  })
  it("for unknown fields with fieldValidation=Strict", async () => {
    const reply = await server.request("POST", `${cts}?fieldValidation=Strict`, { body: crontab("strict", { size: 3 }) })
    expectStatus(reply, 400, "BadRequest")
    expect(reply.json.message).toBe('CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.size"')
  })
  it("for an applied configuration with a field its schema does not declare, whatever fieldValidation says", async () => {
    const apply = { "content-type": "application/apply-patch+yaml" }
    const custom = await server.request("PATCH", `${cts}/applied?fieldManager=tests&fieldValidation=Ignore`, { body: crontab("applied", { size: 3 }), headers: apply })
    expectStatus(custom, 400, "BadRequest")
    expect(custom.json.message).toBe("failed to create typed patch object (errors/applied; stable.example.com/v1, Kind=CronTab): .spec.size: field not declared in schema")
    const builtin = await server.request("PATCH", `${cms}/applied?fieldManager=tests`, { body: { ...configMap("applied"), bogus: 1 }, headers: apply })
    expectStatus(builtin, 400, "BadRequest")
    expect(builtin.json.message).toBe("failed to create typed patch object (errors/applied; /v1, Kind=ConfigMap): .bogus: field not declared in schema")
    expect((await server.request("GET", `${cms}/applied`)).status).toBe(404)
  })
})

describe("401 Unauthorized", () => {
  it("without the bearer token or with a wrong one", async () => {
    const none = await fetch(`${server.url}/api/v1/namespaces`)
    expect(none.status).toBe(401)
    expect(await none.json()).toMatchObject({ kind: "Status", reason: "Unauthorized", code: 401 })
    const wrong = await server.request("GET", "/api", { headers: { authorization: "Bearer nope" } })
    expectStatus(wrong, 401, "Unauthorized")
  })
})

describe("403 Forbidden", () => {
  it("for deleting a system namespace", async () => {
    expectStatus(await server.request("DELETE", "/api/v1/namespaces/default"), 403, "Forbidden")
  })
})

describe("404 NotFound", () => {
  it("names the resource by plural (and group)", async () => {
    const reply = await server.request("GET", `${cts}/missing`)
    expectStatus(reply, 404, "NotFound")
    expect(reply.json.message).toBe('crontabs.stable.example.com "missing" not found')
    expect(reply.json.details).toEqual({ name: "missing", group: "stable.example.com", kind: "crontabs" })
  })
  it("for unknown groups, versions and resources", async () => {
    expectStatus(await server.request("GET", "/apis/nope.example.com/v1"), 404, "NotFound")
    expectStatus(await server.request("GET", "/apis/stable.example.com/v9/crontabs"), 404, "NotFound")
    expectStatus(await server.request("GET", "/api/v1/widgets"), 404, "NotFound")
  })
  it("for a create in a missing namespace", async () => {
    const reply = await server.request("POST", "/api/v1/namespaces/nowhere/configmaps", { body: configMap("a") })
    expectStatus(reply, 404, "NotFound")
    expect(reply.json.message).toBe('namespaces "nowhere" not found')
  })
  it("for /status of a kind without the status subresource", async () => {
    await server.request("POST", cms, { body: configMap("nostatus") })
    expectStatus(await server.request("GET", `${cms}/nostatus/status`), 404, "NotFound")
  })
})

describe("405 MethodNotAllowed", () => {
  it("for verbs a path does not serve", async () => {
    expectStatus(await server.request("POST", `${cms}/named`, { body: configMap("named") }), 405, "MethodNotAllowed")
    expectStatus(await server.request("PUT", cms, { body: configMap("x") }), 405, "MethodNotAllowed")
  })
})

describe("406 NotAcceptable", () => {
  it("when nothing in Accept can be produced", async () => {
    const reply = await server.request("GET", cms, { headers: { accept: "application/vnd.kubernetes.protobuf" } })
    expectStatus(reply, 406, "NotAcceptable")
  })
})

describe("409 AlreadyExists and Conflict", () => {
  it("for a create of an existing name", async () => {
    await server.request("POST", cms, { body: configMap("twice") })
    const reply = await server.request("POST", cms, { body: configMap("twice") })
    expectStatus(reply, 409, "AlreadyExists")
    expect(reply.json.message).toBe('configmaps "twice" already exists')
  })
  it("for an update with a stale resourceVersion", async () => {
    const created = await server.request("POST", cts, { body: crontab("stale") })
    const rv = created.json.metadata.resourceVersion
    await server.request("PUT", `${cts}/stale`, { body: { ...created.json, spec: { cronSpec: "1 * * * *" } } })
    const reply = await server.request("PUT", `${cts}/stale`, {
      body: { ...created.json, metadata: { ...created.json.metadata, resourceVersion: rv }, spec: { cronSpec: "2 * * * *" } }
    })
    expectStatus(reply, 409, "Conflict")
    expect(reply.json.message).toBe(
      'Operation cannot be fulfilled on crontabs.stable.example.com "stale": the object has been modified; please apply your changes to the latest version and try again'
    )
  })
  it("for an apply that changes a field another manager owns", async () => {
    const apply = (manager: string, replicas: number) =>
      server.request("PATCH", `${cts}/owned?fieldManager=${manager}`, {
        body: crontab("owned", { replicas }),
        headers: { "content-type": "application/apply-patch+yaml" }
      })
    expect((await apply("first", 2)).status).toBe(201)
    const reply = await apply("second", 3)
    expectStatus(reply, 409, "Conflict")
    expect(reply.json.message).toBe('Apply failed with 1 conflict: conflict with "first": .spec.replicas')
    expect(reply.json.details.causes).toEqual([
      { reason: "FieldManagerConflict", message: 'conflict with "first"', field: ".spec.replicas" }
    ])
  })
})

describe("410 Expired", () => {
  it("as an ERROR event on a watch from a compacted resourceVersion", async () => {
    for (let i = 0; i < 25; i++) await server.request("POST", cms, { body: configMap(`churn-${i}`) })
    const events = await watchEvents(server, `${cms}?watch=1&resourceVersion=1`, 1)
    expect(events).toEqual([{
      type: "ERROR",
      object: expect.objectContaining({ kind: "Status", code: 410, reason: "Expired", message: expect.stringMatching(/^too old resource version: 1 \(\d+\)$/) })
    }])
  })
  it("for a continue token whose revision was compacted, with a token that goes on at the latest revision", async () => {
    const first = await server.request("GET", `${cms}?limit=2`)
    expect(first.json.metadata.continue).toBeTruthy()
    for (let i = 0; i < 25; i++) await server.request("POST", cms, { body: configMap(`more-${i}`) })
    const expired = await server.request("GET", `${cms}?limit=2&continue=${first.json.metadata.continue}`)
    expectStatus(expired, 410, "Expired")
    expect(expired.json.message).toMatch(/or use the continue token in this response to retrieve the remainder of the results\./)
    const names = first.json.items.map((i: any) => i.metadata.name)
    // The rest, read now: after the first page's last name, at the current revision.
    const rest = await server.request("GET", `${cms}?limit=500&continue=${expired.json.metadata.continue}`)
    expect(rest.status).toBe(200)
    const all = (await server.request("GET", cms)).json
    expect([...names, ...rest.json.items.map((i: any) => i.metadata.name)]).toEqual(all.items.map((i: any) => i.metadata.name))
    expect(rest.json.metadata.resourceVersion).toBe(all.metadata.resourceVersion)
  })
})

describe("413 RequestEntityTooLarge", () => {
  it("for a body over 3 MiB", async () => {
    const reply = await server.request("POST", cms, { body: configMap("big", { a: "x".repeat(3 * 1024 * 1024) }) })
    expectStatus(reply, 413, "RequestEntityTooLarge")
  })
  it("for a JSON patch with more than 10,000 operations", async () => {
    const ops = Array.from({ length: 10_001 }, () => ({ op: "test", path: "/metadata/name", value: "named" }))
    const reply = await server.request("PATCH", `${cms}/named`, { body: ops, headers: { "content-type": "application/json-patch+json" } })
    expectStatus(reply, 413, "RequestEntityTooLarge")
  })
})

describe("415 UnsupportedMediaType", () => {
  it("for a strategic merge patch of a custom resource, listing what is accepted", async () => {
    await server.request("POST", cts, { body: crontab("smp") })
    const reply = await server.request("PATCH", `${cts}/smp`, {
      body: { spec: { replicas: 2 } },
      headers: { "content-type": "application/strategic-merge-patch+json" }
    })
    expectStatus(reply, 415, "UnsupportedMediaType")
    expect(reply.json.message).toBe(
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
  })
  it("for bodies of other types", async () => {
    expectStatus(await server.request("POST", cms, { body: "a=b", headers: { "content-type": "text/plain" } }), 415, "UnsupportedMediaType")
    expectStatus(await server.request("PATCH", `${cms}/named`, { body: "{}", headers: { "content-type": "text/plain" } }), 415, "UnsupportedMediaType")
  })
})

describe("500 of no reason", () => {
  it("for a strategic merge patch whose list item lacks its merge key, worded as Go prints the item", async () => {
    const pods = "/api/v1/namespaces/errors/pods"
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "keyed" }, spec: { containers: [{ name: "app", image: "nginx" }] } }
    expect((await server.request("POST", pods, { body: pod })).status).toBe(201)
    const reply = await server.request("PATCH", `${pods}/keyed`, {
      body: { spec: { containers: [{ image: "x" }] } },
      headers: { "content-type": "application/strategic-merge-patch+json" }
    })
    expect([reply.status, reply.json.reason, reply.json.message]).toEqual([500, undefined, "map: map[image:x] does not contain declared merge key: name"])
  })
})

describe("422 Invalid", () => {
  it("for a JSON patch whose operation fails, in apimachinery's generic words, as kube answers it", async () => {
    await server.request("POST", cms, { body: configMap("jsonpatched") })
    const headers = { "content-type": "application/json-patch+json" }
    const failed = await server.request("PATCH", `${cms}/jsonpatched`, {
      body: [{ op: "test", path: "/metadata/name", value: "other" }],
      headers
    })
    expectStatus(failed, 422, "Invalid")
    expect(failed.json.message).toBe("the server rejected our request due to an error in our request")
    expect(failed.json.details).toEqual({})
    // All or nothing; and the library kube uses replaces an absent member by adding it.
    const undone = await server.request("PATCH", `${cms}/jsonpatched`, {
      body: [{ op: "replace", path: "/metadata/labels", value: { a: "1" } }, { op: "remove", path: "/data/absent" }],
      headers
    })
    expect(undone.status).toBe(422)
    expect((await server.request("GET", `${cms}/jsonpatched`)).json.metadata.labels).toBeUndefined()
    const added = await server.request("PATCH", `${cms}/jsonpatched`, {
      body: [{ op: "replace", path: "/metadata/labels", value: { a: "1" } }],
      headers
    })
    expect(added.status).toBe(200)
    expect(added.json.metadata.labels).toEqual({ a: "1" })
  })
  it("for a create with neither name nor generateName", async () => {
    const reply = await server.request("POST", cms, { body: { apiVersion: "v1", kind: "ConfigMap", metadata: {} } })
    expectStatus(reply, 422, "Invalid")
    expect(reply.json.details.causes[0]).toMatchObject({ reason: "FieldValueRequired", field: "metadata.name" })
    expect(reply.json.details.kind).toBe("ConfigMap")
  })
  it("for schema violations, one cause per field, details.kind the Kind", async () => {
    const reply = await server.request("POST", cts, { body: crontab("bad", { replicas: 15, cronSpec: 3 }) })
    expectStatus(reply, 422, "Invalid")
    expect(reply.json.details.kind).toBe("CronTab")
    expect(reply.json.details.causes.map((c: { field: string }) => c.field).sort()).toEqual(["spec.cronSpec", "spec.replicas"])
    expect(reply.json.message).toContain('CronTab.stable.example.com "bad" is invalid: [')
  })
  it("for a custom resource update without resourceVersion", async () => {
    await server.request("POST", cts, { body: crontab("norv") })
    const reply = await server.request("PUT", `${cts}/norv`, { body: crontab("norv") })
    expectStatus(reply, 422, "Invalid")
    expect(reply.json.message).toBe(
      'CronTab.stable.example.com "norv" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'
    )
  })
  it("for an apply without fieldManager, and force on a non-apply patch", async () => {
    const apply = await server.request("PATCH", `${cts}/norv`, {
      body: crontab("norv"),
      headers: { "content-type": "application/apply-patch+yaml" }
    })
    expectStatus(apply, 422, "Invalid")
    expect(apply.json.details).toMatchObject({ kind: "PatchOptions", causes: [{ field: "fieldManager" }] })
    const force = await server.request("PATCH", `${cts}/norv?force=true`, {
      body: {},
      headers: { "content-type": "application/merge-patch+json" }
    })
    expectStatus(force, 422, "Invalid")
  })
  it("for a new finalizer on an object being deleted", async () => {
    await server.request("POST", cms, { body: configMap("held", {}, { finalizers: ["a.example.com/x"] }) })
    await server.request("DELETE", `${cms}/held`)
    const reply = await server.request("PATCH", `${cms}/held`, {
      body: { metadata: { finalizers: ["a.example.com/x", "b.example.com/y"] } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expectStatus(reply, 422, "Invalid")
    expect(reply.json.message).toContain("metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted")
  })
  it("for sendInitialEvents without resourceVersionMatch=NotOlderThan", async () => {
    expectStatus(await server.request("GET", `${cms}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true`), 422, "Invalid")
  })
})

describe("injected 429, 500 and 504", () => {
  it("answers 429 with Retry-After, 500 and 504 when faults say so, and recovers when cleared", async () => {
    server.faults.set({ rules: [{ resource: "configmaps", verbs: ["list"], throttleRate: 1, retryAfterSeconds: 3 }] })
    const throttled = await server.request("GET", cms)
    expectStatus(throttled, 429, "TooManyRequests")
    expect(throttled.headers.get("retry-after")).toBe("3")
    expect(throttled.json.details.retryAfterSeconds).toBe(3)
    server.faults.set({ rules: [{ errorRate: 1, errorCode: 504 }] })
    expectStatus(await server.request("GET", cms), 504, "Timeout")
    server.faults.set({ rules: [{ errorRate: 1 }] })
    expectStatus(await server.request("GET", cms), 500, "InternalError")
    server.faults.clear()
    expect((await server.request("GET", cms)).status).toBe(200)
  })
  it("answers 500 for a create that sets resourceVersion", async () => {
    const reply = await server.request("POST", cms, { body: configMap("withrv", {}, { resourceVersion: "5" }) })
    expectStatus(reply, 500, "InternalError")
  })
})

describe("fault admin endpoint", () => {
  it("sets, reads and clears faults over HTTP with the same token", async () => {
    const set = await server.request("PUT", "/kubefx/faults", { body: { seed: 1, rules: [{ resource: "secrets", errorRate: 1, errorCode: 503 }] } })
    expect(set.status).toBe(200)
    expectStatus(await server.request("GET", "/api/v1/namespaces/errors/secrets"), 503, "ServiceUnavailable")
    expect((await server.request("GET", "/kubefx/faults")).json.rules).toHaveLength(1)
    expect((await server.request("DELETE", "/kubefx/faults")).status).toBe(200)
    expect((await server.request("GET", "/api/v1/namespaces/errors/secrets")).status).toBe(200)
    expectStatus(await server.request("PUT", "/kubefx/faults", { body: { rules: [{ errorRate: "lots" }] } }), 400, "BadRequest")
    expect((await fetch(`${server.url}/kubefx/faults`)).status).toBe(401)
  })
})
