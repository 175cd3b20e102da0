/**
 * Kinds that are only ever created and never stored: access reviews, SelfSubjectReview,
 * TokenReview and the legacy `bindings` (a Pod's binding). A create answers with the request echoed and a status computed from it; the
 * collection has no list, get, watch or delete (405), and nothing reaches the store or its watches.
 */
import { Effect } from "effect"
import type * as Authentication from "./Authentication.ts"
import type * as Authorization from "./Authorization.ts"
import type * as Registry from "./Registry.ts"
import type * as Rest from "./Rest.ts"
import * as ResourceType from "./ResourceType.ts"
import * as Status from "./Status.ts"
import * as Structure from "./Structure.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** What a create-only kind's handler knows of the request. */
export interface Request {
  readonly env: Rest.Env
  readonly body: KubeObject.KubeObject
  /** Whether the create is a dry run (`dryRun=All`). */
  readonly dryRun: boolean
  /** The namespace from the URL (namespaced kinds only). */
  readonly namespace: string | undefined
  /** Who sent the request. */
  readonly user: Authentication.User
  readonly authentication: Authentication.Authentication
  readonly authorization: Authorization.Authorization
}

/** Computes the response object of a create. */
export type Handler = (request: Request) => Effect.Effect<KubeObject.KubeObject, Status.ApiError>

/**
 * The registry entry of a create-only kind: verbs `["create"]`, no storage of its own.
 *
 * @example
 * import { Effect } from "effect"
 * import * as CreateOnly from "./CreateOnly.ts"
 * const r = CreateOnly.resource({ group: "authentication.k8s.io", kind: "SelfSubjectReview", plural: "selfsubjectreviews", namespaced: false },
 *   (request) => Effect.succeed(request.body))
 * r.type.verbs // ["create"]
 */
export const resource = (
  spec: { readonly group: string; readonly kind: string; readonly plural: string; readonly namespaced: boolean },
  handler: Handler
): Registry.Resource => ({
  type: {
    group: spec.group,
    version: "v1",
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    namespaced: spec.namespaced,
    shortNames: [],
    categories: [],
    verbs: ["create"],
    subresources: { status: false },
    custom: false,
    structure: Structure.unknown,
    selectableFields: [],
    printerColumns: []
  },
  storage: `${spec.plural}.${spec.group}`,
  generation: false,
  unconditionalUpdate: true,
  createOnly: handler
})

/**
 * 400 when the body names another apiVersion or kind than the endpoint serves, as for any create.
 *
 * @example
 * import { Effect } from "effect"
 * import * as CreateOnly from "./CreateOnly.ts"
 * Effect.runSync(Effect.flip(CreateOnly.checkTypeMeta({ group: "authentication.k8s.io", version: "v1", kind: "TokenReview" }, { kind: "Pod" }))).code // 400
 */
export const checkTypeMeta = (
  type: Pick<ResourceType.ResourceType, "group" | "version" | "kind">,
  body: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> => {
  const expected = ResourceType.groupVersion(type)
  if (typeof body.apiVersion === "string" && body.apiVersion !== "" && body.apiVersion !== expected) {
    return Effect.fail(
      Status.badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (${expected})`)
    )
  }
  if (typeof body.kind === "string" && body.kind !== "" && body.kind !== type.kind) {
    return Effect.fail(Status.badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${type.kind})`))
  }
  return Effect.void
}

// Protobuf bodies carry every unset field as its zero value ("", 0, the epoch as
// creationTimestamp); Go writes ObjectMeta with those fields left out and a zero time as null.
const zeroTimes = new Set<unknown>([undefined, null, "", "1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z"])

const isZero = (value: unknown): boolean =>
  value === undefined || value === null || value === "" || value === 0 ||
  (Array.isArray(value) && value.length === 0) || (KubeObject.isObject(value) && Object.keys(value).length === 0)

/**
 * The request's metadata as a create-only response echoes it: zero fields left out, a zero
 * creationTimestamp as null.
 *
 * @example
 * import * as CreateOnly from "./CreateOnly.ts"
 * CreateOnly.echoedMeta({ metadata: { name: "", generation: 0 } }) // { creationTimestamp: null }
 */
export const echoedMeta = (body: KubeObject.KubeObject): KubeObject.KubeObject => {
  const m = KubeObject.meta(body)
  const kept = Object.entries(m).filter(([k, v]) => k !== "creationTimestamp" && !isZero(v))
  return { ...Object.fromEntries(kept), creationTimestamp: zeroTimes.has(m.creationTimestamp) ? null : m.creationTimestamp }
}

/**
 * Whether the request's metadata is empty (what access reviews require), apart from `except`, the
 * managedFields clients may send and zero values.
 *
 * @example
 * import * as CreateOnly from "./CreateOnly.ts"
 * CreateOnly.emptyMeta({ metadata: { creationTimestamp: null } }) // true
 * CreateOnly.emptyMeta({ metadata: { name: "x" } }) // false
 */
export const emptyMeta = (body: KubeObject.KubeObject, except: ReadonlyArray<string> = []): boolean =>
  Object.entries(echoedMeta(body)).every(([k, v]) =>
    k === "creationTimestamp" ? v === null : k === "managedFields" || except.includes(k)
  )

/**
 * The response to a create: the request as sent, with the kind's apiVersion and kind, and `status`.
 *
 * @example
 * import * as CreateOnly from "./CreateOnly.ts"
 * CreateOnly.respond({ group: "authentication.k8s.io", version: "v1", kind: "TokenReview" }, { spec: { token: "t" } }, { authenticated: true }).status
 * // { authenticated: true }
 */
export const respond = (
  type: Pick<ResourceType.ResourceType, "group" | "version" | "kind">,
  body: KubeObject.KubeObject,
  status: KubeObject.KubeObject
): KubeObject.KubeObject => ({
  ...body,
  kind: type.kind,
  apiVersion: ResourceType.groupVersion(type),
  metadata: echoedMeta(body),
  status
})
