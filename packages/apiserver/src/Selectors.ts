/**
 * Label and field selectors, as list, watch and deletecollection take them in `labelSelector` and
 * `fieldSelector`. Parsing failures are 400s with the message kube-apiserver gives.
 */
import { Result } from "effect"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

export type LabelRequirement =
  | { readonly op: "=" | "!="; readonly key: string; readonly value: string }
  | { readonly op: "in" | "notin"; readonly key: string; readonly values: ReadonlyArray<string> }
  | { readonly op: "exists" | "!exists"; readonly key: string }
  | { readonly op: "gt" | "lt"; readonly key: string; readonly value: number }

/** All requirements must hold (comma means AND). Empty matches everything. */
export type LabelSelector = ReadonlyArray<LabelRequirement>

export interface FieldRequirement {
  readonly field: string
  readonly op: "=" | "!="
  readonly value: string
}

export type FieldSelector = ReadonlyArray<FieldRequirement>

/** Fields every resource can be selected on. */
export const commonFields: ReadonlyArray<string> = ["metadata.name", "metadata.namespace"]

const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/
const labelName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

const validKey = (key: string): string | undefined => {
  const slash = key.indexOf("/")
  const [prefix, name] = slash === -1 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)]
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !dnsSubdomain.test(prefix))) {
    return `prefix part must be a DNS-1123 subdomain`
  }
  if (name.length === 0 || name.length > 63 || !labelName.test(name)) {
    return `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`
  }
  return undefined
}

const validValue = (value: string): string | undefined =>
  value.length <= 63 && labelValue.test(value)
    ? undefined
    : `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`

type Token =
  | { readonly _tag: "id"; readonly text: string }
  | { readonly _tag: "op"; readonly text: "=" | "==" | "!=" | "!" | "(" | ")" | "," | ">" | "<" }

const tokenize = (input: string): Array<Token> | string => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < input.length) {
    const c = input[i]!
    if (c === " " || c === "\t" || c === "\n") {
      i++
    } else if (c === "=" && input[i + 1] === "=") {
      tokens.push({ _tag: "op", text: "==" })
      i += 2
    } else if (c === "!" && input[i + 1] === "=") {
      tokens.push({ _tag: "op", text: "!=" })
      i += 2
    } else if ("=!(),><".includes(c)) {
      tokens.push({ _tag: "op", text: c as "=" })
      i++
    } else {
      let j = i
      while (j < input.length && !" \t\n=!(),><".includes(input[j]!)) j++
      tokens.push({ _tag: "id", text: input.slice(i, j) })
      i = j
    }
  }
  return tokens
}

/**
 * Parses a label selector (`a=b,c!=d,e in (x,y),f notin (z),g,!h`), or fails with a 400.
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * Result.isSuccess(Selectors.parseLabelSelector("app=web,tier in (a,b),!legacy")) // true
 * Result.isFailure(Selectors.parseLabelSelector("app in (a")) // true
 */
export const parseLabelSelector = (input: string): Result.Result<LabelSelector, Status.ApiError> => {
  const fail = (why: string) =>
    Result.fail(Status.badRequest(`unable to parse requirement: ${why}`))
  const tokens = tokenize(input)
  if (typeof tokens === "string") return fail(tokens)
  const out: Array<LabelRequirement> = []
  let i = 0
  const peek = () => tokens[i]
  const next = () => tokens[i++]
  const expectId = (): string | undefined => {
    const t = next()
    return t?._tag === "id" ? t.text : undefined
  }
  while (i < tokens.length) {
    let requirement: LabelRequirement | string
    const first = next()!
    if (first._tag === "op" && first.text === "!") {
      const key = expectId()
      requirement = key === undefined ? `found '${peek()?.text ?? ""}', expected: identifier after '!'` : { op: "!exists", key }
    } else if (first._tag === "id") {
      const key = first.text
      const op = peek()
      if (op === undefined || (op._tag === "op" && op.text === ",")) {
        requirement = { op: "exists", key }
      } else if (op._tag === "op" && (op.text === "=" || op.text === "==" || op.text === "!=")) {
        next()
        const after = peek()
        const value = after?._tag === "id" ? (next(), after.text) : ""
        requirement = { op: op.text === "!=" ? "!=" : "=", key, value }
      } else if (op._tag === "op" && (op.text === ">" || op.text === "<")) {
        next()
        const raw = expectId()
        const value = Number(raw)
        requirement = raw === undefined || !Number.isInteger(value)
          ? `for 'Gt', 'Lt' operators, the value must be an integer`
          : { op: op.text === ">" ? "gt" : "lt", key, value }
      } else if (op._tag === "id" && (op.text === "in" || op.text === "notin")) {
        next()
        const open = next()
        if (open?._tag !== "op" || open.text !== "(") {
          requirement = `found '${open?.text ?? ""}', expected: '('`
        } else {
          const values: Array<string> = []
          let closed = false
          let error: string | undefined
          while (i < tokens.length) {
            const t = next()!
            if (t._tag === "op" && t.text === ")") {
              closed = true
              break
            }
            if (t._tag === "id") values.push(t.text)
            else if (t.text !== ",") {
              error = `found '${t.text}', expected: ',', ')' or identifier`
              break
            }
          }
          requirement = error ?? (closed ? { op: op.text, key, values } : `found '', expected: ')'`)
        }
      } else {
        requirement = `found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`
      }
    } else {
      requirement = `found '${first.text}', expected: !, identifier, or 'end of string'`
    }
    if (typeof requirement === "string") return fail(requirement)
    const keyError = validKey(requirement.key)
    if (keyError !== undefined) return fail(`Invalid value: "${requirement.key}": ${keyError}`)
    const values = "values" in requirement ? requirement.values : "value" in requirement && typeof requirement.value === "string" ? [requirement.value] : []
    for (const v of values) {
      const valueError = validValue(v)
      if (valueError !== undefined) return fail(`Invalid value: "${v}": ${valueError}`)
    }
    out.push(requirement)
    const sep = next()
    if (sep !== undefined && !(sep._tag === "op" && sep.text === ",")) {
      return fail(`found '${sep.text}', expected: ',' or 'end of string'`)
    }
  }
  return Result.succeed(out)
}

/**
 * Whether labels satisfy a selector. `!=` and `notin` match objects lacking the key.
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * const selector = Result.getOrThrow(Selectors.parseLabelSelector("app=web,env notin (prod)"))
 * Selectors.matchesLabels(selector, { app: "web" }) // true
 */
export const matchesLabels = (selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean => {
  for (const r of selector) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key)
    const value = has ? labels[r.key] : undefined
    switch (r.op) {
      case "=":
        if (value !== r.value) return false
        break
      case "!=":
        if (value === r.value) return false
        break
      case "in":
        if (value === undefined || !r.values.includes(value)) return false
        break
      case "notin":
        if (value !== undefined && r.values.includes(value)) return false
        break
      case "exists":
        if (!has) return false
        break
      case "!exists":
        if (has) return false
        break
      case "gt":
      case "lt": {
        const n = Number(value)
        if (value === undefined || !Number.isInteger(n) || (r.op === "gt" ? n <= r.value : n >= r.value)) return false
      }
    }
  }
  return true
}

/**
 * Parses a field selector (`metadata.name=x,status.phase!=Running`) against the fields the
 * resource supports, or fails with a 400 (`field label not supported: spec.foo`).
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * Result.isSuccess(Selectors.parseFieldSelector("metadata.name=web", Selectors.commonFields)) // true
 * Result.isFailure(Selectors.parseFieldSelector("spec.foo=1", Selectors.commonFields)) // true
 */
export const parseFieldSelector = (
  input: string,
  supported: ReadonlyArray<string>
): Result.Result<FieldSelector, Status.ApiError> => {
  const out: Array<FieldRequirement> = []
  for (const part of splitUnescaped(input, ",")) {
    if (part.trim() === "") continue
    const match = /^(.*?)(==|!=|=)(.*)$/s.exec(part)
    if (match === null) {
      return Result.fail(Status.badRequest(`invalid selector: '${input}'; can't understand '${part}'`))
    }
    const field = match[1]!.trim()
    if (!supported.includes(field)) return Result.fail(Status.badRequest(`field label not supported: ${field}`))
    out.push({ field, op: match[2] === "!=" ? "!=" : "=", value: unescape(match[3]!.trim()) })
  }
  return Result.succeed(out)
}

/**
 * Whether an object satisfies a field selector; fields read as strings (absent = "").
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * const selector = Result.getOrThrow(Selectors.parseFieldSelector("metadata.name=web", Selectors.commonFields))
 * Selectors.matchesFields(selector, { metadata: { name: "web" } }) // true
 */
export const matchesFields = (selector: FieldSelector, object: KubeObject.KubeObject): boolean => {
  for (const r of selector) {
    const raw = KubeObject.getPath(object, r.field)
    const value = raw === undefined || raw === null ? "" : typeof raw === "object" ? JSON.stringify(raw) : String(raw)
    if ((value === r.value) !== (r.op === "=")) return false
  }
  return true
}

/**
 * The exact name a field selector pins (`metadata.name=x`), if any: lets a watch or list skip
 * other objects cheaply.
 *
 * @example
 * import { Result } from "effect"
 * import * as Selectors from "./Selectors.ts"
 * Selectors.pinnedName(Result.getOrThrow(Selectors.parseFieldSelector("metadata.name=x", Selectors.commonFields))) // "x"
 */
export const pinnedName = (selector: FieldSelector): string | undefined =>
  selector.find((r) => r.field === "metadata.name" && r.op === "=")?.value

const splitUnescaped = (input: string, separator: string): Array<string> => {
  const parts: Array<string> = []
  let current = ""
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!
    if (c === "\\" && i + 1 < input.length) {
      current += c + input[i + 1]
      i++
    } else if (c === separator) {
      parts.push(current)
      current = ""
    } else {
      current += c
    }
  }
  parts.push(current)
  return parts
}

const unescape = (value: string): string => value.replace(/\\(.)/g, "$1")
