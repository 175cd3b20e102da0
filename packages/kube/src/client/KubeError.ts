/**
 * Typed errors of the Kubernetes API, one per metav1.Status reason kubefx acts on, plus transport
 * failures. Each carries the server's message and HTTP code.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/** A cause of a 422 Invalid (`details.causes`). */
export const Cause = Schema.Struct({
  reason: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String),
  field: Schema.optionalKey(Schema.String)
})
export type Cause = typeof Cause.Type

const fields = { message: Schema.String, code: Schema.Number }

/** 404: the object (or its namespace) does not exist. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {}
/** 409 Conflict: stale resourceVersion, failed precondition, or server-side apply field conflicts. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  ...fields,
  causes: Schema.Array(Cause)
}) {}
/** 409 AlreadyExists on create. */
export class AlreadyExists extends Schema.TaggedError<AlreadyExists>()("AlreadyExists", fields) {}
/** 410: a resourceVersion or continue token too old; relist. */
export class Gone extends Schema.TaggedError<Gone>()("Gone", fields) {}
/** 422 Invalid, with a cause per field. */
export class Invalid extends Schema.TaggedError<Invalid>()("Invalid", { ...fields, causes: Schema.Array(Cause) }) {}
/** 400 BadRequest, 405, 406, 413, 415: a request the server will not take as sent. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields) {}
/** 401. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {}
/** The RBAC rule a 403 names as missing. */
export const MissingRule = Schema.Struct({
  apiGroups: Schema.Array(Schema.String),
  resources: Schema.Array(Schema.String),
  verbs: Schema.Array(Schema.String)
})
export type MissingRule = typeof MissingRule.Type

/**
 * 403. When the server names what RBAC denied (kube-apiserver's `User "u" cannot VERB resource
 * "R" in API group "G"`), `rule` is the rule that would allow it, and the message ends with it
 * (`(rbac: {"apiGroups":[""],"resources":["configmaps"],"verbs":["delete"]})`), so a failed
 * reconcile's log and Ready condition say what to add to the controller's `rbac`.
 */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  ...fields,
  rule: Schema.optionalKey(MissingRule)
}) {}

const denial = /cannot (\S+) resource "([^"]+)" in API group "([^"]*)"/

/**
 * The typed 403 for kube-apiserver's message: with the rule it names as missing, when it names one.
 *
 * @example
 * import { KubeError } from "@kubefx/kube"
 * KubeError.forbidden('configmaps "a" is forbidden: User "u" cannot delete resource "configmaps" in API group "" in the namespace "n"').rule
 * // { apiGroups: [""], resources: ["configmaps"], verbs: ["delete"] }
 */
export const forbidden = (message: string, code = 403): Forbidden => {
  const found = denial.exec(message)
  if (found === null) return new Forbidden({ message, code })
  const rule: MissingRule = { apiGroups: [found[3]!], resources: [found[2]!], verbs: [found[1]!] }
  return new Forbidden({ message: `${message} (rbac: ${JSON.stringify(rule)})`, code, rule })
}

const ruleEndingPattern = / \(rbac: \{"apiGroups":.*\}\)$/

/**
 * The rule a 403's message ends with (as `forbidden` writes it), with its leading space; undefined
 * for any other message. What a cut of the message keeps whole.
 *
 * @example
 * import { KubeError } from "@kubefx/kube"
 * KubeError.ruleEnding(KubeError.forbidden('secrets is forbidden: User "u" cannot list resource "secrets" in API group "" at the cluster scope').message)
 * // ' (rbac: {"apiGroups":[""],"resources":["secrets"],"verbs":["list"]})'
 */
export const ruleEnding = (message: string): string | undefined => ruleEndingPattern.exec(message)?.[0]

/** 429, with the server's Retry-After in seconds. */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", {
  ...fields,
  retryAfterSeconds: Schema.Number
}) {}
/** 5xx other than 504. */
export class ServerError extends Schema.TaggedError<ServerError>()("ServerError", fields) {}
/** 504, or a client-side request timeout. */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", fields) {}
/** The request did not get an HTTP answer (connection refused, reset, TLS failure), or the answer was unreadable. */
export class Transport extends Schema.TaggedError<Transport>()("Transport", { message: Schema.String }) {}

export type KubeError =
  | NotFound
  | Conflict
  | AlreadyExists
  | Gone
  | Invalid
  | BadRequest
  | Unauthorized
  | Forbidden
  | TooManyRequests
  | ServerError
  | Timeout
  | Transport

interface StatusBody {
  readonly message?: unknown
  readonly reason?: unknown
  readonly details?: { readonly causes?: unknown; readonly retryAfterSeconds?: unknown } | undefined
}

/**
 * The typed error for an HTTP error answer with its metav1.Status body (or whatever came back).
 *
 * @example
 * import { KubeError } from "@kubefx/kube"
 * KubeError.fromStatus(404, { reason: "NotFound", message: 'widgets "a" not found' })._tag // "NotFound"
 */
export const fromStatus = (code: number, body: unknown, retryAfterHeader?: string | undefined): KubeError => {
  const status = (typeof body === "object" && body !== null ? body : {}) as StatusBody
  const message = typeof status.message === "string" ? status.message : `HTTP ${code}`
  const causes = Array.isArray(status.details?.causes) ? (status.details.causes as ReadonlyArray<Cause>) : []
  switch (code) {
    case 404:
      return new NotFound({ message, code })
    case 409:
      return status.reason === "AlreadyExists" ? new AlreadyExists({ message, code }) : new Conflict({ message, code, causes })
    case 410:
      return new Gone({ message, code })
    case 422:
      return new Invalid({ message, code, causes })
    case 401:
      return new Unauthorized({ message, code })
    case 403:
      return forbidden(message, code)
    case 429: {
      const fromBody = Number(status.details?.retryAfterSeconds)
      const fromHeader = Number(retryAfterHeader)
      const retryAfterSeconds = Number.isFinite(fromBody) && fromBody > 0 ? fromBody : Number.isFinite(fromHeader) ? fromHeader : 1
      return new TooManyRequests({ message, code, retryAfterSeconds })
    }
    case 504:
      return new Timeout({ message, code })
  }
  return code >= 500 ? new ServerError({ message, code }) : new BadRequest({ message, code })
}

/**
 * Whether retrying the same request later can succeed: 429, 5xx, timeouts and transport failures.
 *
 * @example
 * import { KubeError } from "@kubefx/kube"
 * KubeError.isRetriable(KubeError.fromStatus(503, {})) // true
 */
export const isRetriable = (error: KubeError): boolean =>
  error._tag === "TooManyRequests" || error._tag === "ServerError" || error._tag === "Timeout" ||
  error._tag === "Transport"
