/**
 * Who a request is. The server knows two kinds of bearer token: its own (the one in the
 * kubeconfig it writes), which is the development user `kubefx-admin` in `system:masters`, and
 * service account tokens it issued (TokenRequest, `kubectl create token`), which are their
 * ServiceAccount. Anything else is refused with 401, as kube-apiserver refuses unknown tokens.
 */
import { timingSafeEqual } from "node:crypto"
import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
import type * as Store from "./Store.ts"

/** A user as authentication.k8s.io's UserInfo describes one. */
export interface User {
  readonly username: string
  readonly uid?: string
  readonly groups: ReadonlyArray<string>
  readonly extra?: Readonly<Record<string, ReadonlyArray<string>>>
}

/** What authenticating a token found (`error` is the TokenReview's `status.error`). */
export type Outcome =
  | { readonly _tag: "Authenticated"; readonly user: User; readonly audiences: ReadonlyArray<string> }
  | { readonly _tag: "Refused"; readonly error: string }

export interface Authentication {
  /** Who `token` is, for `audiences` (default: the server's own). */
  readonly authenticate: (token: string, audiences?: ReadonlyArray<string>) => Outcome
  /** The key service account tokens are signed with. */
  readonly signingKey: ServiceAccountTokens.SigningKey
}

/** The user the server's own token stands for: an administrator, as kind's kubeconfig user is. */
export const admin: User = { username: "kubefx-admin", groups: ["system:masters", "system:authenticated"] }

const invalidBearerToken = "invalid bearer token"

const sameToken = (given: string, expected: string): boolean => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined.
 *
 * @example
 * import * as Authentication from "./Authentication.ts"
 * Authentication.bearer("Bearer abc") // "abc"
 * Authentication.bearer("Basic abc") // undefined
 */
export const bearer = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const match = /^bearer\s+(\S+)\s*$/i.exec(header)
  return match === null ? undefined : match[1]
}

/**
 * Authentication for a server with bearer token `token`, signing service account tokens with
 * `signingKey` (PEM) and checking them against the ServiceAccounts in `store`.
 *
 * @example
 * import * as Authentication from "./Authentication.ts"
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * import * as Store from "./Store.ts"
 * const auth = Authentication.make({ token: "t", signingKey: ServiceAccountTokens.generateKey(), store: Store.make() })
 * auth.authenticate("t")._tag // "Authenticated"
 * auth.authenticate("other") // { _tag: "Refused", error: "invalid bearer token" }
 */
export const make = (options: {
  readonly token: string
  readonly signingKey: string
  readonly store: Store.Store
}): Authentication => {
  const signingKey = ServiceAccountTokens.signingKey(options.signingKey)
  const authenticate = (token: string, audiences?: ReadonlyArray<string>): Outcome => {
    const wanted = audiences === undefined || audiences.length === 0 ? ServiceAccountTokens.serverAudiences : audiences
    if (sameToken(token, options.token)) {
      // The server's own token is good for the server's audiences only, as kube-apiserver's
      // audience-agnostic authenticators are.
      const matched = ServiceAccountTokens.serverAudiences.filter((a) => wanted.includes(a))
      return matched.length === 0
        ? { _tag: "Refused", error: invalidBearerToken }
        : { _tag: "Authenticated", user: admin, audiences: matched }
    }
    const checked = ServiceAccountTokens.check(signingKey, options.store, token, wanted)
    switch (checked._tag) {
      case "Valid":
        return { _tag: "Authenticated", user: checked.user, audiences: checked.audiences }
      case "Invalid":
        return { _tag: "Refused", error: checked.error }
      case "NotOurs":
        return { _tag: "Refused", error: invalidBearerToken }
    }
  }
  return { authenticate, signingKey }
}

/**
 * The user behind a request's Authorization header, or undefined (401).
 *
 * @example
 * import * as Authentication from "./Authentication.ts"
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * import * as Store from "./Store.ts"
 * const auth = Authentication.make({ token: "t", signingKey: ServiceAccountTokens.generateKey(), store: Store.make() })
 * Authentication.userOf(auth, "Bearer t")?.username // "kubefx-admin"
 */
export const userOf = (authentication: Authentication, header: string | undefined): User | undefined => {
  const token = bearer(header)
  if (token === undefined) return undefined
  const outcome = authentication.authenticate(token)
  return outcome._tag === "Authenticated" ? outcome.user : undefined
}
