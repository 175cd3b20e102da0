/**
 * The Kubernetes CEL libraries that CRD validation rules use in 1.32, over `@bufbuild/cel`'s
 * standard functions and strings extension: lists (`sum`, `min`, `max`, `isSorted`, `indexOf`,
 * `lastIndexOf`), regex (`find`, `findAll`), sets, urls, quantities, formats, IPs and CIDRs, and
 * the optional values that `optionalOldSelf` rules read (`hasValue`, `value`, `orValue`).
 *
 * Values of the library's own types (URL, Quantity, IP, CIDR, Format, optional) are opaque maps
 * known to this module, so CEL's equality compares their canonical forms.
 */
import { type CelFunc, celFunc, celList, celMap, celMethod, CelScalar, listType, mapType } from "@bufbuild/cel"
import { strings } from "@bufbuild/cel/ext"
import { isIP } from "node:net"
import * as NameRules from "./NameRules.ts"
import * as Quantity from "./Quantity.ts"
import * as QuantityMath from "./QuantityMath.ts"

const { BOOL, DOUBLE, DYN, INT, STRING } = CelScalar
const LIST = listType(DYN)
const OPAQUE = mapType(STRING, DYN)

/** Fails the call the way cel-go reports a function applied to what it does not take. */
const noOverload = (name: string): never => {
  throw new Error(`no such overload: ${name}`)
}

const opaque = new WeakMap<object, { readonly kind: string; readonly value: unknown }>()

const wrap = (kind: string, canonical: unknown, value: unknown) => {
  const map = celMap(new Map([[`@${kind}`, canonical as string]]))
  opaque.set(map, { kind, value })
  return map
}

const unwrap = <A>(kind: string, target: unknown, name: string): A => {
  const found = typeof target === "object" && target !== null ? opaque.get(target) : undefined
  return found?.kind === kind ? found.value as A : noOverload(name)
}

// ---------------------------------------------------------------------------------------------
// Optional values
// ---------------------------------------------------------------------------------------------

const none = { present: false as const }

/** An optional holding `value`, or none when `value` is undefined. */
export const optional = (value: unknown) =>
  wrap("optional", value === undefined ? "none" : "some", value === undefined ? none : { present: true, value })

const optionals: ReadonlyArray<CelFunc> = [
  celMethod("hasValue", OPAQUE, [], BOOL, function() {
    return unwrap<{ present: boolean }>("optional", this, "hasValue").present
  }),
  celMethod("value", OPAQUE, [], DYN, function() {
    const o = unwrap<{ present: boolean; value?: unknown }>("optional", this, "value")
    if (!o.present) throw new Error("optional.none() dereference")
    return o.value as never
  }),
  celMethod("orValue", OPAQUE, [DYN], DYN, function(fallback) {
    const o = unwrap<{ present: boolean; value?: unknown }>("optional", this, "orValue")
    return (o.present ? o.value : fallback) as never
  }),
  celFunc("optional.none", [], OPAQUE, () => optional(undefined)),
  celFunc("optional.of", [DYN], OPAQUE, (value) => optional(value))
]

// ---------------------------------------------------------------------------------------------
// Lists and sets
// ---------------------------------------------------------------------------------------------

const compare = (a: unknown, b: unknown): number => {
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0
  if ((typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")) {
    return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0
  }
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b)
  return noOverload("compare")
}

const same = (a: unknown, b: unknown): boolean => {
  if ((typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")) return Number(a) === Number(b)
  if (Array.isArray(a) || Array.isArray(b) || (typeof a === "object" && a !== null)) return JSON.stringify(a, big) === JSON.stringify(b, big)
  return a === b
}
const big = (_: string, v: unknown) => typeof v === "bigint" ? `${v}n` : v instanceof Map ? Object.fromEntries(v) : v

const items = (list: Iterable<unknown>) => Array.from(list)

const lists: ReadonlyArray<CelFunc> = [
  celMethod("isSorted", LIST, [], BOOL, function() {
    const xs = items(this)
    return xs.every((x, i) => i === 0 || compare(xs[i - 1], x) <= 0)
  }),
  celMethod("sum", LIST, [], DYN, function() {
    const xs = items(this)
    if (xs.length === 0) return 0n
    if (xs.every((x) => typeof x === "bigint")) return xs.reduce((a: bigint, b) => a + (b as bigint), 0n)
    if (xs.every((x) => typeof x === "number")) return xs.reduce((a: number, b) => a + (b as number), 0)
    return noOverload("sum")
  }),
  celMethod("min", LIST, [], DYN, function() {
    const xs = items(this)
    if (xs.length === 0) throw new Error("min called on empty list")
    return xs.reduce((a, b) => compare(b, a) < 0 ? b : a) as never
  }),
  celMethod("max", LIST, [], DYN, function() {
    const xs = items(this)
    if (xs.length === 0) throw new Error("max called on empty list")
    return xs.reduce((a, b) => compare(b, a) > 0 ? b : a) as never
  }),
  celMethod("indexOf", LIST, [DYN], INT, function(x) {
    return BigInt(items(this).findIndex((y) => same(y, x)))
  }),
  celMethod("lastIndexOf", LIST, [DYN], INT, function(x) {
    return BigInt(items(this).findLastIndex((y) => same(y, x)))
  }),
  celFunc("sets.contains", [LIST, LIST], BOOL, (a, b) => items(b).every((x) => items(a).some((y) => same(x, y)))),
  celFunc("sets.equivalent", [LIST, LIST], BOOL, (a, b) =>
    items(b).every((x) => items(a).some((y) => same(x, y))) && items(a).every((x) => items(b).some((y) => same(x, y)))),
  celFunc("sets.intersects", [LIST, LIST], BOOL, (a, b) => items(a).some((x) => items(b).some((y) => same(x, y))))
]

// ---------------------------------------------------------------------------------------------
// Regex
// ---------------------------------------------------------------------------------------------

const regex = (pattern: string) => {
  try {
    return new RegExp(pattern, "gu")
  } catch (e) {
    throw new Error(`error parsing regexp: ${(e as Error).message}`)
  }
}

const regexes: ReadonlyArray<CelFunc> = [
  celMethod("find", STRING, [STRING], STRING, function(pattern) {
    return regex(pattern).exec(this)?.[0] ?? ""
  }),
  celMethod("findAll", STRING, [STRING], listType(STRING), function(pattern) {
    return celList(Array.from(this.matchAll(regex(pattern)), (m) => m[0]))
  }),
  celMethod("findAll", STRING, [STRING, INT], listType(STRING), function(pattern, limit) {
    const all = Array.from(this.matchAll(regex(pattern)), (m) => m[0])
    return celList(limit < 0n ? all : all.slice(0, Number(limit)))
  })
]

// ---------------------------------------------------------------------------------------------
// URLs
// ---------------------------------------------------------------------------------------------

const parseUrl = (text: string): URL | undefined => {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(text) && !text.startsWith("/")) return undefined
  try {
    return new URL(text, text.startsWith("/") ? "relative:/" : undefined)
  } catch {
    return undefined
  }
}

const urlOf = (target: unknown, name: string) => unwrap<{ readonly text: string; readonly url: URL }>("url", target, name)

const urls: ReadonlyArray<CelFunc> = [
  celFunc("url", [STRING], OPAQUE, (text) => {
    const url = parseUrl(text)
    if (url === undefined) throw new Error(`URL parse error during conversion from string: parse "${text}": invalid URI for request`)
    return wrap("url", text, { text, url })
  }),
  celFunc("isURL", [STRING], BOOL, (text) => parseUrl(text) !== undefined),
  celMethod("getScheme", OPAQUE, [], STRING, function() {
    const { url } = urlOf(this, "getScheme")
    return url.protocol === "relative:" ? "" : url.protocol.slice(0, -1)
  }),
  celMethod("getHost", OPAQUE, [], STRING, function() {
    return urlOf(this, "getHost").url.host
  }),
  celMethod("getHostname", OPAQUE, [], STRING, function() {
    return urlOf(this, "getHostname").url.hostname.replace(/^\[(.*)\]$/, "$1")
  }),
  celMethod("getPort", OPAQUE, [], STRING, function() {
    return urlOf(this, "getPort").url.port
  }),
  celMethod("getEscapedPath", OPAQUE, [], STRING, function() {
    return urlOf(this, "getEscapedPath").url.pathname
  }),
  celMethod("getQuery", OPAQUE, [], mapType(STRING, listType(STRING)), function() {
    const query = new Map<string, Array<string>>()
    for (const [k, v] of urlOf(this, "getQuery").url.searchParams) query.set(k, [...(query.get(k) ?? []), v])
    return celMap(new Map(Array.from(query, ([k, vs]) => [k, celList(vs)])))
  })
]

// ---------------------------------------------------------------------------------------------
// Quantities
// ---------------------------------------------------------------------------------------------

const quantityOf = (target: unknown, name: string) => unwrap<string>("quantity", target, name)

const makeQuantity = (text: string) => {
  const error = Quantity.parseError(text)
  if (error !== undefined) throw new Error(error)
  return wrap("quantity", QuantityMath.canonical(text), text)
}

const compareQuantities = (a: unknown, b: unknown, name: string) =>
  QuantityMath.compare(quantityOf(a, name), quantityOf(b, name)) ?? noOverload(name)

const quantities: ReadonlyArray<CelFunc> = [
  celFunc("quantity", [STRING], OPAQUE, makeQuantity),
  celFunc("isQuantity", [STRING], BOOL, (text) => Quantity.parseError(text) === undefined),
  celMethod("isLessThan", OPAQUE, [OPAQUE], BOOL, function(other) {
    return compareQuantities(this, other, "isLessThan") < 0
  }),
  celMethod("isGreaterThan", OPAQUE, [OPAQUE], BOOL, function(other) {
    return compareQuantities(this, other, "isGreaterThan") > 0
  }),
  celMethod("compareTo", OPAQUE, [OPAQUE], INT, function(other) {
    return BigInt(compareQuantities(this, other, "compareTo"))
  }),
  celMethod("sign", OPAQUE, [], INT, function() {
    return BigInt(QuantityMath.sign(quantityOf(this, "sign")) ?? 0)
  }),
  celMethod("asApproximateFloat", OPAQUE, [], DOUBLE, function() {
    return QuantityMath.toNumber(quantityOf(this, "asApproximateFloat"))
  }),
  celMethod("isInteger", OPAQUE, [], BOOL, function() {
    const n = QuantityMath.toNumber(quantityOf(this, "isInteger"))
    return Number.isInteger(n) && Math.abs(n) < 2 ** 63
  }),
  celMethod("asInteger", OPAQUE, [], INT, function() {
    const n = QuantityMath.toNumber(quantityOf(this, "asInteger"))
    if (!Number.isInteger(n) || Math.abs(n) >= 2 ** 63) throw new Error("cannot convert value to integer")
    return BigInt(n)
  })
]

// ---------------------------------------------------------------------------------------------
// IPs and CIDRs
// ---------------------------------------------------------------------------------------------

const ipOf = (target: unknown, name: string) => unwrap<string>("ip", target, name)

const makeIp = (text: string) => {
  if (isIP(text) === 0 || text.includes("%")) throw new Error(`IP Address ${JSON.stringify(text)} parse error during conversion from string: ParseAddr(${JSON.stringify(text)}): unable to parse IP`)
  return wrap("ip", text, text)
}

const ipv4Bits = (ip: string) => ip.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n)

const ipv6Bits = (ip: string): bigint => {
  const [head = "", tail] = ip.split("::")
  const groups = (s: string) => s === "" ? [] : s.split(":").flatMap((g) => g.includes(".") ? [(Number(ipv4Bits(g)) >>> 16).toString(16), (Number(ipv4Bits(g)) & 0xffff).toString(16)] : [g])
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  const all = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
  return all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n)
}

const bitsOf = (ip: string) => isIP(ip) === 4 ? { bits: ipv4Bits(ip), width: 32 } : { bits: ipv6Bits(ip), width: 128 }

const cidrOf = (target: unknown, name: string) => unwrap<{ readonly ip: string; readonly prefix: number }>("cidr", target, name)

const makeCidr = (text: string) => {
  const [ip = "", prefix, extra] = text.split("/")
  const width = isIP(ip) === 4 ? 32 : 128
  if (extra !== undefined || prefix === undefined || !/^\d+$/.test(prefix) || isIP(ip) === 0 || Number(prefix) > width) {
    throw new Error(`network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(text)}): bad prefix`)
  }
  return wrap("cidr", text, { ip, prefix: Number(prefix) })
}

const contains = (cidr: { readonly ip: string; readonly prefix: number }, ip: string) => {
  const net = bitsOf(cidr.ip)
  const other = bitsOf(ip)
  if (net.width !== other.width) return false
  const shift = BigInt(net.width - cidr.prefix)
  return net.bits >> shift === other.bits >> shift
}

const ips: ReadonlyArray<CelFunc> = [
  celFunc("ip", [STRING], OPAQUE, makeIp),
  celFunc("isIP", [STRING], BOOL, (text) => isIP(text) !== 0 && !text.includes("%")),
  celFunc("ip.isCanonical", [STRING], BOOL, (text) => {
    makeIp(text)
    // node:net accepts no leading zeros in IPv4; IPv6 is canonical as the URL serializer writes it (RFC 5952).
    return isIP(text) === 4 || new URL(`http://[${text}]`).hostname === `[${text}]`
  }),
  celMethod("family", OPAQUE, [], INT, function() {
    return BigInt(isIP(ipOf(this, "family")))
  }),
  celMethod("isUnspecified", OPAQUE, [], BOOL, function() {
    return bitsOf(ipOf(this, "isUnspecified")).bits === 0n
  }),
  celMethod("isLoopback", OPAQUE, [], BOOL, function() {
    const ip = ipOf(this, "isLoopback")
    return isIP(ip) === 4 ? ip.startsWith("127.") : bitsOf(ip).bits === 1n
  }),
  celMethod("isGlobalUnicast", OPAQUE, [], BOOL, function() {
    const ip = ipOf(this, "isGlobalUnicast")
    const { bits, width } = bitsOf(ip)
    if (width === 32) return bits !== 0n && bits !== 0xffffffffn && !ip.startsWith("127.") && !ip.startsWith("169.254.") && (bits >> 28n) !== 0xen
    return bits !== 0n && bits !== 1n && (bits >> 118n) !== 0x3fan && (bits >> 120n) !== 0xffn
  }),
  celFunc("cidr", [STRING], OPAQUE, makeCidr),
  celFunc("isCIDR", [STRING], BOOL, (text) => {
    try {
      makeCidr(text)
      return true
    } catch {
      return false
    }
  }),
  celMethod("containsIP", OPAQUE, [STRING], BOOL, function(ip) {
    return contains(cidrOf(this, "containsIP"), ipOf(makeIp(ip), "containsIP"))
  }),
  celMethod("containsIP", OPAQUE, [OPAQUE], BOOL, function(ip) {
    return contains(cidrOf(this, "containsIP"), ipOf(ip, "containsIP"))
  }),
  celMethod("containsCIDR", OPAQUE, [STRING], BOOL, function(other) {
    const inner = cidrOf(makeCidr(other), "containsCIDR")
    const outer = cidrOf(this, "containsCIDR")
    return inner.prefix >= outer.prefix && contains(outer, inner.ip)
  }),
  celMethod("containsCIDR", OPAQUE, [OPAQUE], BOOL, function(other) {
    const inner = cidrOf(other, "containsCIDR")
    const outer = cidrOf(this, "containsCIDR")
    return inner.prefix >= outer.prefix && contains(outer, inner.ip)
  }),
  celMethod("prefixLength", OPAQUE, [], INT, function() {
    return BigInt(cidrOf(this, "prefixLength").prefix)
  }),
  celMethod("ip", OPAQUE, [], OPAQUE, function() {
    return makeIp(cidrOf(this, "ip").ip)
  })
]

// ---------------------------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------------------------

const formatRules: Readonly<Record<string, (value: string) => ReadonlyArray<string>>> = {
  dns1123Label: NameRules.dns1123Label,
  dns1123Subdomain: NameRules.dns1123Subdomain,
  dns1035Label: NameRules.dns1035Label,
  qualifiedName: NameRules.qualifiedName,
  labelValue: NameRules.labelValue,
  dns1123LabelPrefix: (v) => NameRules.dns1123Label(v.endsWith("-") ? v.slice(0, -1) : v),
  dns1123SubdomainPrefix: (v) => NameRules.dns1123Subdomain(v.endsWith("-") ? v.slice(0, -1) : v),
  dns1035LabelPrefix: (v) => NameRules.dns1035Label(v.endsWith("-") ? v.slice(0, -1) : v),
  uri: (v) => parseUrl(v) === undefined ? ["invalid URI"] : [],
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v) ? [] : ["does not match the UUID format"],
  byte: (v) => /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0 ? [] : ["invalid base64"],
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)) ? [] : ["invalid date"],
  datetime: (v) => !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}T/.test(v) ? [] : ["invalid datetime"]
}

const formats: ReadonlyArray<CelFunc> = [
  ...Object.keys(formatRules).map((name) => celFunc(`format.${name}`, [], OPAQUE, () => wrap("format", name, name))),
  celFunc("format.named", [STRING], OPAQUE, (name) => optional(name in formatRules ? wrap("format", name, name) : undefined)),
  celMethod("validate", OPAQUE, [STRING], OPAQUE, function(value) {
    const errors = formatRules[unwrap<string>("format", this, "validate")]!(value)
    return optional(errors.length === 0 ? undefined : celList([...errors]))
  })
]

/**
 * Every function CRD rules may call in 1.32 besides the standard ones.
 *
 * @example
 * import { celEnv, parse, plan } from "@bufbuild/cel"
 * import * as CelLibrary from "./CelLibrary.ts"
 * plan(celEnv({ funcs: [...CelLibrary.functions] }), parse("[1, 2].sum() == 3"))() // true
 */
export const functions: ReadonlyArray<CelFunc> = [
  ...strings,
  ...optionals,
  ...lists,
  ...regexes,
  ...urls,
  ...quantities,
  ...ips,
  ...formats
]
