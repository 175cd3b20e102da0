/**
 * Kubeconfigs for the start bench and the KubeConfig tests, written as JSON (which is YAML).
 */

/**
 * A kubeconfig of one cluster and one user, its context current; `name` names all three.
 *
 * @example
 * import * as Kubeconfigs from "./kubeconfigs.ts"
 * Kubeconfigs.kubeconfig({ server: "https://127.0.0.1:6443" }, { token: "t" })
 */
export const kubeconfig = (cluster: Record<string, unknown>, user: Record<string, unknown>, name = "local"): string =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: "default" } }],
    "current-context": name
  })

/**
 * A user whose token comes from an exec credential plugin: this Node printing an ExecCredential.
 *
 * @example
 * import * as Kubeconfigs from "./kubeconfigs.ts"
 * Kubeconfigs.kubeconfig({ server: "https://127.0.0.1:6443" }, Kubeconfigs.execUser("t"))
 */
export const execUser = (token: string) => ({
  exec: {
    apiVersion: "client.authentication.k8s.io/v1",
    command: process.execPath,
    args: ["-e", `console.log(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: { token: ${JSON.stringify(token)} } }))`],
    interactiveMode: "Never"
  }
})
