/**
 * 1.32's validation of Endpoints and EndpointSlices: addresses that are IPs, ports in range with
 * known protocols, a slice's address type (required, fixed once set) and its endpoints' addresses.
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const protocols = ["SCTP", "TCP", "UDP"]

const port = (p: Json, at: string, portRequired: boolean): Causes => [
  ...(p.port === undefined && !portRequired
    ? []
    : NameRules.portNumber(Number(p.port ?? 0)).map((m) => FieldErrors.invalid(`${at}.port`, String(p.port ?? 0), m))),
  ...(protocols.includes(String(p.protocol)) ? [] : [FieldErrors.notSupported(`${at}.protocol`, p.protocol ?? "", protocols)])
]

/**
 * Endpoints (core/v1).
 *
 * @example
 * import * as EndpointValidation from "./EndpointValidation.ts"
 * EndpointValidation.endpoints({ subsets: [{ addresses: [{ ip: "x" }] }] }, undefined)[0].field // "subsets[0].addresses[0].ip"
 */
export const endpoints = (object: Json): Causes =>
  KubeObject.records(object.subsets).flatMap((s, i) => {
    const at = `subsets[${i}]`
    const addresses = [...KubeObject.records(s.addresses).map((a, j) => [a, `${at}.addresses[${j}]`] as const), ...KubeObject.records(s.notReadyAddresses).map((a, j) => [a, `${at}.notReadyAddresses[${j}]`] as const)]
    return [
      ...addresses.flatMap(([a, path]) =>
        NameRules.isIP(String(a.ip ?? "")) ? [] : [FieldErrors.invalid(`${path}.ip`, FieldErrors.quote(a.ip), "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
      ),
      ...KubeObject.records(s.ports).flatMap((p, j) => port(p, `${at}.ports[${j}]`, true))
    ]
  })

const addressTypes = ["FQDN", "IPv4", "IPv6"]

/**
 * An EndpointSlice (discovery.k8s.io/v1).
 *
 * @example
 * import * as EndpointValidation from "./EndpointValidation.ts"
 * EndpointValidation.endpointSlice({ endpoints: [] }, undefined)[0].message // "Required value"
 */
export const endpointSlice = (object: Json, old: Json | undefined): Causes => {
  const type = object.addressType
  const causes: Array<Status.StatusCause> = []
  if (type === undefined || type === "") causes.push(FieldErrors.required("addressType"))
  else if (!addressTypes.includes(String(type))) causes.push(FieldErrors.notSupported("addressType", type, addressTypes))
  KubeObject.records(object.endpoints).forEach((e, i) => {
    const addresses = Array.isArray(e.addresses) ? e.addresses : []
    if (addresses.length === 0) causes.push(FieldErrors.required(`endpoints[${i}].addresses`, "must contain at least 1 address"))
    if (addresses.length > 100) causes.push({ reason: "FieldValueTooMany", message: `Too many: ${addresses.length}: must have at most 100 items`, field: `endpoints[${i}].addresses` })
  })
  KubeObject.records(object.ports).forEach((p, i) => causes.push(...port(p, `ports[${i}]`, false)))
  if (old !== undefined && old.addressType !== type) causes.push(FieldErrors.invalid("addressType", FieldErrors.quote(type), "field is immutable"))
  return causes
}
