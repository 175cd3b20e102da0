import { describe, expect, it } from "vitest"
import * as BuiltinSchemas from "../src/BuiltinSchemas.ts"
import * as OmitEmpty from "../src/OmitEmpty.ts"

const kind = (group: string, name: string) => BuiltinSchemas.lookup(group, "v1", name)!.type

describe("OmitEmpty", () => {
  it("drops omitempty fields at Go's zero value and keeps a pointer's zero", () => {
    const configMap = { metadata: { name: "a" }, data: {}, binaryData: null, immutable: false }
    expect(OmitEmpty.apply(configMap, kind("", "ConfigMap"))).toEqual({ metadata: { name: "a" }, immutable: false })
    const spec = { replicas: 0, paused: false, minReadySeconds: 0, revisionHistoryLimit: null, selector: { matchLabels: {} } }
    expect(OmitEmpty.apply({ spec }, kind("apps", "Deployment"))).toEqual({ spec: { replicas: 0, selector: {} } })
  })

  it("reaches into lists and maps of structs, and keeps structs and fields without omitempty", () => {
    const pod = {
      spec: {
        containers: [{ name: "a", image: "", env: [], resources: {}, ports: [{ containerPort: 80, hostPort: 0, name: "" }] }],
        securityContext: {}
      }
    }
    expect(OmitEmpty.apply(pod, kind("", "Pod"))).toEqual({
      spec: { containers: [{ name: "a", resources: {}, ports: [{ containerPort: 80 }] }], securityContext: {} }
    })
    // containers and a Role's rules have no omitempty: an empty list is written out.
    expect(OmitEmpty.apply({ spec: { containers: [] } }, kind("", "Pod"))).toEqual({ spec: { containers: [] } })
    expect(OmitEmpty.apply({ rules: [] }, kind("rbac.authorization.k8s.io", "Role"))).toEqual({ rules: [] })
    const crd = { spec: { versions: [{ name: "v1", schema: { openAPIV3Schema: { type: "object", properties: { a: { type: "string", enum: [] } } } } }] } }
    expect(OmitEmpty.apply(crd, kind("apiextensions.k8s.io", "CustomResourceDefinition"))).toEqual({
      spec: { versions: [{ name: "v1", schema: { openAPIV3Schema: { type: "object", properties: { a: { type: "string" } } } } }] }
    })
  })

  it("writes times as Go writes them: metav1.Time in UTC to the second, MicroTime to the microsecond", () => {
    const event = { metadata: { name: "e" }, involvedObject: {}, firstTimestamp: "2026-01-02T03:04:05.678901+02:00", lastTimestamp: "2026-01-02T01:04:05Z" }
    const written = OmitEmpty.apply(event, kind("", "Event")) as any
    expect([written.firstTimestamp, written.lastTimestamp]).toEqual(["2026-01-02T01:04:05Z", "2026-01-02T01:04:05Z"])
    const lease = { metadata: { name: "l" }, spec: { renewTime: "2026-01-02T03:04:05.678901234-00:30", acquireTime: "2026-01-02T01:04:05.5Z" } }
    const renewed = (OmitEmpty.apply(lease, BuiltinSchemas.lookup("coordination.k8s.io", "v1", "Lease")!.type) as any).spec
    expect([renewed.renewTime, renewed.acquireTime]).toEqual(["2026-01-02T03:34:05.678901Z", "2026-01-02T01:04:05.500000Z"])
    // Already so: the same object.
    const canonical = { metadata: { name: "e" }, involvedObject: {}, lastTimestamp: "2026-01-02T01:04:05Z" }
    expect(OmitEmpty.apply(canonical, kind("", "Event"))).toBe(canonical)
  })

  it("answers the same object when nothing is empty", () => {
    const configMap = { metadata: { name: "a", labels: { x: "1" } }, data: { a: "1" } }
    expect(OmitEmpty.apply(configMap, kind("", "ConfigMap"))).toBe(configMap)
  })
})

describe("OmitEmpty, on nulls", () => {
  it("writes a null as Go writes the zero value it decodes to", () => {
    const service = {
      spec: {
        // omitempty pointer and map: left out; a struct (non-pointer): taken as absent.
        sessionAffinityConfig: null,
        selector: null,
        ports: [{ port: 80, name: null, targetPort: null, protocol: null }]
      },
      status: null
    }
    expect(OmitEmpty.apply(service, kind("", "Service"))).toEqual({ spec: { ports: [{ port: 80 }] } })
    // A pointer without omitempty is written as null; a plain scalar without it as its zero.
    const deployment = { spec: { selector: null, template: { spec: { containers: [{ name: null, image: "nginx" }] } } } }
    expect(OmitEmpty.apply(deployment, kind("apps", "Deployment"))).toEqual({
      spec: { selector: null, template: { spec: { containers: [{ name: "", image: "nginx" }] } } }
    })
    // A template's zero creationTimestamp, as kubectl sends it, is written as null (Go's zero time).
    const job = { spec: { template: { metadata: { creationTimestamp: null, labels: null } } } }
    expect(OmitEmpty.apply(job, kind("batch", "Job"))).toEqual({ spec: { template: { metadata: { creationTimestamp: null } } } })
    // A list without omitempty is written as null too.
    expect(OmitEmpty.apply({ rules: null }, kind("rbac.authorization.k8s.io", "Role"))).toEqual({ rules: null })
  })
})
