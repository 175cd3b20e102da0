/**
 * CustomResourceDefinitions (apiextensions.k8s.io/v1) as kube-apiserver admits and serves them:
 * v1 defaults, the strategy's status preparation (storedVersions), validation with Kubernetes'
 * causes, the naming and establishing controllers' status (NamesAccepted / Established), and the
 * {@link ResourceType.ResourceType}s an Established CRD serves.
 *
 * Typical use on create: `admit(body, { others, now })` gives the CRD to store or the 422 causes;
 * on update pass `old` too. After any CRD write in a group, recompute the others' status with
 * {@link computeStatus} (a freed name may now be accepted).
 */
import { Result } from "effect"
import * as CrdStructure from "./CrdStructure.ts"
import type * as ResourceType from "./ResourceType.ts"
import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
import * as StructuralSchema from "./StructuralSchema.ts"
import { FieldCauses, KubeObject, NameRules } from "@kubefx/schema/internal"
import type { JsonSchemaProps } from "@kubefx/schema"

type Cause = FieldCauses.Cause

const { child, forbidden, index, invalid, notSupported, required } = FieldCauses

/** `spec.names` / `status.acceptedNames`. */
export interface Names {
  readonly plural: string
  readonly singular?: string
  readonly kind: string
  readonly listKind?: string
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
}

/** `additionalPrinterColumns[]`: a column `kubectl get` shows. */
export interface PrinterColumn {
  readonly name: string
  readonly type: string
  readonly format?: string
  readonly description?: string
  readonly priority?: number
  readonly jsonPath: string
}

/** `spec.versions[]`. */
export interface Version {
  readonly name: string
  readonly served: boolean
  readonly storage: boolean
  readonly deprecated?: boolean
  readonly deprecationWarning?: string
  readonly schema?: { readonly openAPIV3Schema?: JsonSchemaProps }
  readonly subresources?: {
    readonly status?: Readonly<Record<string, never>>
    readonly scale?: {
      readonly specReplicasPath: string
      readonly statusReplicasPath: string
      readonly labelSelectorPath?: string
    }
  }
  readonly additionalPrinterColumns?: ReadonlyArray<PrinterColumn>
  readonly selectableFields?: ReadonlyArray<{ readonly jsonPath: string }>
}

/** `status.conditions[]` (NamesAccepted, Established). */
export interface Condition {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly lastTransitionTime?: string
  readonly reason?: string
  readonly message?: string
}

/** `status` as the controllers maintain it. */
export interface Status {
  readonly conditions?: ReadonlyArray<Condition>
  readonly acceptedNames?: Names
  readonly storedVersions?: ReadonlyArray<string>
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition after admission (defaults applied). */
export interface CustomResourceDefinition {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata: KubeObject.ObjectMeta
  readonly spec: {
    readonly group: string
    readonly names: Names
    readonly scope: string
    readonly versions: ReadonlyArray<Version>
    readonly conversion?: { readonly strategy: string; readonly webhook?: unknown }
    readonly preserveUnknownFields?: boolean
  }
  readonly status?: Status
}

// ---------------------------------------------------------------------------------------------
// Loose reading of request bodies (fields of the wrong type read as absent)

type Raw = KubeObject.KubeObject

const obj = (u: unknown): Raw => (KubeObject.isObject(u) ? u : {})
const str = (u: unknown): string => (typeof u === "string" ? u : "")
const arr = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])
const strs = (u: unknown): ReadonlyArray<string> => arr(u).filter((x): x is string => typeof x === "string")

const specOf = (crd: unknown): Raw => obj(obj(crd).spec)
const versionsOf = (crd: unknown): ReadonlyArray<Raw> => arr(specOf(crd).versions).map(obj)

// ---------------------------------------------------------------------------------------------
// Defaults and status preparation

/**
 * apiextensions v1 defaults: `singular` = lowercase kind, `listKind` = `<Kind>List`, conversion
 * strategy None, a conversion webhook's Service port 443.
 *
 * @example
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * const crd = CustomResourceDefinition.withDefaults({ spec: { names: { plural: "crontabs", kind: "CronTab" } } })
 * (crd.spec as any).names // { plural: "crontabs", kind: "CronTab", singular: "crontab", listKind: "CronTabList" }
 */
export const withDefaults = (crd: unknown): Raw => {
  const o = obj(crd)
  const spec = specOf(crd)
  const names = obj(spec.names)
  const kind = str(names.kind)
  return {
    ...o,
    spec: {
      ...spec,
      names: {
        ...names,
        ...(str(names.singular) === "" ? { singular: kind.toLowerCase() } : {}),
        ...(str(names.listKind) === "" && kind !== "" ? { listKind: `${kind}List` } : {})
      },
      conversion: spec.conversion === undefined ? { strategy: "None" } : withServicePort(spec.conversion)
    }
  }
}

// A conversion webhook's Service is called at port 443 unless it names one.
const withServicePort = (conversion: unknown): unknown => {
  const webhook = obj(obj(conversion).webhook)
  const clientConfig = obj(webhook.clientConfig)
  if (!KubeObject.isObject(clientConfig.service) || clientConfig.service.port !== undefined) return conversion
  return { ...obj(conversion), webhook: { ...webhook, clientConfig: { ...clientConfig, service: { ...clientConfig.service, port: 443 } } } }
}

const storageVersion = (crd: unknown): string | undefined => {
  const storage = versionsOf(crd).find((v) => v.storage === true)
  return storage === undefined ? undefined : str(storage.name)
}

/**
 * The strategy's preparation: on create the status is cleared and `storedVersions` starts with the
 * storage version; on update the old status is kept and the storage version added if missing.
 *
 * @example
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * const crd = { spec: { versions: [{ name: "v1", served: true, storage: true }] }, status: { bogus: 1 } }
 * CustomResourceDefinition.prepare(crd).status // { conditions: null, acceptedNames: { plural: "", kind: "" }, storedVersions: ["v1"] }
 */
export const prepare = (crd: unknown, old?: unknown): Raw => {
  // A cleared status is Go's zero one: no conditions (null, no omitempty) and empty accepted names.
  const previous: Raw = old === undefined ? { conditions: null, acceptedNames: { plural: "", kind: "" } } : obj(obj(old).status)
  const stored = strs(previous.storedVersions)
  const storage = storageVersion(crd)
  const storedVersions = storage === undefined || stored.includes(storage) ? stored : [...stored, storage]
  return { ...obj(crd), status: { ...previous, storedVersions } }
}

// ---------------------------------------------------------------------------------------------
// Validation

const goVersions = (versions: ReadonlyArray<Raw>): FieldCauses.GoLiteral => {
  const one = (v: Raw) =>
    `apiextensions.CustomResourceDefinitionVersion{Name:${FieldCauses.goQuote(str(v.name))}, Served:${v.served === true}, Storage:${v.storage === true}, Deprecated:${v.deprecated === true}}`
  return FieldCauses.goLiteral(`[]apiextensions.CustomResourceDefinitionVersion{${versions.map(one).join(", ")}}`)
}

const dns1035 = (field: string, value: string): ReadonlyArray<Cause> => {
  const errs = NameRules.dns1035Label(value)
  return errs.length === 0 ? [] : [invalid(field, value, errs.join(","))]
}

const mixedCase = (field: string, value: string): ReadonlyArray<Cause> => {
  const errs = NameRules.dns1035Label(value.toLowerCase())
  return value === "" || errs.length === 0
    ? []
    : [invalid(field, value, `may have mixed case, but should otherwise match: ${errs.join(",")}`)]
}

/**
 * `ValidateCustomResourceDefinitionNames` for `spec.names` or `status.acceptedNames`.
 *
 * @example
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * CustomResourceDefinition.validateNames({ plural: "CronTabs", kind: "CronTab" }, "spec.names")[0]?.field
 * // "spec.names.plural"
 */
export const validateNames = (names: unknown, path: string): ReadonlyArray<Cause> => {
  const n = obj(names)
  const [plural, singular, kind, listKind] = [str(n.plural), str(n.singular), str(n.kind), str(n.listKind)]
  return [
    ...(plural === "" ? [] : dns1035(child(path, "plural"), plural)),
    ...(singular === "" ? [] : dns1035(child(path, "singular"), singular)),
    ...mixedCase(child(path, "kind"), kind),
    ...mixedCase(child(path, "listKind"), listKind),
    ...strs(n.shortNames).flatMap((s, i) => dns1035(index(child(path, "shortNames"), i), s)),
    ...(kind !== "" && kind === listKind ? [invalid(child(path, "listKind"), listKind, "kind and listKind may not be the same")] : []),
    ...strs(n.categories).flatMap((c, i) => dns1035(index(child(path, "categories"), i), c))
  ]
}

const simpleJsonPath = (field: string, path: string): ReadonlyArray<Cause> => {
  if (path === "") return [invalid(field, path, "must not be empty")]
  if (!path.startsWith(".")) return [invalid(field, path, "must be a simple json path starting with .")]
  return []
}

const printerColumns = (columns: unknown, path: string): ReadonlyArray<Cause> =>
  arr(columns).flatMap((c, i) => {
    const col = obj(c)
    const at = index(path, i)
    const types = "must be one of boolean,date,integer,number,string"
    const formats = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]
    const causes: Array<Cause> = []
    if (str(col.name) === "") causes.push(required(child(at, "name")))
    if (str(col.type) === "") causes.push(required(child(at, "type"), types))
    else if (!["boolean", "date", "integer", "number", "string"].includes(str(col.type))) {
      causes.push(invalid(child(at, "type"), col.type, types))
    }
    if (str(col.format) !== "" && !formats.includes(str(col.format))) {
      causes.push(invalid(child(at, "format"), col.format, `must be one of ${formats.join(",")}`))
    }
    if (str(col.jsonPath) === "") causes.push(required(child(at, "JSONPath")))
    else causes.push(...simpleJsonPath(child(at, "JSONPath"), str(col.jsonPath)))
    return causes
  })

const subresources = (sub: unknown, path: string): ReadonlyArray<Cause> => {
  const scale = obj(sub).scale
  if (!KubeObject.isObject(scale)) return []
  const causes: Array<Cause> = []
  const check = (name: string, prefixes: ReadonlyArray<string>, detail: string, optional: boolean) => {
    const value = str(scale[name])
    const at = child(path, `scale.${name}`)
    if (value === "") {
      if (!optional) causes.push(required(at))
      return
    }
    const errs = simpleJsonPath(at, value)
    if (errs.length > 0) causes.push(...errs)
    else if (!prefixes.some((p) => value.startsWith(p))) causes.push(invalid(at, value, detail))
  }
  check("specReplicasPath", [".spec."], "should be a json path under .spec", false)
  check("statusReplicasPath", [".status."], "should be a json path under .status", false)
  check("labelSelectorPath", [".spec.", ".status."], "should be a json path under either .spec or .status", true)
  return causes
}

/** The schema node a dotted field path (`.spec.color`) selects, if any. */
const schemaAt = (schema: JsonSchemaProps | undefined, jsonPath: string): JsonSchemaProps | undefined => {
  let node = schema
  for (const segment of jsonPath.slice(1).split(".")) {
    if (node === undefined || segment === "") return undefined
    node = node.properties?.[segment] ?? (typeof node.additionalProperties === "object" ? node.additionalProperties : undefined)
  }
  return node
}

const selectableFields = (fields: unknown, schema: JsonSchemaProps | undefined, path: string): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  const seen = new Set<string>()
  arr(fields).forEach((f, i) => {
    const at = child(index(path, i), "jsonPath")
    const jsonPath = str(obj(f).jsonPath)
    if (jsonPath === "") {
      causes.push(required(at))
      return
    }
    const target = jsonPath.startsWith(".") ? schemaAt(schema, jsonPath) : undefined
    if (target === undefined) {
      causes.push(invalid(at, jsonPath, "is an invalid path: does not refer to a valid field"))
      return
    }
    if (jsonPath.split(".")[1] === "metadata") causes.push(invalid(at, jsonPath, "must not select metadata"))
    if (!["string", "boolean", "integer"].includes(target.type ?? "")) {
      causes.push(invalid(at, jsonPath, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
    }
    if (seen.has(jsonPath)) causes.push(FieldCauses.duplicate(at, jsonPath))
    seen.add(jsonPath)
  })
  if (seen.size > 8) causes.push(FieldCauses.tooMany(path, seen.size, 8))
  return causes
}

const deprecationWarning = (v: Raw, path: string): ReadonlyArray<Cause> => {
  if (v.deprecationWarning === undefined || v.deprecationWarning === null) return []
  const warning = str(v.deprecationWarning)
  const at = child(path, "deprecationWarning")
  if (v.deprecated !== true) return [invalid(at, warning, "can only be set for deprecated versions")]
  return [
    ...(warning.length > 256 ? [invalid(at, warning, "must be <= 256 characters long")] : []),
    ...(warning === "" ? [invalid(at, warning, "must not be an empty string")] : [])
  ]
}

/** Which per-version fields 1.32's v1 conversion moves to the spec: those equal in every version. */
interface Hoisted {
  readonly schema: boolean
  readonly subresources: boolean
  readonly columns: boolean
  readonly selectableFields: boolean
}

// Key-order-free JSON; an empty list counts as none (Semantic.DeepEqual treats nil and empty alike).
const canonical = (u: unknown): string => {
  if (Array.isArray(u)) return u.length === 0 ? "null" : `[${u.map(canonical).join(",")}]`
  if (KubeObject.isObject(u)) {
    return `{${Object.keys(u).filter((k) => u[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(u[k])}`).join(",")}}`
  }
  return u === undefined ? "null" : JSON.stringify(u)
}

const identical = (versions: ReadonlyArray<Raw>, key: string): boolean =>
  versions.every((v) => canonical(v[key]) === canonical(versions[0]?.[key]))

const hoisted = (versions: ReadonlyArray<Raw>): Hoisted => ({
  schema: identical(versions, "schema"),
  subresources: identical(versions, "subresources"),
  columns: identical(versions, "additionalPrinterColumns"),
  selectableFields: identical(versions, "selectableFields")
})

const hasStatus = (v: Raw) => {
  const status = obj(v.subresources).status
  return status !== undefined && status !== null
}

const version = (v: Raw, i: number, moved: Hoisted): ReadonlyArray<Cause> => {
  const path = index("spec.versions", i)
  const schema = obj(v.schema).openAPIV3Schema
  return [
    ...dns1035(child(path, "name"), str(v.name)),
    ...deprecationWarning(v, path),
    ...(schema === undefined || moved.schema
      ? []
      : StructuralSchema.validate(schema, { path: child(child(path, "schema"), "openAPIV3Schema"), statusSubresource: hasStatus(v) })),
    ...(moved.subresources ? [] : subresources(v.subresources, child(path, "subresources"))),
    ...(moved.columns ? [] : printerColumns(v.additionalPrinterColumns, child(path, "additionalPrinterColumns"))),
    ...(moved.selectableFields ? [] : selectableFields(v.selectableFields, schema as JsonSchemaProps | undefined, child(path, "selectableFields")))
  ]
}

// The moved fields, validated once at the spec's own paths, after the names (as 1.32 orders them).
const movedToSpec = (versions: ReadonlyArray<Raw>, moved: Hoisted): ReadonlyArray<Cause> => {
  const first = versions[0]
  if (first === undefined) return []
  const schema = obj(first.schema).openAPIV3Schema
  return [
    ...(moved.schema && schema !== undefined
      ? StructuralSchema.validate(schema, { path: "spec.validation.openAPIV3Schema", statusSubresource: versions.some(hasStatus) })
      : []),
    ...(moved.subresources ? subresources(first.subresources, "spec.subresources") : []),
    ...(moved.columns ? printerColumns(first.additionalPrinterColumns, "spec.additionalPrinterColumns") : []),
    ...(moved.selectableFields ? selectableFields(first.selectableFields, schema as JsonSchemaProps | undefined, "spec.selectableFields") : [])
  ]
}

const hasDefaults = (u: unknown): boolean => {
  if (Array.isArray(u)) return u.some(hasDefaults)
  if (!KubeObject.isObject(u)) return false
  if (u.default !== undefined && u.default !== null) return true
  return ["items", "not", "additionalProperties"].some((k) => hasDefaults(u[k])) ||
    ["allOf", "anyOf", "oneOf"].some((k) => hasDefaults(u[k])) ||
    Object.values(obj(u.properties)).some(hasDefaults)
}

const conversion = (spec: Raw): ReadonlyArray<Cause> => {
  const c = spec.conversion
  if (!KubeObject.isObject(c)) return []
  const strategy = str(c.strategy)
  const path = "spec.conversion"
  if (strategy === "") return [required(child(path, "strategy"))]
  if (strategy !== "None" && strategy !== "Webhook") return [notSupported(child(path, "strategy"), strategy, ["None", "Webhook"])]
  const webhook = obj(c.webhook)
  if (strategy === "None") {
    return KubeObject.isObject(c.webhook) && webhook.clientConfig !== undefined
      ? [forbidden(child(path, "webhookClientConfig"), "should not be set when strategy is not set to Webhook")]
      : []
  }
  const causes: Array<Cause> = []
  const config = obj(webhook.clientConfig)
  if (!KubeObject.isObject(webhook.clientConfig)) {
    causes.push(required(child(path, "webhookClientConfig"), "required when strategy is set to Webhook"))
  } else if ((config.url === undefined) === (config.service === undefined)) {
    causes.push(required(child(path, "webhookClientConfig"), "exactly one of url or service is required"))
  }
  const reviews = strs(webhook.conversionReviewVersions)
  if (reviews.length === 0) causes.push(required(child(path, "conversionReviewVersions")))
  else if (!reviews.some((r) => r === "v1" || r === "v1beta1")) {
    causes.push(invalid(child(path, "conversionReviewVersions"), FieldCauses.goStrings(reviews), "must include at least one of v1, v1beta1"))
  }
  return causes
}

const isProtectedGroup = (group: string): boolean =>
  group === "k8s.io" || group.endsWith(".k8s.io") || group === "kubernetes.io" || group.endsWith(".kubernetes.io")

const approvalAnnotation = "api-approved.kubernetes.io"

type Approval = "Missing" | "Bypassed" | "Approved" | "Invalid"

const approvalOf = (crd: unknown): Approval => {
  const value = str(obj(obj(obj(crd).metadata).annotations)[approvalAnnotation])
  if (value === "") return "Missing"
  if (value.startsWith("unapproved")) return "Bypassed"
  try {
    const url = new URL(value)
    return url.host !== "" && url.protocol !== "" ? "Approved" : "Invalid"
  } catch {
    return "Invalid"
  }
}

const apiApproval = (crd: unknown, old: unknown): ReadonlyArray<Cause> => {
  if (!isProtectedGroup(str(specOf(crd).group))) return []
  const state = approvalOf(crd)
  if (old !== undefined && approvalOf(old) === state) return []
  const path = FieldCauses.key("metadata.annotations", approvalAnnotation)
  const value = str(obj(obj(obj(crd).metadata).annotations)[approvalAnnotation])
  if (state === "Missing") {
    return [required(path, `protected groups must have approval annotation "${approvalAnnotation}", see https://github.com/kubernetes/enhancements/pull/1111`)]
  }
  if (state === "Invalid") {
    return [invalid(path, value, `protected groups must have approval annotation "${approvalAnnotation}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`)]
  }
  return []
}

const storedVersionsCauses = (crd: unknown): ReadonlyArray<Cause> => {
  const path = "status.storedVersions"
  const stored = strs(obj(obj(crd).status).storedVersions)
  if (stored.length === 0) return [invalid(path, FieldCauses.goStrings(stored), "must have at least one stored version")]
  const versions = versionsOf(crd)
  const causes: Array<Cause> = []
  for (const v of versions) {
    if (v.storage === true && !stored.includes(str(v.name))) {
      causes.push(invalid(path, goVersions([v]), `must have the storage version ${str(v.name)}`))
    }
  }
  stored.forEach((s, i) => {
    if (!versions.some((v) => v.name === s)) causes.push(invalid(index(path, i), s, "must appear in spec.versions"))
  })
  return causes
}

const immutable = (path: string, now: string, before: string): ReadonlyArray<Cause> =>
  now === before ? [] : [invalid(path, now, "field is immutable")]

const specCauses = (crd: unknown, old: unknown): ReadonlyArray<Cause> => {
  const spec = specOf(crd)
  const causes: Array<Cause> = []
  const group = str(spec.group)
  if (group === "") causes.push(required("spec.group"))
  else {
    const errs = NameRules.dns1123Subdomain(group)
    if (errs.length > 0) causes.push(invalid("spec.group", group, errs.join(",")))
    else if (group.split(".").length < 2) causes.push(invalid("spec.group", group, "should be a domain with at least one dot"))
  }
  const scope = str(spec.scope)
  if (scope === "") causes.push(required("spec.scope"))
  else if (scope !== "Cluster" && scope !== "Namespaced") causes.push(notSupported("spec.scope", scope, ["Cluster", "Namespaced"]))
  const versions = versionsOf(crd)
  versions.forEach((v, i) => {
    if (obj(v.schema).openAPIV3Schema === undefined) {
      causes.push(required(`spec.versions[${i}].schema.openAPIV3Schema`, "schemas are required"))
    }
  })
  if (spec.preserveUnknownFields === true && versions.some((v) => hasDefaults(obj(v.schema).openAPIV3Schema))) {
    causes.push(invalid("spec.preserveUnknownFields", true, "must be false in order to use defaults in the schema"))
  }
  const moved = hoisted(versions)
  versions.forEach((v, i) => causes.push(...version(v, i, moved)))
  const names = versions.map((v) => str(v.name))
  if (new Set(names).size !== names.length) {
    causes.push(invalid("spec.versions", goVersions(versions), "must contain unique version names"))
  }
  if (versions.filter((v) => v.storage === true).length !== 1) {
    causes.push(invalid("spec.versions", goVersions(versions), "must have exactly one version marked as storage version"))
  }
  const n = obj(spec.names)
  for (const name of ["plural", "singular", "kind", "listKind"]) {
    if (str(n[name]) === "") causes.push(required(`spec.names.${name}`))
  }
  causes.push(...validateNames(spec.names, "spec.names"))
  causes.push(...movedToSpec(versions, moved))
  if (spec.preserveUnknownFields === true && str(obj(spec.conversion).strategy) !== "None" && spec.conversion !== undefined) {
    causes.push(invalid("spec.conversion.strategy", str(obj(spec.conversion).strategy), "must be None if spec.preserveUnknownFields is true"))
  }
  causes.push(...conversion(spec))
  if (old !== undefined) {
    const before = specOf(old)
    if (isEstablished(old)) {
      causes.push(...immutable("spec.scope", scope, str(before.scope)))
      causes.push(...immutable("spec.names.kind", str(n.kind), str(obj(before.names).kind)))
    }
    causes.push(...immutable("spec.group", group, str(before.group)))
    causes.push(...immutable("spec.names.plural", str(n.plural), str(obj(before.names).plural)))
  }
  return causes
}

/**
 * Validates a CRD (after {@link withDefaults} and {@link prepare}) as kube-apiserver does on
 * create, or on update when `old` is given: metadata (name = `<plural>.<group>`), spec, each
 * version's schema ({@link StructuralSchema.validate}), subresources, printer columns, selectable
 * fields, names, storedVersions and the API approval of `*.k8s.io` groups. Empty when valid.
 *
 * @example
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * const crd = CustomResourceDefinition.prepare(CustomResourceDefinition.withDefaults({
 *   metadata: { name: "crontab.stable.example.com" },
 *   spec: { group: "stable.example.com", scope: "Namespaced", names: { plural: "crontabs", kind: "CronTab" },
 *     versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }] }
 * }))
 * CustomResourceDefinition.validate(crd).map((c) => `${c.field}: ${c.message}`)
 * // ['metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group']
 */
export const validate = (crd: unknown, old?: unknown): ReadonlyArray<Cause> => {
  const spec = specOf(crd)
  const requiredName = `${str(obj(spec.names).plural)}.${str(spec.group)}`
  const nameRule: ObjectMetaValidation.NameValidator = (name, prefix) => [
    ...ObjectMetaValidation.nameIsDnsSubdomain(name, prefix),
    ...(name === requiredName ? [] : [`must be spec.names.plural+"."+spec.group`])
  ]
  const preserve = spec.preserveUnknownFields === true && !(old !== undefined && specOf(old).preserveUnknownFields === true)
  return [
    ...ObjectMetaValidation.validateObjectMeta(obj(crd).metadata, { namespaced: false, name: nameRule }),
    ...specCauses(crd, old),
    ...validateNames(obj(obj(crd).status).acceptedNames, "status.acceptedNames"),
    ...storedVersionsCauses(crd),
    ...apiApproval(crd, old),
    ...(preserve
      ? [invalid("spec.preserveUnknownFields", true, "cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead")]
      : [])
  ]
}

// ---------------------------------------------------------------------------------------------
// Status: the naming and establishing controllers

const findCondition = (crd: unknown, type: string): Condition | undefined =>
  arr(obj(obj(crd).status).conditions).map(obj).find((c) => c.type === type) as Condition | undefined

/**
 * True when the CRD's Established condition is True (its endpoints are served).
 *
 * @example
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * CustomResourceDefinition.isEstablished({ status: { conditions: [{ type: "Established", status: "True" }] } }) // true
 */
export const isEstablished = (crd: unknown): boolean => findCondition(crd, "Established")?.status === "True"

/** `SetCRDCondition`: lastTransitionTime moves only when the status changes. */
const setCondition = (
  conditions: ReadonlyArray<Condition>,
  next: Omit<Condition, "lastTransitionTime">,
  now: string
): ReadonlyArray<Condition> => {
  const existing = conditions.find((c) => c.type === next.type)
  if (existing === undefined) return [...conditions, { ...next, lastTransitionTime: now }]
  const moved = existing.status !== next.status || existing.lastTransitionTime === undefined
  const updated: Condition = { ...next, lastTransitionTime: moved ? now : (existing.lastTransitionTime ?? now) }
  return conditions.map((c) => (c.type === next.type ? updated : c))
}

/** Options of {@link computeStatus}. */
export interface StatusOptions {
  /** The other CRDs the server holds (any group; only the same group's accepted names matter). */
  readonly others: ReadonlyArray<unknown>
  /** RFC 3339 time (seconds, `Z`) for lastTransitionTime of changed conditions. */
  readonly now: string
}

/**
 * The status kube-apiserver's controllers converge to: acceptedNames (each name taken unless another
 * CRD of the group already accepted it), NamesAccepted (NoConflicts, or PluralConflict /
 * SingularConflict / ShortNamesConflict / KindConflict / ListKindConflict with `"x" is already in
 * use`), Established (True InitialNamesAccepted once names are accepted; once True it stays), and the
 * prepared storedVersions.
 *
 * @example
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * const crd = { metadata: { name: "crontabs.stable.example.com" }, spec: { group: "stable.example.com",
 *   names: { plural: "crontabs", singular: "crontab", kind: "CronTab", listKind: "CronTabList" } } }
 * CustomResourceDefinition.computeStatus(crd, { others: [], now: "2024-01-01T00:00:00Z" }).conditions?.map((c) => c.reason)
 * // ["NoConflicts", "InitialNamesAccepted"]
 */
export const computeStatus = (crd: unknown, options: StatusOptions): Status => {
  const spec = specOf(crd)
  const group = str(spec.group)
  const name = str(obj(obj(crd).metadata).name)
  const status = obj(obj(crd).status)
  const requested = obj(spec.names)
  const accepted = obj(status.acceptedNames)
  const sameGroup = [crd, ...options.others.filter((o) => str(obj(obj(o).metadata).name) !== name)]
    .filter((o) => str(specOf(o).group) === group)
    .map((o) => obj(obj(obj(o).status).acceptedNames))
  const resources = new Set(sameGroup.flatMap((n) => [str(n.plural), str(n.singular), ...strs(n.shortNames)]))
  const kinds = new Set(sameGroup.flatMap((n) => [str(n.kind), str(n.listKind)]))
  let conflict: { readonly reason: string; readonly message: string } | undefined
  const take = (field: string, used: ReadonlySet<string>, reason: string): string => {
    const wanted = str(requested[field])
    if (wanted === str(accepted[field]) || !used.has(wanted)) return wanted
    conflict = { reason, message: `"${wanted}" is already in use` }
    return str(accepted[field])
  }
  const plural = take("plural", resources, "PluralConflict")
  const singular = take("singular", resources, "SingularConflict")
  let shortNames = strs(accepted.shortNames)
  const wantedShort = strs(requested.shortNames)
  if (wantedShort.join("\u0000") !== shortNames.join("\u0000")) {
    const clashes = wantedShort.filter((s) => !shortNames.includes(s) && resources.has(s)).map((s) => `"${s}" is already in use`)
    if (clashes.length === 0) shortNames = wantedShort
    else conflict = { reason: "ShortNamesConflict", message: clashes.length === 1 ? (clashes[0] ?? "") : `[${clashes.join(", ")}]` }
  }
  const kind = take("kind", kinds, "KindConflict")
  const listKind = take("listKind", kinds, "ListKindConflict")
  const acceptedNames: Names = {
    plural,
    singular,
    ...(shortNames.length > 0 ? { shortNames } : {}),
    kind,
    listKind,
    ...(requested.categories === undefined ? {} : { categories: strs(requested.categories) })
  }
  const namesAccepted = conflict === undefined
    ? { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found" } as const
    : { type: "NamesAccepted", status: "False", ...conflict } as const
  const established = namesAccepted.status === "True" || isEstablished(crd)
    ? { type: "Established", status: "True", reason: "InitialNamesAccepted", message: "the initial names have been accepted" } as const
    : { type: "Established", status: "False", reason: "NotAccepted", message: "not all names are accepted" } as const
  const previous = arr(status.conditions).map(obj) as unknown as ReadonlyArray<Condition>
  const conditions = setCondition(setCondition(previous, namesAccepted, options.now), established, options.now)
  return { conditions, acceptedNames, storedVersions: strs(status.storedVersions) }
}

/** Options of {@link admit}. */
export interface AdmitOptions extends StatusOptions {
  /** The stored CRD, on update. */
  readonly old?: unknown
}

/**
 * The whole admission of a CRD write: v1 defaults, status preparation, validation, then the
 * converged status. `Failure` holds the 422 causes (details.kind "CustomResourceDefinition",
 * group "apiextensions.k8s.io").
 *
 * @example
 * import { Result } from "effect"
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * const admitted = CustomResourceDefinition.admit({
 *   apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
 *   metadata: { name: "crontabs.stable.example.com" },
 *   spec: { group: "stable.example.com", scope: "Namespaced", names: { plural: "crontabs", kind: "CronTab" },
 *     versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }] }
 * }, { others: [], now: "2024-01-01T00:00:00Z" })
 * Result.isSuccess(admitted) && CustomResourceDefinition.isEstablished(admitted.success) // true
 */
export const admit = (
  body: unknown,
  options: AdmitOptions
): Result.Result<CustomResourceDefinition, ReadonlyArray<Cause>> => {
  const prepared = prepare(withDefaults(body), options.old)
  const causes = validate(prepared, options.old)
  if (causes.length > 0) return Result.fail(causes)
  const status = computeStatus(prepared, options)
  return Result.succeed({ ...prepared, status } as unknown as CustomResourceDefinition)
}

// ---------------------------------------------------------------------------------------------
// Serving

const allVerbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

/**
 * The resource types an Established CRD serves: one per served version, named by its accepted
 * names, with the version's schema, merge structure, printer columns, selectable fields (field
 * selector names, without the leading dot) and subresources. Not Established: none.
 *
 * @example
 * import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
 * const crd = {
 *   metadata: { name: "crontabs.stable.example.com" },
 *   spec: { group: "stable.example.com", scope: "Namespaced", names: { plural: "crontabs", kind: "CronTab" },
 *     versions: [{ name: "v1", served: true, storage: true, subresources: { status: {} } }] },
 *   status: { conditions: [{ type: "Established", status: "True" }],
 *     acceptedNames: { plural: "crontabs", singular: "crontab", kind: "CronTab", listKind: "CronTabList" } }
 * }
 * CustomResourceDefinition.resourceTypes(crd).map((t) => [t.version, t.subresources.status])
 * // [["v1", true]]
 */
export const resourceTypes = (crd: unknown): ReadonlyArray<ResourceType.ResourceType> => {
  if (!isEstablished(crd)) return []
  const spec = specOf(crd)
  const acceptedNames = obj(obj(obj(crd).status).acceptedNames)
  const names = str(acceptedNames.plural) === "" ? obj(spec.names) : acceptedNames
  const kind = str(names.kind)
  return versionsOf(crd)
    .filter((v) => v.served === true)
    .map((v): ResourceType.ResourceType => {
      const schema = obj(v.schema).openAPIV3Schema as JsonSchemaProps | undefined
      const sub = obj(v.subresources)
      const scale = KubeObject.isObject(sub.scale) ? sub.scale : undefined
      const labelSelectorPath = str(scale?.labelSelectorPath)
      return {
        group: str(spec.group),
        version: str(v.name),
        kind,
        listKind: str(names.listKind) === "" ? `${kind}List` : str(names.listKind),
        plural: str(names.plural),
        singular: str(names.singular) === "" ? kind.toLowerCase() : str(names.singular),
        namespaced: spec.scope === "Namespaced",
        shortNames: strs(names.shortNames),
        categories: strs(names.categories),
        verbs: allVerbs,
        subresources: {
          status: sub.status !== undefined && sub.status !== null,
          ...(scale === undefined ? {} : {
            scale: {
              specReplicasPath: str(scale.specReplicasPath),
              statusReplicasPath: str(scale.statusReplicasPath),
              ...(labelSelectorPath === "" ? {} : { labelSelectorPath })
            }
          })
        },
        custom: true,
        ...(schema === undefined ? {} : { schema }),
        structure: CrdStructure.fromSchema(schema),
        selectableFields: arr(v.selectableFields).map((f) => str(obj(f).jsonPath).replace(/^\./, "")),
        printerColumns: arr(v.additionalPrinterColumns).map((c) => {
          const col = obj(c)
          return {
            name: str(col.name),
            type: str(col.type),
            jsonPath: str(col.jsonPath),
            ...(typeof col.description === "string" ? { description: col.description } : {}),
            ...(typeof col.priority === "number" ? { priority: col.priority } : {}),
            ...(typeof col.format === "string" ? { format: col.format } : {})
          }
        })
      }
    })
}
