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

/** A parsed schedule: a constant delay (`@every`), or the minutes, hours, days, months and weekdays it fires at. */
export type Schedule =
  | { readonly every: number }
  | {
    readonly fields: ReadonlyArray<ReadonlySet<number>>
    /** Whether the day-of-month and day-of-week fields were `*` (then both must match; otherwise either). */
    readonly domStar: boolean
    readonly dowStar: boolean
  }

const descriptorFields: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
}

const units: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

// One part of a field as values, and whether it is a bare `*` (a step over 1 makes it not).
const values = (expr: string, bounds: Bounds): { readonly values: ReadonlyArray<number>; readonly star: boolean } => {
  const [rangeAndStep, stepText] = expr.split("/")
  const [low, high] = rangeAndStep!.split("-")
  const star = low === "*" || low === "?"
  const start = star ? bounds.min : Number(intOrName(low!, bounds))
  const end = star ? bounds.max : high !== undefined ? Number(intOrName(high, bounds)) : stepText === undefined ? start : bounds.max
  const step = stepText === undefined ? 1 : Number(stepText)
  const out: Array<number> = []
  for (let v = start; v <= end; v += step) out.push(v)
  return { values: out, star: star && step <= 1 }
}

/**
 * A schedule parsed as robfig/cron's standard parser reads it, or undefined when it does not parse
 * (see {@link parseError}).
 *
 * @example
 * import * as Cron from "./Cron.ts"
 * Cron.parse("@every 1m30s") // { every: 90000 }
 */
export const parse = (schedule: string): Schedule | undefined => {
  if (parseError(schedule) !== undefined) return undefined
  const spec = schedule.trim()
  if (spec.startsWith("@every ")) {
    let ms = 0
    for (const [, amount, unit] of spec.slice("@every ".length).trim().matchAll(/([0-9]*(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(amount) * units[unit!]!
    // robfig/cron: at least a second, in whole seconds.
    return { every: Math.max(1000, Math.floor(ms / 1000) * 1000) }
  }
  const parts = (descriptorFields[spec] ?? spec).split(/\s+/)
  const parsed = parts.map((part, i) => part.split(",").map((expr) => values(expr, fields[i]!)))
  return {
    fields: parsed.map((field) => new Set(field.flatMap((p) => p.values))),
    domStar: parsed[2]!.some((p) => p.star),
    dowStar: parsed[4]!.some((p) => p.star)
  }
}

// The wall-clock fields of an instant in a time zone (UTC when none is named).
const wallClock = (zone: string | undefined) => {
  if (zone === undefined || zone === "" || zone === "UTC" || zone === "Etc/UTC") {
    return (ms: number) => {
      const d = new Date(ms)
      return { month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), weekday: d.getUTCDay() }
    }
  }
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    weekday: "short"
  })
  const weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  return (ms: number) => {
    const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]))
    return { month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour), minute: Number(parts.minute), weekday: weekdays.indexOf(parts.weekday ?? "") }
  }
}

/**
 * The first time the schedule fires after `after` (milliseconds since the epoch), in `timeZone`'s
 * wall clock (UTC when none is named), as robfig/cron's `Next` finds it; undefined when it never
 * fires within five years (`0 0 30 2 *`).
 *
 * @example
 * import * as Cron from "./Cron.ts"
 * new Date(Cron.next(Cron.parse("30 * * * *")!, Date.parse("2026-01-01T10:45:00Z"))!).toISOString() // "2026-01-01T11:30:00.000Z"
 */
export const next = (schedule: Schedule, after: number, timeZone?: string): number | undefined => {
  if ("every" in schedule) return Math.floor(after / 1000) * 1000 + schedule.every
  const [minutes, hours, days, months, weekdays] = schedule.fields as [ReadonlySet<number>, ReadonlySet<number>, ReadonlySet<number>, ReadonlySet<number>, ReadonlySet<number>]
  const local = wallClock(timeZone)
  const minute = 60_000
  let t = Math.floor(after / minute) * minute + minute
  for (let i = 0; i < 20_000; i++) {
    const f = local(t)
    const dayMatches = schedule.domStar || schedule.dowStar
      ? days.has(f.day) && weekdays.has(f.weekday)
      : days.has(f.day) || weekdays.has(f.weekday)
    if (!months.has(f.month) || !dayMatches) t += (1440 - (f.hour * 60 + f.minute)) * minute
    else if (!hours.has(f.hour)) t += (60 - f.minute) * minute
    else if (!minutes.has(f.minute)) t += minute
    else return t
  }
  return undefined
}
