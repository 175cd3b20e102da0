/**
 * The string formats kube-apiserver validates in custom resources (others, int32/int64/float/double
 * included, are accepted as any string).
 */
import { isIP } from "node:net"

const hostnamePattern =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$/u

const isHostname = (s: string): boolean =>
  hostnamePattern.test(s) && s.length <= 255 && s.split(".").every((p) => p.length <= 63)

const digitsOf = (s: string): ReadonlyArray<number> => [...s].map((c) => (c === "X" ? 10 : Number(c)))

const isIsbn10 = (s: string): boolean => {
  const clean = s.replace(/[\s-]/g, "")
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(clean)) return false
  return digitsOf(clean).reduce((sum, d, i) => sum + (i + 1) * d, 0) % 11 === 0
}

const isIsbn13 = (s: string): boolean => {
  const clean = s.replace(/[\s-]/g, "")
  if (!/^[0-9]{13}$/.test(clean)) return false
  const d = digitsOf(clean)
  const sum = d.slice(0, 12).reduce((acc, x, i) => acc + (i % 2 === 0 ? x : 3 * x), 0)
  return d[12] === (10 - (sum % 10)) % 10
}

const cardPattern =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/

const isCreditCard = (s: string): boolean => {
  const clean = s.replace(/[^0-9]+/g, "")
  if (!cardPattern.test(clean)) return false
  const sum = [...clean].reverse().reduce((acc, c, i) => {
    const d = Number(c) * (i % 2 === 1 ? 2 : 1)
    return acc + (d > 9 ? d - 9 : d)
  }, 0)
  return sum % 10 === 0
}

const octet = "(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])"
const rgbPattern = new RegExp(`^rgb\\(\\s*${octet}\\s*,\\s*${octet}\\s*,\\s*${octet}\\s*\\)$`)

const isCidr = (s: string): boolean => {
  const [ip = "", bits, ...rest] = s.split("/")
  const family = isIP(ip)
  if (family === 0 || bits === undefined || rest.length > 0 || !/^\d+$/.test(bits)) return false
  return Number(bits) <= (family === 4 ? 32 : 128)
}

const macPattern =
  /^(?:[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){5}|[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){7}|[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){19}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){3}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){9})$/

const isMac = (s: string): boolean => {
  if (!macPattern.test(s)) return false
  const separators = new Set(s.replace(/[0-9a-fA-F]/g, ""))
  return separators.size <= 1
}

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
}

const isDateTime = (s: string): boolean => {
  if (s === "") return true
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))?$/.exec(s)
  if (m === null || !isDate(m[1] ?? "")) return false
  const hour = Number(m[2])
  const minute = Number(m[3])
  const second = Number(m[4])
  const zoneOk = m[7] === undefined || (Number(m[7]) < 24 && Number(m[8]) < 60)
  return hour < 24 && minute < 60 && second < 60 && zoneOk
}

const goDuration = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/
const durationUnits: ReadonlyArray<ReadonlyArray<string>> = [
  ["ns", "nano"],
  ["us", "µs", "micro"],
  ["ms", "milli"],
  ["s", "sec"],
  ["m", "min"],
  ["h", "hr", "hour"],
  ["d", "day"],
  ["w", "wk", "week"]
]

const isDuration = (s: string): boolean => {
  if (s === "0" || goDuration.test(s)) return true
  return [...s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)].some(([, , rawUnit = ""]) => {
    const unit = rawUnit.toLowerCase()
    return durationUnits.some((variants) =>
      variants.some((v, i) => v === unit || (i === variants.length - 1 && unit.startsWith(v)))
    )
  })
}

const formatChecks: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: (s) => !/[\x00-\x1f\x7f]/.test(s) && (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) || s.startsWith("/")),
  email: (s) => /^(?:[^<>@\s]+@[^<>@\s]+|[^<>]*<[^<>@\s]+@[^<>@\s]+>)$/.test(s),
  hostname: isHostname,
  ipv4: (s) => isIP(s) !== 0 && s.includes("."),
  ipv6: (s) => isIP(s) === 6,
  cidr: isCidr,
  mac: isMac,
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid3: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid4: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  uuid5: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  isbn: (s) => isIsbn10(s) || isIsbn13(s),
  isbn10: isIsbn10,
  isbn13: isIsbn13,
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => rgbPattern.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime
}

/**
 * True when kube-apiserver validates this `format` (go-openapi's name normalisation drops `-`).
 *
 * @example
 * import * as SchemaFormats from "./SchemaFormats.ts"
 * SchemaFormats.knownFormat("date-time") // true
 * SchemaFormats.knownFormat("int32") // false
 */
export const knownFormat = (format: string | undefined): boolean =>
  format !== undefined && format !== "" && Object.hasOwn(formatChecks, format.replaceAll("-", ""))

/**
 * Whether `value` is of `format`; undefined for a format kube-apiserver does not validate.
 *
 * @example
 * import * as SchemaFormats from "./SchemaFormats.ts"
 * SchemaFormats.matches("date", "2026-02-30") // false
 */
export const matches = (format: string, value: string): boolean | undefined => formatChecks[format.replaceAll("-", "")]?.(value)
