/**
 * kube-aggregator 1.32's defaults and validation of APIServices (apiregistration.k8s.io/v1): the
 * name is `<version>.<group>`, priorities in range, a local APIService (no `service`) without a CA
 * bundle, a remote one with a Service and a valid port (443 by default).
 */
import * as FieldErrors from "./FieldErrors.ts"
import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Causes = ReadonlyArray<Status.StatusCause>
const record = KubeObject.record

/**
 * An APIService with its defaults: the Service's port 443.
 *
 * @example
 * import * as ApiServiceValidation from "./ApiServiceValidation.ts"
 * ApiServiceValidation.defaults({ spec: { service: { namespace: "kube-system", name: "metrics-server" } } }).spec.service.port // 443
 */
export const defaults = (object: KubeObject.KubeObject): KubeObject.KubeObject & { readonly spec: Record<string, unknown> } => {
  const spec = record(object.spec)
  if (!KubeObject.isObject(spec.service)) return { ...object, spec }
  return { ...object, spec: { ...spec, service: { port: 443, ...spec.service } } }
}

/**
 * An APIService's problems, as kube-aggregator's ValidateAPIService reports them.
 *
 * @example
 * import * as ApiServiceValidation from "./ApiServiceValidation.ts"
 * ApiServiceValidation.validate({ metadata: { name: "v1beta1.metrics.k8s.io" }, spec: { group: "metrics.k8s.io", version: "v1beta1", groupPriorityMinimum: 100, versionPriority: 100 } }) // []
 */
export const validate = (object: KubeObject.KubeObject): Causes => {
  const spec = record(object.spec)
  const group = typeof spec.group === "string" ? spec.group : ""
  const version = typeof spec.version === "string" ? spec.version : ""
  const name = KubeObject.meta(object).name ?? ""
  const required = `${version}.${group}`
  const causes: Array<Status.StatusCause> = []
  // A name that is no path segment has that said by ObjectMeta's checks; one that is must be the required one.
  if (name !== "" && ObjectMetaValidation.nameIsPathSegment(name, false).length === 0 && name !== required) {
    causes.push(FieldErrors.invalid("metadata.name", FieldErrors.quote(name), `must be \`spec.version+"."+spec.group\`: ${FieldErrors.quote(required)}`))
  }
  if (group === "" && version !== "v1") causes.push(FieldErrors.required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
  if (group !== "") for (const message of NameRules.dns1123Subdomain(group)) causes.push(FieldErrors.invalid("spec.group", FieldErrors.quote(group), message))
  for (const message of NameRules.dns1035Label(version)) causes.push(FieldErrors.invalid("spec.version", FieldErrors.quote(version), message))
  const groupPriority = KubeObject.number(spec.groupPriorityMinimum)
  if (groupPriority <= 0 || groupPriority > 20000) {
    causes.push(FieldErrors.invalid("spec.groupPriorityMinimum", String(groupPriority), "must be positive and less than 20000"))
  }
  const versionPriority = KubeObject.number(spec.versionPriority)
  if (versionPriority <= 0 || versionPriority > 1000) {
    causes.push(FieldErrors.invalid("spec.versionPriority", String(versionPriority), "must be positive and less than 1000"))
  }
  const caBundle = typeof spec.caBundle === "string" ? Buffer.from(spec.caBundle, "base64").length : 0
  if (!KubeObject.isObject(spec.service)) {
    if (caBundle !== 0) causes.push(FieldErrors.invalid("spec.caBundle", FieldErrors.quote(`${caBundle} bytes`), "local APIServices may not have a caBundle"))
    if (spec.insecureSkipTLSVerify === true) causes.push(FieldErrors.invalid("spec.insecureSkipTLSVerify", "true", "local APIServices may not have insecureSkipTLSVerify"))
    return causes
  }
  const service = spec.service
  if (typeof service.namespace !== "string" || service.namespace === "") causes.push(FieldErrors.required("spec.service.namespace"))
  if (typeof service.name !== "string" || service.name === "") causes.push(FieldErrors.required("spec.service.name"))
  const port = KubeObject.number(service.port, 443)
  const portErrors = NameRules.portNumber(port)
  if (portErrors.length > 0) causes.push(FieldErrors.invalid("spec.service.port", String(port), `port is not valid: ${portErrors.join(", ")}`))
  if (spec.insecureSkipTLSVerify === true && caBundle > 0) {
    causes.push(FieldErrors.invalid("spec.insecureSkipTLSVerify", "true", "may not be true if caBundle is present"))
  }
  return causes
}
