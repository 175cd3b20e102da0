/**
 * The kubeconfig the server writes so kubectl and client libraries can reach it: one cluster, one
 * user with the bearer token, and a context named `kubefx` that is current. The file holds a
 * credential, so it is created with mode 0600 (and its directory 0700 when created).
 */
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

export class KubeconfigError extends Schema.TaggedError<KubeconfigError>()("KubeconfigError", {
  message: Schema.String
}) {}

/** The context (and cluster and user) name in the kubeconfig. */
export const contextName = "kubefx"

export interface Options {
  readonly server: string
  readonly token: string
  /** PEM of the CA to trust for an https server. */
  readonly certificateAuthority?: string
  readonly namespace?: string
}

/**
 * The kubeconfig text for a server URL and token.
 *
 * @example
 * import * as Kubeconfig from "./Kubeconfig.ts"
 * Kubeconfig.render({ server: "http://127.0.0.1:6443", token: "t" }).includes("current-context: kubefx") // true
 */
export const render = (options: Options): string =>
  [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${contextName}`,
    "  cluster:",
    `    server: ${JSON.stringify(options.server)}`,
    ...(options.certificateAuthority === undefined
      ? []
      : [`    certificate-authority-data: ${Buffer.from(options.certificateAuthority).toString("base64")}`]),
    "users:",
    `- name: ${contextName}`,
    "  user:",
    `    token: ${JSON.stringify(options.token)}`,
    "contexts:",
    `- name: ${contextName}`,
    "  context:",
    `    cluster: ${contextName}`,
    `    user: ${contextName}`,
    `    namespace: ${JSON.stringify(options.namespace ?? "default")}`,
    `current-context: ${contextName}`,
    "preferences: {}",
    ""
  ].join("\n")

/**
 * Writes the kubeconfig to `file` (mode 0600), creating its directory.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Kubeconfig from "./Kubeconfig.ts"
 * const written = Kubeconfig.write("/tmp/kubefx/kubeconfig", { server: "http://127.0.0.1:6443", token: "t" })
 */
export const write = (
  file: string,
  options: Options
): Effect.Effect<void, KubeconfigError> =>
  Effect.try({
    try: () => {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
      const tmp = `${file}.${process.pid}.tmp`
      fs.writeFileSync(tmp, render(options), { mode: 0o600 })
      fs.chmodSync(tmp, 0o600)
      fs.renameSync(tmp, file)
    },
    catch: (cause) => new KubeconfigError({ message: `cannot write kubeconfig ${file}: ${String(cause)}` })
  })
