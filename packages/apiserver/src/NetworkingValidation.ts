/**
 * 1.32's validation of networking.k8s.io/v1 objects: Ingress rules (hosts, paths and their
 * types, backends) and NetworkPolicy policy types and ports.
 */
import * as FieldErrors from "./FieldErrors.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const backend = (b: Json, at: string): Causes => {
  const hasResource = KubeObject.isObject(b.resource)
  const hasService = KubeObject.isObject(b.service)
  if (hasResource && hasService) return [FieldErrors.invalid(at, `""`, "cannot set both resource and service backends")]
  if (hasResource) return KubeObject.text(KubeObject.record(b.resource).kind) === "" ? [FieldErrors.required(`${at}.resource.kind`)] : []
  if (!hasService) return [FieldErrors.invalid(at, `""`, "resource or service backend is required")]
  const service = KubeObject.record(b.service)
  const name = KubeObject.text(service.name)
  const causes: Array<Status.StatusCause> = name === ""
    ? [FieldErrors.required(`${at}.service.name`)]
    : NameRules.dns1035Label(name).map((m) => FieldErrors.invalid(`${at}.service.name`, FieldErrors.quote(name), m))
  const port = KubeObject.record(service.port)
  const portName = KubeObject.text(port.name)
  const number = typeof port.number === "number" ? port.number : 0
  if (portName !== "" && number !== 0) return [...causes, FieldErrors.invalid(at, `""`, "cannot set both port name & port number")]
  if (portName !== "") return [...causes, ...NameRules.portName(portName).map((m) => FieldErrors.invalid(`${at}.service.port.name`, FieldErrors.quote(portName), m))]
  if (number !== 0) return [...causes, ...NameRules.portNumber(number).map((m) => FieldErrors.invalid(`${at}.service.port.number`, String(number), m))]
  return [...causes, FieldErrors.required(at, "port name or number is required")]
}

const pathTypes = ["Exact", "ImplementationSpecific", "Prefix"]

const path = (p: Json, at: string): Causes => {
  if (p.pathType === undefined) return [FieldErrors.required(`${at}.pathType`, "pathType must be specified")]
  const value = KubeObject.text(p.path)
  const bad = (detail: string) => FieldErrors.invalid(`${at}.path`, FieldErrors.quote(value), detail)
  const causes: Array<Status.StatusCause> = []
  if (p.pathType === "Exact" || p.pathType === "Prefix") {
    if (!value.startsWith("/")) causes.push(bad("must be an absolute path"))
    for (const seq of ["//", "/./", "/../", "%2f", "%2F"]) if (value.includes(seq)) causes.push(bad(`must not contain '${seq}'`))
    for (const suffix of ["/..", "/."]) if (value.endsWith(suffix)) causes.push(bad(`cannot end with '${suffix}'`))
  } else if (p.pathType === "ImplementationSpecific") {
    if (value !== "" && !value.startsWith("/")) causes.push(bad("must be an absolute path"))
  } else {
    causes.push(FieldErrors.notSupported(`${at}.pathType`, p.pathType, pathTypes))
  }
  return [...causes, ...backend(KubeObject.record(p.backend), `${at}.backend`)]
}

const host = (value: string, at: string): Causes => {
  if (value === "") return []
  const causes = NameRules.isIP(value) ? [FieldErrors.invalid(at, FieldErrors.quote(value), "must be a DNS name, not an IP address")] : []
  const messages = value.includes("*") ? NameRules.wildcardDns1123Subdomain(value) : NameRules.dns1123Subdomain(value)
  return [...causes, ...messages.map((m) => FieldErrors.invalid(at, FieldErrors.quote(value), m))]
}

/**
 * An Ingress: rules or a default backend; hosts, paths with their types, backends.
 *
 * @example
 * import * as NetworkingValidation from "./NetworkingValidation.ts"
 * NetworkingValidation.ingress({ spec: { rules: [{ http: { paths: [{ path: "/", backend: { service: { name: "web", port: { number: 80 } } } }] } }] } }, undefined)[0].message
 * // "Required value: pathType must be specified"
 */
export const ingress = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const rules = KubeObject.records(spec.rules)
  const causes: Array<Status.StatusCause> = []
  if (rules.length === 0 && !KubeObject.isObject(spec.defaultBackend)) {
    causes.push(FieldErrors.invalid("spec", Array.isArray(spec.rules) ? "[]networking.IngressRule{}" : "[]networking.IngressRule(nil)", "either `defaultBackend` or `rules` must be specified"))
  }
  if (KubeObject.isObject(spec.defaultBackend)) causes.push(...backend(spec.defaultBackend, "spec.defaultBackend"))
  rules.forEach((r, i) => {
    const at = `spec.rules[${i}]`
    causes.push(...host(KubeObject.text(r.host), `${at}.host`))
    if (!KubeObject.isObject(r.http)) return
    const paths = KubeObject.records(r.http.paths)
    if (paths.length === 0) causes.push(FieldErrors.required(`${at}.http.paths`))
    paths.forEach((p, j) => causes.push(...path(p, `${at}.http.paths[${j}]`)))
  })
  KubeObject.records(spec.tls).forEach((t, i) =>
    (Array.isArray(t.hosts) ? t.hosts.map(String) : []).forEach((h, j) => causes.push(...host(h, `spec.tls[${i}].hosts[${j}]`).filter((c) => !c.message?.includes("not an IP"))))
  )
  return causes
}

const policyPorts = (rules: ReadonlyArray<Json>, path: string): Causes =>
  rules.flatMap((r, i) =>
    KubeObject.records(r.ports).flatMap((p, j) => {
      const at = `${path}[${i}].ports[${j}]`
      const causes: Array<Status.StatusCause> = []
      if (p.protocol !== undefined && !["SCTP", "TCP", "UDP"].includes(String(p.protocol))) causes.push(FieldErrors.notSupported(`${at}.protocol`, p.protocol, ["SCTP", "TCP", "UDP"]))
      if (typeof p.port === "number") causes.push(...NameRules.portNumber(p.port).map((m) => FieldErrors.invalid(`${at}.port`, String(p.port), m)))
      else if (typeof p.port === "string") causes.push(...NameRules.portName(p.port).map((m) => FieldErrors.invalid(`${at}.port`, FieldErrors.quote(p.port), m)))
      return causes
    })
  )

/**
 * A NetworkPolicy: its pod selector, policy types and rule ports.
 *
 * @example
 * import * as NetworkingValidation from "./NetworkingValidation.ts"
 * NetworkingValidation.networkPolicy({ spec: { podSelector: {}, policyTypes: ["Both"] } }, undefined)[0].message
 * // 'Unsupported value: "Both": supported values: "Egress", "Ingress"'
 */
export const networkPolicy = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const types = Array.isArray(spec.policyTypes) ? spec.policyTypes : []
  return [
    ...SelectorValidation.validate(KubeObject.record(spec.podSelector), "spec.podSelector"),
    ...policyPorts(KubeObject.records(spec.ingress), "spec.ingress"),
    ...policyPorts(KubeObject.records(spec.egress), "spec.egress"),
    ...types.flatMap((t, i) => (t === "Ingress" || t === "Egress" ? [] : [FieldErrors.notSupported(`spec.policyTypes[${i}]`, t, ["Egress", "Ingress"])])),
    ...(types.length > 2 ? [FieldErrors.invalid("spec.policyTypes", FieldErrors.stringSlice(types, "[]networking.PolicyType"), "may not specify more than two policyTypes")] : [])
  ]
}
