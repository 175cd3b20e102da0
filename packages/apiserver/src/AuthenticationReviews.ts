/**
 * authentication.k8s.io/v1's create-only kinds: SelfSubjectReview (`kubectl auth whoami`), which
 * answers with the user of the request, and TokenReview, which says who a bearer token is (for
 * the audiences it names, else the server's), as webhook token authenticators ask a cluster.
 */
import { Effect } from "effect"
import type * as Authentication from "./Authentication.ts"
import * as CreateOnly from "./CreateOnly.ts"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const group = "authentication.k8s.io"

/**
 * A user as UserInfo serializes it (empty fields left out, as Go's omitempty does).
 *
 * @example
 * import * as AuthenticationReviews from "./AuthenticationReviews.ts"
 * AuthenticationReviews.userInfo({ username: "kubefx-admin", groups: ["system:masters"] })
 * // { username: "kubefx-admin", groups: ["system:masters"] }
 */
export const userInfo = (user: Authentication.User): KubeObject.KubeObject => ({
  username: user.username,
  ...(user.uid === undefined || user.uid === "" ? {} : { uid: user.uid }),
  ...(user.groups.length === 0 ? {} : { groups: user.groups }),
  ...(user.extra === undefined || Object.keys(user.extra).length === 0 ? {} : { extra: user.extra })
})

const selfType = { group, version: "v1", kind: "SelfSubjectReview" }

const selfSubjectReview = CreateOnly.resource(
  { group, kind: selfType.kind, plural: "selfsubjectreviews", namespaced: false },
  ({ body, user }) =>
    Effect.gen(function*() {
      yield* CreateOnly.checkTypeMeta(selfType, body)
      return {
        kind: selfType.kind,
        apiVersion: `${group}/v1`,
        metadata: { creationTimestamp: KubeObject.timestamp() },
        status: { userInfo: userInfo(user) }
      }
    })
)

const tokenType = { group, version: "v1", kind: "TokenReview" }

const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

const tokenReview = CreateOnly.resource(
  { group, kind: tokenType.kind, plural: "tokenreviews", namespaced: false },
  ({ authentication, body }) =>
    Effect.gen(function*() {
      yield* CreateOnly.checkTypeMeta(tokenType, body)
      const spec = KubeObject.isObject(body.spec) ? body.spec : {}
      const token = typeof spec.token === "string" ? spec.token : ""
      if (token === "") return yield* Status.badRequest("token is required for TokenReview in authentication")
      const outcome = authentication.authenticate(token, strings(spec.audiences))
      const status = outcome._tag === "Authenticated"
        ? { authenticated: true, user: userInfo(outcome.user), audiences: outcome.audiences }
        : { user: {}, error: outcome.error }
      return CreateOnly.respond(tokenType, body, status)
    })
)

/**
 * The authentication.k8s.io/v1 kinds, in discovery order.
 *
 * @example
 * import * as AuthenticationReviews from "./AuthenticationReviews.ts"
 * AuthenticationReviews.resources.map((r) => r.type.kind) // ["SelfSubjectReview", "TokenReview"]
 */
export const resources: ReadonlyArray<Registry.Resource> = [selfSubjectReview, tokenReview]
