/**
 * The ObjectMeta checks every object gets (names, generateName, namespace, labels, annotations,
 * finalizers, owner references), with kube-apiserver 1.32's causes.
 */
import { FieldCauses, KubeObject, NameRules } from "@kubefx/schema/internal"

/** Validates `metadata.name` (or `generateName` when `prefix`), returning messages. */
export type NameValidator = (name: string, prefix: boolean) => ReadonlyArray<string>

/**
 * `NameIsDNSSubdomain`: names of custom resources and most kinds.
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * ObjectMetaValidation.nameIsDnsSubdomain("web-", true) // []
 */
export const nameIsDnsSubdomain: NameValidator = (name, prefix) =>
  NameRules.dns1123Subdomain(prefix && name.endsWith("-") ? `${name.slice(0, -1)}a` : name)

/**
 * `ValidatePathSegmentName`: names of embedded resources.
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * ObjectMetaValidation.nameIsPathSegment("..", false) // ["may not be '..'"]
 */
export const nameIsPathSegment: NameValidator = (name, prefix) => {
  if (!prefix && (name === "." || name === "..")) return [`may not be '${name}'`]
  return ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)
}

const stringRecord = (u: unknown): ReadonlyArray<readonly [string, string]> =>
  KubeObject.isObject(u) ? Object.entries(u).map(([k, v]) => [k, typeof v === "string" ? v : String(v)]) : []

const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8")

const ownerReferenceCauses = (refs: unknown, path: string): ReadonlyArray<FieldCauses.Cause> => {
  if (!Array.isArray(refs)) return []
  const causes: Array<FieldCauses.Cause> = []
  const controllers: Array<string> = []
  for (const ref of refs) {
    const r = KubeObject.isObject(ref) ? ref : {}
    const text = (k: string) => (typeof r[k] === "string" ? r[k] : "")
    const apiVersion = text("apiVersion")
    if (apiVersion.split("/").at(-1) === "") causes.push(FieldCauses.invalid(FieldCauses.child(path, "apiVersion"), apiVersion, "version must not be empty"))
    if (text("kind") === "") causes.push(FieldCauses.invalid(FieldCauses.child(path, "kind"), "", "kind must not be empty"))
    if (text("name") === "") causes.push(FieldCauses.invalid(FieldCauses.child(path, "name"), "", "name must not be empty"))
    if (text("uid") === "") causes.push(FieldCauses.invalid(FieldCauses.child(path, "uid"), "", "uid must not be empty"))
    if (r.controller === true) controllers.push(`${text("kind")}/${text("name")}`)
  }
  if (controllers.length > 1) {
    causes.push(
      FieldCauses.invalid(
        path,
        FieldCauses.goLiteral("[]v1.OwnerReference{...}"),
        `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(" and ")}`
      )
    )
  }
  return causes
}

/**
 * `ValidateObjectMetaAccessor`: name (or generateName), namespace by scope, generation, labels,
 * annotations (keys and the 256 KiB total), ownerReferences and finalizers.
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * ObjectMetaValidation.validateObjectMeta({ name: "Bad_Name", namespace: "default" }, { namespaced: true })[0]?.field
 * // "metadata.name"
 */
export const validateObjectMeta = (
  metadata: unknown,
  options: { readonly namespaced: boolean; readonly name?: NameValidator; readonly field?: string }
): ReadonlyArray<FieldCauses.Cause> => {
  const m = KubeObject.isObject(metadata) ? metadata : {}
  const path = options.field ?? "metadata"
  const nameFn = options.name ?? nameIsDnsSubdomain
  const text = (k: string) => (typeof m[k] === "string" ? m[k] : "")
  const causes: Array<FieldCauses.Cause> = []
  const generateName = text("generateName")
  if (generateName !== "") {
    for (const msg of nameFn(generateName, true)) causes.push(FieldCauses.invalid(FieldCauses.child(path, "generateName"), generateName, msg))
  }
  const name = text("name")
  if (name === "") causes.push(FieldCauses.required(FieldCauses.child(path, "name"), "name or generateName is required"))
  else for (const msg of nameFn(name, false)) causes.push(FieldCauses.invalid(FieldCauses.child(path, "name"), name, msg))
  const namespace = text("namespace")
  if (options.namespaced) {
    if (namespace === "") causes.push(FieldCauses.required(FieldCauses.child(path, "namespace")))
    else for (const msg of NameRules.dns1123Label(namespace)) causes.push(FieldCauses.invalid(FieldCauses.child(path, "namespace"), namespace, msg))
  } else if (namespace !== "") {
    causes.push(FieldCauses.forbidden(FieldCauses.child(path, "namespace"), "not allowed on this type"))
  }
  if (typeof m.generation === "number" && m.generation < 0) {
    causes.push(FieldCauses.invalid(FieldCauses.child(path, "generation"), m.generation, "must be greater than or equal to 0"))
  }
  const labels = FieldCauses.child(path, "labels")
  for (const [k, v] of stringRecord(m.labels)) {
    for (const msg of NameRules.qualifiedName(k)) causes.push(FieldCauses.invalid(labels, k, msg))
    for (const msg of NameRules.labelValue(v)) causes.push(FieldCauses.invalid(labels, v, msg))
  }
  const annotations = FieldCauses.child(path, "annotations")
  const annotationEntries = stringRecord(m.annotations)
  for (const [k] of annotationEntries) {
    for (const msg of NameRules.qualifiedName(k.toLowerCase())) causes.push(FieldCauses.invalid(annotations, k, msg))
  }
  if (annotationEntries.reduce((n, [k, v]) => n + utf8Length(k) + utf8Length(v), 0) > 256 * 1024) {
    causes.push(FieldCauses.tooLong(annotations, 256 * 1024))
  }
  causes.push(...ownerReferenceCauses(m.ownerReferences, FieldCauses.child(path, "ownerReferences")))
  const finalizers = Array.isArray(m.finalizers) ? m.finalizers.filter((f): f is string => typeof f === "string") : []
  for (const f of finalizers) {
    for (const msg of NameRules.qualifiedName(f)) causes.push(FieldCauses.invalid(FieldCauses.child(path, "finalizers"), f, msg))
  }
  if (finalizers.includes("orphan") && finalizers.includes("foregroundDeletion")) {
    causes.push(
      FieldCauses.invalid(FieldCauses.child(path, "finalizers"), FieldCauses.goStrings(finalizers), "finalizer orphan and foregroundDeletion cannot be both set")
    )
  }
  return causes
}
