/**
 * 1.32's validation of admission configuration (admissionregistration.k8s.io/v1): webhooks
 * (fully qualified unique names, one of url or service, side effects, review versions, timeouts,
 * policies and rules), ValidatingAdmissionPolicies and their bindings.
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const strings = (u: unknown): ReadonlyArray<string> => (Array.isArray(u) ? u.map(String) : [])

const oneOf = (value: unknown, field: string, supported: ReadonlyArray<string>): Causes =>
  value === undefined || supported.includes(String(value)) ? [] : [FieldErrors.notSupported(field, value, supported)]

const qualifiedName = (name: string, field: string): Causes => {
  if (name === "") return [FieldErrors.required(field)]
  const errors = NameRules.dns1123Subdomain(name)
  if (errors.length > 0) return [FieldErrors.invalid(field, FieldErrors.quote(name), errors.join(","))]
  return name.split(".").length < 3 ? [FieldErrors.invalid(field, FieldErrors.quote(name), "should be a domain with at least three segments separated by dots")] : []
}

const webhookUrl = (raw: string, field: string): Causes => {
  const form = "; desired format: https://host[/path]"
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return [FieldErrors.required(field, `url must be a valid URL: parse ${FieldErrors.quote(raw)}: invalid URI for request${form}`)]
  }
  const scheme = url.protocol.replace(/:$/, "")
  return [
    ...(scheme === "https" ? [] : [FieldErrors.invalid(field, FieldErrors.quote(scheme), `'https' is the only allowed URL scheme${form}`)]),
    ...(url.host === "" ? [FieldErrors.invalid(field, `""`, `host must be specified${form}`)] : []),
    ...(url.username !== "" ? [FieldErrors.invalid(field, FieldErrors.quote(url.username), "user information is not permitted in the URL")] : []),
    ...(url.hash !== "" ? [FieldErrors.invalid(field, FieldErrors.quote(url.hash.slice(1)), "fragments are not permitted in the URL")] : []),
    ...(url.search !== "" ? [FieldErrors.invalid(field, FieldErrors.quote(url.search.slice(1)), "query parameters are not permitted in the URL")] : [])
  ]
}

const clientConfig = (config: Json, at: string): Causes => {
  const hasUrl = typeof config.url === "string"
  const hasService = KubeObject.isObject(config.service)
  if (hasUrl === hasService) return [FieldErrors.required(at, "exactly one of url or service is required")]
  if (hasUrl) return webhookUrl(String(config.url), `${at}.url`)
  const service = KubeObject.record(config.service)
  const path = typeof service.path === "string" ? service.path : undefined
  return [
    ...(String(service.name ?? "") === "" ? [FieldErrors.required(`${at}.service.name`, "service name is required")] : []),
    ...(String(service.namespace ?? "") === "" ? [FieldErrors.required(`${at}.service.namespace`, "service namespace is required")] : []),
    ...(NameRules.portNumber(Number(service.port ?? 443)).length > 0
      ? [FieldErrors.invalid(`${at}.service.port`, String(service.port), "port is not valid: must be between 1 and 65535, inclusive")]
      : []),
    ...(path !== undefined && path !== "" && path !== "/" && !path.startsWith("/") ? [FieldErrors.invalid(`${at}.service.path`, FieldErrors.quote(path), "must start with a '/'")] : [])
  ]
}

const rule = (r: Json, at: string): Causes => [
  ...(["operations", "apiGroups", "apiVersions", "resources"] as const).flatMap((f) =>
    strings(r[f]).length === 0 ? [FieldErrors.required(`${at}.${f}`)] : []
  ),
  ...strings(r.operations).flatMap((op, i) => oneOf(op, `${at}.operations[${i}]`, ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"])),
  ...oneOf(r.scope, `${at}.scope`, ["*", "Cluster", "Namespaced"])
]

const reviewVersions = (versions: ReadonlyArray<string>, at: string): Causes => {
  if (versions.length === 0) return [FieldErrors.required(at, "must specify one of v1, v1beta1")]
  return versions.some((v) => v === "v1" || v === "v1beta1")
    ? []
    : [FieldErrors.invalid(at, FieldErrors.stringSlice(versions), "must include at least one of v1, v1beta1")]
}

const webhook = (mutating: boolean) => (w: Json, i: number): Causes => {
  const at = `webhooks[${i}]`
  const timeout = w.timeoutSeconds
  return [
    ...qualifiedName(String(w.name ?? ""), `${at}.name`),
    ...KubeObject.records(w.rules).flatMap((r, j) => rule(r, `${at}.rules[${j}]`)),
    ...oneOf(w.failurePolicy, `${at}.failurePolicy`, ["Fail", "Ignore"]),
    ...oneOf(w.matchPolicy, `${at}.matchPolicy`, ["Equivalent", "Exact"]),
    ...(w.sideEffects === undefined
      ? [FieldErrors.required(`${at}.sideEffects`, "must specify one of None, NoneOnDryRun")]
      : oneOf(w.sideEffects, `${at}.sideEffects`, ["None", "NoneOnDryRun"])),
    ...(typeof timeout === "number" && (timeout < 1 || timeout > 30)
      ? [FieldErrors.invalid(`${at}.timeoutSeconds`, String(timeout), "the timeout value must be between 1 and 30 seconds")]
      : []),
    ...clientConfig(KubeObject.record(w.clientConfig), `${at}.clientConfig`),
    ...(mutating ? oneOf(w.reinvocationPolicy, `${at}.reinvocationPolicy`, ["IfNeeded", "Never"]) : []),
    ...reviewVersions(strings(w.admissionReviewVersions), `${at}.admissionReviewVersions`)
  ]
}

/**
 * A ValidatingWebhookConfiguration (`mutating` false) or MutatingWebhookConfiguration.
 *
 * @example
 * import * as AdmissionValidation from "./AdmissionValidation.ts"
 * AdmissionValidation.webhooks(false)({ webhooks: [{ name: "check", sideEffects: "None", admissionReviewVersions: ["v1"], clientConfig: { url: "https://x" } }] }, undefined)[0].message
 * // 'Invalid value: "check": should be a domain with at least three segments separated by dots'
 */
export const webhooks = (mutating: boolean) => (object: Json): Causes => {
  const seen = new Set<string>()
  return KubeObject.records(object.webhooks).flatMap((w, i) => {
    const name = String(w.name ?? "")
    const duplicate = name !== "" && seen.has(name) ? [FieldErrors.duplicate(`webhooks[${i}].name`, name)] : []
    seen.add(name)
    return [...webhook(mutating)(w, i), ...duplicate]
  })
}

/**
 * A ValidatingAdmissionPolicy.
 *
 * @example
 * import * as AdmissionValidation from "./AdmissionValidation.ts"
 * AdmissionValidation.policy({ spec: { failurePolicy: "Fail", matchConstraints: { resourceRules: [{}] }, validations: [{ expression: "" }] } }, undefined)[0].field
 * // "spec.validations[0].expression"
 */
export const policy = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const causes: Array<Status.StatusCause> = [...oneOf(spec.failurePolicy, "spec.failurePolicy", ["Fail", "Ignore"])]
  if (spec.failurePolicy === undefined) causes.push(FieldErrors.required("spec.failurePolicy"))
  if (!KubeObject.isObject(spec.matchConstraints)) causes.push(FieldErrors.required("spec.matchConstraints"))
  else if (KubeObject.records(spec.matchConstraints.resourceRules).length === 0) causes.push(FieldErrors.required("spec.matchConstraints.resourceRules"))
  const validations = KubeObject.records(spec.validations)
  if (validations.length === 0 && KubeObject.records(spec.auditAnnotations).length === 0) {
    causes.push(FieldErrors.required("spec.validations", "validations or auditAnnotations must contain at least one item"))
    causes.push(FieldErrors.required("spec.auditAnnotations", "validations or auditAnnotations must contain at least one item"))
  }
  validations.forEach((v, i) => {
    if (String(v.expression ?? "").trim() === "") causes.push(FieldErrors.required(`spec.validations[${i}].expression`))
  })
  return causes
}

/**
 * A ValidatingAdmissionPolicyBinding.
 *
 * @example
 * import * as AdmissionValidation from "./AdmissionValidation.ts"
 * AdmissionValidation.binding({ spec: { policyName: "p", validationActions: ["Deny", "Warn"] } }, undefined)[0].message.endsWith("serves no purpose)") // true
 */
export const binding = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const actions = strings(spec.validationActions)
  const causes: Array<Status.StatusCause> = []
  if (String(spec.policyName ?? "") === "") causes.push(FieldErrors.required("spec.policyName"))
  const seen = new Set<string>()
  actions.forEach((a, i) => {
    causes.push(...oneOf(a, `spec.validationActions[${i}]`, ["Audit", "Deny", "Warn"]))
    if (seen.has(a)) causes.push(FieldErrors.duplicate(`spec.validationActions[${i}]`, a))
    seen.add(a)
  })
  if (seen.has("Deny") && seen.has("Warn")) {
    causes.push(FieldErrors.invalid(
      "spec.validationActions",
      FieldErrors.stringSlice(actions, "[]admissionregistration.ValidationAction"),
      "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"
    ))
  }
  if (seen.size === 0) causes.push(FieldErrors.required("spec.validationActions", "at least one validation action is required"))
  return causes
}
