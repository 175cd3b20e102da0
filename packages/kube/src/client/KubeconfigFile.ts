/**
 * A kubeconfig file read without `@kubernetes/client-node`, when its context needs nothing but a
 * server, the CA to trust, and a bearer token or a client certificate: the embedded API server's,
 * kind's, minikube's. Anything else (exec plugins, auth providers, token files, passwords,
 * impersonation, proxies) has no plain context, nor has a file that cannot be read or parsed, so
 * that client-node loads it and says what is wrong, as before; the cluster's
 * `disable-compression`, which client-node drops, is read either way.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import * as Yaml from "./Yaml.ts"

/** What a plain context needs, its files read and its data decoded. */
export interface Plain {
  /** Without a trailing slash. */
  readonly server: string
  /** PEM. */
  readonly certificateAuthority: string | undefined
  readonly insecureSkipTlsVerify: boolean
  readonly tlsServerName: string | undefined
  readonly token: string | undefined
  /** PEM, with `clientKey`. */
  readonly clientCertificate: string | undefined
  readonly clientKey: string | undefined
}

/** What one reading of a kubeconfig gives. */
export interface Reading {
  /** The context, when it is plain. */
  readonly plain: Plain | undefined
  /** Its cluster's `disable-compression`, when it says it (client-node's clusters drop the field). */
  readonly disableCompression: boolean | undefined
}

// `extensions` (minikube writes them) carry nothing a connection needs.
const clusterFields = new Set([
  "server",
  "certificate-authority",
  "certificate-authority-data",
  "insecure-skip-tls-verify",
  "tls-server-name",
  "disable-compression",
  "extensions"
])
const userFields = new Set(["token", "client-certificate", "client-certificate-data", "client-key", "client-key-data", "extensions"])

type Entry = Readonly<Record<string, unknown>>

const named = (list: unknown, name: unknown, field: string): Entry | undefined => {
  if (!Array.isArray(list)) return undefined
  const entry = list.find((item: unknown) => (item as Entry | null)?.name === name) as Entry | undefined
  const value = entry?.[field]
  return typeof value === "object" && value !== null ? value as Entry : entry === undefined ? undefined : {}
}

const onlyKnown = (entry: Entry, known: ReadonlySet<string>) => Object.keys(entry).every((key) => known.has(key))

const text = (value: unknown): string | undefined => typeof value === "string" && value !== "" ? value : undefined

const unread: Reading = { plain: undefined, disableCompression: undefined }

/**
 * The kubeconfig at `path`, read once: its context (`context`, or its current one) when plain, and
 * its cluster's `disable-compression` either way.
 *
 * @example
 * import * as KubeconfigFile from "./KubeconfigFile.ts"
 * const { plain } = KubeconfigFile.read(".kubefx/kubeconfig", undefined)
 * plain?.server // "https://127.0.0.1:6443"
 */
export const read = (path: string, context: string | undefined): Reading => {
  let current: ReturnType<typeof currentOf>
  try {
    current = currentOf(path, context)
  } catch {
    return unread
  }
  if (current === undefined) return unread
  const disableCompression = flag(current.cluster?.["disable-compression"])
  return { plain: plainOf(path, current), disableCompression }
}

const plainOf = (path: string, current: NonNullable<ReturnType<typeof currentOf>>): Plain | undefined => {
  try {
    const { cluster, document } = current
    const user = current.context.user === undefined ? {} : named(document.users, current.context.user, "user")
    if (cluster === undefined || user === undefined || !onlyKnown(cluster, clusterFields) || !onlyKnown(user, userFields)) {
      return undefined
    }
    // Relative paths are relative to the kubeconfig's directory, as kubectl reads them.
    const base = dirname(resolve(path))
    const pem = (data: unknown, file: unknown): string | undefined =>
      text(data) !== undefined
        ? Buffer.from(text(data)!, "base64").toString("utf8")
        : text(file) !== undefined
        ? readFileSync(resolve(base, text(file)!), "utf8")
        : undefined
    const server = text(cluster.server)?.replace(/\/+$/, "")
    if (server === undefined) return undefined
    const certificateAuthority = pem(cluster["certificate-authority-data"], cluster["certificate-authority"])
    const insecureSkipTlsVerify = cluster["insecure-skip-tls-verify"] === true
    const clientCertificate = pem(user["client-certificate-data"], user["client-certificate"])
    const clientKey = pem(user["client-key-data"], user["client-key"])
    // client-go refuses a CA with the insecure flag, and a certificate without its key.
    if (insecureSkipTlsVerify && certificateAuthority !== undefined) return undefined
    if ((clientCertificate === undefined) !== (clientKey === undefined)) return undefined
    return {
      server,
      certificateAuthority,
      insecureSkipTlsVerify,
      tlsServerName: text(cluster["tls-server-name"]),
      token: text(user.token),
      clientCertificate,
      clientKey
    }
  } catch {
    return undefined
  }
}

const flag = (value: unknown): boolean | undefined => typeof value === "boolean" ? value : undefined

const currentOf = (path: string, context: string | undefined) => {
  const document: Entry | undefined = Yaml.parseObjects(readFileSync(path, "utf8"))[0]
  if (document === undefined) return undefined
  const current = named(document.contexts, context ?? document["current-context"], "context")
  if (current === undefined) return undefined
  return { document, context: current, cluster: named(document.clusters, current.cluster, "cluster") }
}
