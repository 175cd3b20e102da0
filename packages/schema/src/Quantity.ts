/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `2`, `1e3`) as apimachinery's `ParseQuantity`
 * reads them, for its error messages: a write whose quantity does not parse is refused with
 * `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`
 * or `unable to parse quantity's suffix`.
 */

/** apimachinery's ErrFormatWrong. */
export const formatWrong = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/** apimachinery's ErrSuffix. */
export const suffixWrong = "unable to parse quantity's suffix"

const suffixes = new Set(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"])

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9"

/** The suffix of a quantity (after sign, digits and fraction), or undefined when its form is wrong. */
const suffixOf = (s: string): string | undefined => {
  let pos = s[0] === "-" || s[0] === "+" ? 1 : 0
  while (isDigit(s[pos])) pos++
  if (pos >= s.length) return ""
  if (s[pos] === ".") {
    pos++
    while (isDigit(s[pos])) pos++
    if (pos >= s.length) return ""
  }
  const start = pos
  while (pos < s.length && "eEinumkKMGTP".includes(s[pos]!)) pos++
  if (pos >= s.length) return s.slice(start)
  if (s[pos] === "-" || s[pos] === "+") pos++
  while (pos < s.length && isDigit(s[pos])) pos++
  return pos >= s.length ? s.slice(start) : undefined
}

/**
 * The error `ParseQuantity` gives for `text` (already stripped of JSON quotes), or undefined
 * when it is a quantity.
 *
 * @example
 * import * as Quantity from "./Quantity.ts"
 * Quantity.parseError("500m") // undefined
 * Quantity.parseError("1x") // "quantities must match the regular expression ..."
 * Quantity.parseError("1kk") // "unable to parse quantity's suffix"
 */
export const parseError = (text: string): string | undefined => {
  const s = text.trim()
  if (s === "") return formatWrong
  const suffix = suffixOf(s)
  if (suffix === undefined) return formatWrong
  if (suffixes.has(suffix)) return undefined
  // A decimal exponent: "e3", "E-2".
  return /^[eE][-+]?\d+$/.test(suffix) && suffix.length > 1 ? undefined : suffixWrong
}
