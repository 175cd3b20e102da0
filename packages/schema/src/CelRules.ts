/**
 * Compiling `x-kubernetes-validations` rules as kube-apiserver 1.32 does when a CRD is written:
 * parse each rule and messageExpression, check every name and field against the schema (an
 * undeclared variable or a field the schema does not declare is a compile error), note whether
 * the rule reads `oldSelf` (a transition rule), and estimate its cost from the schema's bounds
 * (`maxItems`, `maxLength`, `maxProperties`; unbounded sizes are estimated from the 3 MiB request
 * limit, as kube-apiserver does) times how often the rule can run per object.
 */
import { celEnv, type CelEnv, parse, plan } from "@bufbuild/cel"
import * as CelLibrary from "./CelLibrary.ts"
import * as CelTypes from "./CelTypes.ts"
import * as CelValues from "./CelValues.ts"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"

type Expr = ReturnType<typeof parse>["expr"]
type Program = ReturnType<typeof plan>

/** One rule of `x-kubernetes-validations`. */
export interface Rule {
  readonly rule: string
  readonly message?: string | undefined
  readonly messageExpression?: string | undefined
  readonly reason?: string | undefined
  readonly fieldPath?: string | undefined
  readonly optionalOldSelf?: boolean | undefined
}

/** A rule ready to run. */
export interface Compiled {
  readonly rule: Rule
  readonly program: Program
  readonly message: Program | undefined
  readonly usesOldSelf: boolean
  /** The rule's estimated cost per evaluation, with the schema's bounds. */
  readonly cost: number
  readonly expr: Expr
}

/** Why a rule does not compile, as cel-go prints it (`ERROR: <input>:1:5: undefined field 'x'` and the caret lines). */
export interface CompileError {
  readonly detail: string
}

/** The largest request kube-apiserver takes, from which it estimates unbounded sizes. */
const maxRequestBytes = 3 * 1024 * 1024

/** Per-rule estimated cost limit (StaticEstimatedCostLimit). */
export const ruleCostLimit = 10_000_000
/** Per-CRD estimated cost limit (StaticEstimatedCRDCostLimit). */
export const crdCostLimit = 100_000_000

const env: CelEnv = celEnv({ funcs: [...CelLibrary.functions] })

const namespaces = new Set(["optional", "format", "sets", "ip", "strings", "math"])

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------

/**
 * The fewest bytes one value of this schema takes in JSON (kube's MinSerializedSize): an object
 * counts its required properties that have no default, a formatted string its shortest form.
 */
const minSize = (schema: JsonSchemaProps | undefined): number => {
  if (schema === undefined || schema["x-kubernetes-int-or-string"] === true) return 1
  switch (schema.type) {
    case "string":
      return schema.format === "duration" ? 3 : schema.format === "date" ? 12 : schema.format === "date-time" ? 21 : 2
    case "boolean":
      return 4
    case "array":
      return 2
    case "object": {
      if (typeof schema.additionalProperties === "object") return 2
      const required = new Set(schema.required ?? [])
      let size = 2
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (required.has(name) && property.default === undefined) size += name.length + minSize(property) + 4
      }
      return size
    }
    default:
      return 1
  }
}

/** How many elements (items, properties, bytes of a string) a value of this schema can have at most. */
export const maxElements = (schema: JsonSchemaProps | undefined): number => {
  if (schema?.["x-kubernetes-int-or-string"] === true) return maxRequestBytes - 2
  switch (schema?.type) {
    case "array":
      return schema.maxItems ?? Math.floor((maxRequestBytes - 2) / (minSize(schema.items) + 1))
    case "object": {
      if (schema.maxProperties !== undefined) return schema.maxProperties
      if (schema.properties !== undefined && schema.additionalProperties === undefined) return Object.keys(schema.properties).length
      const value = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined
      // Each entry takes its key's quotes, a colon and a comma besides its value.
      return Math.floor((maxRequestBytes - 2) / (minSize(value) + 6))
    }
    case "string": {
      const format = schema.format
      if (format === "duration" || format === "date-time") return 32
      if (format === "date") return 12
      if (schema.maxLength !== undefined) return format === "byte" ? schema.maxLength : schema.maxLength * 4 // a code point takes up to 4 bytes
      // An enum is as long as its longest value.
      if (format !== "byte" && schema.enum !== undefined && schema.enum.length > 0) {
        return schema.enum.reduce<number>((max, value) => (typeof value === "string" ? Math.max(max, value.length) : max), 0)
      }
      return maxRequestBytes - 2
    }
    default:
      return 1
  }
}

/**
 * How many times a value of this schema can occur in one object when a list or map above it has
 * no bound: as many as fit into the largest request, one comma apart.
 *
 * @example
 * import * as CelRules from "./CelRules.ts"
 * CelRules.unboundedCardinality({ type: "object" }) // 1048576
 */
export const unboundedCardinality = (schema: JsonSchemaProps | undefined): number =>
  Math.floor(maxRequestBytes / (minSize(schema) + 1))

// ---------------------------------------------------------------------------------------------
// Checking names and fields
// ---------------------------------------------------------------------------------------------

/** What an expression's value is, as far as the schema tells: a schema, or unknown (dyn). */
type Shape = JsonSchemaProps | undefined

const isClosedObject = (schema: Shape): schema is JsonSchemaProps =>
  schema?.type === "object" && schema.properties !== undefined && schema.additionalProperties === undefined &&
  schema["x-kubernetes-preserve-unknown-fields"] !== true

const fieldShape = (schema: Shape, field: string): { readonly shape: Shape; readonly known: boolean } => {
  if (schema === undefined || schema.type !== "object") return { shape: undefined, known: true }
  if (schema.properties !== undefined) {
    const name = Object.keys(schema.properties).find((k) => CelValues.escape(k) === field)
    if (name !== undefined) return { shape: schema.properties[name], known: true }
  }
  if (typeof schema.additionalProperties === "object") return { shape: schema.additionalProperties, known: true }
  return { shape: undefined, known: !isClosedObject(schema) }
}

// A map's keys. kube's cost estimator sizes them by their declared type, which has no bound of its
// own and reads as 0 characters: a rule over a map's keys costs by the map's size alone.
const mapKey: JsonSchemaProps = { type: "string" }

/** What a comprehension over the value ranges over: a list's items, a map's keys. */
const elementShape = (schema: Shape): Shape =>
  schema?.type === "array" ? schema.items : schema?.type === "object" && typeof schema.additionalProperties === "object" ? mapKey : undefined

/** What indexing the value gives: a list's item, a map's value. */
const indexedShape = (schema: Shape): Shape =>
  schema?.type === "array" ? schema.items : schema?.type === "object" ? fieldShape(schema, "").shape : undefined

interface Scope {
  readonly vars: ReadonlyMap<string, Shape>
  /** Variables whose CEL type is not their schema's (a comprehension's accumulator, an optional oldSelf). */
  readonly typed: ReadonlyMap<string, Typed>
  readonly positions: Readonly<Record<string, number>>
  readonly source: string
  readonly errors: Array<{ readonly offset: number; readonly message: string }>
}

const offsetOf = (scope: Scope, expr: Expr) => scope.positions[String(expr.id)] ?? 0

/** What the checker knows of an expression: its schema, if any, and its CEL type. */
interface Typed {
  readonly shape: Shape
  readonly type: CelTypes.CelType
}

const typed = (shape: Shape): Typed => ({ shape, type: CelTypes.ofSchema(shape) })
const dyn: Typed = { shape: undefined, type: "dyn" }

const check = (expr: Expr, scope: Scope): Typed => {
  const kind = expr.exprKind
  switch (kind.case) {
    case "constExpr":
      return { shape: undefined, type: CelTypes.ofConstant(kind.value.constantKind.case) }
    case "identExpr": {
      if (scope.vars.has(kind.value.name)) return scope.typed.get(kind.value.name) ?? typed(scope.vars.get(kind.value.name))
      scope.errors.push({ offset: offsetOf(scope, expr), message: `undeclared reference to '${kind.value.name}' (in container '')` })
      return dyn
    }
    case "selectExpr": {
      const operand = kind.value.operand!
      const shape = check(operand, scope).shape
      const { shape: field, known } = fieldShape(shape, kind.value.field)
      if (!known) scope.errors.push({ offset: offsetOf(scope, expr), message: `undefined field '${kind.value.field}'` })
      return kind.value.testOnly ? { shape: undefined, type: "bool" } : typed(field)
    }
    case "callExpr": {
      const target = kind.value.target
      const namespaced = target !== undefined && target.exprKind.case === "identExpr" && namespaces.has(target.exprKind.value.name) &&
        !scope.vars.has(target.exprKind.value.name)
      const receiver = target === undefined || namespaced ? undefined : check(target, scope)
      const args = kind.value.args.map((arg) => check(arg, scope))
      const name = namespaced ? `${(target!.exprKind.value as { name: string }).name}.${kind.value.function}` : kind.value.function
      if (name === "_[_]") {
        return typed(indexedShape(args[0]?.shape))
      }
      const result = CelTypes.overload(name, receiver?.type, args.map((a) => a.type))
      if (result === undefined) {
        const types = [...(receiver === undefined ? [] : [receiver.type]), ...args.map((a) => a.type)]
        // cel-go places a method call at its opening parenthesis.
        const at = target === undefined ? offsetOf(scope, expr) : scope.source.indexOf("(", offsetOf(scope, expr))
        scope.errors.push({ offset: at, message: `found no matching overload for '${name}' applied to '${receiver === undefined ? "" : `${receiver.type}.`}(${types.slice(receiver === undefined ? 0 : 1).join(", ")})'` })
        return dyn
      }
      return { shape: undefined, type: result }
    }
    case "comprehensionExpr": {
      const c = kind.value
      const range = check(c.iterRange!, scope).shape
      check(c.accuInit!, scope)
      const vars = new Map(scope.vars)
      vars.set(c.iterVar, elementShape(range))
      if (c.iterVar2 !== "") vars.set(c.iterVar2, range?.type === "array" ? range.items : fieldShape(range, "").shape)
      vars.set(c.accuVar, undefined)
      const types = new Map(scope.typed)
      types.set(c.accuVar, dyn)
      types.delete(c.iterVar)
      const inner: Scope = { ...scope, vars, typed: types }
      check(c.loopCondition!, inner)
      check(c.loopStep!, inner)
      const result = check(c.result!, { ...scope, vars: new Map([...scope.vars, [c.accuVar, undefined]]), typed: types })
      return result.type === "dyn" ? dyn : result
    }
    case "listExpr":
      kind.value.elements.forEach((e) => check(e, scope))
      return { shape: undefined, type: "list" }
    case "structExpr":
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === "mapKey") check(entry.keyKind.value, scope)
        check(entry.value!, scope)
      }
      return { shape: undefined, type: "map" }
    default:
      return dyn
  }
}

/** Whether the expression reads `oldSelf`. */
const reads = (expr: Expr, name: string): boolean => {
  const kind = expr.exprKind
  switch (kind.case) {
    case "identExpr":
      return kind.value.name === name
    case "selectExpr":
      return reads(kind.value.operand!, name)
    case "callExpr":
      return (kind.value.target !== undefined && reads(kind.value.target, name)) || kind.value.args.some((a) => reads(a, name))
    case "comprehensionExpr": {
      const c = kind.value
      return [c.iterRange!, c.accuInit!, c.loopCondition!, c.loopStep!, c.result!].some((e) => reads(e, name))
    }
    case "listExpr":
      return kind.value.elements.some((e) => reads(e, name))
    case "structExpr":
      return kind.value.entries.some((e) => reads(e.value!, name) || (e.keyKind.case === "mapKey" && reads(e.keyKind.value, name)))
    default:
      return false
  }
}

// ---------------------------------------------------------------------------------------------
// Cost
// ---------------------------------------------------------------------------------------------

/**
 * A sizes oracle: the most elements (items, properties, characters) a value of a shape can have,
 * given that its container had at most `within` (undefined: no container known).
 */
export type Sizes = (shape: Shape, within: number | undefined) => number

const schemaSizes: Sizes = (shape) => shape === mapKey ? 0 : maxElements(shape)

/**
 * Sizes for one evaluation on an actual value whose JSON has `length` characters: nothing inside
 * it is longer than that, nor than the schema allows.
 */
export const actualSizes = (length: number): Sizes => (shape, within) => Math.max(1, Math.min(maxElements(shape), within ?? length))

const traversal = (n: number) => Math.ceil(n * 0.1)

interface Costed {
  readonly cost: number
  readonly shape: Shape
  /** Elements (characters, items) of the value, when it is a string, list or map. */
  readonly size: number
}

const stringFunctions = new Set(["contains", "startsWith", "endsWith", "lowerAscii", "upperAscii", "trim", "indexOf", "lastIndexOf", "replace", "split", "substring", "charAt", "join", "url", "isURL", "quantity", "isQuantity", "ip", "isIP", "cidr", "isCIDR", "validate"])

/**
 * The estimated cost of one evaluation of an expression, in cel-go's units: one per variable,
 * field and call, traversals a tenth per character or one per element, regexes by string
 * length times pattern length, comprehensions their body times the range's size.
 */
export const estimate = (expr: Expr, vars: ReadonlyMap<string, Shape>, sizes: Sizes = schemaSizes): number =>
  cost(expr, vars, sizes, new Map()).cost

type Bounds = ReadonlyMap<string, number>

const cost = (expr: Expr, vars: ReadonlyMap<string, Shape>, sizes: Sizes, bounds: Bounds): Costed => {
  const kind = expr.exprKind
  switch (kind.case) {
    case "constExpr": {
      const c = kind.value.constantKind
      return { cost: 0, shape: undefined, size: c.case === "stringValue" ? c.value.length : 1 }
    }
    case "identExpr": {
      const shape = vars.get(kind.value.name)
      return { cost: 1, shape, size: sizes(shape, bounds.get(kind.value.name)) }
    }
    case "selectExpr": {
      const operand = cost(kind.value.operand!, vars, sizes, bounds)
      // kube-apiserver charges a presence test (`has()`) nothing beyond its operand.
      if (kind.value.testOnly) return { cost: operand.cost, shape: undefined, size: 1 }
      const shape = fieldShape(operand.shape, kind.value.field).shape
      return { cost: operand.cost + 1, shape, size: sizes(shape, operand.size) }
    }
    case "listExpr": {
      const elements = kind.value.elements.map((e) => cost(e, vars, sizes, bounds))
      return { cost: 10 + sum(elements.map((e) => e.cost)), shape: undefined, size: elements.length }
    }
    case "structExpr":
      return {
        cost: 30 + sum(kind.value.entries.map((e) => cost(e.value!, vars, sizes, bounds).cost + (e.keyKind.case === "mapKey" ? cost(e.keyKind.value, vars, sizes, bounds).cost : 0))),
        shape: undefined,
        size: kind.value.entries.length
      }
    case "comprehensionExpr": {
      const c = kind.value
      const range = cost(c.iterRange!, vars, sizes, bounds)
      const inner = new Map(vars)
      inner.set(c.iterVar, elementShape(range.shape))
      if (c.iterVar2 !== "") inner.set(c.iterVar2, range.shape?.type === "array" ? range.shape.items : fieldShape(range.shape, "").shape)
      inner.set(c.accuVar, undefined)
      // The elements share their container's size: each of n elements gets at most its nth part.
      const share = new Map(bounds)
      const each = Math.max(1, Math.floor(sizes(undefined, range.size) / Math.max(1, range.size)))
      share.set(c.iterVar, each)
      if (c.iterVar2 !== "") share.set(c.iterVar2, each)
      const body = cost(c.loopCondition!, inner, sizes, share).cost + cost(c.loopStep!, inner, sizes, share).cost
      return { cost: range.cost + cost(c.accuInit!, vars, sizes, bounds).cost + range.size * body + 1, shape: undefined, size: range.size }
    }
    case "callExpr":
      return callCost(kind.value, vars, sizes, bounds)
    default:
      return { cost: 1, shape: undefined, size: 1 }
  }
}

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

const callCost = (call: Extract<Expr["exprKind"], { case: "callExpr" }>["value"], vars: ReadonlyMap<string, Shape>, sizes: Sizes, bounds: Bounds): Costed => {
  const namespaced = call.target?.exprKind.case === "identExpr" && namespaces.has(call.target.exprKind.value.name) && !vars.has(call.target.exprKind.value.name)
  const target = call.target === undefined || namespaced ? undefined : cost(call.target, vars, sizes, bounds)
  const args = call.args.map((a) => cost(a, vars, sizes, bounds))
  const base = (target?.cost ?? 0) + sum(args.map((a) => a.cost))
  const first = target ?? args[0]
  const name = call.function
  if (name === "_[_]") {
    const shape = indexedShape(args[0]?.shape)
    return { cost: base + 1, shape, size: sizes(shape, args[0]?.size) }
  }
  if (name === "matches" || name === "find" || name === "findAll") {
    const text = first?.size ?? 1
    const pattern = (target === undefined ? args[1] : args[0])?.size ?? 1
    return { cost: base + traversal(text) * Math.max(1, Math.ceil(pattern * 0.25)), shape: undefined, size: text }
  }
  // `&&` and `||` cost their operands alone (cel-go charges nothing for the operator itself); a
  // conditional its condition and the dearer of its branches, as only one of them runs.
  if (name === "_&&_" || name === "_||_") return { cost: base, shape: undefined, size: 1 }
  if (name === "_?_:_") {
    const [condition, ifTrue, ifFalse] = args
    return { cost: (condition?.cost ?? 0) + Math.max(ifTrue?.cost ?? 0, ifFalse?.cost ?? 0), shape: ifTrue?.shape ?? ifFalse?.shape, size: Math.max(ifTrue?.size ?? 1, ifFalse?.size ?? 1) }
  }
  // Comparing two values traverses the shorter (a scalar is one long): a tenth per character.
  if (name === "_==_" || name === "_!=_" || name === "_<_" || name === "_<=_" || name === "_>_" || name === "_>=_") {
    const shorter = Math.min(args[0]?.size ?? 1, args[1]?.size ?? 1)
    return { cost: base + traversal(shorter), shape: { type: "boolean" }, size: 1 }
  }
  if (name === "startsWith" || name === "endsWith") return { cost: base + 1 + traversal(args[0]?.size ?? 1), shape: undefined, size: 1 }
  if (name === "@in") return { cost: base + (args[1]?.size ?? 1), shape: { type: "boolean" }, size: 1 }
  if (name === "_+_") {
    const size = (args[0]?.size ?? 1) + (args[1]?.size ?? 1)
    return { cost: base + traversal(size), shape: args[0]?.shape?.type === "string" ? args[0].shape : undefined, size }
  }
  if (name === "sum" || name === "min" || name === "max" || name === "isSorted" || name.startsWith("sets.")) {
    return { cost: base + (first?.size ?? 1) + (args[1]?.size ?? 0), shape: undefined, size: 1 }
  }
  if (stringFunctions.has(name)) return { cost: base + 1 + traversal(first?.size ?? 1), shape: undefined, size: first?.size ?? 1 }
  return { cost: base + 1, shape: undefined, size: 1 }
}

// ---------------------------------------------------------------------------------------------
// Compiling
// ---------------------------------------------------------------------------------------------

const caret = (source: string, offset: number) => {
  const before = source.slice(0, offset)
  const line = before.split("\n").length
  const column = offset - (before.lastIndexOf("\n") + 1)
  const text = source.split("\n")[line - 1] ?? ""
  return { line, column: column + 1, lines: `\n | ${text}\n | ${".".repeat(column)}^` }
}

const parseError = (source: string, error: unknown): CompileError => {
  const message = error instanceof Error ? error.message : String(error)
  const m = /^<input>:(\d+):(\d+): (.*)$/s.exec(message)
  const offset = m === null ? 0 : source.split("\n").slice(0, Number(m[1]) - 1).join("\n").length + (Number(m[1]) > 1 ? 1 : 0) + Number(m[2]) - 1
  const at = caret(source, offset)
  return { detail: `compilation failed: ERROR: <input>:${at.line}:${at.column}: Syntax error: ${m?.[3] ?? message}${at.lines}` }
}

const compileExpression = (
  source: string,
  vars: ReadonlyMap<string, Shape>,
  expected: "bool" | "string" | "any",
  optional: string | undefined
): { readonly expr: Expr; readonly program: Program } | CompileError => {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(source)
  } catch (error) {
    return parseError(source, error)
  }
  const scope: Scope = { vars, typed: new Map(optional === undefined ? [] : [[optional, dyn]]), positions: parsed.sourceInfo?.positions ?? {}, source, errors: [] }
  const result = check(parsed.expr, scope)
  // kube-apiserver's own check of the output type, worded without cel-go's position.
  if (scope.errors.length === 0 && expected !== "any" && result.type !== "dyn" && result.type !== expected) {
    return { detail: expected === "bool" ? "cel expression must evaluate to a bool" : "must evaluate to a string" }
  }
  if (scope.errors.length > 0) {
    return {
      detail: `compilation failed: ${scope.errors.map((e) => {
        const at = caret(source, e.offset)
        return `ERROR: <input>:${at.line}:${at.column}: ${e.message}${at.lines}`
      }).join("\n")}`
    }
  }
  return { expr: parsed.expr, program: plan(env, parsed) }
}

const isError = (x: object): x is CompileError => "detail" in x

/**
 * Compiles an expression over variables of no declared schema (an admission policy's `object`,
 * `oldObject`, `request`, `params`...), each read dynamically; `expected` is the type it must
 * have when the checker can tell.
 *
 * @example
 * import * as CelRules from "./CelRules.ts"
 * const compiled = CelRules.compileUntyped("object.spec.replicas <= 5", ["object"], "bool")
 * "detail" in compiled // false
 */
export const compileUntyped = (
  source: string,
  names: ReadonlyArray<string>,
  expected: "bool" | "string" | "any"
): { readonly program: Program } | CompileError => {
  const compiled = compileExpression(source, new Map(names.map((name) => [name, undefined])), expected, undefined)
  return isError(compiled) ? compiled : { program: compiled.program }
}

/**
 * Compiles a rule for the schema node it sits on. `root` marks the resource's top level, where
 * `self` also has apiVersion, kind and metadata's name and generateName.
 *
 * @example
 * import * as CelRules from "./CelRules.ts"
 * const schema = { type: "object", properties: { min: { type: "integer" }, max: { type: "integer" } } } as const
 * "detail" in CelRules.compile({ rule: "self.min <= self.max" }, schema) // false
 * "detail" in CelRules.compile({ rule: "self.mni <= self.max" }, schema) // true: undefined field 'mni'
 */
export const compile = (rule: Rule, schema: JsonSchemaProps): Compiled | CompileError => {
  const usesOldSelfVars = new Map<string, Shape>([["self", schema], ["oldSelf", rule.optionalOldSelf === true ? undefined : schema]])
  const optional = rule.optionalOldSelf === true ? "oldSelf" : undefined
  const compiled = compileExpression(rule.rule, usesOldSelfVars, "bool", optional)
  if (isError(compiled)) return compiled
  const message = rule.messageExpression === undefined || rule.messageExpression.trim() === ""
    ? undefined
    : compileExpression(rule.messageExpression, usesOldSelfVars, "string", optional)
  if (message !== undefined && isError(message)) return { detail: `messageExpression ${message.detail}` }
  return {
    rule,
    program: compiled.program,
    message: message?.program,
    usesOldSelf: reads(compiled.expr, "oldSelf"),
    cost: estimate(compiled.expr, usesOldSelfVars),
    expr: compiled.expr
  }
}

/**
 * The cost message kube-apiserver gives when an estimate exceeds its limit.
 *
 * @example
 * import * as CelRules from "./CelRules.ts"
 * CelRules.costMessage("estimated rule cost", 2e9, CelRules.ruleCostLimit) // "... exceeds budget by factor of more than 100x (...)"
 */
export const costMessage = (what: string, cost: number, limit: number): string => {
  const factor = cost / limit
  const shown = factor > 100 ? "more than 100x" : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`
  return `${what} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`
}

/**
 * The schema `self` has at a resource's top level: kube-apiserver adds apiVersion and kind, and
 * of metadata only name and generateName are visible to rules.
 *
 * @example
 * import * as CelRules from "./CelRules.ts"
 * CelRules.resourceRoot({ type: "object", properties: { spec: { type: "object" } } }).properties?.metadata
 * // { type: "object", properties: { name: { type: "string" }, generateName: { type: "string" } } }
 */
export const resourceRoot = (schema: JsonSchemaProps): JsonSchemaProps => ({
  ...schema,
  properties: {
    ...schema.properties,
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object", properties: { name: { type: "string" }, generateName: { type: "string" } } }
  }
})
