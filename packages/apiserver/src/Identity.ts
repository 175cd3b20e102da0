/**
 * What clients hold of a server: its bearer token and the certificate they trust, plus the key it
 * signs service account tokens with. Without a data directory all are new at every start. With one
 * they are kept in `identity.json` there (mode 0600) and reused, as a real API server keeps its
 * certificates, tokens and signing keys, so a restart on the same data directory leaves every
 * client's kubeconfig and every issued service account token valid: a running operator reconnects
 * instead of failing TLS verification (new CA) or authentication (new token) forever.
 */
import { Effect, Schema } from "effect"
import { randomBytes, X509Certificate } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Certificate from "./Certificate.ts"
import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"

export class IdentityError extends Schema.TaggedError<IdentityError>()("IdentityError", { message: Schema.String }) {}

export interface Identity {
  readonly token: string
  readonly certificate: Certificate.Certificate
  /** The private key (PKCS#8 PEM) service account tokens are signed with. */
  readonly serviceAccountKey: string
}

const Kept = Schema.Struct({
  token: Schema.String,
  hosts: Schema.Array(Schema.String),
  cert: Schema.String,
  key: Schema.String,
  // Absent in files written before service account tokens existed: made then and kept.
  serviceAccountKey: Schema.optionalKey(Schema.String)
})
type Kept = typeof Kept.Type

const decodeKept = Schema.decodeUnknownOption(Schema.fromJsonString(Kept))

/**
 * The file an identity is kept in.
 *
 * @example
 * import * as Identity from "./Identity.ts"
 * Identity.file("/var/lib/kubefx") // "/var/lib/kubefx/identity.json"
 */
export const file = (dataDir: string): string => path.join(dataDir, "identity.json")

// A kept certificate is reused while it is valid for at least another day.
const stillValid = (cert: string) => {
  try {
    return new X509Certificate(cert).validToDate.getTime() > Date.now() + 24 * 60 * 60 * 1000
  } catch {
    return false
  }
}

const sameHosts = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((host, i) => host === b[i])

/**
 * The identity to serve with: `token` if given, else the kept one (or a new random one); the kept
 * certificate if it was made for the same `hosts` and is still valid, else a new self-signed one.
 * With `dataDir` the result is kept for the next start.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Identity from "./Identity.ts"
 * const identity = Effect.runSync(Identity.load({ hosts: ["127.0.0.1"] }))
 * identity.token.length > 0 // true
 */
export const load = (options: {
  readonly hosts: ReadonlyArray<string>
  readonly token?: string | undefined
  readonly dataDir?: string | undefined
}): Effect.Effect<Identity, IdentityError> =>
  Effect.try({
    try: () => {
      const fresh = () => ({
        token: options.token ?? randomBytes(24).toString("base64url"),
        certificate: Certificate.selfSigned(options.hosts),
        serviceAccountKey: ServiceAccountTokens.generateKey()
      })
      if (options.dataDir === undefined) return fresh()
      const target = file(options.dataDir)
      const kept = fs.existsSync(target) ? decodeKept(fs.readFileSync(target, "utf8")) : undefined
      const previous: Kept | undefined = kept?._tag === "Some" ? kept.value : undefined
      const token = options.token ?? previous?.token ?? randomBytes(24).toString("base64url")
      const certificate = previous !== undefined && sameHosts(previous.hosts, options.hosts) && stillValid(previous.cert)
        ? { cert: previous.cert, key: previous.key }
        : Certificate.selfSigned(options.hosts)
      const serviceAccountKey = previous?.serviceAccountKey ?? ServiceAccountTokens.generateKey()
      if (previous?.token !== token || previous.cert !== certificate.cert || previous.serviceAccountKey !== serviceAccountKey) {
        fs.mkdirSync(options.dataDir, { recursive: true })
        const temporary = `${target}.tmp`
        fs.writeFileSync(
          temporary,
          JSON.stringify(
            { token, hosts: options.hosts, cert: certificate.cert, key: certificate.key, serviceAccountKey } satisfies Kept
          ),
          { mode: 0o600 }
        )
        fs.renameSync(temporary, target)
      }
      return { token, certificate, serviceAccountKey }
    },
    catch: (cause) => new IdentityError({ message: `cannot keep the server identity in ${options.dataDir}: ${String(cause)}` })
  })
