/**
 * Kubernetes quantities as exact numbers, for the comparisons validation makes (a request above
 * its limit, a negative quota, a claim that shrinks). Parsing errors are the decoder's business
 * (a 400 before validation); here an unreadable quantity compares as undefined.
 */

interface Exact {
  readonly numerator: bigint
  readonly denominator: bigint
}

const binary: Readonly<Record<string, bigint>> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n }
const decimal: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 }

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/** The exact value of a quantity (a string or a JSON number), or undefined when it does not parse. */
const exact = (quantity: unknown): Exact | undefined => {
  const text = typeof quantity === "number" ? String(quantity) : typeof quantity === "string" ? quantity.trim() : undefined
  const m = text === undefined ? null : /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/.exec(text)
  if (m === null || (m[2] === "" && (m[3] ?? "") === "")) return undefined
  const [, sign, whole, fraction = "", suffix = ""] = m
  let numerator = BigInt(`${whole}${fraction}` || "0") * (sign === "-" ? -1n : 1n)
  let denominator = pow10(fraction.length)
  const exponent = /^[eE]([-+]?\d+)$/.exec(suffix)
  if (binary[suffix] !== undefined) numerator *= binary[suffix]
  else if (decimal[suffix] !== undefined || exponent !== null) {
    const e = exponent !== null ? Number(exponent[1]) : decimal[suffix]!
    if (e >= 0) numerator *= pow10(e)
    else denominator *= pow10(-e)
  } else return undefined
  return { numerator, denominator }
}

/**
 * -1, 0 or 1 as `a` is below, equal to or above `b`; undefined when either does not parse.
 *
 * @example
 * import * as QuantityMath from "./QuantityMath.ts"
 * QuantityMath.compare("500m", "1") // -1
 * QuantityMath.compare("1Gi", "1024Mi") // 0
 */
export const compare = (a: unknown, b: unknown): number | undefined => {
  const x = exact(a)
  const y = exact(b)
  if (x === undefined || y === undefined) return undefined
  const left = x.numerator * y.denominator
  const right = y.numerator * x.denominator
  return left < right ? -1 : left > right ? 1 : 0
}

/**
 * The sign of a quantity: -1, 0 or 1 (undefined when it does not parse).
 *
 * @example
 * import * as QuantityMath from "./QuantityMath.ts"
 * QuantityMath.sign("-1") // -1
 */
export const sign = (quantity: unknown): number | undefined => compare(quantity, "0")

/**
 * The quantity as the error messages print it (its canonical form for the common spellings).
 *
 * @example
 * import * as QuantityMath from "./QuantityMath.ts"
 * QuantityMath.format(2) // "2"
 * QuantityMath.format("0.5") // "500m"
 */
export const format = (quantity: unknown): string => {
  const text = String(quantity)
  const m = /^(\d*)\.(\d+)$/.exec(text)
  if (m !== null && m[2]!.length <= 3) {
    const milli = Number(m[1] || "0") * 1000 + Number(m[2]!.padEnd(3, "0"))
    return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`
  }
  return text
}

/**
 * The quantity as a JavaScript number (approximate for values a double cannot hold); NaN when it
 * does not parse.
 *
 * @example
 * import * as QuantityMath from "./QuantityMath.ts"
 * QuantityMath.toNumber("1500m") // 1.5
 */
export const toNumber = (quantity: unknown): number => {
  const x = exact(quantity)
  return x === undefined ? Number.NaN : Number(x.numerator) / Number(x.denominator)
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b))

/**
 * One spelling per value: equal quantities ("1Gi", "1024Mi") have the same canonical form.
 *
 * @example
 * import * as QuantityMath from "./QuantityMath.ts"
 * QuantityMath.canonical("1Gi") === QuantityMath.canonical("1024Mi") // true
 */
export const canonical = (quantity: unknown): string => {
  const x = exact(quantity)
  if (x === undefined) return String(quantity)
  const d = gcd(x.numerator, x.denominator) || 1n
  return `${x.numerator / d}/${x.denominator / d}`
}

const decimalSuffixes: Readonly<Record<number, string>> = { [-9]: "n", [-6]: "u", [-3]: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E" }
const binarySuffixes = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

const formatOf = (text: string): "BinarySI" | "DecimalExponent" | "DecimalSI" => {
  const suffix = /^[+-]?[0-9.]*(.*)$/.exec(text)?.[1] ?? ""
  return binary[suffix] !== undefined ? "BinarySI" : /^[eE]/.test(suffix) ? "DecimalExponent" : "DecimalSI"
}

/**
 * The quantity as Go's `resource.Quantity` writes it back after parsing it (its canonical form,
 * which kube-apiserver stores): decimal values with the largest SI suffix that keeps them whole
 * (`0.5` is `500m`, `1000m` is `1`, `1000` is `1k`), binary ones with the largest binary suffix
 * that does (`1024Mi` is `1Gi`, `1.5Gi` is `1536Mi`), exponents kept as exponents (`1e3`); values
 * finer than a nano rounded up to one. The text as given when it does not parse.
 *
 * @example
 * import * as QuantityMath from "./QuantityMath.ts"
 * QuantityMath.goString("0.5") // "500m"
 * QuantityMath.goString("1024Mi") // "1Gi"
 */
export const goString = (quantity: unknown): string => {
  const x = exact(quantity)
  if (x === undefined) return String(quantity)
  return written(x, formatOf(typeof quantity === "number" ? String(quantity) : String(quantity).trim()))
}

/**
 * The sum of quantities as Go's `Quantity.Add` leaves it, written in the first one's format
 * (`500m` and `1` make `1500m`, `128Mi` and `128Mi` make `256Mi`); `0` for none.
 *
 * @example
 * import * as QuantityMath from "./QuantityMath.ts"
 * QuantityMath.sum(["500m", "1"]) // "1500m"
 */
export const sum = (quantities: ReadonlyArray<unknown>): string => {
  let total: Exact = { numerator: 0n, denominator: 1n }
  for (const quantity of quantities) {
    const x = exact(quantity)
    if (x === undefined) continue
    total = { numerator: total.numerator * x.denominator + x.numerator * total.denominator, denominator: total.denominator * x.denominator }
  }
  const first = quantities.find((q) => exact(q) !== undefined)
  return written(total, first === undefined ? "DecimalSI" : formatOf(String(first).trim()))
}

// A value as resource.Quantity writes it in `format`.
const written = (x: Exact, given: "BinarySI" | "DecimalExponent" | "DecimalSI"): string => {
  const negative = x.numerator < 0n
  const magnitude = negative ? -x.numerator : x.numerator
  // In nanos, rounded up (away from zero), as ParseQuantity rounds what it cannot hold.
  let nanos = (magnitude * pow10(9) + x.denominator - 1n) / x.denominator
  if (nanos === 0n) return "0"
  const sign = negative ? "-" : ""
  let format = given
  const whole = nanos % pow10(9) === 0n
  if (format === "BinarySI" && (nanos < 1024n * pow10(9) || !whole)) format = "DecimalSI"
  if (format === "BinarySI") {
    let value = nanos / pow10(9)
    let power = 0
    while (value % 1024n === 0n && power < binarySuffixes.length - 1) {
      value /= 1024n
      power++
    }
    return `${sign}${value}${binarySuffixes[power]}`
  }
  let exponent = -9
  while (nanos % 10n === 0n) {
    nanos /= 10n
    exponent++
  }
  const offset = ((exponent % 3) + 3) % 3
  nanos *= pow10(offset)
  exponent -= offset
  const suffix = format === "DecimalExponent"
    ? (exponent === 0 ? "" : `e${exponent}`)
    : decimalSuffixes[exponent] ?? `e${exponent}`
  return `${sign}${nanos}${suffix}`
}
