/**
 * Who the operator of `kubefx dev` is: on the embedded API server (and with `--service-account` on
 * a cluster), the ServiceAccount `kubefx-dev` holding only the ClusterRole `Rbac.clusterRole`
 * derives from its controllers, as `kubefx manifests` deploys it. A reconciler that needs more than
 * its controllers declare is refused (403) in development as it would be in a cluster, instead of
 * after its first deployment; the rules it lacks go in the controller's `rbac`.
 */
import { type Kube, type KubeError, type Operator, Rbac, type Resource, Yaml } from "@kubefx/kube"
import { Effect, Schema } from "effect"
import { readFileSync, writeFileSync } from "node:fs"

/** The name of the ServiceAccount, its namespace, ClusterRole and binding. */
export const name = "kubefx-dev"

// A dev session lasts as long as its developer: the token outlives any of them.
const tokenSeconds = 30 * 24 * 60 * 60

/** The operator's kubeconfig cannot be written from the administrator's. */
export class DevServiceAccountError extends Schema.TaggedError<DevServiceAccountError>()("DevServiceAccountError", {
  message: Schema.String
}) {}

// The administrator's kubeconfig with the ServiceAccount's token for its current user, at `target`.
const writeKubeconfig = (kubeconfig: string, token: string, target: string): Effect.Effect<void, DevServiceAccountError> =>
  Effect.try({
    try: () => {
      const config = Yaml.parseObjects(readFileSync(kubeconfig, "utf8"))[0] as {
        "current-context"?: string
        contexts?: Array<{ name: string; context: { user: string } }>
        users?: Array<{ name: string; user: Record<string, unknown> }>
      }
      const context = config.contexts?.find((c) => c.name === config["current-context"]) ?? config.contexts?.[0]
      const user = config.users?.find((u) => u.name === context?.context.user)
      if (user === undefined) throw new Error("it names no user")
      user.user = { token }
      writeFileSync(target, Yaml.stringify([config]), { mode: 0o600 })
    },
    catch: (error) =>
      new DevServiceAccountError({
        message: `cannot write ${target} from ${kubeconfig}: ${error instanceof Error ? error.message : String(error)}`
      })
  })

/**
 * Creates (or updates) the ServiceAccount, its ClusterRole and binding with the administrator's
 * client, and writes a kubeconfig for the ServiceAccount to `target` (mode 0600): the cluster of
 * `adminKubeconfig`, a token of the ServiceAccount.
 *
 * @example
 * import * as DevServiceAccount from "./DevServiceAccount.ts"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * const kubeconfig = DevServiceAccount.prepare(operator, ".kubefx/kubeconfig", ".kubefx/operator-kubeconfig")
 */
export const prepare = (
  operator: Operator.Operator<unknown>,
  adminKubeconfig: string,
  target: string
): Effect.Effect<{ readonly user: string; readonly rules: number }, KubeError.KubeError | Resource.DecodeError | DevServiceAccountError, Kube.Kube> =>
  Effect.gen(function*() {
    const { role, token } = yield* Rbac.serviceAccount(operator, { name, namespace: name, tokenSeconds, fieldManager: name })
    yield* writeKubeconfig(adminKubeconfig, token, target)
    return { user: `system:serviceaccount:${name}:${name}`, rules: role.rules.length }
  })
