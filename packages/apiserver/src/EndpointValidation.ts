/**
 * 1.32's validation of Endpoints and EndpointSlices: addresses that are IPs, and not unspecified or
 * link-local (loopback ones are kept: a Service reaches a process on the host through them), ports
 * in range with known protocols, a slice's address type (required, fixed once set) and its
 * endpoints' addresses.
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const protocols = ["SCTP", "TCP", "UDP"]

// kube's ValidateNonSpecialIP, but for loopback: here a loopback endpoint is how a Service reaches a
// process on the host (a webhook, an extension server), and the server's own address.
const specialIP = (ip: string): string | undefined => {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip)?.slice(1).map(Number)
  if (v4 !== undefined) {
    if (v4.every((octet) => octet === 0)) return `may not be unspecified (${ip})`
    if (v4[0] === 169 && v4[1] === 254) return "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
    if (v4[0] === 224 && v4[1] === 0 && v4[2] === 0) return "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
    return undefined
  }
  const lower = ip.toLowerCase()
  if (lower.replace(/[:0]/g, "") === "") return `may not be unspecified (${ip})`
  if (/^fe[89ab][0-9a-f]:/.test(lower)) return "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
  if (/^ff02:/.test(lower)) return "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
  return undefined
}

// An address's causes; `family`, an EndpointSlice's address type, which it must be of.
const addressCauses = (ip: unknown, at: string, family?: "IPv4" | "IPv6"): Causes => {
  const text = String(ip ?? "")
  const valid = NameRules.isIP(text) && (family === undefined || (family === "IPv6") === text.includes(":"))
  if (!valid) {
    const expected = family === undefined ? "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)" : `must be a valid ${family} address`
    return [FieldErrors.invalid(at, FieldErrors.quote(ip), expected)]
  }
  const special = specialIP(text)
  return special === undefined ? [] : [FieldErrors.invalid(at, FieldErrors.quote(ip), special)]
}

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
      ...addresses.flatMap(([a, path]) => addressCauses(a.ip, `${path}.ip`)),
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
    if (type === "IPv4" || type === "IPv6") addresses.forEach((address, j) => causes.push(...addressCauses(address, `endpoints[${i}].addresses[${j}]`, type)))
  })
  KubeObject.records(object.ports).forEach((p, i) => causes.push(...port(p, `ports[${i}]`, false)))
  if (old !== undefined && old.addressType !== type) causes.push(FieldErrors.invalid("addressType", FieldErrors.quote(type), "field is immutable"))
  return causes
}
