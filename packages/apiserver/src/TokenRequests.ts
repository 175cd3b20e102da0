/**
 * The `token` subresource of ServiceAccounts (`POST .../serviceaccounts/<name>/token`, a
 * TokenRequest of authentication.k8s.io/v1), which `kubectl create token` uses: it issues a
 * signed service account token for an existing ServiceAccount, optionally bound to a Pod, Secret
 * or Node in its lifetime. Nothing is stored; the token is checked on use (ServiceAccountTokens).
 */
import { Effect } from "effect"
import * as CreateOnly from "./CreateOnly.ts"
import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

const tokenRequest = { group: "authentication.k8s.io", plural: "tokenrequests", kind: "TokenRequest" }

/** As 1.32: one hour unless asked otherwise, at least ten minutes, at most 2^32 seconds. */
export const defaultExpirationSeconds = 3600
export const minExpirationSeconds = 600
const maxExpirationSeconds = 2 ** 32

/**
 * The discovery entry of the subresource, listed under v1's serviceaccounts.
 *
 * @example
 * import * as TokenRequests from "./TokenRequests.ts"
 * TokenRequests.discovery.name // "serviceaccounts/token"
 */
export const discovery = {
  name: "serviceaccounts/token",
  singularName: "",
  namespaced: true,
  group: "authentication.k8s.io",
  version: "v1",
  kind: "TokenRequest",
  verbs: ["create"]
}

const notFound = (plural: string, name: string) => Status.notFound({ group: "", plural, kind: "" }, name)

const invalid = (name: string, cause: Status.StatusCause) => Status.invalid(tokenRequest, name, [cause])

const checkBody = (body: KubeObject.KubeObject, namespace: string, name: string) => {
  if (typeof body.apiVersion === "string" && body.apiVersion !== "" && body.apiVersion !== "authentication.k8s.io/v1") {
    return Effect.fail(Status.badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (authentication.k8s.io/v1)`))
  }
  if (typeof body.kind === "string" && body.kind !== "" && body.kind !== "TokenRequest") {
    return Effect.fail(Status.badRequest(`the kind in the data (${body.kind}) does not match the expected kind (TokenRequest)`))
  }
  const m = KubeObject.meta(body)
  if (m.name !== undefined && m.name !== "" && m.name !== name) {
    return Effect.fail(invalid(name, Status.fieldInvalid("metadata.name", m.name, "must match the service account name if specified")))
  }
  if (m.namespace !== undefined && m.namespace !== "" && m.namespace !== namespace) {
    return Effect.fail(
      invalid(name, Status.fieldInvalid("metadata.namespace", m.namespace, "must match the service account namespace if specified"))
    )
  }
  return Effect.void
}

const expirationOf = (spec: KubeObject.KubeObject) => {
  const seconds = spec.expirationSeconds ?? defaultExpirationSeconds
  if (typeof seconds !== "number" || !Number.isSafeInteger(seconds)) {
    return Effect.fail(Status.badRequest(`spec.expirationSeconds: Invalid value: ${JSON.stringify(seconds)}: must be an integer`))
  }
  if (seconds < minExpirationSeconds) {
    return Effect.fail(invalid("", Status.fieldInvalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")))
  }
  if (seconds > maxExpirationSeconds) {
    return Effect.fail(invalid("", Status.fieldInvalid("spec.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds")))
  }
  return Effect.succeed(seconds)
}

const refOf = (object: KubeObject.KubeObject): ServiceAccountTokens.Ref => {
  const m = KubeObject.meta(object)
  return { name: m.name ?? "", ...(m.uid === undefined ? {} : { uid: m.uid }) }
}

// The object a token is bound to, checked as 1.32 checks it; a Pod-bound token also names its node.
const boundObjects = Effect.fnUntraced(function*(store: Store.Store, namespace: string, name: string, ref: KubeObject.KubeObject) {
  const kind = typeof ref.kind === "string" ? ref.kind : ""
  const apiVersion = typeof ref.apiVersion === "string" ? ref.apiVersion : ""
  const refName = typeof ref.name === "string" ? ref.name : ""
  const [storage, scope] = apiVersion !== "v1" ? [undefined, ""] : kind === "Pod" ? ["pods", namespace] : kind === "Secret"
    ? ["secrets", namespace]
    : kind === "Node" ? ["nodes", ""] : [undefined, ""]
  if (storage === undefined) {
    const [g, v] = apiVersion.includes("/") ? apiVersion.split("/", 2) : ["", apiVersion]
    return yield* Status.badRequest(`cannot bind token to object of type ${g}/${v}, Kind=${kind}`)
  }
  const object = store.get(storage, scope, refName)
  if (object === undefined) return yield* notFound(storage, refName)
  const uid = KubeObject.meta(object).uid
  if (typeof ref.uid === "string" && ref.uid !== "" && ref.uid !== uid) {
    return yield* Status.conflict(
      { group: "", plural: kind, kind },
      refName,
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`
    )
  }
  if (kind === "Secret") return { secret: refOf(object) }
  if (kind === "Node") return { node: refOf(object) }
  const spec = KubeObject.isObject(object.spec) ? object.spec : {}
  if ((spec.serviceAccountName ?? "default") !== name) {
    return yield* Status.badRequest(`cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`)
  }
  const nodeName = typeof spec.nodeName === "string" ? spec.nodeName : ""
  const node = nodeName === "" ? undefined : store.get("nodes", "", nodeName)
  return {
    pod: refOf(object),
    ...(nodeName === "" ? {} : { node: node === undefined ? { name: nodeName } : refOf(node) })
  }
})

/**
 * Answers `POST /api/v1/namespaces/<namespace>/serviceaccounts/<name>/token`: the TokenRequest with
 * its defaults filled in and `status.token` and `status.expirationTimestamp` set. 404 when the
 * ServiceAccount does not exist, 422 for a lifetime under ten minutes.
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * import * as Store from "./Store.ts"
 * import * as TokenRequests from "./TokenRequests.ts"
 * const key = ServiceAccountTokens.signingKey(ServiceAccountTokens.generateKey())
 * const answer = TokenRequests.create(Store.make(), key, "default", "builder", { spec: {} }) // Effect: 404, no such ServiceAccount
 */
export const create = Effect.fnUntraced(function*(
  store: Store.Store,
  key: ServiceAccountTokens.SigningKey,
  namespace: string,
  name: string,
  body: KubeObject.KubeObject
) {
  yield* checkBody(body, namespace, name)
  const spec = KubeObject.isObject(body.spec) ? body.spec : {}
  const account = store.get("serviceaccounts", namespace, name)
  if (account === undefined) return yield* notFound("serviceaccounts", name)
  const expirationSeconds = yield* expirationOf(spec)
  const given = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === "string") : []
  const audiences = given.length === 0 ? ServiceAccountTokens.serverAudiences : given
  const ref = KubeObject.isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined
  const bound = ref === undefined ? undefined : yield* boundObjects(store, namespace, name, ref)
  const now = new Date()
  const claims = ServiceAccountTokens.claims({
    namespace,
    serviceAccount: refOf(account),
    audiences,
    expirationSeconds,
    now,
    ...(bound === undefined ? {} : { bound })
  })
  return {
    kind: "TokenRequest",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { ...CreateOnly.echoedMeta(body), name, namespace, creationTimestamp: KubeObject.timestamp(now) },
    spec: { ...spec, audiences, expirationSeconds, boundObjectRef: ref ?? null },
    status: {
      token: ServiceAccountTokens.sign(key, claims),
      expirationTimestamp: KubeObject.timestamp(new Date(claims.exp * 1000))
    }
  } satisfies KubeObject.KubeObject
})
