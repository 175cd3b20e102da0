/**
 * The OpenAPI v3 documents kubectl reads: `GET /openapi/v3` lists one document per served
 * group/version (`{"paths":{"apis/g/v":{"serverRelativeURL":"/openapi/v3/apis/g/v?hash=..."}}}`),
 * and each document has, for every kind, the operations on its paths tagged with
 * `x-kubernetes-group-version-kind` (PATCH with a `fieldValidation` query parameter, which
 * `kubectl apply/create --validate=strict` probes for) and a `components.schemas` entry with the
 * same extension that `kubectl explain` renders. Custom kinds carry their CRD schema, with metadata
 * a reference to ObjectMeta; built-in kinds the schema they are given, or a minimal one. `api/v1` always has Namespace's PATCH,
 * which kubectl falls back to for kinds it cannot find.
 *
 * The hash is the uppercase hex SHA-512 of the document's JSON, as kube-apiserver computes it, so
 * equal documents have equal URLs and clients may cache them.
 */
import { createHash } from "node:crypto"
import * as ResourceType from "./ResourceType.ts"
import type { JsonSchemaProps } from "@kubefx/schema"

type Json = Record<string, unknown>

/** The `/openapi/v3` discovery document. */
export interface Index {
  readonly paths: Readonly<Record<string, { readonly serverRelativeURL: string }>>
}

/** One group/version's document, ready to serve. */
export interface GroupVersionDocument {
  /** `api/v1` or `apis/<group>/<version>`. */
  readonly path: string
  readonly document: Json
  /** The JSON body to send (the hash is computed over exactly these bytes). */
  readonly json: string
  readonly hash: string
}

/** What the server serves under `/openapi/v3`. */
export interface Documents {
  readonly index: Index
  /** Keyed by {@link GroupVersionDocument.path}. */
  readonly groupVersions: ReadonlyMap<string, GroupVersionDocument>
}

/** The component name of ObjectMeta, which every kind's `metadata` refers to. */
export const objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` })

/**
 * The path of a group/version's document: `api/v1` for the core group, `apis/<group>/<version>` else.
 *
 * @example
 * import * as OpenApi from "./OpenApi.ts"
 * OpenApi.groupVersionPath({ group: "stable.example.com", version: "v1" }) // "apis/stable.example.com/v1"
 */
export const groupVersionPath = (type: Pick<ResourceType.ResourceType, "group" | "version">): string =>
  type.group === "" ? `api/${type.version}` : `apis/${type.group}/${type.version}`

/**
 * The `components.schemas` name of a kind: reversed group for custom kinds
 * (`com.example.stable.v1.CronTab`), the k8s.io package name for built-ins (`io.k8s.api.apps.v1.Deployment`).
 *
 * @example
 * import * as OpenApi from "./OpenApi.ts"
 * OpenApi.schemaName({ group: "stable.example.com", version: "v1", kind: "CronTab", custom: true }) // "com.example.stable.v1.CronTab"
 * OpenApi.schemaName({ group: "", version: "v1", kind: "Namespace", custom: false }) // "io.k8s.api.core.v1.Namespace"
 */
export const schemaName = (type: Pick<ResourceType.ResourceType, "group" | "version" | "kind" | "custom">): string => {
  if (type.custom) return [...type.group.split(".").reverse(), type.version, type.kind].join(".")
  if (type.group === "apiextensions.k8s.io") {
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${type.version}.${type.kind}`
  }
  const pkg = type.group === "" ? "core" : (type.group.split(".")[0] ?? type.group)
  return `io.k8s.api.${pkg}.${type.version}.${type.kind}`
}

/**
 * Uppercase hex SHA-512 of a document's JSON, the `hash` query parameter of its URL.
 *
 * @example
 * import * as OpenApi from "./OpenApi.ts"
 * OpenApi.hash("{}").length // 128
 */
export const hash = (json: string): string => createHash("sha512").update(json).digest("hex").toUpperCase()

const gvk = (group: string, version: string, kind: string): Json => ({ group, kind, version })

const describedString = (description: string): Json => ({ description, type: "string" })

const typeMeta: Json = {
  apiVersion: describedString("The API group and version of this object's representation, as group/version (just the version for the core group)."),
  kind: describedString("The kind of this object, in CamelCase.")
}

const metadataProperty: Json = {
  allOf: [ref(objectMetaName)],
  default: {},
  description: "Standard object metadata: name, namespace, labels, annotations and what the server maintains."
}

const objectMetaSchemas: Json = {
  [objectMetaName]: {
    description: "Metadata every persisted object has.",
    type: "object",
    properties: {
      annotations: {
        description: "Unstructured key/value data tools attach to the object.",
        type: "object",
        additionalProperties: { type: "string", default: "" }
      },
      creationTimestamp: { description: "When the server created the object (RFC 3339).", type: "string", format: "date-time" },
      deletionGracePeriodSeconds: { description: "Seconds allowed for graceful deletion.", type: "integer", format: "int64" },
      deletionTimestamp: { description: "When deletion was requested (RFC 3339).", type: "string", format: "date-time" },
      finalizers: {
        description: "Keys that must be removed before the object is deleted.",
        type: "array",
        items: { type: "string", default: "" },
        "x-kubernetes-list-type": "set"
      },
      generateName: { description: "Prefix of a name the server generates when name is empty.", type: "string" },
      generation: { description: "Sequence number of changes to the desired state.", type: "integer", format: "int64" },
      labels: {
        description: "Key/value pairs used to select objects.",
        type: "object",
        additionalProperties: { type: "string", default: "" }
      },
      managedFields: {
        description: "Which manager owns which fields (server-side apply).",
        type: "array",
        items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        "x-kubernetes-list-type": "atomic"
      },
      name: { description: "Name, unique within the namespace.", type: "string" },
      namespace: { description: "Namespace of namespaced objects.", type: "string" },
      ownerReferences: {
        description: "Objects this one depends on; it is garbage collected when they are gone.",
        type: "array",
        items: ref("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"),
        "x-kubernetes-list-map-keys": ["uid"],
        "x-kubernetes-list-type": "map"
      },
      resourceVersion: { description: "Opaque version of the object for optimistic concurrency and watches.", type: "string" },
      uid: { description: "Unique identifier the server assigns.", type: "string" }
    }
  },
  "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference": {
    description: "A reference to an owning object.",
    type: "object",
    required: ["apiVersion", "kind", "name", "uid"],
    properties: {
      apiVersion: describedString("API version of the owner."),
      blockOwnerDeletion: { description: "Whether the owner waits for this object's deletion.", type: "boolean" },
      controller: { description: "Whether the owner is the managing controller.", type: "boolean" },
      kind: describedString("Kind of the owner."),
      name: describedString("Name of the owner."),
      uid: describedString("UID of the owner.")
    },
    "x-kubernetes-map-type": "atomic"
  }
}

/** A CRD schema as published: type meta described and metadata pointing at ObjectMeta. */
const kindSchema = (type: ResourceType.ResourceType): Json => {
  const schema: JsonSchemaProps = type.schema ?? {
    type: "object",
    description: `${type.kind} (${ResourceType.groupVersion(type)}), served by kubefx without a published schema.`,
    "x-kubernetes-preserve-unknown-fields": true
  }
  const properties = { ...typeMeta, ...schema.properties, metadata: metadataProperty }
  return {
    ...schema,
    type: "object",
    properties,
    "x-kubernetes-group-version-kind": [gvk(type.group, type.version, type.kind)]
  }
}

const listSchema = (type: ResourceType.ResourceType): Json => ({
  description: `A list of ${type.kind} objects.`,
  type: "object",
  required: ["items"],
  properties: {
    ...typeMeta,
    items: { description: `The ${type.plural}.`, type: "array", items: ref(schemaName(type)) },
    metadata: { description: "List metadata: resourceVersion and continue token.", type: "object" }
  },
  "x-kubernetes-group-version-kind": [gvk(type.group, type.version, type.listKind)]
})

const queryParameter = (name: string, description: string, type = "string"): Json => ({
  name,
  in: "query",
  description,
  schema: { type, uniqueItems: true }
})

const fieldValidation = queryParameter(
  "fieldValidation",
  "What to do with unknown or duplicate fields: Ignore, Warn (the default) or Strict."
)
const dryRun = queryParameter("dryRun", "All: validate and answer without storing.")
const fieldManager = queryParameter("fieldManager", "Name of the actor making the change, for field ownership.")
const force = queryParameter("force", "Apply only: take ownership of conflicting fields.", "boolean")

const pathParameter = (name: string, description: string): Json => ({
  name,
  in: "path",
  required: true,
  description,
  schema: { type: "string", uniqueItems: true }
})

const respond = (code: string, name: string): Json => ({
  [code]: { description: code === "201" ? "Created" : "OK", content: { "application/json": { schema: ref(name) } } },
  "401": { description: "Unauthorized" }
})

const jsonBody = (name: string): Json => ({
  content: { "application/json": { schema: ref(name) }, "application/yaml": { schema: ref(name) } },
  required: true
})

const patchTypes = ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"]

// Strategic merge patch is advertised for no kind. Custom resources take none (as in 1.32; kubectl
// reads this to fall back to a JSON merge patch, where advertising it makes `kubectl apply` and
// `kubectl diff` send one and get 415); the built-in kinds' schemas here carry no patch strategies
// or merge keys, so kubectl, finding none advertised, computes their strategic merge patches from
// its compiled-in types, as it did before OpenAPI v3.
const patchBody: Json = {
  content: Object.fromEntries(patchTypes.map((t) => [t, { schema: { type: "object" } }])),
  required: true
}

const operation = (type: ResourceType.ResourceType, action: string, id: string, extra: Json): Json => ({
  description: `${action} ${type.kind}`,
  operationId: id,
  ...extra,
  "x-kubernetes-action": action,
  "x-kubernetes-group-version-kind": gvk(type.group, type.version, type.kind)
})

const opName = (verb: string, type: ResourceType.ResourceType, suffix = ""): string =>
  `${verb}${type.namespaced ? "Namespaced" : ""}${type.kind}${suffix}`

const kindPaths = (type: ResourceType.ResourceType): Json => {
  const base = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`
  const collection = type.namespaced ? `${base}/namespaces/{namespace}/${type.plural}` : `${base}/${type.plural}`
  const item = `${collection}/{name}`
  const name = schemaName(type)
  const scope = type.namespaced ? [pathParameter("namespace", "Object name and auth scope, such as for teams and projects")] : []
  const itemScope = [pathParameter("name", `name of the ${type.kind}`), ...scope]
  const writes = [dryRun, fieldManager, fieldValidation]
  const paths: Json = {
    [collection]: {
      get: operation(type, "list", opName("list", type), { responses: respond("200", `${name}List`) }),
      post: operation(type, "post", opName("create", type), {
        parameters: writes,
        requestBody: jsonBody(name),
        responses: respond("201", name)
      }),
      parameters: scope
    },
    [item]: {
      get: operation(type, "get", opName("read", type), { responses: respond("200", name) }),
      put: operation(type, "put", opName("replace", type), {
        parameters: writes,
        requestBody: jsonBody(name),
        responses: respond("200", name)
      }),
      patch: operation(type, "patch", opName("patch", type), {
        parameters: [...writes, force],
        requestBody: patchBody,
        responses: respond("200", name)
      }),
      delete: operation(type, "delete", opName("delete", type), { responses: respond("200", name) }),
      parameters: itemScope
    }
  }
  if (type.namespaced) {
    paths[`${base}/${type.plural}`] = {
      get: operation(type, "list", `list${type.kind}ForAllNamespaces`, { responses: respond("200", `${name}List`) })
    }
  }
  if (type.subresources.status) {
    paths[`${item}/status`] = {
      get: operation(type, "get", opName("read", type, "Status"), { responses: respond("200", name) }),
      put: operation(type, "put", opName("replace", type, "Status"), {
        parameters: writes,
        requestBody: jsonBody(name),
        responses: respond("200", name)
      }),
      patch: operation(type, "patch", opName("patch", type, "Status"), {
        parameters: [...writes, force],
        requestBody: patchBody,
        responses: respond("200", name)
      }),
      parameters: itemScope
    }
  }
  return paths
}

/** Namespace, which kubectl's fieldValidation probe falls back to, whether or not the caller lists it. */
const namespaceType: ResourceType.ResourceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  listKind: "NamespaceList",
  plural: "namespaces",
  singular: "namespace",
  namespaced: false,
  shortNames: ["ns"],
  categories: [],
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  subresources: { status: true },
  custom: false,
  structure: {},
  selectableFields: [],
  printerColumns: []
}

const byKind = (a: ResourceType.ResourceType, b: ResourceType.ResourceType): number =>
  a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0

/**
 * The OpenAPI v3 document of one group/version's kinds.
 *
 * @example
 * import * as OpenApi from "./OpenApi.ts"
 * const doc = OpenApi.document([{ group: "", version: "v1", kind: "Namespace", listKind: "NamespaceList",
 *   plural: "namespaces", singular: "namespace", namespaced: false, shortNames: [], categories: [], verbs: [],
 *   subresources: { status: false }, custom: false, structure: {}, selectableFields: [], printerColumns: [] }])
 * Object.keys(doc.paths as object).includes("/api/v1/namespaces/{name}") // true
 */
export const document = (types: ReadonlyArray<ResourceType.ResourceType>): Json => {
  const sorted = [...types].sort(byKind)
  const paths: Json = {}
  const schemas: Json = { ...objectMetaSchemas }
  for (const type of sorted) {
    Object.assign(paths, kindPaths(type))
    schemas[schemaName(type)] = kindSchema(type)
    schemas[`${schemaName(type)}List`] = listSchema(type)
  }
  const sortedPaths = Object.fromEntries(Object.keys(paths).sort().map((p) => [p, paths[p]]))
  const sortedSchemas = Object.fromEntries(Object.keys(schemas).sort().map((s) => [s, schemas[s]]))
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.32.0" },
    paths: sortedPaths,
    components: { schemas: sortedSchemas }
  }
}

/**
 * Every served group/version's document and the index pointing at them. Built-in and custom types
 * alike; `api/v1` always exists and always holds Namespace.
 *
 * @example
 * import * as OpenApi from "./OpenApi.ts"
 * const docs = OpenApi.build([])
 * docs.index.paths["api/v1"]?.serverRelativeURL.startsWith("/openapi/v3/api/v1?hash=") // true
 */
export const build = (types: ReadonlyArray<ResourceType.ResourceType>): Documents => {
  const groups = new Map<string, Array<ResourceType.ResourceType>>()
  const withNamespace = types.some((t) => t.group === "" && t.version === "v1" && t.kind === "Namespace")
    ? types
    : [...types, namespaceType]
  for (const type of withNamespace) {
    const path = groupVersionPath(type)
    groups.set(path, [...(groups.get(path) ?? []), type])
  }
  const groupVersions = new Map<string, GroupVersionDocument>()
  for (const path of [...groups.keys()].sort()) {
    const doc = document(groups.get(path) ?? [])
    const json = JSON.stringify(doc)
    groupVersions.set(path, { path, document: doc, json, hash: hash(json) })
  }
  const paths = Object.fromEntries(
    [...groupVersions.values()].map((d) => [d.path, { serverRelativeURL: `/openapi/v3/${d.path}?hash=${d.hash}` }])
  )
  return { index: { paths }, groupVersions }
}
