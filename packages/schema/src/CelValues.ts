/**
 * Custom resource values as CEL sees them in `x-kubernetes-validations`, typed by the schema as
 * kube-apiserver types them: integers are CEL ints, numbers doubles, `date-time` and `date`
 * strings timestamps, `duration` strings durations, `byte` strings bytes; objects with properties
 * are messages whose field names are escaped (`__dash__`, `__dot__`, keywords as `__in__`...),
 * objects with additionalProperties are maps keyed by their raw keys.
 */
import { timestampFromMs } from "@bufbuild/protobuf/wkt"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"

const reserved = new Set([
  "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
  "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"
])

/**
 * The CEL name of a property, or undefined when CEL cannot name it (then a rule cannot reach it).
 *
 * @example
 * import * as CelValues from "./CelValues.ts"
 * CelValues.escape("x-y") // "x__dash__y"
 * CelValues.escape("namespace") // "__namespace__"
 * CelValues.escape("a b") // undefined
 */
export const escape = (name: string): string | undefined => {
  if (name === "" || /^[0-9]/.test(name)) return undefined
  if (reserved.has(name)) return `__${name}__`
  if (!/^[a-zA-Z0-9_./-]*$/.test(name)) return undefined
  return name.replace(/__|[-./]/g, (m) => m === "__" ? "__underscores__" : m === "." ? "__dot__" : m === "-" ? "__dash__" : "__slash__")
}

const unknownValue = (value: unknown): unknown => {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value
  if (Array.isArray(value)) return value.map(unknownValue)
  if (KubeObject.isObject(value)) return new Map(Object.entries(value).map(([k, v]) => [k, unknownValue(v)]))
  return value
}

const scalar = (value: unknown, schema: JsonSchemaProps): unknown => {
  if (typeof value === "number") {
    return schema.type === "number" || !Number.isInteger(value) ? value : BigInt(value)
  }
  if (typeof value === "string") {
    if (schema.format === "date-time" || schema.format === "date") {
      const ms = Date.parse(value)
      return Number.isNaN(ms) ? value : timestampFromMs(ms)
    }
    if (schema.format === "byte") return Uint8Array.from(Buffer.from(value, "base64"))
  }
  return value
}

/**
 * A JSON value as CEL input under its schema; undefined schema (or preserved unknown fields) keep
 * the value's JSON shape, with whole numbers as ints.
 *
 * @example
 * import * as CelValues from "./CelValues.ts"
 * CelValues.toCel({ "max-size": 3 }, { type: "object", properties: { "max-size": { type: "integer" } } })
 * // Map { "max__dash__size" => 3n }
 */
export const toCel = (value: unknown, schema: JsonSchemaProps | undefined): unknown => {
  if (value === null || value === undefined) return null
  if (schema === undefined || (schema.type === undefined && schema["x-kubernetes-int-or-string"] !== true)) return unknownValue(value)
  if (Array.isArray(value)) return value.map((item) => toCel(item, schema.items))
  if (KubeObject.isObject(value)) {
    const entries: Array<[string, unknown]> = []
    const additional = schema.additionalProperties
    for (const [k, v] of Object.entries(value)) {
      const property = schema.properties?.[k]
      if (property !== undefined) {
        const name = escape(k)
        if (name !== undefined) entries.push([name, toCel(v, property)])
      } else if (typeof additional === "object") entries.push([k, toCel(v, additional)])
      else if (additional === true || schema["x-kubernetes-preserve-unknown-fields"] === true) entries.push([k, unknownValue(v)])
    }
    return new Map(entries)
  }
  return scalar(value, schema)
}
