/**
 * authorization.k8s.io/v1: SelfSubjectAccessReview (`kubectl auth can-i`), SelfSubjectRulesReview
 * (`kubectl auth can-i --list`), SubjectAccessReview and LocalSubjectAccessReview, answered by the
 * server's authorizer: RBAC over the stored roles and bindings, with `system:masters` allowed
 * everything; an allowed review's `reason` names the binding that allowed it, as kube-apiserver's.
 * Requests are validated as 1.32 validates them.
 */
import { Effect } from "effect"
import type * as Authentication from "./Authentication.ts"
import type * as Authorization from "./Authorization.ts"
import * as CreateOnly from "./CreateOnly.ts"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const group = "authorization.k8s.io"

const target = (kind: string, plural: string) => ({ group, kind, plural, version: "v1" })

const specOf = (body: KubeObject.KubeObject): KubeObject.KubeObject => (KubeObject.isObject(body.spec) ? body.spec : {})

// Exactly one of resourceAttributes and nonResourceAttributes, as every access review needs.
const attributeCauses = (spec: KubeObject.KubeObject): Array<Status.StatusCause> => {
  const resource = spec.resourceAttributes ?? null
  const nonResource = spec.nonResourceAttributes ?? null
  if (resource !== null && nonResource !== null) {
    return [Status.fieldInvalid("spec.nonResourceAttributes", nonResource, "cannot be specified in combination with resourceAttributes")]
  }
  if (resource === null && nonResource === null) {
    return [Status.fieldInvalid("spec.resourceAttributes", null, "exactly one of nonResourceAttributes or resourceAttributes must be specified")]
  }
  return []
}

const subjectCauses = (spec: KubeObject.KubeObject): Array<Status.StatusCause> => {
  const user = typeof spec.user === "string" ? spec.user : ""
  const groups = Array.isArray(spec.groups) ? spec.groups : []
  return user === "" && groups.length === 0
    ? [Status.fieldInvalid("spec.user", user, "at least one of user or group must be specified")]
    : []
}

// The namespace comes from the URL; a different one in the body is a 400, as for any create.
const inNamespace = (body: KubeObject.KubeObject, namespace: string | undefined) => {
  const inBody = KubeObject.meta(body).namespace
  return inBody !== undefined && inBody !== "" && inBody !== namespace
    ? Effect.fail(Status.badRequest("the namespace of the provided object does not match the namespace sent on the request"))
    : Effect.succeed(KubeObject.withMeta(body, { namespace }))
}

const text = (value: unknown): string => (typeof value === "string" ? value : "")

// The request a review asks about, from its one set of attributes.
const requestOf = (spec: KubeObject.KubeObject): Authorization.Request => {
  const resource = spec.resourceAttributes
  if (KubeObject.isObject(resource)) {
    return {
      _tag: "Resource",
      verb: text(resource.verb),
      group: text(resource.group),
      resource: text(resource.resource),
      subresource: text(resource.subresource),
      namespace: text(resource.namespace),
      name: text(resource.name)
    }
  }
  const nonResource = KubeObject.isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : {}
  return { _tag: "NonResource", verb: text(nonResource.verb), path: text(nonResource.path) }
}

// The user a SubjectAccessReview names: its groups as given (no implied system:authenticated).
const subjectOf = (spec: KubeObject.KubeObject): Authentication.User => ({
  username: text(spec.user),
  groups: Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === "string") : []
})

const review = (
  kind: string,
  plural: string,
  namespaced: boolean,
  causesOf: (body: KubeObject.KubeObject) => ReadonlyArray<Status.StatusCause>,
  who: (spec: KubeObject.KubeObject, requester: Authentication.User) => Authentication.User
): Registry.Resource => {
  const type = target(kind, plural)
  return CreateOnly.resource({ group, kind, plural, namespaced }, ({ authorization, body, namespace, user }) =>
    Effect.gen(function*() {
      yield* CreateOnly.checkTypeMeta(type, body)
      const placed = namespaced ? yield* inNamespace(body, namespace) : body
      const causes = causesOf(placed)
      if (causes.length > 0) return yield* Status.invalid(type, "", causes)
      const spec = specOf(placed)
      const { allowed, reason } = authorization.decide(who(spec, user), requestOf(spec))
      return CreateOnly.respond(type, placed, { allowed, ...(reason === "" ? {} : { reason }) })
    }))
}

const selfSubjectAccessReview = review("SelfSubjectAccessReview", "selfsubjectaccessreviews", false, (body) => [
  ...attributeCauses(specOf(body)),
  ...(CreateOnly.emptyMeta(body) ? [] : [Status.fieldInvalid("metadata", KubeObject.meta(body), "must be empty")])
], (_, requester) => requester)

const subjectAccessReview = review("SubjectAccessReview", "subjectaccessreviews", false, (body) => [
  ...attributeCauses(specOf(body)),
  ...subjectCauses(specOf(body)),
  ...(CreateOnly.emptyMeta(body) ? [] : [Status.fieldInvalid("metadata", KubeObject.meta(body), "must be empty")])
], subjectOf)

const localCauses = (body: KubeObject.KubeObject): Array<Status.StatusCause> => {
  const spec = specOf(body)
  const namespace = KubeObject.meta(body).namespace ?? ""
  const resource = KubeObject.isObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined
  const given = typeof resource?.namespace === "string" ? resource.namespace : ""
  return [
    ...attributeCauses(spec),
    ...subjectCauses(spec),
    ...(CreateOnly.emptyMeta(body, ["namespace"])
      ? []
      : [Status.fieldInvalid("metadata", KubeObject.meta(body), "must be empty except for namespace")]),
    ...(resource !== undefined && given !== namespace
      ? [Status.fieldInvalid("spec.resourceAttributes.namespace", given, "must match metadata.namespace")]
      : []),
    ...(spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null
      ? [Status.fieldInvalid("spec.nonResourceAttributes", spec.nonResourceAttributes, "disallowed on this kind of request")]
      : [])
  ]
}

const localSubjectAccessReview = review("LocalSubjectAccessReview", "localsubjectaccessreviews", true, localCauses, subjectOf)

const rulesType = target("SelfSubjectRulesReview", "selfsubjectrulesreviews")

const selfSubjectRulesReview = CreateOnly.resource(
  { group, kind: rulesType.kind, plural: rulesType.plural, namespaced: false },
  ({ authorization, body, user }) =>
    Effect.gen(function*() {
      yield* CreateOnly.checkTypeMeta(rulesType, body)
      const namespace = specOf(body).namespace
      if (typeof namespace !== "string" || namespace === "") return yield* Status.badRequest("no namespace on request")
      const rules = authorization.rules(user, namespace)
      return CreateOnly.respond(rulesType, body, {
        resourceRules: rules.filter((rule) => (rule.resources ?? []).length > 0).map((rule) => ({
          verbs: rule.verbs,
          apiGroups: rule.apiGroups ?? [],
          resources: rule.resources ?? [],
          ...((rule.resourceNames ?? []).length > 0 ? { resourceNames: rule.resourceNames } : {})
        })),
        nonResourceRules: rules.filter((rule) => (rule.nonResourceURLs ?? []).length > 0).map((rule) => ({
          verbs: rule.verbs,
          nonResourceURLs: rule.nonResourceURLs
        })),
        incomplete: false
      })
    })
)

/**
 * The authorization.k8s.io/v1 kinds, in discovery order.
 *
 * @example
 * import * as AccessReviews from "./AccessReviews.ts"
 * AccessReviews.resources.map((r) => r.type.plural)
 * // ["localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"]
 */
export const resources: ReadonlyArray<Registry.Resource> = [
  localSubjectAccessReview,
  selfSubjectAccessReview,
  selfSubjectRulesReview,
  subjectAccessReview
]
