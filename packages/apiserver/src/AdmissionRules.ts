/**
 * How admission webhooks and ValidatingAdmissionPolicies select the requests they see: rules of
 * operations, API groups, versions, resources (`pods`, `pods/status`, `*`, `*\/*`, `*\/status`) and
 * scope, then a namespaceSelector on the namespace's labels (a Namespace's own, for Namespace
 * requests; cluster-scoped objects always pass) and an objectSelector on the new or the old
 * object's labels.
 */
import type * as Registry from "./Registry.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** What is being admitted. */
export interface Request {
  readonly operation: "CREATE" | "UPDATE" | "DELETE"
  readonly resource: Registry.Resource
  readonly subresource: string | undefined
  readonly name: string
  readonly namespace: string | undefined
  readonly object: KubeObject.KubeObject | undefined
  readonly oldObject: KubeObject.KubeObject | undefined
  readonly dryRun: boolean
  readonly user: { readonly username: string; readonly groups: ReadonlyArray<string> }
}

/** The strings of a JSON list, ignoring anything else. */
export const strings = (u: unknown): ReadonlyArray<string> => Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

const anyOf = (values: ReadonlyArray<string>, value: string) => values.includes("*") || values.includes(value)

const resourceMatches = (patterns: ReadonlyArray<string>, plural: string, subresource: string | undefined) =>
  patterns.some((pattern) => {
    if (pattern === "*/*") return true
    const [resource, sub] = pattern.split("/", 2) as [string, string | undefined]
    const resourceOk = resource === "*" || resource === plural
    if (subresource === undefined) return resourceOk && sub === undefined
    return resourceOk && (sub === "*" || sub === subresource)
  })

/**
 * Whether a rule (`operations`, `apiGroups`, `apiVersions`, `resources`, `scope`, and for
 * policies `resourceNames`) names the request, as served through `resource`.
 *
 * @example
 * import * as AdmissionRules from "./AdmissionRules.ts"
 * declare const request: AdmissionRules.Request
 * AdmissionRules.ruleMatches({ operations: ["CREATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["deployments"] }, request, request.resource)
 */
export const ruleMatches = (rule: KubeObject.KubeObject, request: Request, resource: Registry.Resource): boolean => {
  const type = resource.type
  const scope = typeof rule.scope === "string" ? rule.scope : "*"
  const names = strings(rule.resourceNames)
  return anyOf(strings(rule.operations), request.operation) &&
    anyOf(strings(rule.apiGroups), type.group) &&
    anyOf(strings(rule.apiVersions), type.version) &&
    resourceMatches(strings(rule.resources), type.plural, request.subresource) &&
    (scope === "*" || (scope === "Namespaced") === type.namespaced) &&
    (names.length === 0 || names.includes(request.name))
}

const labelsOf = (object: KubeObject.KubeObject | undefined) => KubeObject.meta(object ?? {}).labels as Readonly<Record<string, string>> | undefined

/** The labels a namespaceSelector is matched against, if the request has a namespace. */
export const namespaceLabels = (store: Store.Store, request: Request): Readonly<Record<string, string>> | undefined => {
  if (request.resource.type.group === "" && request.resource.type.plural === "namespaces") return labelsOf(request.object ?? request.oldObject)
  if (request.namespace === undefined) return undefined
  return labelsOf(store.get("namespaces", "", request.namespace))
}

/**
 * Whether the request passes a namespaceSelector and an objectSelector (absent ones match all).
 *
 * @example
 * import * as AdmissionRules from "./AdmissionRules.ts"
 * declare const store: import("./Store.ts").Store
 * declare const request: AdmissionRules.Request
 * AdmissionRules.selected(store, request, { matchLabels: { team: "a" } }, undefined)
 */
export const selected = (store: Store.Store, request: Request, namespaceSelector: unknown, objectSelector: unknown): boolean => {
  const clusterScoped = !request.resource.type.namespaced && request.resource.type.plural !== "namespaces"
  if (!clusterScoped && !SelectorValidation.matches(namespaceSelector, namespaceLabels(store, request))) return false
  return SelectorValidation.matches(objectSelector, labelsOf(request.object)) || SelectorValidation.matches(objectSelector, labelsOf(request.oldObject))
}
