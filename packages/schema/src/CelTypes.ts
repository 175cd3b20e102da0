/**
 * The static types of CEL expressions in CRD rules, as far as kube-apiserver's compiler would
 * know them from the schema, and the overloads of the standard functions and Kubernetes libraries
 * over them: enough to refuse at CRD creation, as 1.32 does, a rule that applies an operator or
 * function to a type it does not take (`found no matching overload for '_>_' applied to
 * '(int, string)'`). What is not known statically (`dyn`: untyped fields, int-or-string, library
 * objects) passes, and fails at evaluation if wrong.
 */
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"

export type CelType =
  | "int" | "uint" | "double" | "string" | "bool" | "bytes" | "timestamp" | "duration"
  | "list" | "map" | "null" | "dyn"

/**
 * The type of a value under its schema (unknown schema: dyn).
 *
 * @example
 * import * as CelTypes from "./CelTypes.ts"
 * CelTypes.ofSchema({ type: "string", format: "date-time" }) // "timestamp"
 */
export const ofSchema = (schema: JsonSchemaProps | undefined): CelType => {
  if (schema === undefined || schema["x-kubernetes-int-or-string"] === true) return "dyn"
  switch (schema.type) {
    case "integer":
      return "int"
    case "number":
      return "double"
    case "boolean":
      return "bool"
    case "string":
      return schema.format === "date-time" || schema.format === "date"
        ? "timestamp"
        : schema.format === "duration"
        ? "duration"
        : schema.format === "byte"
        ? "bytes"
        : "string"
    case "array":
      return "list"
    case "object":
      // Objects with properties are messages; selecting fields is checked elsewhere.
      return schema.properties !== undefined ? "dyn" : "map"
    default:
      return "dyn"
  }
}

/**
 * The type of a literal.
 *
 * @example
 * import * as CelTypes from "./CelTypes.ts"
 * CelTypes.ofConstant("int64Value") // "int"
 */
export const ofConstant = (kind: string | undefined): CelType => {
  switch (kind) {
    case "int64Value":
      return "int"
    case "uint64Value":
      return "uint"
    case "doubleValue":
      return "double"
    case "stringValue":
      return "string"
    case "boolValue":
      return "bool"
    case "bytesValue":
      return "bytes"
    case "nullValue":
      return "null"
    default:
      return "dyn"
  }
}

const numeric = new Set<CelType>(["int", "uint", "double"])

type Signature = (receiver: CelType | undefined, args: ReadonlyArray<CelType>) => CelType | undefined

// Each overload answers its result for known types, or undefined when none applies; dyn always fits.
const fits = (actual: CelType, ...allowed: ReadonlyArray<CelType>) => actual === "dyn" || allowed.includes(actual)

const same = (a: CelType, b: CelType) => a === "dyn" || b === "dyn" || a === b

const arithmetic: Signature = (_, [a = "dyn", b = "dyn"]) => {
  if (a === "dyn" || b === "dyn") return a === "dyn" ? b === "dyn" ? "dyn" : b : a
  return a === b && numeric.has(a) ? a : undefined
}

const plus: Signature = (receiver, args) => {
  const [a = "dyn", b = "dyn"] = args
  if (a === "timestamp" && fits(b, "duration")) return "timestamp"
  if (a === "duration" && b === "timestamp") return "timestamp"
  if (same(a, b) && (a === "string" || a === "list" || a === "bytes" || a === "duration")) return a
  return arithmetic(receiver, args)
}

const minus: Signature = (receiver, args) => {
  const [a = "dyn", b = "dyn"] = args
  if (a === "timestamp") return b === "timestamp" ? "duration" : fits(b, "duration") ? "timestamp" : undefined
  if (a === "duration" && fits(b, "duration")) return "duration"
  return arithmetic(receiver, args)
}

// Since 1.28 (CrossTypeNumericComparisons) ints, uints and doubles compare with one another.
const comparable = (a: CelType, b: CelType) => same(a, b) || (numeric.has(a) && numeric.has(b))

const ordering: Signature = (_, [a = "dyn", b = "dyn"]) =>
  comparable(a, b) && (a === "dyn" || b === "dyn" || numeric.has(a) || ["string", "bool", "bytes", "timestamp", "duration"].includes(a))
    ? "bool"
    : undefined

const equality: Signature = (_, [a = "dyn", b = "dyn"]) =>
  comparable(a, b) || a === "null" || b === "null" ? "bool" : undefined

const logic: Signature = (_, args) => args.every((a) => fits(a, "bool")) ? "bool" : undefined

const stringMethod = (result: CelType, ...params: ReadonlyArray<CelType>): Signature => (receiver, args) =>
  receiver !== undefined && fits(receiver, "string") && args.length === params.length && args.every((a, i) => fits(a, params[i]!))
    ? result
    : undefined

const size: Signature = (receiver, args) => {
  const of = receiver ?? args[0] ?? "dyn"
  return (receiver === undefined ? args.length === 1 : args.length === 0) && fits(of, "string", "bytes", "list", "map") ? "int" : undefined
}

const conversion = (result: CelType, ...from: ReadonlyArray<CelType>): Signature => (receiver, args) =>
  receiver === undefined && args.length === 1 && fits(args[0]!, ...from) ? result : undefined

const overloads: Readonly<Record<string, Signature>> = {
  "_+_": plus,
  "_-_": minus,
  "_*_": arithmetic,
  "_/_": arithmetic,
  "_%_": (r, args) => args.some((a) => a === "double") ? undefined : arithmetic(r, args),
  "-_": (_, [a = "dyn"]) => fits(a, "int", "double") ? a : undefined,
  "_<_": ordering,
  "_<=_": ordering,
  "_>_": ordering,
  "_>=_": ordering,
  "_==_": equality,
  "_!=_": equality,
  "_&&_": logic,
  "_||_": logic,
  "!_": logic,
  "@not_strictly_false": logic,
  "_?_:_": (_, [c = "dyn", a = "dyn", b = "dyn"]) => fits(c, "bool") && same(a, b) ? (a === "dyn" ? b : a) : undefined,
  "@in": (_, [, container = "dyn"]) => fits(container, "list", "map") ? "bool" : undefined,
  size,
  startsWith: stringMethod("bool", "string"),
  endsWith: stringMethod("bool", "string"),
  contains: stringMethod("bool", "string"),
  matches: (receiver, args) =>
    (receiver === undefined ? args.length === 2 && args.every((a) => fits(a, "string")) : fits(receiver, "string") && args.length === 1 && fits(args[0]!, "string"))
      ? "bool"
      : undefined,
  lowerAscii: stringMethod("string"),
  upperAscii: stringMethod("string"),
  trim: stringMethod("string"),
  int: conversion("int", "int", "uint", "double", "string", "timestamp"),
  uint: conversion("uint", "int", "uint", "double", "string"),
  double: conversion("double", "int", "uint", "double", "string"),
  string: conversion("string", "int", "uint", "double", "string", "bool", "bytes", "timestamp", "duration"),
  bool: conversion("bool", "bool", "string"),
  bytes: conversion("bytes", "bytes", "string"),
  timestamp: conversion("timestamp", "string", "int", "timestamp"),
  duration: conversion("duration", "string", "duration")
}

/**
 * The result type of calling `name` (with `receiver` for a method) on arguments of these types;
 * undefined when no overload takes them. Functions it does not know answer dyn.
 *
 * @example
 * import * as CelTypes from "./CelTypes.ts"
 * CelTypes.overload("_>_", undefined, ["int", "string"]) // undefined
 * CelTypes.overload("startsWith", "string", ["string"]) // "bool"
 */
export const overload = (name: string, receiver: CelType | undefined, args: ReadonlyArray<CelType>): CelType | undefined => {
  const signature = overloads[name]
  return signature === undefined ? "dyn" : signature(receiver, args)
}
