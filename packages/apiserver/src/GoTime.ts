/**
 * Go's `time.Parse` with the two layouts Kubernetes timestamps use, for its error messages:
 * metav1.Time decodes with RFC3339 (`2006-01-02T15:04:05Z07:00`), metav1.MicroTime with
 * RFC3339Micro (`2006-01-02T15:04:05.000000Z07:00`, exactly six fractional digits), and a write
 * whose timestamp does not parse is refused with Go's own wording, e.g.
 * `parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"`.
 */

export type Layout = "RFC3339" | "RFC3339Micro"

const layouts: Readonly<Record<Layout, string>> = {
  RFC3339: "2006-01-02T15:04:05Z07:00",
  RFC3339Micro: "2006-01-02T15:04:05.000000Z07:00"
}

// Each layout as Go's nextStdChunk splits it: a literal prefix, then a standard element.
const chunks: Readonly<Record<Layout, ReadonlyArray<readonly [prefix: string, element: string]>>> = {
  RFC3339: [["", "2006"], ["-", "01"], ["-", "02"], ["T", "15"], [":", "04"], [":", "05"], ["", "Z07:00"]],
  RFC3339Micro: [["", "2006"], ["-", "01"], ["-", "02"], ["T", "15"], [":", "04"], [":", "05"], ["", ".000000"], [
    "",
    "Z07:00"
  ]]
}

/** Go's time-package quoting: `"` and `\` escaped, bytes outside printable ASCII as `\xNN`. */
const quote = (s: string): string => {
  let out = "\""
  for (const c of s) {
    const code = c.codePointAt(0)!
    if (code < 0x20 || code >= 0x80) {
      for (const b of new TextEncoder().encode(c)) out += `\\x${b.toString(16).padStart(2, "0")}`
    } else out += c === "\"" || c === "\\" ? `\\${c}` : c
  }
  return `${out}"`
}

const isDigit = (s: string, i: number) => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57

/** Go's getnum: one or two digits (exactly two when `fixed`). */
const getnum = (s: string, fixed: boolean): { readonly n: number; readonly rest: string } | undefined => {
  if (!isDigit(s, 0)) return undefined
  if (!isDigit(s, 1)) return fixed ? undefined : { n: Number(s[0]), rest: s.slice(1) }
  return { n: Number(s.slice(0, 2)), rest: s.slice(2) }
}

const daysIn = (month: number, year: number): number => {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 31
}

interface Parsed {
  readonly rest: string
  readonly range?: string
  readonly value?: number
}

/** One standard element: the rest of the value, a range error, or undefined when it does not parse. */
const element = (std: string, value: string, next: string | undefined): Parsed | undefined => {
  switch (std) {
    case "2006":
      return value.length >= 4 && /^\d{4}$/.test(value.slice(0, 4))
        ? { rest: value.slice(4), value: Number(value.slice(0, 4)) }
        : undefined
    case "01":
    case "02":
    case "15":
    case "04": {
      const got = getnum(value, std !== "15")
      if (got === undefined) return undefined
      const max = { "01": 12, "02": 31, "15": 23, "04": 59 }[std]
      const name = { "01": "month", "02": "", "15": "hour", "04": "minute" }[std]
      const low = std === "01" ? 1 : 0
      return name !== "" && (got.n < low || got.n > max) ? { rest: got.rest, range: name } : { rest: got.rest, value: got.n }
    }
    case "05": {
      const got = getnum(value, true)
      if (got === undefined) return undefined
      if (got.n >= 60) return { rest: got.rest, range: "second" }
      // A fraction the layout does not have is still accepted (Go's special case).
      if (next !== ".000000" && /^[.,]\d/.test(got.rest)) {
        return { rest: got.rest.replace(/^[.,]\d+/, ""), value: got.n }
      }
      return { rest: got.rest, value: got.n }
    }
    case ".000000":
      return /^[.,]\d{6}/.test(value) ? { rest: value.slice(7) } : undefined
    case "Z07:00":
      return zone(value)
  }
  return undefined
}

const zone = (value: string): Parsed | undefined => {
  if (value.startsWith("Z")) return { rest: value.slice(1) }
  if (value.length < 6 || value[3] !== ":") return undefined
  const hour = getnum(value.slice(1, 3), true)
  const minute = getnum(value.slice(4, 6), true)
  if (hour === undefined || minute === undefined || (value[0] !== "+" && value[0] !== "-")) return undefined
  if (hour.n > 24) return { rest: value.slice(6), range: "time zone offset hour" }
  if (minute.n > 60) return { rest: value.slice(6), range: "time zone offset minute" }
  return { rest: value.slice(6) }
}

/**
 * The error Go's `time.Parse` gives for `value` in `layout`, or undefined when it parses.
 *
 * @example
 * import * as GoTime from "./GoTime.ts"
 * GoTime.parseError("RFC3339", "2024-05-01T10:00:00Z") // undefined
 * GoTime.parseError("RFC3339Micro", "2024-05-01T10:00:00Z")
 * // 'parsing time "2024-05-01T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'
 */
export const parseError = (layout: Layout, value: string): string | undefined => {
  const cannot = (valueElem: string, layoutElem: string) =>
    `parsing time ${quote(value)} as ${quote(layouts[layout])}: cannot parse ${quote(valueElem)} as ${quote(layoutElem)}`
  const steps = chunks[layout]
  const numbers: Record<string, number> = {}
  let rest = value
  for (let i = 0; i < steps.length; i++) {
    const [prefix, std] = steps[i]!
    if (prefix !== "") {
      if (!rest.startsWith(prefix)) return cannot(rest, prefix)
      rest = rest.slice(prefix.length)
    }
    const parsed = element(std, rest, steps[i + 1]?.[1])
    if (parsed === undefined) return cannot(rest, std)
    if (parsed.range !== undefined) return `parsing time ${quote(value)}: ${parsed.range} out of range`
    if (parsed.value !== undefined) numbers[std] = parsed.value
    rest = parsed.rest
  }
  if (rest.length > 0) return `parsing time ${quote(value)}: extra text: ${quote(rest)}`
  const day = numbers["02"] ?? 0
  if (day < 1 || day > daysIn(numbers["01"] ?? 1, numbers["2006"] ?? 0)) {
    return `parsing time ${quote(value)}: day out of range`
  }
  return undefined
}
