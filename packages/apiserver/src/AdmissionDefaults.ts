/**
 * 1.32's defaults of the admission configuration kinds (admissionregistration.k8s.io/v1):
 * webhooks' failure and match policies, selectors, timeouts, service ports and rule scopes, and
 * ValidatingAdmissionPolicies' and their bindings' match resources.
 */
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Defaulter = (object: Json, old: Json | undefined) => Json

const rules = (u: unknown): ReadonlyArray<Json> => KubeObject.records(u).map((r) => ({ scope: "*", ...r }))

const webhook = (mutating: boolean) => (w: Json): Json => {
  const clientConfig = KubeObject.record(w.clientConfig)
  return {
    failurePolicy: "Fail",
    matchPolicy: "Equivalent",
    namespaceSelector: {},
    objectSelector: {},
    timeoutSeconds: 10,
    ...(mutating ? { reinvocationPolicy: "Never" } : {}),
    ...w,
    ...(KubeObject.isObject(w.clientConfig)
      ? { clientConfig: KubeObject.isObject(clientConfig.service) ? { ...clientConfig, service: { port: 443, ...clientConfig.service } } : clientConfig }
      : {}),
    ...(Array.isArray(w.rules) ? { rules: rules(w.rules) } : {})
  }
}

/**
 * A ValidatingWebhookConfiguration (`mutating` false) or MutatingWebhookConfiguration.
 *
 * @example
 * import * as AdmissionDefaults from "./AdmissionDefaults.ts"
 * AdmissionDefaults.webhooks(true)({ webhooks: [{ name: "a.b.c" }] }, undefined).webhooks[0].reinvocationPolicy // "Never"
 */
export const webhooks = (mutating: boolean): Defaulter => (object) =>
  Array.isArray(object.webhooks) ? { ...object, webhooks: KubeObject.records(object.webhooks).map(webhook(mutating)) } : object

const matchResources = (u: unknown): Json => {
  const m = KubeObject.record(u)
  return {
    matchPolicy: "Equivalent",
    namespaceSelector: {},
    objectSelector: {},
    ...m,
    ...(Array.isArray(m.resourceRules) ? { resourceRules: rules(m.resourceRules) } : {}),
    ...(Array.isArray(m.excludeResourceRules) ? { excludeResourceRules: rules(m.excludeResourceRules) } : {})
  }
}

/**
 * A ValidatingAdmissionPolicy.
 *
 * @example
 * import * as AdmissionDefaults from "./AdmissionDefaults.ts"
 * AdmissionDefaults.policy({ spec: { matchConstraints: {} } }, undefined).spec.failurePolicy // "Fail"
 */
export const policy: Defaulter = (object) => {
  const spec = KubeObject.record(object.spec)
  return {
    ...object,
    spec: {
      failurePolicy: "Fail",
      ...spec,
      ...(KubeObject.isObject(spec.matchConstraints) ? { matchConstraints: matchResources(spec.matchConstraints) } : {})
    }
  }
}

/**
 * A ValidatingAdmissionPolicyBinding.
 *
 * @example
 * import * as AdmissionDefaults from "./AdmissionDefaults.ts"
 * AdmissionDefaults.binding({ spec: { matchResources: {} } }, undefined).spec.matchResources.matchPolicy // "Equivalent"
 */
export const binding: Defaulter = (object) => {
  const spec = KubeObject.record(object.spec)
  return KubeObject.isObject(spec.matchResources) ? { ...object, spec: { ...spec, matchResources: matchResources(spec.matchResources) } } : object
}
