/**
 * A Pod's connect subresources (`exec`, `attach`, `portforward`) as kube-apiserver answers them
 * before it dials the kubelet: the container named (or the only one), then the node the pod runs
 * on. No kubelet here takes a connection (the workload simulator's runs no process), so every one
 * ends in kube's error for where it stopped: a pod on no node `does not have a host assigned`; a
 * pod bound to a node, the refused dial of its kubelet.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** The subresources kube-apiserver connects through to the kubelet. */
export const subresources: ReadonlySet<string> = new Set(["exec", "attach", "portforward"])

/**
 * The container a log or exec request means, or kube's 400: one must be named when the pod has
 * several, and it must be the pod's.
 *
 * @example
 * import * as PodConnections from "./PodConnections.ts"
 * PodConnections.container({ metadata: { name: "web" }, spec: { containers: [{ name: "app" }] } }, "") // Result: "app"
 */
export const container = (pod: KubeObject.KubeObject, asked: string): Effect.Effect<string, Status.ApiError> => {
  const name = KubeObject.meta(pod).name ?? ""
  const spec = KubeObject.record(pod.spec)
  const names = (field: string) => KubeObject.records(spec[field]).map((c) => String(c.name ?? ""))
  const containers = names("containers")
  const all = [...names("initContainers"), ...containers, ...names("ephemeralContainers")]
  if (asked === "" && containers.length === 0) return Effect.fail(Status.badRequest(`a container name must be specified for pod ${name}`))
  if (asked === "" && containers.length > 1) {
    return Effect.fail(Status.badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(" ")}]`))
  }
  if (asked !== "" && !all.includes(asked)) return Effect.fail(Status.badRequest(`container ${asked} is not valid for pod ${name}`))
  return Effect.succeed(asked === "" ? containers[0]! : asked)
}

/**
 * kube-apiserver's answer to `exec`, `attach` or `portforward` of a Pod here: its container checked
 * (not for `portforward`), then its node: none is `pod <name> does not have a host assigned`; a
 * request that does not ask to upgrade its connection is a 400 before any dial; otherwise the kubelet
 * at the node's address refuses the connection.
 *
 * @example
 * import * as PodConnections from "./PodConnections.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const target: import("./Rest.ts").Target
 * const refused = PodConnections.connect(env, target, "exec", "", true)
 */
export const connect = Effect.fnUntraced(function*(
  env: Rest.Env,
  target: Rest.Target,
  subresource: string,
  asked: string,
  upgrade: boolean
) {
  const pod = yield* Rest.get(env, target)
  if (subresource !== "portforward") yield* container(pod, asked)
  const nodeName = KubeObject.record(pod.spec).nodeName
  if (typeof nodeName !== "string" || nodeName === "") {
    return yield* Status.badRequest(`pod ${target.name} does not have a host assigned`)
  }
  const address = kubeletAddress(env, nodeName)
  if (address === undefined) return yield* Status.badRequest(`nodes "${nodeName}" not found`)
  if (!upgrade) return yield* Status.badRequest("Upgrade request required")
  return yield* Status.serverError(500, `error dialing backend: dial tcp ${address}:10250: connect: connection refused`)
})

/**
 * The address kube-apiserver dials a node's kubelet at: its InternalIP; undefined for a node that
 * is not there or has none.
 *
 * @example
 * import * as PodConnections from "./PodConnections.ts"
 * declare const env: import("./Rest.ts").Env
 * PodConnections.kubeletAddress(env, "kubefx-node") // "172.18.0.2" under the workload simulator
 */
export const kubeletAddress = (env: Rest.Env, nodeName: string): string | undefined => {
  const node = env.store.get("nodes", "", nodeName)
  const address = KubeObject.records(KubeObject.record(node?.status).addresses).find((a) => a.type === "InternalIP")?.address
  return typeof address === "string" ? address : undefined
}
