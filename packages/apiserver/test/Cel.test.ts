/**
 * CEL validation rules (`x-kubernetes-validations`) as kube-apiserver 1.32 enforces them, over
 * HTTP: for each feature one accepted and one rejected write with the exact 422 causes, and the
 * CRD writes that 1.32 refuses (rules that do not compile, cost too much, or read oldSelf where
 * old values do not correlate).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import { createNamespace, installCrd } from "./fixtures.ts"

const group = "cel.example.com"
const base = "/apis/cel.example.com/v1/namespaces/cel/gadgets"

const rules = (...list: ReadonlyArray<Record<string, unknown>>) => ({ "x-kubernetes-validations": list })

const gadgetSchema = {
  type: "object",
  ...rules({ rule: "self.metadata.name.startsWith('g-')", message: "names start with g-" }),
  properties: {
    spec: {
      type: "object",
      ...rules(
        { rule: "self.minReplicas <= self.maxReplicas", message: "minReplicas must not exceed maxReplicas" },
        { rule: "!has(self.tls) || self.port == 443", messageExpression: "'port must be 443 with tls, not ' + string(self.port)" },
        { rule: "has(self.owner)", reason: "FieldValueRequired", fieldPath: ".owner", message: "an owner is required" },
        { rule: "self.mode == oldSelf.mode", message: "mode is immutable" },
        { rule: "!oldSelf.hasValue() || oldSelf.value().port <= self.port", optionalOldSelf: true, message: "port may only grow" }
      ),
      properties: {
        minReplicas: { type: "integer" },
        maxReplicas: { type: "integer" },
        port: { type: "integer" },
        tls: { type: "boolean" },
        owner: { type: "string" },
        mode: { type: "string" },
        memory: { type: "string", ...rules({ rule: "quantity(self).isLessThan(quantity('1Gi'))", message: "memory must be below 1Gi" }) },
        homepage: { type: "string", ...rules({ rule: "isURL(self) && url(self).getScheme() == 'https'", message: "homepage must be an https URL" }) },
        subnet: { type: "string", ...rules({ rule: "isCIDR(self) && cidr(self).containsIP('10.0.0.1')", message: "subnet must hold 10.0.0.1" }) },
        hostname: {
          type: "string",
          ...rules({ rule: "!format.dns1123Label().validate(self).hasValue()", messageExpression: "'hostname: ' + format.dns1123Label().validate(self).value()[0]" })
        },
        tags: {
          type: "array",
          maxItems: 10,
          items: { type: "string", maxLength: 20, ...rules({ rule: "self.matches('^[a-z]+$')", message: "tags are lowercase" }) },
          ...rules({ rule: "self.all(t, self.exists_one(u, u == t))", reason: "FieldValueDuplicate" })
        },
        weights: {
          type: "array",
          maxItems: 10,
          items: { type: "integer" },
          ...rules({ rule: "self.sum() == 100", messageExpression: "'weights sum to ' + string(self.sum())" })
        },
        limits: { type: "object", additionalProperties: { type: "integer", ...rules({ rule: "self >= 0", message: "limits are not negative" }) } },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            required: ["name"],
            properties: { name: { type: "string" }, number: { type: "integer" } },
            ...rules({ rule: "self.number == oldSelf.number", message: "a named port keeps its number" })
          }
        },
        counts: { type: "array", items: { type: "integer" }, ...rules({ rule: "self.all(x, x >= 0)", message: "counts are not negative" }) },
        window: { type: "object", properties: { start: { type: "integer" }, end: { type: "integer" } }, ...rules({ rule: "self.end > self.start" }) }
      }
    },
    status: { type: "object", properties: { phase: { type: "string" } }, ...rules({ rule: "self.phase in ['Pending', 'Ready']", message: "unknown phase" }) }
  }
}

const crd = (name: string, plural: string, kind: string, schema: unknown) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.${name}` },
  spec: {
    group: name,
    scope: "Namespaced",
    names: { plural, singular: kind.toLowerCase(), kind },
    versions: [{ name: "v1", served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: schema } }]
  }
})

const validSpec = { minReplicas: 1, maxReplicas: 3, port: 80, owner: "team-a", mode: "fast" }

const gadget = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: `${group}/v1`,
  kind: "Gadget",
  metadata: { name, namespace: "cel" },
  spec: { ...validSpec, ...spec }
})

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
  await installCrd(server, crd(group, "gadgets", "Gadget", gadgetSchema))
  await createNamespace(server, "cel")
})
afterAll(() => server.close())

const causesOf = (reply: Testing.Reply) => {
  expect(reply.status, reply.text).toBe(422)
  expect(reply.json).toMatchObject({ kind: "Status", reason: "Invalid", code: 422, details: { group, kind: "Gadget" } })
  return reply.json.details.causes.map((c: { field: string; message: string; reason: string }) => [c.field, c.reason, c.message])
}

const create = (body: unknown) => server.request("POST", base, { body })

describe("CEL rules on writes", () => {
  it("an object rule with a message: accepted when it holds, one Invalid cause at the object when not", async () => {
    expect((await create(gadget("g-ranges"))).status).toBe(201)
    const reply = await create(gadget("g-inverted", { minReplicas: 5 }))
    expect(causesOf(reply)).toEqual([["spec", "FieldValueInvalid", 'Invalid value: "object": minReplicas must not exceed maxReplicas']])
    expect(reply.json.message).toBe('Gadget.cel.example.com "g-inverted" is invalid: spec: Invalid value: "object": minReplicas must not exceed maxReplicas')
  })

  it("a rule at the resource's top level sees metadata.name; its cause has Go's nil path", async () => {
    expect(causesOf(await create(gadget("widget")))).toEqual([["<nil>", "FieldValueInvalid", 'Invalid value: "object": names start with g-']])
  })

  it("messageExpression builds the message from the object", async () => {
    expect((await create(gadget("g-tls", { tls: true, port: 443 }))).status).toBe(201)
    expect(causesOf(await create(gadget("g-tls-80", { tls: true })))).toEqual([
      ["spec", "FieldValueInvalid", 'Invalid value: "object": port must be 443 with tls, not 80']
    ])
  })

  it("reason and fieldPath choose the cause's type and field", async () => {
    const { owner: _, ...ownerless } = validSpec
    const reply = await create({ ...gadget("g-orphan"), spec: ownerless })
    expect(causesOf(reply)).toEqual([["spec.owner", "FieldValueRequired", "Required value: an owner is required"]])
  })

  it("a rule without a message reports `failed rule: <rule>`", async () => {
    expect((await create(gadget("g-window", { window: { start: 1, end: 2 } }))).status).toBe(201)
    expect(causesOf(await create(gadget("g-backwards", { window: { start: 2, end: 1 } })))).toEqual([
      ["spec.window", "FieldValueInvalid", 'Invalid value: "object": failed rule: self.end > self.start']
    ])
  })

  it("a runtime error is a cause naming it and the rule", async () => {
    const reply = await create(gadget("g-unbounded", { minReplicas: undefined }))
    expect(causesOf(reply)).toEqual([
      ["spec", "FieldValueInvalid", 'Invalid value: "object": no such key: minReplicas evaluating rule: minReplicas must not exceed maxReplicas']
    ])
  })

  it("rules on list items and on the list: each item's path, Duplicate by reason", async () => {
    expect((await create(gadget("g-tags", { tags: ["red", "blue"] }))).status).toBe(201)
    expect(causesOf(await create(gadget("g-bad-tags", { tags: ["red", "Blue", "red"] })))).toEqual([
      ["spec.tags", "FieldValueDuplicate", 'Duplicate value: "array"'],
      ["spec.tags[1]", "FieldValueInvalid", 'Invalid value: "string": tags are lowercase']
    ])
  })

  it("rules on map values: the key in brackets", async () => {
    expect((await create(gadget("g-limits", { limits: { cpu: 2 } }))).status).toBe(201)
    expect(causesOf(await create(gadget("g-negative", { limits: { cpu: 2, memory: -1 } })))).toEqual([
      ["spec.limits[memory]", "FieldValueInvalid", 'Invalid value: "integer": limits are not negative']
    ])
  })

  it("the lists library: sum in a rule and in its messageExpression", async () => {
    expect((await create(gadget("g-weights", { weights: [60, 40] }))).status).toBe(201)
    expect(causesOf(await create(gadget("g-heavy", { weights: [60, 50] })))).toEqual([
      ["spec.weights", "FieldValueInvalid", 'Invalid value: "array": weights sum to 110']
    ])
  })

  it("the quantity, url, cidr and format libraries", async () => {
    expect((await create(gadget("g-libs", { memory: "512Mi", homepage: "https://example.org/x", subnet: "10.0.0.0/8", hostname: "web-1" }))).status).toBe(201)
    expect(causesOf(await create(gadget("g-libs-bad", { memory: "2Gi", homepage: "http://example.org", subnet: "192.168.0.0/16", hostname: "Web_1" })))).toEqual([
      ["spec.memory", "FieldValueInvalid", 'Invalid value: "string": memory must be below 1Gi'],
      ["spec.homepage", "FieldValueInvalid", 'Invalid value: "string": homepage must be an https URL'],
      ["spec.subnet", "FieldValueInvalid", 'Invalid value: "string": subnet must hold 10.0.0.1'],
      ["spec.hostname", "FieldValueInvalid", `Invalid value: "string": hostname: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`]
    ])
  })

  it("transition rules run on updates only, against the old value; list-type=map items correlate by key", async () => {
    const created = await create(gadget("g-modes", { ports: [{ name: "http", number: 80 }] }))
    expect(created.status).toBe(201)
    const path = `${base}/g-modes`
    const changed = await server.request("PUT", path, { body: { ...created.json, spec: { ...created.json.spec, mode: "slow" } } })
    expect(causesOf(changed)).toEqual([["spec", "FieldValueInvalid", 'Invalid value: "object": mode is immutable']])
    const renumbered = await server.request("PUT", path, {
      body: { ...created.json, spec: { ...created.json.spec, ports: [{ name: "http", number: 8080 }, { name: "admin", number: 9000 }] } }
    })
    expect(causesOf(renumbered)).toEqual([["spec.ports[0]", "FieldValueInvalid", 'Invalid value: "object": a named port keeps its number']])
    const added = await server.request("PUT", path, {
      body: { ...created.json, spec: { ...created.json.spec, ports: [{ name: "http", number: 80 }, { name: "admin", number: 9000 }] } }
    })
    expect(added.status, added.text).toBe(200)
  })

  it("optionalOldSelf: the rule runs on create too, oldSelf holding nothing", async () => {
    const created = await create(gadget("g-grow", { port: 8080 }))
    expect(created.status).toBe(201)
    const shrunk = await server.request("PATCH", `${base}/g-grow`, {
      body: { spec: { port: 80 } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(causesOf(shrunk)).toEqual([["spec", "FieldValueInvalid", 'Invalid value: "object": port may only grow']])
  })

  it("server-side apply and status writes are checked too", async () => {
    const applied = await server.request("PATCH", `${base}/g-applied?fieldManager=test`, {
      body: JSON.stringify(gadget("g-applied", { minReplicas: 9 })),
      headers: { "content-type": "application/apply-patch+yaml" }
    })
    expect(causesOf(applied)).toEqual([["spec", "FieldValueInvalid", 'Invalid value: "object": minReplicas must not exceed maxReplicas']])
    const created = await create(gadget("g-status"))
    const ready = await server.request("PUT", `${base}/g-status/status`, { body: { ...created.json, status: { phase: "Ready" } } })
    expect(ready.status, ready.text).toBe(200)
    const unknown = await server.request("PUT", `${base}/g-status/status`, { body: { ...ready.json, status: { phase: "Exploded" } } })
    expect(causesOf(unknown)).toEqual([["status", "FieldValueInvalid", 'Invalid value: "object": unknown phase']])
  })

  it("a rule's runtime cost is bounded: over the per-call limit, the write fails and no further rule runs", async () => {
    expect((await create(gadget("g-counts", { counts: Array.from({ length: 1000 }, (_, i) => i) }))).status).toBe(201)
    const reply = await create(gadget("g-many-counts", { minReplicas: 9, counts: Array.from({ length: 300_000 }, (_, i) => i) }))
    expect(causesOf(reply)).toEqual([
      ["spec", "FieldValueInvalid", 'Invalid value: "object": minReplicas must not exceed maxReplicas'],
      ["spec.counts", "FieldValueInvalid", `Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: counts are not negative`]
    ])
  })

  it("ratcheting: after the schema tightens, an object stored before updates other fields; changing the bad value is refused", async () => {
    const loose = { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" }, note: { type: "string" } } } } }
    const tight = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: { size: { type: "integer", maximum: 10, ...rules({ rule: "self % 2 == 0", message: "size must be even" }) }, note: { type: "string" } }
        }
      }
    }
    const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    const created = await server.request("POST", path, { body: crd("ratchet.example.com", "ratchets", "Ratchet", loose) })
    expect(created.status, created.text).toBe(201)
    await Effect.runPromise(server.settled)
    const objects = "/apis/ratchet.example.com/v1/namespaces/cel/ratchets"
    const stored = await server.request("POST", objects, { body: { apiVersion: "ratchet.example.com/v1", kind: "Ratchet", metadata: { name: "old" }, spec: { size: 15 } } })
    expect(stored.status, stored.text).toBe(201)
    const current = await server.request("GET", `${path}/ratchets.ratchet.example.com`)
    const tightened = await server.request("PUT", `${path}/ratchets.ratchet.example.com`, {
      body: { ...current.json, spec: { ...current.json.spec, versions: [{ ...current.json.spec.versions[0], schema: { openAPIV3Schema: tight } }] } }
    })
    expect(tightened.status, tightened.text).toBe(200)
    const noted = await server.request("PUT", `${objects}/old`, { body: { ...stored.json, spec: { size: 15, note: "still 15" } } })
    expect(noted.status, noted.text).toBe(200)
    const changed = await server.request("PUT", `${objects}/old`, { body: { ...noted.json, spec: { size: 13, note: "still 15" } } })
    expect(changed.status).toBe(422)
    expect(changed.json.details.causes.map((c: { field: string; message: string }) => [c.field, c.message])).toEqual([
      ["spec.size", "Invalid value: 13: spec.size in body should be less than or equal to 10"],
      ["spec.size", 'Invalid value: "integer": size must be even']
    ])
    const even = await server.request("PUT", `${objects}/old`, { body: { ...noted.json, spec: { size: 12, note: "now 12" } } })
    expect(even.status).toBe(422)
    expect(even.json.details.causes.map((c: { field: string }) => c.field)).toEqual(["spec.size"])
    const fixed = await server.request("PUT", `${objects}/old`, { body: { ...noted.json, spec: { size: 8, note: "now 8" } } })
    expect(fixed.status, fixed.text).toBe(200)
  })

  it("an object the schema already rejects is not checked by rules, and says so", async () => {
    const reply = await create(gadget("g-typed", { minReplicas: "one" }))
    expect(causesOf(reply)).toEqual([
      ["spec.minReplicas", "FieldValueTypeInvalid", 'Invalid value: "string": spec.minReplicas in body must be of type integer: "string"'],
      ["<nil>", "FieldValueInvalid", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"]
    ])
  })
})

const crdCauses = async (schema: unknown) => {
  const reply = await server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    body: crd("bad.example.com", "bads", "Bad", schema)
  })
  expect(reply.status, reply.text).toBe(422)
  return reply.json.details.causes.map((c: { field: string; message: string }) => [c.field, c.message])
}

const specWith = (properties: Record<string, unknown>, validations?: ReadonlyArray<Record<string, unknown>>) => ({
  type: "object",
  properties: { spec: { type: "object", properties, ...(validations === undefined ? {} : rules(...validations)) } }
})

// A CRD whose versions share one schema reports it at spec.validation, as 1.32 does.
const at = "spec.validation.openAPIV3Schema.properties[spec]"

describe("CEL rules on CRD writes", () => {
  it("a rule naming a field the schema does not declare does not compile", async () => {
    expect(await crdCauses(specWith({ min: { type: "integer" } }, [{ rule: "self.mni > 0" }]))).toEqual([[
      `${at}.x-kubernetes-validations[0].rule`,
      'Invalid value: apiextensions.ValidationRule{Rule:"self.mni > 0", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: ' +
      "compilation failed: ERROR: <input>:1:5: undefined field 'mni'\n | self.mni > 0\n | ....^"
    ]])
  })

  it("an undeclared variable and a syntax error do not compile", async () => {
    const causes = await crdCauses(specWith({ min: { type: "integer" } }, [{ rule: "other.min > 0" }, { rule: "self.min >" }]))
    expect(causes.map(([field]: [string]) => field)).toEqual([
      `${at}.x-kubernetes-validations[0].rule`,
      `${at}.x-kubernetes-validations[1].rule`
    ])
    expect(causes[0][1]).toContain("compilation failed: ERROR: <input>:1:1: undeclared reference to 'other' (in container '')")
    expect(causes[1][1]).toContain("compilation failed: ERROR: <input>:1:")
    expect(causes[1][1]).toContain("Syntax error")
  })

  it("a rule applying an operator or function to a type it does not take does not compile, nor one that is not a bool", async () => {
    const causes = await crdCauses(specWith({ replicas: { type: "integer" }, name: { type: "string", maxLength: 10 } }, [
      { rule: "self.replicas > '3'" },
      { rule: "self.replicas.startsWith('1')" },
      { rule: "self.name + 1 == 'x'" },
      { rule: "self.replicas + 1" },
      { rule: "self.replicas > 0", messageExpression: "self.replicas" }
    ]))
    expect(causes.map(([field, message]: [string, string]) => [field, message.slice(message.indexOf("}: ") + 3)])).toEqual([
      [`${at}.x-kubernetes-validations[0].rule`, "compilation failed: ERROR: <input>:1:15: found no matching overload for '_>_' applied to '(int, string)'\n | self.replicas > '3'\n | ..............^"],
      [`${at}.x-kubernetes-validations[1].rule`, "compilation failed: ERROR: <input>:1:25: found no matching overload for 'startsWith' applied to 'int.(string)'\n | self.replicas.startsWith('1')\n | ........................^"],
      [`${at}.x-kubernetes-validations[2].rule`, "compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(string, int)'\n | self.name + 1 == 'x'\n | ..........^"],
      [`${at}.x-kubernetes-validations[3].rule`, "cel expression must evaluate to a bool"],
      [`${at}.x-kubernetes-validations[4].messageExpression`, "messageExpression must evaluate to a string"]
    ])
  })

  it("a rule whose estimated cost exceeds the budget is forbidden, and so is the total", async () => {
    const causes = await crdCauses(specWith({ names: { type: "array", items: { type: "string" }, ...rules({ rule: "self.all(a, self.all(b, a == b))" }) } }))
    expect(causes).toEqual([
      [`${at}.properties[names].x-kubernetes-validations[0].rule`, "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"],
      [`${at}.properties[names].x-kubernetes-validations[0].rule`, "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"],
      ["spec.validation.openAPIV3Schema", "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"]
    ])
    // The same rule over a bounded list is cheap enough.
    const bounded = await server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      body: crd("bounded.example.com", "boundeds", "Bounded", specWith({
        names: { type: "array", maxItems: 10, items: { type: "string", maxLength: 63 }, ...rules({ rule: "self.all(a, self.all(b, a == b))" }) }
      }))
    })
    expect(bounded.status, bounded.text).toBe(201)
  })

  it("under lists without maxItems a rule is costed once per value of its type a request could hold, not once per list level", async () => {
    // prometheus-operator's AlertmanagerConfig: a has() rule on an object two unbounded lists deep.
    const sigv4 = {
      type: "object",
      properties: { roleArn: { type: "string" }, externalId: { type: "string" } },
      ...rules({ rule: "!has(self.externalId) || has(self.roleArn)", message: "externalId can only be used when roleArn is specified" })
    }
    const schema = specWith({
      receivers: { type: "array", items: { type: "object", properties: { snsConfigs: { type: "array", items: { type: "object", properties: { sigv4 } } } } } }
    })
    const created = await server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      body: crd("nested.example.com", "nesteds", "Nested", schema)
    })
    expect(created.status, created.text).toBe(201)
  })

  it("a rule over a map's keys costs by the map's size, and indexing a map gives its value", async () => {
    // Gateway API's Gateway: key rules on maps of annotations and labels, the keys without maxLength.
    const keyRule = 'self.all(key, key.matches(r"""^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$"""))'
    const annotations = {
      type: "object",
      maxProperties: 16,
      additionalProperties: { type: "string", maxLength: 4096 },
      ...rules({ rule: keyRule }, { rule: 'self.all(key, key.split("/")[0].size() < 253)' })
    }
    const weights = { type: "object", additionalProperties: { type: "integer" }, ...rules({ rule: "!has(self.primary) || self['primary'] > 0", message: "primary must be positive" }) }
    await installCrd(server, crd("keyed.example.com", "keyeds", "Keyed", specWith({ annotations, weights })))
    const keyed = (name: string, spec: Record<string, unknown>) =>
      server.request("POST", "/apis/keyed.example.com/v1/namespaces/cel/keyeds", { body: { apiVersion: "keyed.example.com/v1", kind: "Keyed", metadata: { name, namespace: "cel" }, spec } })
    const fine = await keyed("fine", { annotations: { "example.com/team": "a" }, weights: { primary: 2 } })
    expect(fine.status, fine.text).toBe(201)
    const refused = await keyed("refused", { annotations: { "-bad": "a" }, weights: { primary: 0 } })
    expect(refused.status, refused.text).toBe(422)
    expect(refused.json.details.causes.map((c: { field: string; message: string }) => [c.field, c.message])).toEqual([
      ["spec.annotations", `Invalid value: "object": failed rule: ${keyRule}`],
      ["spec.weights", 'Invalid value: "object": primary must be positive']
    ])
  })

  it("oldSelf under a list that is not list-type=map, and optionalOldSelf without oldSelf, are refused; so are a bad reason and fieldPath", async () => {
    const causes = await crdCauses(specWith({
      items: { type: "array", maxItems: 5, items: { type: "integer", ...rules({ rule: "self == oldSelf" }) } },
      name: { type: "string", maxLength: 10, ...rules({ rule: "self != ''", optionalOldSelf: true }) }
    }, [{ rule: "true", reason: "FieldValueBad" }, { rule: "true", fieldPath: ".nope" }]))
    expect(causes).toEqual([
      [`${at}.x-kubernetes-validations[0].reason`, 'Unsupported value: "FieldValueBad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'],
      [`${at}.x-kubernetes-validations[1].fieldPath`, 'Invalid value: ".nope": fieldPath must be a valid path']
    ])
    const correlation = await crdCauses(specWith({
      items: { type: "array", maxItems: 5, items: { type: "integer", ...rules({ rule: "self == oldSelf" }) } },
      name: { type: "string", maxLength: 10, ...rules({ rule: "self != ''", optionalOldSelf: true }) }
    }))
    expect(correlation).toEqual([
      [`${at}.properties[items].items.x-kubernetes-validations[0].rule`, `Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${at}.properties[items]`],
      [`${at}.properties[name].x-kubernetes-validations[0].optionalOldSelf`, "Invalid value: true: may not be set if oldSelf is not used in rule"]
    ])
  })
})
