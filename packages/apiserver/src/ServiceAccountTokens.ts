/**
 * Service account tokens as kube-apiserver issues and checks them: JWTs whose claims name the
 * ServiceAccount (and its uid) they stand for, signed with the server's service account key. A
 * token authenticates while it is unexpired, meant for the server's audience, and its
 * ServiceAccount (and the object it is bound to, if any) still exists with the same uid: deleting
 * and re-creating the ServiceAccount revokes every token issued before.
 *
 * The key is ECDSA P-256, so tokens are ES256, which kube-apiserver issues when its
 * `--service-account-signing-key-file` holds an EC key; making one costs microseconds where an RSA
 * key costs a noticeable part of a second at every start without a data directory.
 */
import * as Crypto from "node:crypto"
import type * as Authentication from "./Authentication.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** The issuer (and the audience) of the tokens, as a kind or kubeadm cluster names itself. */
export const issuer = "https://kubernetes.default.svc.cluster.local"

/** The audiences the server accepts tokens for when a client names none. */
export const serverAudiences: ReadonlyArray<string> = [issuer]

/** A signing key ready to use: the private and public halves and the `kid` tokens carry. */
export interface SigningKey {
  readonly privateKey: Crypto.KeyObject
  readonly publicKey: Crypto.KeyObject
  readonly keyId: string
}

/** A reference to an object a claim names. */
export interface Ref {
  readonly name: string
  readonly uid?: string
}

/** The private claims of a service account token (`kubernetes.io`). */
export interface KubernetesClaims {
  readonly namespace: string
  readonly serviceaccount: Ref
  readonly pod?: Ref
  readonly secret?: Ref
  readonly node?: Ref
}

/** The claims of a token, in the order go-jose writes them (alphabetical). */
export interface Claims {
  readonly aud: ReadonlyArray<string>
  readonly exp: number
  readonly iat: number
  readonly iss: string
  readonly jti: string
  readonly "kubernetes.io": KubernetesClaims
  readonly nbf: number
  readonly sub: string
}

/** Why a token does not authenticate (`undefined` reason: it is not one of this server's tokens). */
export type Checked =
  | { readonly _tag: "Valid"; readonly user: Authentication.User; readonly audiences: ReadonlyArray<string> }
  | { readonly _tag: "Invalid"; readonly error: string }
  | { readonly _tag: "NotOurs" }

// go-jose accepts a token up to a minute past its expiry and a minute before its nbf or iat.
const leewaySeconds = 60

/**
 * A new private key for signing tokens, PKCS#8 PEM.
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * ServiceAccountTokens.generateKey().startsWith("-----BEGIN PRIVATE KEY-----") // true
 */
export const generateKey = (): string =>
  Crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()

/**
 * The signing key of a PEM private key; its `kid` is the base64url SHA-256 of the public key's
 * DER encoding, as kube-apiserver derives it.
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * const key = ServiceAccountTokens.signingKey(ServiceAccountTokens.generateKey())
 * key.keyId.length // 43
 */
export const signingKey = (pem: string): SigningKey => {
  const privateKey = Crypto.createPrivateKey(pem)
  const publicKey = Crypto.createPublicKey(privateKey)
  const der = publicKey.export({ type: "spki", format: "der" })
  return { privateKey, publicKey, keyId: Crypto.createHash("sha256").update(der).digest("base64url") }
}

/**
 * The username of a service account: `system:serviceaccount:<namespace>:<name>`.
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * ServiceAccountTokens.username("default", "builder") // "system:serviceaccount:default:builder"
 */
export const username = (namespace: string, name: string): string => `system:serviceaccount:${namespace}:${name}`

/**
 * The claims of a new token for a ServiceAccount, valid from `now` for `expirationSeconds`.
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * const claims = ServiceAccountTokens.claims({
 *   namespace: "default", serviceAccount: { name: "builder", uid: "u1" }, audiences: ["api"],
 *   expirationSeconds: 600, now: new Date(0)
 * })
 * claims.exp // 600
 */
export const claims = (options: {
  readonly namespace: string
  readonly serviceAccount: Ref
  readonly audiences: ReadonlyArray<string>
  readonly expirationSeconds: number
  readonly now: Date
  readonly bound?: { readonly pod?: Ref; readonly secret?: Ref; readonly node?: Ref }
}): Claims => {
  const iat = Math.floor(options.now.getTime() / 1000)
  return {
    aud: options.audiences,
    exp: iat + options.expirationSeconds,
    iat,
    iss: issuer,
    jti: Crypto.randomUUID(),
    "kubernetes.io": { namespace: options.namespace, serviceaccount: options.serviceAccount, ...options.bound },
    nbf: iat,
    sub: username(options.namespace, options.serviceAccount.name)
  }
}

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url")

/**
 * Signs claims into a compact JWT (ES256).
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * const key = ServiceAccountTokens.signingKey(ServiceAccountTokens.generateKey())
 * const token = ServiceAccountTokens.sign(key, ServiceAccountTokens.claims({
 *   namespace: "default", serviceAccount: { name: "builder", uid: "u1" }, audiences: ["api"],
 *   expirationSeconds: 600, now: new Date()
 * }))
 * token.split(".").length // 3
 */
export const sign = (key: SigningKey, claims: Claims): string => {
  const input = `${encode({ alg: "ES256", kid: key.keyId })}.${encode(claims)}`
  const signature = Crypto.sign("sha256", Buffer.from(input), { key: key.privateKey, dsaEncoding: "ieee-p1363" })
  return `${input}.${signature.toString("base64url")}`
}

const parseJson = (part: string): KubeObject.KubeObject | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"))
    return KubeObject.isObject(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

const isRef = (u: unknown): u is Ref =>
  KubeObject.isObject(u) && typeof u.name === "string" && (u.uid === undefined || typeof u.uid === "string")

const asClaims = (payload: KubeObject.KubeObject): Claims | undefined => {
  const k = payload["kubernetes.io"]
  const numeric = ["exp", "iat", "nbf"].every((c) => typeof payload[c] === "number")
  const aud = typeof payload.aud === "string" ? [payload.aud] : payload.aud
  if (!numeric || !Array.isArray(aud) || !KubeObject.isObject(k) || typeof k.namespace !== "string" || !isRef(k.serviceaccount)) {
    return undefined
  }
  for (const bound of ["pod", "secret", "node"]) if (k[bound] !== undefined && !isRef(k[bound])) return undefined
  return { ...payload, aud: aud.filter((a): a is string => typeof a === "string") } as unknown as Claims
}

/**
 * The claims of a token this server signed, or why it is not one: `NotOurs` for anything that is
 * not a JWT from this issuer, `Invalid` for one from this issuer with a bad signature or claims.
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * const key = ServiceAccountTokens.signingKey(ServiceAccountTokens.generateKey())
 * ServiceAccountTokens.decode(key, "not-a-jwt") // { _tag: "NotOurs" }
 */
export const decode = (
  key: SigningKey,
  token: string
): { readonly _tag: "Decoded"; readonly claims: Claims } | { readonly _tag: "Invalid"; readonly error: string } | {
  readonly _tag: "NotOurs"
} => {
  const parts = token.split(".")
  if (parts.length !== 3) return { _tag: "NotOurs" }
  const header = parseJson(parts[0]!)
  const payload = parseJson(parts[1]!)
  if (header === undefined || payload === undefined || payload.iss !== issuer) return { _tag: "NotOurs" }
  const signed = header.alg === "ES256" &&
    Crypto.verify("sha256", Buffer.from(`${parts[0]}.${parts[1]}`), { key: key.publicKey, dsaEncoding: "ieee-p1363" }, Buffer.from(parts[2]!, "base64url"))
  if (!signed) return { _tag: "Invalid", error: "go-jose/go-jose: error in cryptographic primitive" }
  const decoded = asClaims(payload)
  return decoded === undefined
    ? { _tag: "Invalid", error: "service account token claims could not be validated due to unexpected private claim" }
    : { _tag: "Decoded", claims: decoded }
}

const quoted = (values: ReadonlyArray<string>) => `[${values.map((v) => JSON.stringify(v)).join(" ")}]`

const timeError = (claims: Claims, now: number): string | undefined => {
  if (now >= claims.exp + leewaySeconds) return "service account token has expired"
  if (now + leewaySeconds < claims.nbf) return "service account token is not valid yet"
  if (now + leewaySeconds < claims.iat) return "service account token is issued in the future"
  return undefined
}

// A bound object must still exist with the uid the token names; a deleted one revokes the token.
const boundGone = (
  store: Store.Store,
  bound: { readonly storage: string; readonly label: string; readonly namespace: string; readonly ref: Ref | undefined },
  now: number
): string | undefined => {
  if (bound.ref === undefined) return undefined
  const object = store.get(bound.storage, bound.namespace, bound.ref.name)
  if (object === undefined || deletedBefore(object, now - leewaySeconds)) return "service account token has been invalidated"
  const uid = KubeObject.meta(object).uid
  if (uid !== bound.ref.uid) return `${bound.label} UID (${uid}) does not match service account ${bound.label} ref claim (${bound.ref.uid})`
  return undefined
}

const deletedBefore = (object: KubeObject.KubeObject, seconds: number): boolean => {
  const at = KubeObject.meta(object).deletionTimestamp
  return at !== undefined && Date.parse(at) / 1000 < seconds
}

const userOf = (claims: Claims): Authentication.User => {
  const k = claims["kubernetes.io"]
  const extra: Record<string, ReadonlyArray<string>> = {}
  if (k.pod?.uid !== undefined) {
    extra["authentication.kubernetes.io/pod-name"] = [k.pod.name]
    extra["authentication.kubernetes.io/pod-uid"] = [k.pod.uid]
  }
  extra["authentication.kubernetes.io/credential-id"] = [`JTI=${claims.jti}`]
  if (k.node !== undefined) {
    extra["authentication.kubernetes.io/node-name"] = [k.node.name]
    if (k.node.uid !== undefined && k.node.uid !== "") extra["authentication.kubernetes.io/node-uid"] = [k.node.uid]
  }
  return {
    username: username(k.namespace, k.serviceaccount.name),
    ...(k.serviceaccount.uid === undefined ? {} : { uid: k.serviceaccount.uid }),
    groups: ["system:serviceaccounts", `system:serviceaccounts:${k.namespace}`, "system:authenticated"],
    extra
  }
}

/**
 * Checks a token as kube-apiserver's service account authenticator does: issuer, signature,
 * audiences (the token's must meet `audiences`), times, then that its ServiceAccount and bound
 * object still exist with the uids it names.
 *
 * @example
 * import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
 * import * as Store from "./Store.ts"
 * const key = ServiceAccountTokens.signingKey(ServiceAccountTokens.generateKey())
 * ServiceAccountTokens.check(key, Store.make(), "opaque", ServiceAccountTokens.serverAudiences)._tag // "NotOurs"
 */
export const check = (
  key: SigningKey,
  store: Store.Store,
  token: string,
  audiences: ReadonlyArray<string>,
  now: Date = new Date()
): Checked => {
  const decoded = decode(key, token)
  if (decoded._tag !== "Decoded") return decoded
  const { claims } = decoded
  const matched = claims.aud.filter((a) => audiences.includes(a))
  if (matched.length === 0) {
    return { _tag: "Invalid", error: `token audiences ${quoted(claims.aud)} is invalid for the target audiences ${quoted(audiences)}` }
  }
  const timing = timeError(claims, Math.floor(now.getTime() / 1000))
  if (timing !== undefined) return { _tag: "Invalid", error: timing }
  const k = claims["kubernetes.io"]
  const seconds = Math.floor(now.getTime() / 1000)
  const account = store.get("serviceaccounts", k.namespace, k.serviceaccount.name)
  if (account === undefined) return { _tag: "Invalid", error: `serviceaccounts "${k.serviceaccount.name}" not found` }
  const uid = KubeObject.meta(account).uid
  if (uid !== k.serviceaccount.uid) {
    return { _tag: "Invalid", error: `service account UID (${uid}) does not match claim (${k.serviceaccount.uid})` }
  }
  if (deletedBefore(account, seconds - leewaySeconds)) {
    return { _tag: "Invalid", error: `service account ${k.namespace}/${k.serviceaccount.name} has been deleted` }
  }
  const gone = boundGone(store, { storage: "secrets", label: "secret", namespace: k.namespace, ref: k.secret }, seconds) ??
    boundGone(store, { storage: "pods", label: "pod", namespace: k.namespace, ref: k.pod }, seconds) ??
    // A pod-bound token names its pod's node for information only.
    (k.pod === undefined ? boundGone(store, { storage: "nodes", label: "node", namespace: "", ref: k.node }, seconds) : undefined)
  if (gone !== undefined) return { _tag: "Invalid", error: gone }
  return { _tag: "Valid", user: userOf(claims), audiences: matched }
}
