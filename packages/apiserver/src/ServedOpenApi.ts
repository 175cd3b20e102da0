/**
 * The OpenAPI v3 documents as this server serves them: OpenApi.build over the served kinds, with
 * one change. Built-in kinds have no real schema here, so their component schemas lose the
 * `x-kubernetes-group-version-kind` tag: `kubectl apply` then computes strategic merge patches
 * from its compiled-in types, silently, instead of failing on the placeholder schema and printing
 * `warning: error calculating patch from openapi v3 spec`. Their PATCH paths (the fieldValidation
 * probe) stay. Documents are rebuilt only when the served kinds change.
 */
import * as OpenApi from "./OpenApi.ts"
import type * as Registry from "./Registry.ts"

const untagBuiltins = (document: Record<string, unknown>, builtins: ReadonlySet<string>): Record<string, unknown> => {
  const components = document.components as { schemas?: Record<string, Record<string, unknown>> } | undefined
  const schemas = components?.schemas ?? {}
  const untagged = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => {
    if (!builtins.has(name)) return [name, schema]
    const { "x-kubernetes-group-version-kind": _, ...rest } = schema
    return [name, rest]
  }))
  return { ...document, components: { ...components, schemas: untagged } }
}

/**
 * Serves `/openapi/v3` (path undefined) and `/openapi/v3/<path>` as JSON text, or undefined.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as Registry from "./Registry.ts"
 * import * as ServedOpenApi from "./ServedOpenApi.ts"
 * const openapi = ServedOpenApi.make(Registry.make(Builtins.make()))
 * JSON.parse(openapi(undefined)!).paths["api/v1"].serverRelativeURL // "/openapi/v3/api/v1?hash=..."
 */
export const make = (registry: Registry.Registry): ((path: string | undefined) => string | undefined) => {
  let cached: { readonly generation: number; readonly index: string; readonly documents: ReadonlyMap<string, string> } | undefined
  const build = () => {
    const types = registry.all().map((r) => r.type)
    const builtins = new Set(types.filter((t) => !t.custom).flatMap((t) => [OpenApi.schemaName(t), `${OpenApi.schemaName(t)}List`]))
    const documents = new Map<string, string>()
    const paths: Record<string, { readonly serverRelativeURL: string }> = {}
    for (const [path, doc] of OpenApi.build(types).groupVersions) {
      const json = JSON.stringify(untagBuiltins(doc.document, builtins))
      documents.set(path, json)
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${OpenApi.hash(json)}` }
    }
    return { generation: registry.generation(), index: JSON.stringify({ paths }), documents }
  }
  return (path) => {
    if (cached === undefined || cached.generation !== registry.generation()) cached = build()
    return path === undefined ? cached.index : cached.documents.get(path)
  }
}
