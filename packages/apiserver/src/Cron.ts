/**
 * CronJob schedules as 1.32 reads them (robfig/cron's standard parser): five fields (minute,
 * hour, day of month, month, day of week) with lists, ranges, steps and names, or a descriptor
 * (`@hourly`, `@every 1h30m`...). What is wrong is worded as that parser words it.
 */

interface Bounds {
  readonly min: number
  readonly max: number
  readonly names?: Readonly<Record<string, number>>
}

const months = Object.fromEntries(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].map((m, i) => [m, i + 1]))
const days = Object.fromEntries(["sun", "mon", "tue", "wed", "thu", "fri", "sat"].map((d, i) => [d, i]))
const fields: ReadonlyArray<Bounds> = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: months },
  { min: 0, max: 6, names: days }
]
const descriptors = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"])

const atoi = (expr: string): number | string => {
  if (!/^[+-]?\d+$/.test(expr)) return `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`
  const n = Number(expr)
  return n < 0 ? `negative number (${n}) not allowed: ${expr}` : n
}

const intOrName = (expr: string, bounds: Bounds): number | string => bounds.names?.[expr.toLowerCase()] ?? atoi(expr)

/** The error of one comma-separated part of a field, or undefined. */
const range = (expr: string, bounds: Bounds): string | undefined => {
  const [rangeAndStep, step, ...extraSlash] = expr.split("/")
  if (extraSlash.length > 0) return `too many slashes: ${expr}`
  const [low, high, ...extraHyphen] = rangeAndStep!.split("-")
  if (extraHyphen.length > 0) return `too many hyphens: ${expr}`
  let start: number
  let end: number
  if (low === "*" || low === "?") {
    start = bounds.min
    end = bounds.max
  } else {
    const s = intOrName(low!, bounds)
    if (typeof s === "string") return s
    start = s
    if (high === undefined) end = step === undefined ? s : bounds.max
    else {
      const e = intOrName(high, bounds)
      if (typeof e === "string") return e
      end = e
    }
  }
  if (step !== undefined) {
    const n = atoi(step)
    if (typeof n === "string") return n
    if (n <= 0) return `step of range should be a positive number: ${expr}`
  }
  if (start < bounds.min) return `beginning of range (${start}) below minimum (${bounds.min}): ${expr}`
  if (end > bounds.max) return `end of range (${end}) above maximum (${bounds.max}): ${expr}`
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`
  return undefined
}

const durationPattern = /^([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$/

/**
 * The parser's error for `schedule`, or undefined when it is a valid schedule.
 *
 * @example
 * import * as Cron from "./Cron.ts"
 * Cron.parseError("*\/5 * * * *") // undefined
 * Cron.parseError("every day") // "expected exactly 5 fields, found 2: [every day]"
 */
export const parseError = (schedule: string): string | undefined => {
  const spec = schedule.trim()
  if (spec === "") return "empty spec string"
  if (spec.startsWith("@")) {
    if (descriptors.has(spec)) return undefined
    if (spec.startsWith("@every ")) {
      const duration = spec.slice("@every ".length).trim()
      return durationPattern.test(duration) ? undefined : `failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(duration)}`
    }
    return `unrecognized descriptor: ${spec}`
  }
  const parts = spec.split(/\s+/)
  if (parts.length !== 5) return `expected exactly 5 fields, found ${parts.length}: [${parts.join(" ")}]`
  for (let i = 0; i < 5; i++) {
    for (const expr of parts[i]!.split(",")) {
      const error = range(expr, fields[i]!)
      if (error !== undefined) return error
    }
  }
  return undefined
}
