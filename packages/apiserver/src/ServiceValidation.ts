/**
 * 1.32's validation of Services: DNS-1035 names, type, ports (numbers, names, protocols,
 * duplicates, node ports in the node port range), cluster IPs (valid, in the service range,
 * unchanged once set), ExternalName services and the traffic and affinity policies.
 */
import * as FieldErrors from "./FieldErrors.ts"
import * as ServiceDefaults from "./ServiceDefaults.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const types = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
const protocols = ["SCTP", "TCP", "UDP"]

const goPort = (p: Json): string =>
  `core.ServicePort{Name:"", Protocol:${FieldErrors.quote(p.protocol)}, AppProtocol:(*string)(nil), Port:${Number(p.port ?? 0)}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`

const port = (p: Json, at: string, needsName: boolean, type: string): Causes => {
  const causes: Array<Status.StatusCause> = []
  const name = KubeObject.text(p.name)
  if (needsName && name === "") causes.push(FieldErrors.required(`${at}.name`))
  else if (name !== "") causes.push(...NameRules.dns1123Label(name).map((m) => FieldErrors.invalid(`${at}.name`, FieldErrors.quote(name), m)))
  causes.push(...NameRules.portNumber(Number(p.port ?? 0)).map((m) => FieldErrors.invalid(`${at}.port`, FieldErrors.scalar(p.port ?? 0), m)))
  if (!protocols.includes(KubeObject.text(p.protocol))) causes.push(FieldErrors.notSupported(`${at}.protocol`, p.protocol, protocols))
  const target = p.targetPort
  if (typeof target === "number") {
    causes.push(...NameRules.portNumber(target).map((m) => FieldErrors.invalid(`${at}.targetPort`, String(target), m)))
  } else if (typeof target === "string") {
    causes.push(...NameRules.portName(target).map((m) => FieldErrors.invalid(`${at}.targetPort`, FieldErrors.quote(target), m)))
  }
  const nodePort = p.nodePort
  if (typeof nodePort === "number" && nodePort !== 0) {
    if (type === "ClusterIP" || type === "ExternalName") {
      causes.push(FieldErrors.forbidden(`${at}.nodePort`, `may not be used when \`type\` is '${type}'`))
    } else if (nodePort < ServiceDefaults.nodePortMin || nodePort > ServiceDefaults.nodePortMax) {
      causes.push(FieldErrors.invalid(`${at}.nodePort`, String(nodePort), `provided port is not in the valid range. The range of valid ports is ${ServiceDefaults.nodePortMin}-${ServiceDefaults.nodePortMax}`))
    }
  }
  return causes
}

const ports = (spec: Json, type: string): Causes => {
  const all = KubeObject.records(spec.ports)
  const headless = spec.clusterIP === "None"
  if (all.length === 0) return headless || type === "ExternalName" ? [] : [FieldErrors.required("spec.ports")]
  const names = new Set<string>()
  const keys = new Set<string>()
  return all.flatMap((p, i) => {
    const at = `spec.ports[${i}]`
    const causes = [...port(p, at, all.length > 1, type)]
    const name = KubeObject.text(p.name)
    if (name !== "" && names.has(name)) causes.push(FieldErrors.duplicate(`${at}.name`, name))
    names.add(name)
    const key = `${p.port}/${p.protocol}`
    if (keys.has(key)) causes.push({ reason: "FieldValueDuplicate", message: `Duplicate value: ${goPort(p)}`, field: at })
    keys.add(key)
    return causes
  })
}

// `owner`: the Service's namespace/name; 10.96.0.1 is the `default/kubernetes` Service's.
const clusterIPs = (spec: Json, creating: boolean, owner: string): Causes => {
  const ips = Array.isArray(spec.clusterIPs) ? spec.clusterIPs.map(String) : []
  const invalid = ips.flatMap((ip, i) =>
    ip === "None" || NameRules.isIP(ip) ? [] : [FieldErrors.invalid(`spec.clusterIPs[${i}]`, FieldErrors.quote(ip), "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
  )
  if (invalid.length > 0 || !creating || ips.length === 0 || ips[0] === "None") return invalid
  const printed = FieldErrors.stringSlice(ips)
  if (!ServiceDefaults.inServiceRange(ips[0]!)) {
    return [FieldErrors.invalid("spec.clusterIPs", printed, `failed to allocate IP ${ips[0]}: provided IP (${ips[0]}) is not in the valid range. The range of valid IPs is ${ServiceDefaults.serviceCidr}`)]
  }
  return ips[0] === ServiceDefaults.kubernetesServiceIP && owner !== "default/kubernetes"
    ? [FieldErrors.invalid("spec.clusterIPs", printed, `failed to allocate IP ${ips[0]}: provided IP is already allocated`)]
    : []
}

const policies = (spec: Json, type: string): Causes => {
  const causes: Array<Status.StatusCause> = []
  if (spec.sessionAffinity !== undefined && !["ClientIP", "None"].includes(KubeObject.text(spec.sessionAffinity))) {
    causes.push(FieldErrors.notSupported("spec.sessionAffinity", spec.sessionAffinity, ["ClientIP", "None"]))
  }
  const external = type === "NodePort" || type === "LoadBalancer" || (type === "ClusterIP" && KubeObject.records(spec.externalIPs).length > 0)
  const etp = spec.externalTrafficPolicy
  if (etp !== undefined && !external) {
    causes.push(FieldErrors.invalid("spec.externalTrafficPolicy", FieldErrors.quote(etp), "may only be set for externally-accessible services"))
  } else if (etp !== undefined && etp !== "Cluster" && etp !== "Local") {
    causes.push(FieldErrors.notSupported("spec.externalTrafficPolicy", etp, ["Cluster", "Local"]))
  }
  const itp = spec.internalTrafficPolicy
  if (itp !== undefined && itp !== "Cluster" && itp !== "Local") causes.push(FieldErrors.notSupported("spec.internalTrafficPolicy", itp, ["Cluster", "Local"]))
  return causes
}

const externalName = (spec: Json): Causes => {
  const name = KubeObject.text(spec.externalName)
  const causes: Array<Status.StatusCause> = []
  if (Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0) causes.push(FieldErrors.forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
  if (name === "") return [...causes, FieldErrors.required("spec.externalName")]
  const trimmed = name.endsWith(".") ? name.slice(0, -1) : name
  return [...causes, ...NameRules.dns1123Subdomain(trimmed).map((m) => FieldErrors.invalid("spec.externalName", FieldErrors.quote(name), m))]
}

const update = (spec: Json, oldSpec: Json): Causes => {
  if (spec.type === "ExternalName" || oldSpec.type === "ExternalName") return []
  const now = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : []
  const before = Array.isArray(oldSpec.clusterIPs) ? oldSpec.clusterIPs : []
  const causes: Array<Status.StatusCause> = []
  if (now.length > 0 && before.length > 0 && now[0] !== before[0]) {
    causes.push(FieldErrors.invalid("spec.clusterIPs[0]", FieldErrors.stringSlice(now), "may not change once set"))
  }
  const families = Array.isArray(spec.ipFamilies) ? spec.ipFamilies : []
  const oldFamilies = Array.isArray(oldSpec.ipFamilies) ? oldSpec.ipFamilies : []
  if (families.length > 0 && oldFamilies.length > 0 && families[0] !== oldFamilies[0]) {
    causes.push(FieldErrors.invalid("spec.ipFamilies[0]", FieldErrors.stringSlice(families, "[]core.IPFamily"), "may not change once set"))
  }
  return causes
}

/**
 * A Service (core/v1), after its defaults.
 *
 * @example
 * import * as ServiceValidation from "./ServiceValidation.ts"
 * ServiceValidation.service({ metadata: { name: "web" }, spec: { type: "ClusterIP", ports: [] } }, undefined)[0].field // "spec.ports"
 */
export const service = (object: Json, old: Json | undefined): Causes => {
  const spec = KubeObject.record(object.spec)
  const type = KubeObject.text(spec.type)
  const name = KubeObject.meta(object).name ?? ""
  const causes: Array<Status.StatusCause> = [
    ...NameRules.dns1035Label(name).map((m) => FieldErrors.invalid("metadata.name", FieldErrors.quote(name), m))
  ]
  if (!types.includes(type)) return [...causes, FieldErrors.notSupported("spec.type", spec.type, types)]
  return [
    ...causes,
    ...ports(spec, type),
    ...(type === "ExternalName" ? externalName(spec) : clusterIPs(spec, old === undefined, `${KubeObject.meta(object).namespace ?? ""}/${name}`)),
    ...policies(spec, type),
    ...(old === undefined ? [] : update(spec, KubeObject.record(old.spec)))
  ]
}
