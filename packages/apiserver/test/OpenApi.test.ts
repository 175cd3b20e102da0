import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import * as OpenApi from "../src/OpenApi.ts"
import type * as ResourceType from "../src/ResourceType.ts"

const type = (overrides: Partial<ResourceType.ResourceType> & Pick<ResourceType.ResourceType, "group" | "kind" | "plural">): ResourceType.ResourceType => ({
  version: "v1",
  listKind: `${overrides.kind}List`,
  singular: overrides.kind.toLowerCase(),
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
  subresources: { status: false },
  custom: false,
  structure: {},
  selectableFields: [],
  printerColumns: [],
  ...overrides
})

const crontabSchema = {
  type: "object" as const,
  description: "CronTab runs a command on a schedule.",
  properties: {
    spec: {
      type: "object" as const,
      description: "What to run and when.",
      properties: { cronSpec: { type: "string" as const, description: "The schedule." }, replicas: { type: "integer" as const } }
    }
  }
}

const crontab = type({
  group: "stable.example.com",
  kind: "CronTab",
  plural: "crontabs",
  custom: true,
  schema: crontabSchema,
  subresources: { status: true }
})
const deployment = type({ group: "apps", kind: "Deployment", plural: "deployments" })
const configMap = type({ group: "", kind: "ConfigMap", plural: "configmaps" })
const clusterWidget = type({ group: "stable.example.com", kind: "Widget", plural: "widgets", namespaced: false, custom: true, schema: { type: "object" } })

type Doc = {
  readonly paths: Record<string, Record<string, { readonly parameters?: ReadonlyArray<Record<string, unknown>> } & Record<string, unknown>>>
  readonly components: { readonly schemas: Record<string, Record<string, unknown>> }
}

const docOf = (docs: OpenApi.Documents, path: string): Doc => {
  const found = docs.groupVersions.get(path)
  if (found === undefined) throw new Error(`no document ${path}`)
  return JSON.parse(found.json) as Doc
}

const sameGvk = (ext: unknown, gvk: Record<string, string>): boolean =>
  typeof ext === "object" && ext !== null && !Array.isArray(ext) &&
  ["group", "version", "kind"].every((k) => (ext as Record<string, unknown>)[k] === gvk[k])

/** kubectl's query_param_verifier_v3: the first PATCH for the GVK must take a fieldValidation query parameter. */
const supportsFieldValidation = (doc: Doc, gvk: Record<string, string>): boolean => {
  for (const path of Object.values(doc.paths)) {
    const patch = path.patch as { readonly parameters?: ReadonlyArray<Record<string, unknown>> } | undefined
    if (patch === undefined || !sameGvk((patch as Record<string, unknown>)["x-kubernetes-group-version-kind"], gvk)) continue
    return (patch.parameters ?? []).some((p) => p.name === "fieldValidation" && p.in === "query")
  }
  return false
}

/** kubectl explain (v3): the GVK from the resource's paths, then the components schema listing it. */
const explain = (doc: Doc, prefix: string, plural: string, fieldPath: ReadonlyArray<string>): Record<string, unknown> | undefined => {
  const candidates = [`${prefix}/${plural}`, `${prefix}/${plural}/{name}`, `${prefix}/namespaces/{namespace}/${plural}`, `${prefix}/namespaces/{namespace}/${plural}/{name}`]
  let gvk: Record<string, string> | undefined
  for (const candidate of candidates) {
    for (const method of ["get", "post", "put", "patch", "delete"]) {
      const found = (doc.paths[candidate]?.[method] as Record<string, unknown> | undefined)?.["x-kubernetes-group-version-kind"]
      if (found !== undefined && gvk === undefined) gvk = found as Record<string, string>
    }
  }
  if (gvk === undefined) return undefined
  const wanted = gvk
  let schema = Object.values(doc.components.schemas).find((s) =>
    Array.isArray(s["x-kubernetes-group-version-kind"]) &&
    (s["x-kubernetes-group-version-kind"] as ReadonlyArray<unknown>).some((g) => JSON.stringify(g) === JSON.stringify(wanted))
  )
  for (const field of fieldPath) schema = (schema?.properties as Record<string, Record<string, unknown>> | undefined)?.[field]
  return schema
}

describe("OpenApi.build: the index", () => {
  const docs = OpenApi.build([crontab, deployment, configMap])

  it("lists every group/version with a URL carrying the document's hash", () => {
    expect(Object.keys(docs.index.paths).sort()).toEqual(["api/v1", "apis/apps/v1", "apis/stable.example.com/v1"])
    for (const [path, { serverRelativeURL }] of Object.entries(docs.index.paths)) {
      const json = docs.groupVersions.get(path)?.json ?? ""
      const sha = createHash("sha512").update(json).digest("hex").toUpperCase()
      expect(serverRelativeURL).toBe(`/openapi/v3/${path}?hash=${sha}`)
    }
  })

  it("the hash is stable for equal documents and changes with the content", () => {
    const again = OpenApi.build([configMap, deployment, crontab])
    expect(again.index).toEqual(docs.index)
    const changed = OpenApi.build([{ ...crontab, schema: { ...crontabSchema, description: "changed" } }, deployment, configMap])
    expect(changed.index.paths["apis/stable.example.com/v1"]).not.toEqual(docs.index.paths["apis/stable.example.com/v1"])
    expect(changed.index.paths["apis/apps/v1"]).toEqual(docs.index.paths["apis/apps/v1"])
  })

  it("api/v1 always holds Namespace, so kubectl's fallback probe succeeds", () => {
    const empty = OpenApi.build([])
    expect(Object.keys(empty.index.paths)).toEqual(["api/v1"])
    const core = docOf(empty, "api/v1")
    expect(supportsFieldValidation(core, { group: "", version: "v1", kind: "Namespace" })).toBe(true)
    expect(Object.keys(core.paths)).toContain("/api/v1/namespaces/{name}")
  })
})

describe("OpenApi.build: group/version documents", () => {
  const docs = OpenApi.build([crontab, clusterWidget, deployment, configMap])
  const custom = docOf(docs, "apis/stable.example.com/v1")

  it("are OpenAPI 3.0 documents", () => {
    expect(custom).toMatchObject({ openapi: "3.0.0", info: { title: "Kubernetes", version: "v1.32.0" } })
  })

  it("have a PATCH on each kind's item path, tagged with its GVK and taking fieldValidation", () => {
    const patch = custom.paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]?.patch as Record<string, unknown>
    expect(patch["x-kubernetes-group-version-kind"]).toEqual({ group: "stable.example.com", kind: "CronTab", version: "v1" })
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: "fieldValidation", in: "query" }))
    expect(Object.keys((patch.requestBody as { content: object }).content)).toEqual(expect.arrayContaining([
      "application/apply-patch+yaml",
      "application/json-patch+json",
      "application/merge-patch+json"
    ]))
    expect(supportsFieldValidation(custom, { group: "stable.example.com", version: "v1", kind: "CronTab" })).toBe(true)
    expect(supportsFieldValidation(docOf(docs, "apis/apps/v1"), { group: "apps", version: "v1", kind: "Deployment" })).toBe(true)
  })

  it("use the namespaced or cluster path shape", () => {
    expect(Object.keys(custom.paths)).toEqual(expect.arrayContaining([
      "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs",
      "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}",
      "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status",
      "/apis/stable.example.com/v1/crontabs",
      "/apis/stable.example.com/v1/widgets",
      "/apis/stable.example.com/v1/widgets/{name}"
    ]))
    expect(Object.keys(custom.paths).some((p) => p.includes("namespaces/{namespace}/widgets"))).toBe(false)
    expect(Object.keys(docOf(docs, "api/v1").paths)).toContain("/api/v1/namespaces/{namespace}/configmaps/{name}")
  })

  it("status PATCH takes fieldValidation too (kubectl may pick any PATCH of the GVK)", () => {
    const status = custom.paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status"]?.patch as Record<string, unknown>
    expect(status.parameters).toContainEqual(expect.objectContaining({ name: "fieldValidation", in: "query" }))
  })

  it("carry one components schema per kind, tagged with its GVK, with the CRD schema and metadata as ObjectMeta", () => {
    const schema = custom.components.schemas["com.example.stable.v1.CronTab"]
    expect(schema?.["x-kubernetes-group-version-kind"]).toEqual([{ group: "stable.example.com", kind: "CronTab", version: "v1" }])
    expect(schema?.description).toBe("CronTab runs a command on a schedule.")
    const properties = schema?.properties as Record<string, Record<string, unknown>>
    expect(properties.spec).toEqual(crontabSchema.properties.spec)
    expect(properties.metadata?.allOf).toEqual([{ $ref: `#/components/schemas/${OpenApi.objectMetaName}` }])
    expect(properties.apiVersion?.type).toBe("string")
    expect(custom.components.schemas[OpenApi.objectMetaName]?.type).toBe("object")
    expect(custom.components.schemas["com.example.stable.v1.CronTabList"]?.["x-kubernetes-group-version-kind"]).toEqual([
      { group: "stable.example.com", kind: "CronTabList", version: "v1" }
    ])
  })

  it("let kubectl explain find a kind and its fields", () => {
    const prefix = "/apis/stable.example.com/v1"
    expect(explain(custom, prefix, "crontabs", [])?.description).toBe("CronTab runs a command on a schedule.")
    expect(explain(custom, prefix, "crontabs", ["spec"])?.description).toBe("What to run and when.")
    expect(explain(custom, prefix, "crontabs", ["spec", "cronSpec"])).toEqual({ type: "string", description: "The schedule." })
    expect(explain(docOf(docs, "apis/apps/v1"), "/apis/apps/v1", "deployments", ["metadata"])).toBeDefined()
  })

  it("give built-in kinds a minimal valid schema", () => {
    const apps = docOf(docs, "apis/apps/v1")
    const schema = apps.components.schemas["io.k8s.api.apps.v1.Deployment"]
    expect(schema).toMatchObject({
      type: "object",
      "x-kubernetes-group-version-kind": [{ group: "apps", kind: "Deployment", version: "v1" }],
      "x-kubernetes-preserve-unknown-fields": true
    })
    expect(Object.keys(schema?.properties as object)).toEqual(["apiVersion", "kind", "metadata"])
  })

  it("resolve every $ref", () => {
    for (const doc of docs.groupVersions.values()) {
      const refs = [...doc.json.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] ?? "")
      const schemas = (doc.document.components as { schemas: Record<string, unknown> }).schemas
      for (const ref of refs) expect(schemas[ref], ref).toBeDefined()
    }
  })
})

describe("OpenApi names", () => {
  it("group/version paths and schema names", () => {
    expect(OpenApi.groupVersionPath({ group: "", version: "v1" })).toBe("api/v1")
    expect(OpenApi.groupVersionPath({ group: "coordination.k8s.io", version: "v1" })).toBe("apis/coordination.k8s.io/v1")
    expect(OpenApi.schemaName({ group: "coordination.k8s.io", version: "v1", kind: "Lease", custom: false })).toBe("io.k8s.api.coordination.v1.Lease")
    expect(OpenApi.schemaName({ group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition", custom: false })).toBe(
      "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
    )
  })
})
