/**
 * The small formats 1.32's printers share: ages, label maps and selectors as apimachinery writes
 * them, container names and images side by side, access modes, "+ N more..." lists.
 */
import * as Table from "./Table.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

/** A string field as Go reads it: absent is "". */
export const str = (u: unknown): string => (u === undefined || u === null ? "" : String(u))

/** An integer field as Go reads it: absent is 0. */
export const int = (u: unknown): number => (typeof u === "number" ? u : 0)

/**
 * The time since `timestamp` as kubectl shows ages, or "<unknown>" when there is none.
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.since(undefined) // "<unknown>"
 */
export const since = (timestamp: unknown, now: number = Date.now()): string => {
  const at = Date.parse(str(timestamp))
  return Number.isNaN(at) ? "<unknown>" : Table.humanDuration(now - at)
}

/**
 * An object's AGE cell.
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.age({ metadata: {} }) // "<unknown>"
 */
export const age = (object: Json): string => since(KubeObject.meta(object).creationTimestamp)

/**
 * A label map as `labels.FormatLabels` writes it: sorted `k=v` pairs, or "<none>".
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.labels({ tier: "web", app: "x" }) // "app=x,tier=web"
 */
export const labels = (map: unknown): string => {
  const pairs = Object.entries(KubeObject.record(map)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${str(v)}`)
  return pairs.length === 0 ? "<none>" : pairs.join(",")
}

const requirement = (key: string, operator: unknown, values: ReadonlyArray<string>): string => {
  const sorted = values.length > 1 ? [...values].sort() : values
  switch (operator) {
    case "In":
      return `${key} in (${sorted.join(",")})`
    case "NotIn":
      return `${key} notin (${sorted.join(",")})`
    case "Exists":
      return key
    case "DoesNotExist":
      return `!${key}`
    default:
      return `${key}=${sorted.join(",")}`
  }
}

/**
 * A LabelSelector as a selector string: requirements sorted by key, set values sorted; "" for a
 * missing or empty selector.
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.selector({ matchLabels: { app: "web" }, matchExpressions: [{ key: "env", operator: "In", values: ["prod", "dev"] }] })
 * // "app=web,env in (dev,prod)"
 */
export const selector = (labelSelector: unknown): string => {
  const s = KubeObject.record(labelSelector)
  const fromLabels = Object.entries(KubeObject.record(s.matchLabels)).map(([k, v]) => ({ key: k, text: `${k}=${str(v)}` }))
  const fromExpressions = KubeObject.records(s.matchExpressions).map((e) => ({
    key: str(e.key),
    text: requirement(str(e.key), e.operator, Array.isArray(e.values) ? e.values.map(str) : [])
  }))
  return [...fromLabels, ...fromExpressions].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((r) => r.text).join(",")
}

/**
 * A LabelSelector as `metav1.FormatLabelSelector` writes it: the selector string, or "<none>".
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.formatSelector(undefined) // "<none>"
 */
export const formatSelector = (labelSelector: unknown): string => {
  const text = selector(labelSelector)
  return text === "" ? "<none>" : text
}

/**
 * The CONTAINERS and IMAGES cells of a pod spec: names and images, comma-separated.
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.containers({ containers: [{ name: "a", image: "x" }, { name: "b", image: "y" }] }) // ["a,b", "x,y"]
 */
export const containers = (podSpec: unknown): readonly [string, string] => {
  const all = KubeObject.records(KubeObject.record(podSpec).containers)
  return [all.map((c) => str(c.name)).join(","), all.map((c) => str(c.image)).join(",")]
}

const accessModeOrder: ReadonlyArray<readonly [string, string]> = [
  ["ReadWriteOnce", "RWO"],
  ["ReadOnlyMany", "ROX"],
  ["ReadWriteMany", "RWX"],
  ["ReadWriteOncePod", "RWOP"]
]

/**
 * Access modes as `GetAccessModesAsString` writes them: each once, in a fixed order.
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.accessModes(["ReadWriteMany", "ReadWriteOnce"]) // "RWO,RWX"
 */
export const accessModes = (modes: unknown): string => {
  const given = Array.isArray(modes) ? modes.map(str) : []
  return accessModeOrder.filter(([mode]) => given.includes(mode)).map(([, short]) => short).join(",")
}

/**
 * The first `max` items and "+ N more..." for the rest; `empty` when there are none.
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.withMore(["a", "b", "c", "d"], 3, "<unset>") // "a,b,c + 1 more..."
 */
export const withMore = (items: ReadonlyArray<string>, max: number, empty: string): string => {
  const shown = items.slice(0, max).join(",")
  if (items.length > max) return `${shown} + ${items.length - max} more...`
  return shown === "" ? empty : shown
}

/**
 * An IP and port joined as Go's `net.JoinHostPort` does (brackets around IPv6 addresses).
 *
 * @example
 * import * as PrinterFormats from "./PrinterFormats.ts"
 * PrinterFormats.hostPort("fd00::1", 80) // "[fd00::1]:80"
 */
export const hostPort = (host: string, port: unknown): string => (host.includes(":") ? `[${host}]:${str(port)}` : `${host}:${str(port)}`)
