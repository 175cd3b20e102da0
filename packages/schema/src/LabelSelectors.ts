/**
 * Label selectors as Kubernetes writes them (`app=web,tier in (a,b),!legacy`): parsed with
 * apimachinery's grammar and messages, and matched against an object's labels. The embedded API
 * server answers a list's or a watch's malformed selector with these messages in a 400; a
 * controller checks its caches' selectors with them when it is defined.
 */
import { Result } from "effect"
import * as NameRules from "./NameRules.ts"

export type LabelRequirement =
  | { readonly op: "=" | "!="; readonly key: string; readonly value: string }
  | { readonly op: "in" | "notin"; readonly key: string; readonly values: ReadonlyArray<string> }
  | { readonly op: "exists" | "!exists"; readonly key: string }
  | { readonly op: "gt" | "lt"; readonly key: string; readonly value: number }

/** All requirements must hold (comma means AND). Empty matches everything. */
export type LabelSelector = ReadonlyArray<LabelRequirement>

// apimachinery checks a requirement's key and values with IsQualifiedName and IsValidLabelValue,
// their messages joined.
const problems = (messages: ReadonlyArray<string>): string | undefined => messages.length === 0 ? undefined : messages.join("; ")

type Token =
  | { readonly _tag: "id"; readonly text: string }
  | { readonly _tag: "op"; readonly text: "=" | "==" | "!=" | "!" | "(" | ")" | "," | ">" | "<" }

const tokenize = (input: string): Array<Token> => {
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
 * Parses a label selector (`a=b,c!=d,e in (x,y),f notin (z),g,!h`), or fails with the message
 * kube-apiserver gives (`unable to parse requirement: ...`).
 *
 * @example
 * import { Result } from "effect"
 * import * as LabelSelectors from "./LabelSelectors.ts"
 * Result.isSuccess(LabelSelectors.parse("app=web,tier in (a,b),!legacy")) // true
 * Result.isFailure(LabelSelectors.parse("app in (a")) // true
 */
export const parse = (input: string): Result.Result<LabelSelector, string> => {
  const fail = (why: string) => Result.fail(`unable to parse requirement: ${why}`)
  const tokens = tokenize(input)
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
    const keyError = problems(NameRules.qualifiedName(requirement.key))
    if (keyError !== undefined) return fail(`Invalid value: "${requirement.key}": ${keyError}`)
    const values = "values" in requirement ? requirement.values : "value" in requirement && typeof requirement.value === "string" ? [requirement.value] : []
    for (const v of values) {
      const valueError = problems(NameRules.labelValue(v))
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
 * import * as LabelSelectors from "./LabelSelectors.ts"
 * const selector = Result.getOrThrow(LabelSelectors.parse("app=web,env notin (prod)"))
 * LabelSelectors.matches(selector, { app: "web" }) // true
 */
export const matches = (selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean => {
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
