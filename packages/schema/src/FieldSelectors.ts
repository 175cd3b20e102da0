/**
 * Field selectors as Kubernetes writes them (`metadata.name=web,status.phase!=Running`): parsed
 * with kube-apiserver's messages. Which fields a kind can be selected on is the API server's to
 * say; this reads the syntax, which a controller checks when it is defined.
 */
import { Result } from "effect"

export interface FieldRequirement {
  readonly field: string
  readonly op: "=" | "!="
  readonly value: string
}

export type FieldSelector = ReadonlyArray<FieldRequirement>

/**
 * Parses a field selector into its requirements (`=`, `==` and `!=`; a backslash escapes the next
 * character), or fails with the message kube-apiserver gives.
 *
 * @example
 * import { Result } from "effect"
 * import * as FieldSelectors from "./FieldSelectors.ts"
 * Result.isSuccess(FieldSelectors.parse("metadata.name=web,status.phase!=Running")) // true
 * Result.isFailure(FieldSelectors.parse("metadata.name")) // true
 */
export const parse = (input: string): Result.Result<FieldSelector, string> => {
  const out: Array<FieldRequirement> = []
  for (const part of splitUnescaped(input, ",")) {
    if (part.trim() === "") continue
    const match = /^(.*?)(==|!=|=)(.*)$/s.exec(part)
    if (match === null) return Result.fail(`invalid selector: '${input}'; can't understand '${part}'`)
    out.push({ field: match[1]!.trim(), op: match[2] === "!=" ? "!=" : "=", value: unescape(match[3]!.trim()) })
  }
  return Result.succeed(out)
}

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
