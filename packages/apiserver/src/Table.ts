/**
 * `meta.k8s.io/v1` Tables, which kubectl asks for to print `get` output: a Name column, the
 * resource's printer columns (a CRD's additionalPrinterColumns) or Age, and one row per object
 * with its metadata attached.
 */
import * as KubeObject from "./KubeObject.ts"
import type * as Registry from "./Registry.ts"

const nameColumn = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
  priority: 0
}

const ageColumn = {
  name: "Age",
  type: "date",
  format: "",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  priority: 0,
  jsonPath: ".metadata.creationTimestamp"
}

/**
 * The value at a printer column's JSONPath (`.spec.replicas`, `.status.conditions[0].type`,
 * optionally wrapped in `{}`), or undefined.
 *
 * @example
 * import * as Table from "./Table.ts"
 * Table.evaluate({ spec: { ports: [{ port: 80 }] } }, "{.spec.ports[0].port}") // 80
 */
export const evaluate = (object: unknown, jsonPath: string): unknown => {
  const path = jsonPath.trim().replace(/^\{/, "").replace(/\}$/, "")
  const tokens = path.match(/[^.[\]]+|\[\d+\]/g) ?? []
  let current: unknown = object
  for (const token of tokens) {
    if (token.startsWith("[")) {
      const i = Number(token.slice(1, -1))
      current = Array.isArray(current) ? current[i] : undefined
    } else {
      current = KubeObject.isObject(current) ? current[token] : undefined
    }
    if (current === undefined) return undefined
  }
  return current
}

/**
 * A duration the way kubectl prints ages: "45s", "3m20s", "5h", "2d4h", "1y30d".
 *
 * @example
 * import * as Table from "./Table.ts"
 * Table.humanDuration(200_000) // "3m20s"
 */
export const humanDuration = (ms: number): string => {
  const seconds = Math.floor(ms / 1000)
  if (seconds < -1) return "<invalid>"
  if (seconds < 0) return "0s"
  if (seconds < 120) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`
  if (minutes < 180) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`
  if (hours < 48) return `${hours}h`
  const days = Math.floor(hours / 24)
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`
  if (days < 365 * 2) return `${days}d`
  const years = Math.floor(days / 365)
  if (days < 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`
  return `${years}y`
}

const cell = (value: unknown, type: string): unknown => {
  if (value === undefined || value === null) return null
  if (type === "date" && typeof value === "string") {
    const at = Date.parse(value)
    return Number.isNaN(at) ? value : humanDuration(Date.now() - at)
  }
  if (type === "integer" || type === "number") return typeof value === "number" ? value : null
  if (type === "boolean") return typeof value === "boolean" ? value : null
  return typeof value === "object" ? JSON.stringify(value) : String(value)
}

/**
 * A Table of objects (served form) of one resource. `listMeta` is the list's metadata (omitted
 * for a single object).
 *
 * @example
 * import * as Table from "./Table.ts"
 * import * as Builtins from "./Builtins.ts"
 * const cm = Builtins.make().find((r) => r.type.plural === "configmaps")!
 * Table.fromObjects(cm, [{ metadata: { name: "a", creationTimestamp: "2024-01-01T00:00:00Z" } }], undefined).rows
 * // [{ cells: ["a", "1y30d"], object: { kind: "PartialObjectMetadata", ... } }]
 */
export const fromObjects = (
  resource: Registry.Resource,
  objects: ReadonlyArray<KubeObject.KubeObject>,
  listMeta: KubeObject.KubeObject | undefined
): KubeObject.KubeObject => {
  const printer = resource.type.printerColumns
  const columns = printer.length === 0 ? [ageColumn] : printer
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMeta ?? {},
    columnDefinitions: [
      nameColumn,
      ...columns.map((c) => ({
        name: c.name,
        type: c.type,
        format: c.format ?? "",
        description: c.description ?? "",
        priority: c.priority ?? 0
      }))
    ],
    rows: objects.map((object) => ({
      cells: [KubeObject.meta(object).name ?? "", ...columns.map((c) => cell(evaluate(object, c.jsonPath), c.type))],
      object: {
        kind: "PartialObjectMetadata",
        apiVersion: "meta.k8s.io/v1",
        metadata: KubeObject.meta(object)
      }
    }))
  }
}
