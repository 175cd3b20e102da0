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

/**
 * `ValidateNamespaceName` (`NameIsDNSLabel`): names of namespaces.
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * ObjectMetaValidation.nameIsDnsLabel("team.a", false).length // 1
 */
export const nameIsDnsLabel: NameValidator = (name, prefix) =>
  NameRules.dns1123Label(prefix && name.endsWith("-") ? `${name.slice(0, -1)}a` : name)

// `path.IsValidPathSegmentName`, prefix or not (RBAC's and persistent volumes' rule).
const pathSegmentName: NameValidator = (name) => nameIsPathSegment(name, false)

/**
 * The rule a kind's names follow in kube-apiserver 1.32: a DNS-1123 label for namespaces, a path
 * segment for RBAC roles and bindings (`system:controller:x`) and persistent volumes, a DNS-1123
 * subdomain for everything else (a kind with a stricter rule, as Services, checks it in its own
 * validation).
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * ObjectMetaValidation.nameRule("rbac.authorization.k8s.io", "clusterroles")("system:viewer", false) // []
 * ObjectMetaValidation.nameRule("", "configmaps")("system:viewer", false).length // 1
 */
export const nameRule = (group: string, resource: string): NameValidator => {
  if (group === "" && resource === "namespaces") return nameIsDnsLabel
  if (group === "rbac.authorization.k8s.io" || group === "apiregistration.k8s.io" || (group === "" && resource === "persistentvolumes")) return pathSegmentName
  return nameIsDnsSubdomain
}

// Groups whose kinds validate their metadata with apimachinery's rules alone, not core's (which
// also refuses finalizer names without a path).
const apimachineryMetaGroups = new Set(["admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "coordination.k8s.io"])

/**
 * ObjectMeta's checks for a built-in kind, as its validation runs them: {@link validateObjectMeta}
 * with the kind's name rule, and for most groups core's rule that a finalizer without a path is
 * one of kube's own (`orphan`, `foregroundDeletion`, `kubernetes`).
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * const meta = { name: "settings", namespace: "default", finalizers: ["cleanup"] }
 * ObjectMetaValidation.validateBuiltinMeta(meta, { group: "", resource: "configmaps", namespaced: true })[0]?.message
 * // 'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified'
 */
export const validateBuiltinMeta = (
  metadata: unknown,
  kind: { readonly group: string; readonly resource: string; readonly namespaced: boolean }
): ReadonlyArray<FieldCauses.Cause> => {
  const causes = [...validateObjectMeta(metadata, { namespaced: kind.namespaced, name: nameRule(kind.group, kind.resource) })]
  if (apimachineryMetaGroups.has(kind.group)) return causes
  const finalizers = KubeObject.isObject(metadata) && Array.isArray(metadata.finalizers) ? metadata.finalizers : []
  finalizers.forEach((finalizer, i) => {
    if (typeof finalizer === "string" && !NameRules.isKubeFinalizerName(finalizer)) {
      causes.push(FieldCauses.invalid(`metadata.finalizers[${i}]`, finalizer, "name is neither a standard finalizer name nor is it fully qualified"))
    }
  })
  return causes
}

/**
 * The warnings a custom resource's write gets for each finalizer it adds that is not
 * domain-qualified, sorted, as apiextensions-apiserver 1.32 gives them (its create or update
 * still succeeds).
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * ObjectMetaValidation.finalizerWarnings({ finalizers: ["cleanup"] }, undefined)
 * // ['metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers']
 */
export const finalizerWarnings = (metadata: unknown, oldMetadata: unknown): ReadonlyArray<string> => {
  const names = (m: unknown) => new Set(KubeObject.isObject(m) && Array.isArray(m.finalizers) ? m.finalizers.filter((f) => typeof f === "string") : [])
  const before = names(oldMetadata)
  const warnings: Array<string> = []
  for (const finalizer of [...names(metadata)].filter((f) => !before.has(f)).sort()) {
    const at = `metadata.finalizers: ${FieldCauses.goQuote(finalizer)}`
    for (const message of NameRules.qualifiedName(finalizer)) warnings.push(`${at}: ${message}`)
    if (NameRules.isKubeFinalizerName(finalizer)) continue
    warnings.push(finalizer.includes(".")
      ? `${at}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`
      : `${at}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`)
  }
  return warnings
}

const stringRecord = (u: unknown): ReadonlyArray<readonly [string, string]> =>
  KubeObject.isObject(u) ? Object.entries(u).map(([k, v]) => [k, typeof v === "string" ? v : String(v)]) : []

const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8")

// ValidateAnnotationsSize: keys and values together, in bytes.
const annotationsLimit = 256 * 1024

/**
 * Whether annotations are past the 256 KiB (keys and values, in UTF-8 bytes) kube allows.
 *
 * @example
 * import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
 * ObjectMetaValidation.annotationsTooLarge({ note: "x".repeat(300 * 1024) }) // true
 */
export const annotationsTooLarge = (annotations: unknown): boolean =>
  stringRecord(annotations).reduce((n, [k, v]) => n + utf8Length(k) + utf8Length(v), 0) > annotationsLimit

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
  if (annotationsTooLarge(m.annotations)) {
    causes.push(FieldCauses.tooLong(annotations, annotationsLimit))
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
