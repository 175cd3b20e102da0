/**
 * CRD `pattern`s are Go regular expressions (RE2). A CRD whose patterns use RE2-only syntax (flag
 * groups in mid-pattern, `\z`, `(?P<name>...)`, Unicode classes) installs with kubectl, and its
 * objects are validated by RE2's semantics; a pattern RE2 rejects makes the CRD a 422 worded as
 * 1.32 words it.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Kubectl from "./kubectl.ts"
import { FieldCauses, OpenApiValidation } from "@kubefx/schema/internal"

const { file, kubectl, ok, server } = Kubectl.withServer()

const patterns = {
  // Case-sensitive prefix, case-insensitive rest: the flag group sits mid-pattern.
  severity: "^sev-(?i)(critical|warning|info)$",
  // \z is the end of the text (JavaScript has no such escape).
  token: "^[a-z0-9]+\\z",
  // Python-style named groups.
  version: "^(?P<major>0|[1-9][0-9]*)\\.(?P<minor>0|[1-9][0-9]*)$",
  // Unicode letter and digit classes without braces.
  label: "^\\pL[\\pL\\pN_]*$",
  // A scoped flag group, and a duration like the ones alerting rules carry.
  method: "^(?i:get|post)$",
  duration: "^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
}

const crd = (name: string, properties: Record<string, unknown>) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${name}s.re2.example.com` },
  spec: {
    group: "re2.example.com",
    scope: "Namespaced",
    names: { plural: `${name}s`, singular: name, kind: name[0]!.toUpperCase() + name.slice(1) },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties } } } }
    }]
  }
})

const rules = crd("alertrule", Object.fromEntries(Object.entries(patterns).map(([k, pattern]) => [k, { type: "string", pattern }])))

const rule = (name: string, spec: Record<string, string>) => ({
  apiVersion: "re2.example.com/v1",
  kind: "Alertrule",
  metadata: { name },
  spec
})

const create = (body: unknown) => server().request("POST", "/apis/re2.example.com/v1/namespaces/default/alertrules", { body })

describe("RE2 patterns", () => {
  it("installs a CRD whose patterns use RE2-only syntax with kubectl", async () => {
    expect(await ok("apply", "-f", file("rules-crd.json", rules))).toBe("customresourcedefinition.apiextensions.k8s.io/alertrules.re2.example.com created\n")
    await ok("wait", "--for=condition=Established", "crd/alertrules.re2.example.com", "--timeout=20s")
    await Effect.runPromise(server().settled)
  })

  it("accepts values the patterns match, as Go matches them", async () => {
    const matching = rule("good", {
      severity: "sev-CRITICAL",
      token: "abc123",
      version: "1.32",
      label: "Größe_2",
      method: "PoSt",
      duration: "1h30m"
    })
    const applied = await kubectl("apply", "-f", file("good.json", matching))
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stderr).toBe("")
    expect(applied.stdout).toBe("alertrule.re2.example.com/good created\n")
  })

  it.each([
    ["severity", "SEV-critical"],
    ["severity", "sev-fatal"],
    ["token", "abc\n"],
    ["version", "01.2"],
    ["label", "_x"],
    ["label", "9lives"],
    ["method", "put"],
    ["duration", "1d"]
  ])("refuses %s %j with 1.32's 422", async (field, value) => {
    const reply = await create(rule("bad", { [field]: value }))
    expect(reply.status).toBe(422)
    const pattern = patterns[field as keyof typeof patterns]
    expect(reply.json.message).toBe(
      `Alertrule.re2.example.com "bad" is invalid: spec.${field}: Invalid value: ${JSON.stringify(value)}: spec.${field} in body should match '${pattern}'`
    )
    expect(reply.json.details.causes).toEqual([{
      reason: "FieldValueInvalid",
      message: `Invalid value: ${JSON.stringify(value)}: spec.${field} in body should match '${pattern}'`,
      field: `spec.${field}`
    }])
  })

  it("reports a refused value to kubectl as 1.32 does", async () => {
    const refused = await kubectl("apply", "-f", file("bad.json", rule("bad", { severity: "SEV-info" })))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      "The Alertrule \"bad\" is invalid: spec.severity: Invalid value: \"SEV-info\": spec.severity in body should match '^sev-(?i)(critical|warning|info)$'\n"
    )
  })

  it.each([
    ["(?<!a)b", "error parsing regexp: invalid named capture: `(?<!a)b`"],
    ["^(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"],
    ["(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"],
    ["x{1001}", "error parsing regexp: invalid repeat count: `{1001}`"],
    ["[[:word:]", "error parsing regexp: missing closing ]: `[[:word:]`"]
  ])("refuses a CRD with the pattern %s, which RE2 rejects", async (pattern, error) => {
    const bad = crd("broken", { x: { type: "string", pattern } })
    const reply = await server().request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: bad })
    expect(reply.status).toBe(422)
    expect(reply.json.message).toBe(
      `CustomResourceDefinition.apiextensions.k8s.io "brokens.re2.example.com" is invalid: ` +
        `spec.validation.openAPIV3Schema.properties[spec].properties[x].pattern: Invalid value: ${JSON.stringify(pattern)}: ` +
        `must be a valid regular expression, but isn't: ${error}`
    )
  })

  it("names the version whose schema differs, and tells kubectl as 1.32 does", async () => {
    const twoVersions = crd("pair", { x: { type: "string", pattern: "^ok$" } }) as any
    const v2 = structuredClone(twoVersions.spec.versions[0])
    twoVersions.spec.versions[0].storage = false
    v2.name = "v2"
    v2.schema.openAPIV3Schema.properties.spec.properties.x.pattern = "(?<!a)b"
    twoVersions.spec.versions.push(v2)
    const refused = await kubectl("apply", "-f", file("pair-crd.json", twoVersions))
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      "The CustomResourceDefinition \"pairs.re2.example.com\" is invalid: " +
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[x].pattern: Invalid value: \"(?<!a)b\": " +
        "must be a valid regular expression, but isn't: error parsing regexp: invalid named capture: `(?<!a)b`\n"
    )
  })

  it("validates with RE2 outside CRDs too", () => {
    const schema = { type: "object" as const, properties: { v: { type: "string" as const, pattern: "^(?i)a+\\z" } } }
    expect(OpenApiValidation.validate({ v: "AAA" }, schema)).toEqual([])
    expect(OpenApiValidation.validate({ v: "AAB" }, schema).map(FieldCauses.causeText)).toEqual([
      "v: Invalid value: \"AAB\": v in body should match '^(?i)a+\\z'"
    ])
    expect(typeof OpenApiValidation.compilePattern("(?P<n>x)(?s).\\pN")).not.toBe("string")
  })
})
