/**
 * The built-in kinds' Go types derived from client-node's models, and the strict decoding a 1.32
 * server applies to every write of them: wrong types refused with Go's wording, unknown fields
 * reported per fieldValidation and dropped; over HTTP and with the real kubectl.
 */
import { describe, expect, it } from "vitest"
import * as BuiltinSchemas from "../src/BuiltinSchemas.ts"
import * as Builtins from "../src/Builtins.ts"
import * as Decoding from "../src/Decoding.ts"
import * as GoTime from "../src/GoTime.ts"
import * as Kubectl from "./kubectl.ts"
import { Quantity } from "@kubefx/schema/internal"
import type { JsonSchemaProps } from "@kubefx/schema"

const kind = (group: string, version: string, k: string) => {
  const found = BuiltinSchemas.lookup(group, version, k)
  if (found === undefined) throw new Error(`no schema for ${group}/${version}/${k}`)
  return found
}
const at = (schema: JsonSchemaProps, ...path: ReadonlyArray<string>): JsonSchemaProps =>
  path.reduce<JsonSchemaProps>((s, p) => {
    const next = p === "[]" ? s.items : p === "{}" ? s.additionalProperties as JsonSchemaProps : s.properties?.[p]
    if (next === undefined) throw new Error(`no ${p} in ${JSON.stringify(Object.keys(s.properties ?? {}))}`)
    return next
  }, schema)

const deploymentType = () => kind("apps", "v1", "Deployment").type
const decode = (object: Record<string, unknown>, group: string, version: string, k: string) =>
  Decoding.decode(object, kind(group, version, k).type)

describe("derived schemas", () => {
  it("give a Deployment its fields, types, formats, int-or-string, maps and lists", () => {
    const schema = kind("apps", "v1", "Deployment").schema
    expect(at(schema, "spec", "replicas")).toEqual({ type: "integer", format: "int32" })
    expect(at(schema, "spec", "paused")).toEqual({ type: "boolean" })
    expect(at(schema, "spec", "strategy", "rollingUpdate", "maxSurge")).toEqual({ "x-kubernetes-int-or-string": true })
    expect(at(schema, "spec", "template", "spec", "containers", "[]", "image")).toEqual({ type: "string" })
    expect(at(schema, "spec", "template", "spec", "containers", "[]", "ports", "[]", "containerPort"))
      .toEqual({ type: "integer", format: "int32" })
    expect(at(schema, "metadata", "labels", "{}")).toEqual({ type: "string" })
    expect(at(schema, "metadata", "creationTimestamp")).toEqual({ type: "string", format: "date-time" })
    expect(at(schema, "metadata", "managedFields", "[]", "fieldsV1")).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
    expect(at(schema, "status", "observedGeneration")).toEqual({ type: "integer", format: "int64" })
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual(["apiVersion", "kind", "metadata", "spec", "status"])
  })

  it("type quantities as string or number, bytes as base64 strings, and free-form values as preserved", () => {
    const pod = kind("", "v1", "Pod").schema
    expect(at(pod, "spec", "containers", "[]", "resources", "limits", "{}")).toEqual({ oneOf: [{ type: "string" }, { type: "number" }] })
    expect(at(pod, "spec", "volumes", "[]", "emptyDir", "sizeLimit")).toEqual({ oneOf: [{ type: "string" }, { type: "number" }] })
    expect(at(kind("", "v1", "Secret").schema, "data", "{}")).toEqual({ type: "string", format: "byte" })
    expect(at(kind("", "v1", "ConfigMap").schema, "data", "{}")).toEqual({ type: "string" })
    expect(at(kind("apps", "v1", "ControllerRevision").schema, "data")).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
    const leaseSpec = kind("coordination.k8s.io", "v1", "Lease").type.fields.get("spec")
    expect(leaseSpec?._tag === "Struct" ? leaseSpec.fields.get("renewTime")?._tag : undefined).toBe("MicroTime")
  })

  it("recurse through a CRD's JSONSchemaProps and leave its JSON values free-form", () => {
    const schema = kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition").schema
    const props = at(schema, "spec", "versions", "[]", "schema", "openAPIV3Schema")
    expect(at(props, "properties", "{}")).toBe(props)
    expect(at(props, "x-kubernetes-preserve-unknown-fields")).toEqual({ type: "boolean" })
    expect(at(props, "maxLength")).toEqual({ type: "integer", format: "int64" })
    for (const free of ["default", "items", "additionalProperties", "example"]) {
      expect(at(props, free)).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
    }
  })

  it("find models by group, version and kind, including group-qualified and autoscaling/v2 ones", () => {
    expect(BuiltinSchemas.modelNames("", "v1", "Event")).toEqual(["CoreV1Event", "V1Event"])
    expect(kind("", "v1", "Event").schema.properties?.involvedObject).toBeDefined()
    expect(kind("", "v1", "Event").schema.properties?.regarding).toBeUndefined()
    expect(kind("events.k8s.io", "v1", "Event").schema.properties?.regarding).toBeDefined()
    expect(kind("events.k8s.io", "v1", "Event").schema.properties?.involvedObject).toBeUndefined()
    expect(at(kind("autoscaling", "v2", "HorizontalPodAutoscaler").schema, "spec", "maxReplicas")).toEqual({ type: "integer", format: "int32" })
    expect(at(kind("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration").schema, "webhooks", "[]", "timeoutSeconds"))
      .toEqual({ type: "integer", format: "int32" })
    expect(BuiltinSchemas.lookup("stable.example.com", "v1", "CronTab")).toBeUndefined()
    // A nested type of the same name is not a kind.
    expect(BuiltinSchemas.lookup("", "v1", "Container")).toBeUndefined()
  })

  it("have a schema for every GA built-in kind the server serves", () => {
    const missing = Builtins.make()
      .filter((r) => /^v\d+$/.test(r.type.version))
      .filter((r) => BuiltinSchemas.lookup(r.type.group, r.type.version, r.type.kind) === undefined)
      .map((r) => `${r.type.group}/${r.type.version}/${r.type.kind}`)
    expect(missing).toEqual([])
  })

  it("leave out the fields added after 1.32", () => {
    const podSpec = at(kind("", "v1", "Pod").schema, "spec")
    expect(podSpec.properties?.hostnameOverride).toBeUndefined()
    expect(podSpec.properties?.hostname).toBeDefined()
    expect(at(kind("apps", "v1", "Deployment").schema, "status").properties?.terminatingReplicas).toBeUndefined()
  })
})

describe("decoding", () => {
  it("words type errors as Go's encoding/json does: innermost struct, field path without indices, Go type", () => {
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ spec: { replicas: "three" } }, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"],
      [{ spec: { replicas: 1.5 } }, "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"],
      [{ spec: "x" }, "json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec"],
      [{ spec: { paused: "yes" } }, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool"],
      [
        { spec: { template: { spec: { containers: [{ name: "a" }, { name: 1 }] } } } },
        "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.name of type string"
      ],
      [
        { spec: { template: { spec: { containers: {} } } } },
        "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
      ],
      [{ metadata: { labels: ["a"] } }, "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"]
    ]
    for (const [object, message] of cases) expect(Decoding.decode(object, deploymentType())).toEqual({ _tag: "Failed", message })
  })

  it("reports the first type error in document order, and a type's own decoder error over it", () => {
    expect(Decoding.decode({ spec: { paused: 1, replicas: "x" } }, deploymentType())).toEqual({
      _tag: "Failed",
      message: "json: cannot unmarshal number into Go struct field DeploymentSpec.spec.paused of type bool"
    })
    expect(Decoding.decode({ spec: { paused: 1, strategy: { rollingUpdate: { maxSurge: true } } } }, deploymentType())).toEqual({
      _tag: "Failed",
      message: "json: cannot unmarshal bool into Go value of type int32"
    })
  })

  it("lists unknown fields in document order with indices and map keys, and accepts null anywhere", () => {
    const decoded = Decoding.decode({
      metadata: { name: "a", foo: 1 },
      spec: {
        replicas: null,
        template: { spec: { containers: [{ name: "a" }, { name: "b", imagePullpolicy: "Always" }] } },
        bar: {}
      },
      zzz: 1
    }, deploymentType())
    expect(decoded).toEqual({
      _tag: "Decoded",
      unknownFields: ["metadata.foo", "spec.template.spec.containers[1].imagePullpolicy", "spec.bar", "zzz"]
    })
    const crd = Decoding.decode({
      spec: { versions: [{ name: "v1", schema: { openAPIV3Schema: { properties: { spec: { type: "object", bogus: 1 } } } } }] }
    }, kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition").type)
    expect(crd).toEqual({ _tag: "Decoded", unknownFields: ["spec.versions[0].schema.openAPIV3Schema.properties.spec.bogus"] })
  })

  it("checks timestamps, quantities, int-or-strings and base64 bytes with their own decoders", () => {
    const lease = (renewTime: unknown) => decode({ spec: { renewTime } }, "coordination.k8s.io", "v1", "Lease")
    expect(lease("2024-05-01T10:00:00.123456Z")).toEqual({ _tag: "Decoded", unknownFields: [] })
    expect(lease("2024-05-01T10:00:00Z")).toEqual({
      _tag: "Failed",
      message: 'parsing time "2024-05-01T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'
    })
    expect(lease(5)).toEqual({ _tag: "Failed", message: "json: cannot unmarshal number into Go value of type string" })
    const pod = (limits: unknown) => decode({ spec: { containers: [{ name: "a", resources: { limits } }] } }, "", "v1", "Pod")
    expect(pod({ cpu: 1, memory: "1Gi", "nvidia.com/gpu": "2" })).toEqual({ _tag: "Decoded", unknownFields: [] })
    expect(pod({ cpu: "1x" })).toEqual({ _tag: "Failed", message: Quantity.formatWrong })
    expect(pod({ memory: "1Gb" })).toEqual({ _tag: "Failed", message: Quantity.formatWrong })
    expect(pod({ memory: "1Gk" })).toEqual({ _tag: "Failed", message: "unable to parse quantity's suffix" })
    expect(decode({ data: { a: "aGVsbG8=" } }, "", "v1", "Secret")).toEqual({ _tag: "Decoded", unknownFields: [] })
    expect(decode({ data: { a: "hello world" } }, "", "v1", "Secret"))
      .toEqual({ _tag: "Failed", message: "illegal base64 data at input byte 5" })
    expect(decode({ spec: { ports: [{ port: 80, targetPort: "http" }, { port: 81, targetPort: 8081 }] } }, "", "v1", "Service"))
      .toEqual({ _tag: "Decoded", unknownFields: [] })
  })

  it("parses times and quantities as Go and apimachinery do", () => {
    expect(GoTime.parseError("RFC3339", "2024-02-29T23:59:59+01:00")).toBeUndefined()
    expect(GoTime.parseError("RFC3339", "2024-02-01T00:00:00.5Z")).toBeUndefined()
    expect(GoTime.parseError("RFC3339", "yesterday"))
      .toBe('parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"')
    expect(GoTime.parseError("RFC3339", "2024-13-01T00:00:00Z")).toBe('parsing time "2024-13-01T00:00:00Z": month out of range')
    expect(GoTime.parseError("RFC3339", "2023-02-29T00:00:00Z")).toBe('parsing time "2023-02-29T00:00:00Z": day out of range')
    expect(GoTime.parseError("RFC3339", "2024-01-01 00:00:00Z"))
      .toBe('parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"')
    expect(GoTime.parseError("RFC3339", "2024-01-01T00:00:00Zjunk")).toBe('parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk"')
    for (const q of ["0", "1", "500m", "1.5Gi", "+2", "-1", "1e3", "12E-2", ".5"]) expect(Quantity.parseError(q), q).toBeUndefined()
    expect(Quantity.parseError("")).toBe(Quantity.formatWrong)
    expect(Quantity.parseError("true")).toBe(Quantity.formatWrong)
    expect(Quantity.parseError("1e")).toBe(Quantity.suffixWrong)
    expect(Decoding.base64Error("aGVsbG8")).toBe("illegal base64 data at input byte 4")
    expect(Decoding.base64Error("aGVs\nbG8=")).toBeUndefined()
  })
})

const { file, kubectl, ok, server } = Kubectl.withServer()

const deployment = (name: string, container: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "app", image: "nginx", ...container }] }
    },
    ...spec
  }
})
const deployments = "/apis/apps/v1/namespaces/default/deployments"
const configMaps = "/api/v1/namespaces/default/configmaps"
const cannot = (k: string, message: string) => `${k} in version "v1" cannot be handled as a ${k}: ${message}`

describe("writes of built-in kinds over HTTP", () => {
  it("Strict refuses unknown fields with 1.32's strict decoding error, all of them in document order", async () => {
    const body = { ...deployment("strict", { imagePullpolicy: "Always" }), extra: 1 }
    const reply = await server().request("POST", `${deployments}?fieldValidation=Strict`, { body })
    expect(reply.status).toBe(400)
    expect(reply.json).toMatchObject({
      kind: "Status",
      reason: "BadRequest",
      code: 400,
      message: cannot(
        "Deployment",
        'strict decoding error: unknown field "spec.template.spec.containers[0].imagePullpolicy", unknown field "extra"'
      )
    })
    expect((await server().request("GET", `${deployments}/strict`)).status).toBe(404)
  })

  it("Warn (the default) answers a warning per unknown field and stores the object without them", async () => {
    const body = deployment("warned", { imagePullpolicy: "Always" })
    const reply = await server().request("POST", deployments, { body: { ...body, metadata: { name: "warned", foo: "x" } } })
    expect(reply.status).toBe(201)
    expect(reply.headers.get("warning")).toBe(
      '299 - "unknown field \\"metadata.foo\\"", 299 - "unknown field \\"spec.template.spec.containers[0].imagePullpolicy\\""'
    )
    const stored = (await server().request("GET", `${deployments}/warned`)).json
    expect(stored.metadata.foo).toBeUndefined()
    expect(stored.spec.template.spec.containers[0]).toEqual(expect.not.objectContaining({ imagePullpolicy: expect.anything() }))
    expect(stored.spec.template.spec.containers[0].image).toBe("nginx")
  })

  it("Ignore drops unknown fields silently, and so does an update", async () => {
    const created = await server().request("POST", `${configMaps}?fieldValidation=Ignore`, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ignored" }, data: { a: "1" }, spec: { x: 1 } }
    })
    expect(created.status).toBe(201)
    expect(created.headers.get("warning")).toBeNull()
    expect(created.json.spec).toBeUndefined()
    const updated = await server().request("PUT", `${configMaps}/ignored?fieldValidation=Strict`, {
      body: { ...created.json, data: { a: "2" }, stringData: { b: "c" } }
    })
    expect(updated.status).toBe(400)
    expect(updated.json.message).toBe(cannot("ConfigMap", 'strict decoding error: unknown field "stringData"'))
  })

  it("refuses a value of the wrong type with a 400 whatever fieldValidation says", async () => {
    for (const validation of ["Strict", "Warn", "Ignore"]) {
      const reply = await server().request("POST", `${deployments}?fieldValidation=${validation}`, {
        body: deployment(`typed-${validation.toLowerCase()}`, {}, { replicas: "three" })
      })
      expect(reply.status).toBe(400)
      expect(reply.json).toMatchObject({
        reason: "BadRequest",
        message: cannot("Deployment", "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32")
      })
    }
  })

  it("refuses a ConfigMap whose data values are not strings, as 1.32 does", async () => {
    const reply = await server().request("POST", configMaps, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "numbers" }, data: { port: 8080, debug: true } }
    })
    expect(reply.status).toBe(400)
    expect(reply.json.message).toBe(cannot("ConfigMap", "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"))
  })

  it("checks the served version's type: events.k8s.io Events and core Events name their fields differently", async () => {
    const eventsV1 = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "ev1" },
      eventTime: "2024-01-01T00:00:00.000000Z",
      reportingController: "c",
      reportingInstance: "i",
      action: "A",
      reason: "R",
      regarding: { kind: "Pod", name: "p", namespace: "default" },
      note: "hello"
    }
    const strict = await server().request("POST", "/apis/events.k8s.io/v1/namespaces/default/events?fieldValidation=Strict", {
      body: { ...eventsV1, message: "core's name" }
    })
    expect(strict.json.message).toBe(cannot("Event", 'strict decoding error: unknown field "message"'))
    const created = await server().request("POST", "/apis/events.k8s.io/v1/namespaces/default/events?fieldValidation=Strict", { body: eventsV1 })
    expect(created.status).toBe(201)
    const core = await server().request("GET", "/api/v1/namespaces/default/events/ev1")
    expect(core.json.message).toBe("hello")
    const coreStrict = await server().request("POST", "/api/v1/namespaces/default/events?fieldValidation=Strict", {
      body: { apiVersion: "v1", kind: "Event", metadata: { name: "ev2" }, involvedObject: { name: "p" }, note: "x" }
    })
    expect(coreStrict.json.message).toBe(cannot("Event", 'strict decoding error: unknown field "note"'))
  })

  it("keeps a Lease's MicroTimes exact and refuses times without microseconds", async () => {
    const lease = (name: string, renewTime: string) => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name },
      spec: { holderIdentity: "a", leaseDurationSeconds: 15, renewTime }
    })
    const leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    const good = await server().request("POST", leases, { body: lease("micro", "2024-05-01T10:00:00.123456Z") })
    expect(good.json.spec.renewTime).toBe("2024-05-01T10:00:00.123456Z")
    const bad = await server().request("POST", leases, { body: lease("seconds", "2024-05-01T10:00:00Z") })
    expect(bad.status).toBe(400)
    expect(bad.json.message).toBe(cannot(
      "Lease",
      'parsing time "2024-05-01T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'
    ))
  })

  it("accepts numeric quantities and refuses malformed ones and non-base64 Secret data", async () => {
    const numeric = await server().request("POST", `${deployments}?fieldValidation=Strict`, {
      body: deployment("quantities", { resources: { limits: { cpu: 1, memory: "128Mi" }, requests: { cpu: 0.5 } } })
    })
    expect(numeric.status).toBe(201)
    // Stored as resource.Quantity writes them: strings, in canonical form.
    expect(numeric.json.spec.template.spec.containers[0].resources).toEqual({ limits: { cpu: "1", memory: "128Mi" }, requests: { cpu: "500m" } })
    const malformed = await server().request("POST", deployments, {
      body: deployment("bad-quantity", { resources: { limits: { memory: "lots" } } })
    })
    expect(malformed.json.message).toBe(cannot("Deployment", Quantity.formatWrong))
    const secret = await server().request("POST", "/api/v1/namespaces/default/secrets", {
      body: { apiVersion: "v1", kind: "Secret", metadata: { name: "plain" }, data: { password: "not base64!" } }
    })
    expect(secret.status).toBe(400)
    expect(secret.json.message).toBe(cannot("Secret", "illegal base64 data at input byte 3"))
  })

  it("stores a CRD with a large nested schema unchanged, without warnings", async () => {
    const leaf = (depth: number): Record<string, unknown> =>
      depth === 0
        ? { type: "string", enum: ["a", "b"], default: "a", "x-kubernetes-validations": [{ rule: "self.size() > 0", message: "m" }] }
        : {
          type: "object",
          description: `level ${depth}`,
          required: ["x0"],
          properties: Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`x${i}`, leaf(depth - 1)]))
        }
    const openAPIV3Schema = {
      type: "object",
      properties: {
        spec: {
          ...leaf(4),
          properties: {
            ...(leaf(4).properties as object),
            list: {
              type: "array",
              items: { type: "object", properties: { k: { type: "string" }, v: { "x-kubernetes-int-or-string": true } }, required: ["k"] },
              "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["k"],
              maxItems: 10
            },
            free: { type: "object", "x-kubernetes-preserve-unknown-fields": true, nullable: true },
            embedded: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true },
            quantity: { anyOf: [{ type: "integer" }, { type: "string" }], pattern: "^[0-9]+$", "x-kubernetes-int-or-string": true },
            labels: { type: "object", additionalProperties: { type: "string" }, "x-kubernetes-map-type": "granular" }
          }
        },
        status: { type: "object", properties: { n: { type: "integer", format: "int64", minimum: 0, maximum: 10.5 } } }
      }
    }
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "bigs.deep.example.com" },
      spec: {
        group: "deep.example.com",
        names: { plural: "bigs", singular: "big", kind: "Big", listKind: "BigList" },
        scope: "Namespaced",
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema },
          subresources: { status: {} }
        }]
      }
    }
    const created = await server().request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict", { body: crd })
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("warning")).toBeNull()
    const stored = await server().request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/bigs.deep.example.com")
    expect(stored.json.spec.versions[0].schema).toEqual(crd.spec.versions[0]!.schema)
  })
})

describe("kubectl against built-in strict decoding", () => {
  const typo = () => deployment("typo", { imagePullpolicy: "Always" })

  it("kubectl apply fails with 1.32's strict decoding error", async () => {
    const run = await kubectl("apply", "-f", file("typo.json", typo()))
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      'Error from server (BadRequest): error when creating "' + `${server().dir}/typo.json` +
        '": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagePullpolicy"'
    )
    expect((await kubectl("get", "deploy", "typo")).code).toBe(1)
  })

  it("--validate=warn prints the warning and --validate=false applies without the field", async () => {
    const warned = await kubectl("apply", "--validate=warn", "-f", file("typo-warn.json", { ...typo(), metadata: { name: "typo-warn" } }))
    expect(warned.code, warned.stderr).toBe(0)
    expect(warned.stderr).toContain('Warning: unknown field "spec.template.spec.containers[0].imagePullpolicy"')
    const quiet = await kubectl("apply", "--validate=false", "-f", file("typo.json", typo()))
    expect(quiet.code, quiet.stderr).toBe(0)
    expect(quiet.stderr).toBe("")
    expect(quiet.stdout).toContain("deployment.apps/typo created")
    const live = JSON.parse(await ok("get", "deploy", "typo", "-o", "json"))
    expect(Object.keys(live.spec.template.spec.containers[0])).not.toContain("imagePullpolicy")
    expect(live.spec.template.spec.containers[0].imagePullPolicy).toBe("Always")
  })

  it("kubectl create of a wrong type fails with the Go-style message", async () => {
    const run = await kubectl("create", "-f", file("wrong.yaml", [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: wrong",
      "data:",
      "  enabled: true"
    ].join("\n")))
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field ConfigMap.data of type string'
    )
  })
})
