/**
 * 1.32's validation of RBAC objects: policy rules (verbs, and either API groups and resources or
 * non-resource URLs), aggregation rules, bindings' roleRef (fixed once created) and subjects.
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const size = (u: unknown): number => (Array.isArray(u) ? u.length : 0)
const group = "rbac.authorization.k8s.io"

const rule = (r: Json, at: string, namespaced: boolean): Causes => {
  const causes: Array<Status.StatusCause> = []
  if (size(r.verbs) === 0) causes.push(FieldErrors.required(`${at}.verbs`, "verbs must contain at least one value"))
  if (size(r.nonResourceURLs) > 0) {
    const urls = FieldErrors.stringSlice(r.nonResourceURLs)
    if (namespaced) causes.push(FieldErrors.invalid(`${at}.nonResourceURLs`, urls, "namespaced rules cannot apply to non-resource URLs"))
    if (size(r.apiGroups) > 0 || size(r.resources) > 0 || size(r.resourceNames) > 0) {
      causes.push(FieldErrors.invalid(`${at}.nonResourceURLs`, urls, "rules cannot apply to both regular resources and non-resource URLs"))
    }
    return causes
  }
  if (size(r.apiGroups) === 0) causes.push(FieldErrors.required(`${at}.apiGroups`, "resource rules must supply at least one api group"))
  if (size(r.resources) === 0) causes.push(FieldErrors.required(`${at}.resources`, "resource rules must supply at least one resource"))
  return causes
}

/**
 * A Role: namespaced rules.
 *
 * @example
 * import * as RbacValidation from "./RbacValidation.ts"
 * RbacValidation.role({ rules: [{ apiGroups: [""], resources: ["pods"] }] }, undefined)[0].message
 * // "Required value: verbs must contain at least one value"
 */
export const role = (object: Json): Causes => KubeObject.records(object.rules).flatMap((r, i) => rule(r, `rules[${i}]`, true))

/**
 * A ClusterRole: rules, and an aggregation rule's selectors.
 *
 * @example
 * import * as RbacValidation from "./RbacValidation.ts"
 * RbacValidation.clusterRole({ rules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }] }, undefined) // []
 */
export const clusterRole = (object: Json): Causes => [
  ...KubeObject.records(object.rules).flatMap((r, i) => rule(r, `rules[${i}]`, false)),
  ...(KubeObject.isObject(object.aggregationRule) && size(object.aggregationRule.clusterRoleSelectors) === 0
    ? [FieldErrors.required("aggregationRule.clusterRoleSelectors", "at least one clusterRoleSelector required if aggregationRule is non-nil")]
    : [])
]

const subject = (s: Json, at: string, namespaced: boolean): Causes => {
  const causes: Array<Status.StatusCause> = []
  const name = String(s.name ?? "")
  if (name === "") causes.push(FieldErrors.required(`${at}.name`))
  switch (s.kind) {
    case "ServiceAccount":
      if (name !== "") causes.push(...NameRules.dns1123Subdomain(name).map((m) => FieldErrors.invalid(`${at}.name`, FieldErrors.quote(name), m)))
      if (s.apiGroup !== undefined && s.apiGroup !== "") causes.push(FieldErrors.notSupported(`${at}.apiGroup`, s.apiGroup, [""]))
      if (!namespaced && (s.namespace === undefined || s.namespace === "")) causes.push(FieldErrors.required(`${at}.namespace`))
      break
    case "User":
    case "Group":
      if (s.apiGroup !== group) causes.push(FieldErrors.notSupported(`${at}.apiGroup`, s.apiGroup ?? "", [group]))
      break
    default:
      causes.push(FieldErrors.notSupported(`${at}.kind`, s.kind ?? "", ["ServiceAccount", "User", "Group"]))
  }
  return causes
}

const goRoleRef = (ref: Json) => `rbac.RoleRef{APIGroup:${FieldErrors.quote(ref.apiGroup)}, Kind:${FieldErrors.quote(ref.kind)}, Name:${FieldErrors.quote(ref.name)}}`

const roleBinding = (namespaced: boolean) => (object: Json, old: Json | undefined): Causes => {
  const ref = KubeObject.record(object.roleRef)
  const kinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"]
  const name = String(ref.name ?? "")
  const causes: Array<Status.StatusCause> = []
  if (ref.apiGroup !== group) causes.push(FieldErrors.notSupported("roleRef.apiGroup", ref.apiGroup ?? "", [group]))
  if (!kinds.includes(String(ref.kind))) causes.push(FieldErrors.notSupported("roleRef.kind", ref.kind ?? "", kinds))
  if (name === "") causes.push(FieldErrors.required("roleRef.name"))
  else if (name === "." || name === ".." || /[/%]/.test(name)) {
    causes.push(FieldErrors.invalid("roleRef.name", FieldErrors.quote(name), /[/%]/.test(name) ? `may not contain '${/\//.test(name) ? "/" : "%"}'` : `may not be '${name}'`))
  }
  causes.push(...KubeObject.records(object.subjects).flatMap((s, i) => subject(s, `subjects[${i}]`, namespaced)))
  if (old !== undefined && !KubeObject.equals(object.roleRef, old.roleRef)) {
    causes.push(FieldErrors.invalid("roleRef", goRoleRef(ref), "cannot change roleRef"))
  }
  return causes
}

/**
 * A RoleBinding: a Role or ClusterRole of this group; roleRef cannot change.
 *
 * @example
 * import * as RbacValidation from "./RbacValidation.ts"
 * RbacValidation.binding({ roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "a" } }, { roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "b" } })[0].message
 * // 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"a"}: cannot change roleRef'
 */
export const binding = roleBinding(true)

/**
 * A ClusterRoleBinding: a ClusterRole; ServiceAccount subjects name their namespace.
 *
 * @example
 * import * as RbacValidation from "./RbacValidation.ts"
 * RbacValidation.clusterBinding({ roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "a" }, subjects: [{ kind: "ServiceAccount", name: "x" }] }, undefined)[0].field
 * // "subjects[0].namespace"
 */
export const clusterBinding = roleBinding(false)
