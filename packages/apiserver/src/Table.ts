/**
 * `meta.k8s.io/v1` Tables, which kubectl asks for to print `get` output: a built-in kind's
 * columns from its printer (Printers), or for custom resources a Name column and the CRD's
 * additionalPrinterColumns (or Age), and one row per object with its metadata attached, or the
 * whole object or nothing, as the request's `includeObject` says.
 */
import type * as Printers from "./Printers.ts"
import type * as Registry from "./Registry.ts"
import { KubeObject } from "@kubefx/schema/internal"

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
 * The value at a printer column's JSONPath, or undefined: the first match, as the API server prints
 * a column. Supports the subset printer columns use: `.field`, `['field']`, `[n]` (negative counts
 * from the end), `[*]`, and filters `[?(@.path == "value")]` / `!=` (strings, numbers, booleans),
 * optionally wrapped in `{}`.
 *
 * @example
 * import * as Table from "./Table.ts"
 * Table.evaluate({ spec: { ports: [{ port: 80 }] } }, "{.spec.ports[0].port}") // 80
 * Table.evaluate({ status: { conditions: [{ type: "Ready", status: "True" }] } },
 *   '.status.conditions[?(@.type=="Ready")].status') // "True"
 */
export const evaluate = (object: unknown, jsonPath: string): unknown =>
  matches([object], jsonPath.trim().replace(/^\{/, "").replace(/\}$/, ""))[0]

type Step =
  | { readonly _tag: "Field"; readonly name: string }
  | { readonly _tag: "Index"; readonly index: number }
  | { readonly _tag: "All" }
  | { readonly _tag: "Filter"; readonly path: string; readonly equal: boolean; readonly value: unknown }

const steps = (path: string): ReadonlyArray<Step> => {
  const out: Array<Step> = []
  let i = 0
  while (i < path.length) {
    if (path[i] === ".") {
      const name = /^[^.[]+/.exec(path.slice(i + 1))?.[0] ?? ""
      if (name !== "") out.push({ _tag: "Field", name })
      i += 1 + name.length
    } else if (path[i] === "[") {
      const close = path.startsWith("[?(", i) ? path.indexOf(")]", i) + 1 : path.indexOf("]", i)
      if (close <= i) return out
      const inner = path.slice(i + 1, close)
      i = close + 1
      if (inner === "*") out.push({ _tag: "All" })
      else if (/^-?\d+$/.test(inner)) out.push({ _tag: "Index", index: Number(inner) })
      else if (/^['"].*['"]$/.test(inner)) out.push({ _tag: "Field", name: inner.slice(1, -1) })
      else {
        const filter = /^\?\(@((?:\.[^.=!\s]+)+)\s*(==|!=)\s*(.+?)\s*\)$/.exec(inner)
        if (filter === null) return out
        out.push({ _tag: "Filter", path: filter[1]!, equal: filter[2] === "==", value: literal(filter[3]!) })
      }
    } else {
      const name = /^[^.[]+/.exec(path.slice(i))?.[0] ?? ""
      out.push({ _tag: "Field", name })
      i += name.length
    }
  }
  return out
}

const literal = (text: string): unknown => {
  if (/^(['"]).*\1$/.test(text)) return text.slice(1, -1)
  if (text === "true" || text === "false") return text === "true"
  const number = Number(text)
  return Number.isNaN(number) ? text : number
}

const matches = (roots: ReadonlyArray<unknown>, path: string): ReadonlyArray<unknown> =>
  steps(path).reduce<ReadonlyArray<unknown>>((current, step) =>
    current.flatMap((value): ReadonlyArray<unknown> => {
      switch (step._tag) {
        case "Field":
          return KubeObject.isObject(value) && value[step.name] !== undefined ? [value[step.name]] : []
        case "Index": {
          if (!Array.isArray(value)) return []
          const item = value[step.index < 0 ? value.length + step.index : step.index]
          return item === undefined ? [] : [item]
        }
        case "All":
          return Array.isArray(value) ? value : KubeObject.isObject(value) ? Object.values(value) : []
        case "Filter":
          return Array.isArray(value)
            ? value.filter((item) => (matches([item], step.path)[0] === step.value) === step.equal)
            : []
      }
    }), roots)

/**
 * A duration the way kubectl prints ages: "45s", "3m20s", "5h", "2d4h", "1y30d".
 *
 * @example
 * import * as Table from "./Table.ts"
 * Table.humanDuration(200_000) // "3m20s"
 */
export const humanDuration = (ms: number): string => {
  // Go truncates toward zero: a clock a second ahead still reads "0s".
  const seconds = Math.trunc(ms / 1000)
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

/** What each row carries (`includeObject`): the object's metadata (the default), all of it, or nothing. */
export type IncludeObject = "Metadata" | "Object" | "None"

/**
 * The `includeObject` query parameter, or the message of kube-apiserver's 400 for a value it does
 * not know.
 *
 * @example
 * import * as Table from "./Table.ts"
 * Table.parseIncludeObject(null) // "Metadata"
 * Table.parseIncludeObject("Object") // "Object"
 */
export const parseIncludeObject = (value: string | null): IncludeObject | { readonly invalid: string } => {
  if (value === null || value === "") return "Metadata"
  if (value === "Metadata" || value === "Object" || value === "None") return value
  return {
    invalid: `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(value)}: must be 'Metadata', 'Object', 'None', or empty`
  }
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
 * // [{ cells: ["a", 0, "<age>"], object: { kind: "PartialObjectMetadata", ... } }]
 */
export const fromObjects = (
  resource: Registry.Resource,
  objects: ReadonlyArray<KubeObject.KubeObject>,
  listMeta: KubeObject.KubeObject | undefined,
  include: IncludeObject = "Metadata"
): KubeObject.KubeObject => {
  const rowObject = include === "Object" ? whole : include === "None" ? none : partial
  if (resource.printer !== undefined) return printed(resource.printer, objects, listMeta, rowObject)
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
      object: rowObject(object)
    }))
  }
}

type RowObject = (object: KubeObject.KubeObject) => KubeObject.KubeObject | null

const partial: RowObject = (object) => ({
  kind: "PartialObjectMetadata",
  apiVersion: "meta.k8s.io/v1",
  metadata: KubeObject.meta(object)
})

const whole: RowObject = (object) => object

// Go writes a row's empty object (a RawExtension) as null.
const none: RowObject = () => null

const printed = (
  printer: Printers.Printer,
  objects: ReadonlyArray<KubeObject.KubeObject>,
  listMeta: KubeObject.KubeObject | undefined,
  rowObject: RowObject
): KubeObject.KubeObject => ({
  kind: "Table",
  apiVersion: "meta.k8s.io/v1",
  metadata: listMeta ?? {},
  columnDefinitions: [
    ...printer.columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: c.description ?? "",
      priority: c.priority ?? 0
    }))
  ],
  rows: objects.map((object) => ({ cells: printer.cells(object), object: rowObject(object) }))
})
