import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as CustomResourceDefinition from "../src/CustomResourceDefinition.ts"
import * as Structure from "../src/Structure.ts"
import { FieldCauses } from "@kubefx/schema/internal"

const now = "2024-05-01T10:00:00Z"
const later = "2024-05-01T11:00:00Z"

const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        cronSpec: { type: "string" },
        replicas: { type: "integer" },
        color: { type: "string" },
        tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } }
      }
    },
    status: { type: "object", properties: { replicas: { type: "integer" } } }
  }
}

const crontab = (overrides: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "crontabs.stable.example.com" },
  spec: {
    group: "stable.example.com",
    scope: "Namespaced",
    names: { plural: "crontabs", kind: "CronTab", shortNames: ["ct"], categories: ["all"] },
    versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    ...spec
  },
  ...overrides
})

const admitted = (body: unknown, others: ReadonlyArray<unknown> = []) => {
  const result = CustomResourceDefinition.admit(body, { others, now })
  if (Result.isFailure(result)) throw new Error(result.failure.map(FieldCauses.causeText).join("\n"))
  return result.success
}

const causes = (body: unknown, old?: unknown): ReadonlyArray<string> => {
  const result = CustomResourceDefinition.admit(body, { others: [], now, ...(old === undefined ? {} : { old }) })
  return Result.isFailure(result) ? result.failure.map(FieldCauses.causeText) : []
}

describe("CustomResourceDefinition.admit: a valid CRD", () => {
  const crd = admitted(crontab())

  it("gets v1 defaults: singular, listKind, conversion None", () => {
    expect(crd.spec.names).toEqual({
      plural: "crontabs",
      singular: "crontab",
      kind: "CronTab",
      listKind: "CronTabList",
      shortNames: ["ct"],
      categories: ["all"]
    })
    expect(crd.spec.conversion).toEqual({ strategy: "None" })
  })

  it("is accepted and established at once, with the storage version stored", () => {
    expect(crd.status).toEqual({
      conditions: [
        { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found", lastTransitionTime: now },
        {
          type: "Established",
          status: "True",
          reason: "InitialNamesAccepted",
          message: "the initial names have been accepted",
          lastTransitionTime: now
        }
      ],
      acceptedNames: crd.spec.names,
      storedVersions: ["v1"]
    })
    expect(CustomResourceDefinition.isEstablished(crd)).toBe(true)
  })

  it("a status sent with the create is replaced", () => {
    const withStatus = admitted(crontab({ status: { storedVersions: ["v9"], acceptedNames: { plural: "x", kind: "X" } } }))
    expect(withStatus.status?.storedVersions).toEqual(["v1"])
    expect(withStatus.status?.acceptedNames?.plural).toBe("crontabs")
  })
})

describe("CustomResourceDefinition.admit: invalid CRDs", () => {
  it("the name must be <plural>.<group>", () => {
    expect(causes(crontab({ metadata: { name: "foos.stable.example.com" } }))).toEqual([
      "metadata.name: Invalid value: \"foos.stable.example.com\": must be spec.names.plural+\".\"+spec.group"
    ])
  })

  it("exactly one storage version", () => {
    const two = crontab({}, {
      versions: [
        { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema } },
        { name: "v2", served: true, storage: true, schema: { openAPIV3Schema: schema } }
      ]
    })
    const result = CustomResourceDefinition.admit(two, { others: [], now })
    expect(Result.isFailure(result)).toBe(true)
    const [cause] = Result.isFailure(result) ? result.failure : []
    expect(cause?.field).toBe("spec.versions")
    expect(cause?.reason).toBe("FieldValueInvalid")
    expect(cause?.message).toMatch(/^Invalid value: .*: must have exactly one version marked as storage version$/)
  })

  it("no storage version: none marked, and nothing to store", () => {
    const none = crontab({}, { versions: [{ name: "v1", served: true, storage: false, schema: { openAPIV3Schema: schema } }] })
    const found = causes(none)
    expect(found.map((c) => c.replace(/Invalid value: .*?: /, "Invalid value: …: "))).toEqual([
      "spec.versions: Invalid value: …: must have exactly one version marked as storage version",
      "status.storedVersions: Invalid value: …: must have at least one stored version"
    ])
  })

  it("version names are DNS-1035 labels and unique", () => {
    const versions = [
      { name: "V1", served: true, storage: true, schema: { openAPIV3Schema: schema } },
      { name: "V1", served: true, storage: false, schema: { openAPIV3Schema: schema } }
    ]
    const found = causes(crontab({}, { versions }))
    expect(found).toContain(
      "spec.versions[0].name: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    )
    expect(found.some((c) => c.startsWith("spec.versions: Invalid value: ") && c.endsWith(": must contain unique version names"))).toBe(true)
  })

  it("names: plural and singular lowercase, kind mixed case, listKind different from kind", () => {
    const body = crontab({ metadata: { name: "CronTabs.stable.example.com" } }, {
      names: { plural: "CronTabs", kind: "Cron_Tab", listKind: "Cron_Tab" }
    })
    const found = causes(body)
    const dns1035 =
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    expect(found).toEqual(expect.arrayContaining([
      `spec.names.plural: Invalid value: "CronTabs": ${dns1035}`,
      `spec.names.kind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: ${dns1035}`,
      "spec.names.listKind: Invalid value: \"Cron_Tab\": kind and listKind may not be the same"
    ]))
  })

  it("group, scope and schema are required and checked", () => {
    expect(causes(crontab({ metadata: { name: "crontabs.example" } }, { group: "example" }))).toEqual([
      "spec.group: Invalid value: \"example\": should be a domain with at least one dot"
    ])
    expect(causes(crontab({}, { scope: "Global" }))).toEqual([
      "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\""
    ])
    expect(causes(crontab({}, { scope: undefined }))).toEqual(["spec.scope: Required value"])
    expect(causes(crontab({}, { versions: [{ name: "v1", served: true, storage: true }] }))).toEqual([
      "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"
    ])
  })

  // A per-version field equal in every version is validated where 1.32's v1 conversion moves it: the spec.
  it("each version's schema must be structural", () => {
    const loose = { type: "object", properties: { spec: { properties: { replicas: { type: "integer" } } } } }
    expect(causes(crontab({}, { versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: loose } }] }))).toEqual([
      "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
    ])
  })

  it("subresources and printer columns", () => {
    const version = {
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: schema },
      subresources: { status: {}, scale: { specReplicasPath: ".status.replicas", statusReplicasPath: "status.replicas" } },
      additionalPrinterColumns: [{ name: "Spec", type: "text", jsonPath: ".spec.cronSpec" }]
    }
    expect(causes(crontab({}, { versions: [version] }))).toEqual([
      "spec.subresources.scale.specReplicasPath: Invalid value: \".status.replicas\": should be a json path under .spec",
      "spec.subresources.scale.statusReplicasPath: Invalid value: \"status.replicas\": must be a simple json path starting with .",
      "spec.additionalPrinterColumns[0].type: Invalid value: \"text\": must be one of boolean,date,integer,number,string"
    ])
  })

  it("protected groups need the API approval annotation", () => {
    const body = crontab({ metadata: { name: "crontabs.stable.k8s.io" } }, { group: "stable.k8s.io" })
    expect(causes(body)).toEqual([
      "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"
    ])
    const approved = crontab({
      metadata: { name: "crontabs.stable.k8s.io", annotations: { "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/78458" } }
    }, { group: "stable.k8s.io" })
    expect(causes(approved)).toEqual([])
    expect(causes(crontab({ metadata: { name: "crontabs.stable.x-k8s.io" } }, { group: "stable.x-k8s.io" }))).toEqual([])
  })

  it("preserveUnknownFields cannot be turned on", () => {
    expect(causes(crontab({}, { preserveUnknownFields: true }))).toContain(
      "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead"
    )
  })
})

describe("CustomResourceDefinition.admit: updates", () => {
  const stored = admitted(crontab())

  it("keeps the status and adds a new storage version to storedVersions", () => {
    const v2 = crontab({}, {
      versions: [
        { name: "v1", served: true, storage: false, schema: { openAPIV3Schema: schema } },
        { name: "v2", served: true, storage: true, schema: { openAPIV3Schema: schema } }
      ]
    })
    const result = CustomResourceDefinition.admit(v2, { old: stored, others: [], now: later })
    const updated = Result.isSuccess(result) ? result.success : undefined
    expect(updated?.status?.storedVersions).toEqual(["v1", "v2"])
    // conditions did not change status, so their transition time stays
    expect(updated?.status?.conditions?.map((c) => c.lastTransitionTime)).toEqual([now, now])
  })

  it("group and plural are immutable", () => {
    const moved = crontab({ metadata: { name: "crontabs.other.example.com" } }, { group: "other.example.com" })
    expect(causes(moved, stored)).toEqual(["spec.group: Invalid value: \"other.example.com\": field is immutable"])
  })

  it("kind and scope are immutable once established", () => {
    const renamed = crontab({}, { scope: "Cluster", names: { plural: "crontabs", kind: "Crontab" } })
    expect(causes(renamed, stored)).toEqual([
      "spec.scope: Invalid value: \"Cluster\": field is immutable",
      "spec.names.kind: Invalid value: \"Crontab\": field is immutable"
    ])
  })
})

describe("CustomResourceDefinition.computeStatus: names in a group", () => {
  const existing = admitted(crontab())
  const conflicting = (names: Record<string, unknown>) =>
    crontab({ metadata: { name: `${String(names.plural)}.stable.example.com` } }, { names })

  it("a plural another CRD of the group accepted (here as a short name) is a conflict; nothing is established", () => {
    // plurals cannot collide (the CRD name is <plural>.<group>), but a plural can take another's short name
    const crd = admitted(conflicting({ plural: "ct", singular: "onect", kind: "Ct" }), [existing])
    expect(crd.status?.conditions).toEqual([
      { type: "NamesAccepted", status: "False", reason: "PluralConflict", message: "\"ct\" is already in use", lastTransitionTime: now },
      { type: "Established", status: "False", reason: "NotAccepted", message: "not all names are accepted", lastTransitionTime: now }
    ])
    expect(crd.status?.acceptedNames).toEqual({ plural: "", singular: "onect", kind: "Ct", listKind: "CtList" })
    // with the default singular ("ct") both conflict, and the last check (singular) names the reason
    const both = admitted(conflicting({ plural: "ct", kind: "Ct" }), [existing])
    expect(both.status?.conditions?.[0]).toMatchObject({ reason: "SingularConflict", message: "\"ct\" is already in use" })
    expect(CustomResourceDefinition.resourceTypes(crd)).toEqual([])
  })

  it("kinds, short names and singulars conflict too", () => {
    const kind = admitted(conflicting({ plural: "others", kind: "CronTab" }), [existing])
    expect(kind.status?.conditions?.[0]).toMatchObject({ reason: "ListKindConflict", message: "\"CronTabList\" is already in use" })
    const short = admitted(conflicting({ plural: "others", kind: "Other", shortNames: ["ct"] }), [existing])
    expect(short.status?.conditions?.[0]).toMatchObject({ reason: "ShortNamesConflict", message: "\"ct\" is already in use" })
    const singular = admitted(conflicting({ plural: "others", singular: "crontab", kind: "Other" }), [existing])
    expect(singular.status?.conditions?.[0]).toMatchObject({ reason: "SingularConflict", message: "\"crontab\" is already in use" })
  })

  it("the same names in another group do not conflict", () => {
    const elsewhere = crontab({ metadata: { name: "crontabs.other.example.com" } }, { group: "other.example.com" })
    expect(CustomResourceDefinition.isEstablished(admitted(elsewhere, [existing]))).toBe(true)
  })

  it("once the names are free, a recomputed status accepts and establishes them", () => {
    const blocked = admitted(conflicting({ plural: "ct", kind: "Ct" }), [existing])
    const status = CustomResourceDefinition.computeStatus(blocked, { others: [], now: later })
    expect(status.conditions?.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ["NamesAccepted", "True", later],
      ["Established", "True", later]
    ])
    expect(status.acceptedNames?.plural).toBe("ct")
  })

  it("an established CRD stays established when its new names conflict", () => {
    const other = admitted(crontab({ metadata: { name: "jobs.stable.example.com" } }, { names: { plural: "jobs", kind: "Job" } }))
    const renamed = { ...existing, spec: { ...existing.spec, names: { ...existing.spec.names, shortNames: ["ct", "jobs"] } } }
    const status = CustomResourceDefinition.computeStatus(renamed, { others: [other], now: later })
    expect(status.conditions).toEqual([
      { type: "NamesAccepted", status: "False", reason: "ShortNamesConflict", message: "\"jobs\" is already in use", lastTransitionTime: later },
      {
        type: "Established",
        status: "True",
        reason: "InitialNamesAccepted",
        message: "the initial names have been accepted",
        lastTransitionTime: now
      }
    ])
    expect(status.acceptedNames?.shortNames).toEqual(["ct"])
  })
})

describe("CustomResourceDefinition.resourceTypes", () => {
  const crd = admitted(crontab({}, {
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: schema },
        subresources: { status: {}, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } },
        additionalPrinterColumns: [{ name: "Spec", type: "string", jsonPath: ".spec.cronSpec", priority: 0 }],
        selectableFields: [{ jsonPath: ".spec.color" }]
      },
      { name: "v1beta1", served: false, storage: false, schema: { openAPIV3Schema: schema } }
    ]
  }))

  it("serves one type per served version", () => {
    const types = CustomResourceDefinition.resourceTypes(crd)
    expect(types.map((t) => t.version)).toEqual(["v1"])
    const [type] = types
    expect(type).toMatchObject({
      group: "stable.example.com",
      version: "v1",
      kind: "CronTab",
      listKind: "CronTabList",
      plural: "crontabs",
      singular: "crontab",
      namespaced: true,
      shortNames: ["ct"],
      categories: ["all"],
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      subresources: { status: true, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } },
      custom: true,
      schema,
      selectableFields: ["spec.color"],
      printerColumns: [{ name: "Spec", type: "string", jsonPath: ".spec.cronSpec", priority: 0 }]
    })
    expect(Structure.field(Structure.field(type?.structure ?? {}, "spec"), "tags").listType).toEqual({ _tag: "Set" })
    expect(Structure.field(type?.structure ?? {}, "metadata")).toBe(BuiltinStructures.objectMeta)
  })

  it("a cluster-scoped CRD serves cluster-scoped types", () => {
    const cluster = admitted(crontab({}, { scope: "Cluster" }))
    expect(CustomResourceDefinition.resourceTypes(cluster)[0]?.namespaced).toBe(false)
  })

  it("selectable fields must be string, boolean or integer fields of the schema", () => {
    const version = { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: schema }, selectableFields: [{ jsonPath: ".spec.tags" }, { jsonPath: ".spec.nope" }] }
    expect(causes(crontab({}, { versions: [version] }))).toEqual([
      "spec.selectableFields[0].jsonPath: Invalid value: \".spec.tags\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
      "spec.selectableFields[1].jsonPath: Invalid value: \".spec.nope\": is an invalid path: does not refer to a valid field"
    ])
  })
})
