/**
 * Errors as the Kubernetes API reports them: a `metav1.Status` body with a code, a reason and
 * details. Every failure the server answers is an `ApiError`; the constructors here write the
 * messages exactly as kube-apiserver does, since clients (kubectl, client-go) match on them.
 */
import { Schema } from "effect"
import * as ResourceType from "./ResourceType.ts"

/** One field-level cause of a failure (`details.causes[]`). */
export const StatusCause = Schema.Struct({
  reason: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String),
  field: Schema.optionalKey(Schema.String)
})
export type StatusCause = typeof StatusCause.Type

export const StatusDetails = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  group: Schema.optionalKey(Schema.String),
  kind: Schema.optionalKey(Schema.String),
  uid: Schema.optionalKey(Schema.String),
  causes: Schema.optionalKey(Schema.Array(StatusCause)),
  retryAfterSeconds: Schema.optionalKey(Schema.Int)
})
export type StatusDetails = typeof StatusDetails.Type

/**
 * A failed API request, rendered as a `metav1.Status` with HTTP status `code`; `warnings` are those
 * the request met before it failed, sent as `Warning` headers beside the Status, as kube-apiserver
 * sends what its warning recorder holds with any answer.
 */
export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  code: Schema.Int,
  reason: Schema.String,
  message: Schema.String,
  details: Schema.optionalKey(StatusDetails),
  warnings: Schema.optionalKey(Schema.Array(Schema.String)),
  /** The Status's `metadata.continue`: where an expired list may go on from. */
  continue: Schema.optionalKey(Schema.String)
}) {}

/**
 * `error` with the `warnings` met before it, ahead of those it carries.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.warned(Status.badRequest("bad"), ['unknown field "spec.x"']).warnings // ['unknown field "spec.x"']
 */
export const warned = (error: ApiError, warnings: ReadonlyArray<string>): ApiError =>
  warnings.length === 0 ? error : new ApiError({
    code: error.code,
    reason: error.reason,
    message: error.message,
    ...(error.details === undefined ? {} : { details: error.details }),
    ...(error.continue === undefined ? {} : { continue: error.continue }),
    warnings: [...warnings, ...(error.warnings ?? [])]
  })

/** The names a message uses for a resource: its group and plural, and its group and kind. */
export type Target = Pick<ResourceType.ResourceType, "group" | "plural" | "kind">

/**
 * The `metav1.Status` body for an error.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.toBody(Status.badRequest("bad")).code // 400
 */
export const toBody = (error: ApiError): Record<string, unknown> => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: error.continue === undefined ? {} : { continue: error.continue },
  status: "Failure",
  message: error.message,
  // kube's StatusReasonUnknown is empty, and omitted.
  ...(error.reason === "" ? {} : { reason: error.reason }),
  ...(error.details === undefined ? {} : { details: error.details }),
  code: error.code
})

/**
 * The body of a create answered with a bare success (a Pod's binding or eviction), as kube writes it.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.created.code // 201
 */
export const created = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 } as const

/**
 * The success body of a delete without finalizers.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.success({ group: "", plural: "configmaps", kind: "ConfigMap" }, "x", "u").status // "Success"
 */
export const success = (target: Target, name: string, uid: string | undefined): Record<string, unknown> => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Success",
  details: { name, group: target.group, kind: target.plural, ...(uid === undefined ? {} : { uid }) }
})

const make = (code: number, reason: string, message: string, details?: StatusDetails) =>
  new ApiError(details === undefined ? { code, reason, message } : { code, reason, message, details })

const resourceDetails = (target: Pick<Target, "group" | "plural">, name: string): StatusDetails => ({
  name,
  group: target.group,
  kind: target.plural
})

/**
 * 400 BadRequest.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.badRequest("the name of the object (a) does not match the name on the URL (b)").code // 400
 */
export const badRequest = (message: string, causes?: ReadonlyArray<StatusCause>): ApiError =>
  make(400, "BadRequest", message, causes === undefined ? undefined : { causes })

/**
 * 401 Unauthorized.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.unauthorized().reason // "Unauthorized"
 */
export const unauthorized = (): ApiError => make(401, "Unauthorized", "Unauthorized")

/**
 * 403 Forbidden, with the resource's names.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.forbidden({ group: "", plural: "namespaces", kind: "Namespace" }, "default", "this namespace may not be deleted").code // 403
 */
export const forbidden = (target: Pick<Target, "group" | "plural">, name: string, why: string): ApiError =>
  make(
    403,
    "Forbidden",
    `${ResourceType.qualifiedResource(target)}${name === "" ? "" : ` "${name}"`} is forbidden: ${why}`,
    name === "" ? { group: target.group, kind: target.plural } : resourceDetails(target, name)
  )

/**
 * 403 Forbidden for a request on no resource (a path the authorizer denies).
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.forbiddenRequest('forbidden: User "u" cannot get path "/metrics"').reason // "Forbidden"
 */
export const forbiddenRequest = (message: string): ApiError => make(403, "Forbidden", message)

/**
 * 404 NotFound: `configmaps "x" not found`.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.notFound({ group: "", plural: "configmaps", kind: "ConfigMap" }, "x").message // 'configmaps "x" not found'
 */
export const notFound = (target: Target, name: string): ApiError =>
  make(404, "NotFound", `${ResourceType.qualifiedResource(target)} "${name}" not found`, resourceDetails(target, name))

/**
 * 404 NotFound for a path the server does not serve.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.pathNotFound().message // "the server could not find the requested resource"
 */
export const pathNotFound = (): ApiError =>
  make(404, "NotFound", "the server could not find the requested resource", {})

/**
 * 405 MethodNotAllowed.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.methodNotAllowed("POST").code // 405
 */
export const methodNotAllowed = (method: string): ApiError =>
  make(405, "MethodNotAllowed", `the server does not allow this method on the requested resource: ${method}`, {})

/**
 * 406 NotAcceptable: no media type the client accepts is served.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.notAcceptable("application/xml").code // 406
 */
export const notAcceptable = (accept: string): ApiError =>
  make(
    406,
    "NotAcceptable",
    `only the following media types are accepted: application/json, application/yaml (requested: ${accept})`
  )

/**
 * 406 NotAcceptable: the representation the client chose cannot hold the answer.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.unrepresentable("you requested PartialObjectMetadata, but the requested object is a list (ConfigMapList)").reason // "NotAcceptable"
 */
export const unrepresentable = (message: string): ApiError => make(406, "NotAcceptable", message)

/**
 * 409 AlreadyExists.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.alreadyExists({ group: "apps", plural: "deployments", kind: "Deployment" }, "web").message // 'deployments.apps "web" already exists'
 */
export const alreadyExists = (target: Target, name: string): ApiError =>
  make(
    409,
    "AlreadyExists",
    `${ResourceType.qualifiedResource(target)} "${name}" already exists`,
    resourceDetails(target, name)
  )

/**
 * 409 Conflict: `Operation cannot be fulfilled on ...: <why>`.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.conflict({ group: "", plural: "configmaps", kind: "ConfigMap" }, "x", Status.modified).code // 409
 */
export const conflict = (target: Target, name: string, why: string): ApiError =>
  make(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${ResourceType.qualifiedResource(target)} "${name}": ${why}`,
    resourceDetails(target, name)
  )

/** The reason optimistic concurrency failures give. */
export const modified = "the object has been modified; please apply your changes to the latest version and try again"

/**
 * 410 Expired.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.expired("too old resource version: 5 (120)").code // 410
 */
export const expired = (message: string): ApiError => make(410, "Expired", message)

/**
 * 410 Expired for a list's continue token whose revision is compacted, with the token that goes on
 * from where it stopped at the latest revision, as etcd3's paging answers it.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.toBody(Status.continueExpired("eyJ...")).metadata // { continue: "eyJ..." }
 */
export const continueExpired = (token: string): ApiError =>
  new ApiError({
    code: 410,
    reason: "Expired",
    message: "The provided continue parameter is too old to display a consistent list result. You can start a new list " +
      "without the continue parameter, or use the continue token in this response to retrieve the remainder of the " +
      "results. Continuing with the provided token results in an inconsistent list - objects that were created, " +
      "modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    continue: token
  })

/**
 * 413 RequestEntityTooLarge.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.tooLarge("limit is 3145728").code // 413
 */
export const tooLarge = (message: string): ApiError => make(413, "RequestEntityTooLarge", message)

/**
 * 415 UnsupportedMediaType, listing what the endpoint accepts.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.unsupportedMediaType(["application/json"]).message
 * // "the body of the request was in an unknown format - accepted media types include: application/json"
 */
export const unsupportedMediaType = (accepted: ReadonlyArray<string>): ApiError =>
  make(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`
  )

/**
 * 422 Invalid: `<Kind.group> "<name>" is invalid: <causes>`, one cause per field; `details.kind`
 * is the kind (not the plural).
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.invalid({ group: "", plural: "configmaps", kind: "ConfigMap" }, "x", [
 *   { reason: "FieldValueRequired", message: "Required value", field: "metadata.name" }
 * ]).message // 'ConfigMap "x" is invalid: metadata.name: Required value'
 */
export const invalid = (target: Target, name: string, causes: ReadonlyArray<StatusCause>): ApiError => {
  const parts = causes.map((c) => (c.field === undefined || c.field === "" ? c.message ?? "" : `${c.field}: ${c.message ?? ""}`))
  const summary = parts.length === 1 ? parts[0]! : `[${parts.join(", ")}]`
  return make(422, "Invalid", `${ResourceType.qualifiedKind(target)} "${name}" is invalid: ${summary}`, {
    name,
    group: target.group,
    kind: target.kind,
    causes
  })
}

/**
 * A 422 cause for a bad value, written the way apimachinery's field errors are.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.fieldInvalid("metadata.name", "A_B", "must be lowercase").message // 'Invalid value: "A_B": must be lowercase'
 */
export const fieldInvalid = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: "FieldValueInvalid",
  message: `Invalid value: ${formatValue(value)}: ${detail}`,
  field
})

/**
 * A 422 cause for a missing value.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.fieldRequired("metadata.name", "name or generateName is required").message
 * // "Required value: name or generateName is required"
 */
export const fieldRequired = (field: string, detail?: string): StatusCause => ({
  reason: "FieldValueRequired",
  message: detail === undefined ? "Required value" : `Required value: ${detail}`,
  field
})

/**
 * A 422 cause for a forbidden change.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.fieldForbidden("metadata.finalizers", "no new finalizers can be added if the object is being deleted").message
 * // "Forbidden: no new finalizers can be added if the object is being deleted"
 */
export const fieldForbidden = (field: string, detail: string): StatusCause => ({
  reason: "FieldValueForbidden",
  message: `Forbidden: ${detail}`,
  field
})

/**
 * 422 Invalid for request options rather than an object (`details.kind` names the options kind).
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.invalidOptions("PatchOptions", [Status.fieldRequired("fieldManager", "is required for apply patch")]).code // 422
 */
export const invalidOptions = (kind: string, causes: ReadonlyArray<StatusCause>): ApiError => {
  const parts = causes.map((c) => `${c.field ?? ""}: ${c.message ?? ""}`)
  return make(422, "Invalid", `${kind}.meta.k8s.io "" is invalid: ${parts.length === 1 ? parts[0] : `[${parts.join(", ")}]`}`, {
    group: "meta.k8s.io",
    kind,
    causes
  })
}

/**
 * 429 TooManyRequests, with `details.retryAfterSeconds` (also sent as the Retry-After header).
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.tooManyRequests(2).details?.retryAfterSeconds // 2
 */
export const tooManyRequests = (retryAfterSeconds: number): ApiError =>
  make(429, "TooManyRequests", "Too many requests, please try again later.", { retryAfterSeconds })

/**
 * 500 InternalError.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.internal("resourceVersion should not be set on objects to be created").code // 500
 */
export const internal = (message: string): ApiError =>
  make(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] })

/**
 * 500 with no reason: what kube-apiserver answers for an error that is not an API status (a
 * conversion webhook's failure), its message as it is.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.unknown("conversion webhook for demo/v1, Kind=Widget failed: ...").reason // ""
 */
export const unknown = (message: string): ApiError => make(500, "", message)

/**
 * Another 5xx, e.g. 503 ServiceUnavailable from fault injection.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.serverError(503, "injected").reason // "ServiceUnavailable"
 */
export const serverError = (code: number, message: string): ApiError =>
  make(code, code === 503 ? "ServiceUnavailable" : code === 504 ? "Timeout" : "InternalError", message)

/**
 * 504 Timeout.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.timeout("request did not complete within 60s").code // 504
 */
export const timeout = (message: string): ApiError => make(504, "Timeout", message)

/**
 * 504 for a list at a resourceVersion the server has not reached (kube-apiserver waits up to 3 s
 * for its cache first); clients retry after a second.
 *
 * @example
 * import * as Status from "./Status.ts"
 * Status.resourceVersionTooLarge(500, 120).details?.causes?.[0]?.reason // "ResourceVersionTooLarge"
 */
export const resourceVersionTooLarge = (requested: number, current: number): ApiError =>
  make(504, "Timeout", `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds: 1
  })

const formatValue = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (value === null || value === undefined) return "null"
  if (typeof value === "object") return JSON.stringify(value)
  return String(value)
}
