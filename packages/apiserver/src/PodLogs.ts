/**
 * A Pod's `log`, as kube-apiserver answers it when the kubelet behind it runs no real container:
 * the container checked as for `exec`; a Pod on no node has no log yet (empty); on a ready Node the
 * kubelet answers an empty log once the container started (a container not started yet is
 * `waiting to start`), and with `follow` keeps the stream open until the container stops or the
 * Pod is gone; a Node that is gone or not ready has no kubelet to dial.
 */
import { Effect, Stream } from "effect"
import * as PodConnections from "./PodConnections.ts"
import * as PodSimulation from "./PodSimulation.ts"
import * as Rest from "./Rest.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record

/** What a log request gets: no text, and whether the stream stays open until the container stops. */
export type Log = { readonly _tag: "Empty" } | { readonly _tag: "Follow"; readonly stopped: Effect.Effect<void> }

// The status the kubelet reports for a container of the Pod.
const statusOf = (pod: KubeObject.KubeObject, container: string) => {
  const status = record(pod.status)
  const all = [...KubeObject.records(status.initContainerStatuses), ...KubeObject.records(status.containerStatuses), ...KubeObject.records(status.ephemeralContainerStatuses)]
  return record(all.find((s) => s.name === container))
}
const stateOf = (pod: KubeObject.KubeObject, container: string) => record(statusOf(pod, container).state)

const logOptions: Status.Target = { group: "", plural: "pods", kind: "PodLogOptions" }

// An integer option as apimachinery converts it from the query, or Go's error for the 400.
const integerOption = (query: URLSearchParams, name: string): Effect.Effect<number | undefined, Status.ApiError> => {
  const raw = query.get(name)
  if (raw === null) return Effect.succeed(undefined)
  return /^[+-]?[0-9]+$/.test(raw)
    ? Effect.succeed(Number(raw))
    : Effect.fail(Status.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(raw)}: invalid syntax`))
}

/**
 * Checks a log request's `tailLines`, `limitBytes`, `sinceSeconds` and `sinceTime` as kube-apiserver
 * does before it looks for the Pod: a 422 `PodLogOptions "<name>" is invalid` for values out of range
 * or both `since` options, a 400 for a number that does not parse.
 *
 * @example
 * import { Effect } from "effect"
 * import * as PodLogs from "./PodLogs.ts"
 * Effect.runSyncExit(PodLogs.validateOptions("web", new URLSearchParams("tailLines=-5"))) // a 422
 */
export const validateOptions = Effect.fnUntraced(function*(name: string, query: URLSearchParams) {
  const tailLines = yield* integerOption(query, "tailLines")
  const limitBytes = yield* integerOption(query, "limitBytes")
  const sinceSeconds = yield* integerOption(query, "sinceSeconds")
  const causes: Array<Status.StatusCause> = []
  if (tailLines !== undefined && tailLines < 0) causes.push(Status.fieldInvalid("tailLines", tailLines, "must be greater than or equal to 0"))
  if (limitBytes !== undefined && limitBytes < 1) causes.push(Status.fieldInvalid("limitBytes", limitBytes, "must be greater than 0"))
  if (sinceSeconds !== undefined && query.get("sinceTime") !== null) {
    causes.push(Status.fieldForbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
  } else if (sinceSeconds !== undefined && sinceSeconds < 1) {
    causes.push(Status.fieldInvalid("sinceSeconds", sinceSeconds, "must be greater than 0"))
  }
  if (causes.length > 0) return yield* Status.invalid(logOptions, name, causes)
})

/**
 * The answer to `GET pods/<name>/log` for `container` (empty: the only one); with `previous`, the
 * log of its last run, which only a container that has ended before has.
 *
 * @example
 * import * as PodLogs from "./PodLogs.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const target: import("./Rest.ts").Target
 * const log = PodLogs.read(env, target, "", false)
 */
export const read = Effect.fnUntraced(function*(env: Rest.Env, target: Rest.Target, asked: string, follow: boolean, previous = false) {
  const pod = yield* Rest.get(env, target)
  const container = yield* PodConnections.container(pod, asked)
  const nodeName = record(pod.spec).nodeName
  if (typeof nodeName !== "string" || nodeName === "") return { _tag: "Empty" } satisfies Log
  if (!PodSimulation.runs(env.store, pod)) {
    const address = PodConnections.kubeletAddress(env, nodeName) ?? nodeName
    const url = `https://${address}:10250/containerLogs/${target.namespace ?? ""}/${target.name}/${container}`
    return yield* Status.serverError(500, `Get "${url}": dial tcp ${address}:10250: connect: connection refused`)
  }
  if (previous) {
    if (record(record(statusOf(pod, container).lastState).terminated).containerID === undefined) {
      return yield* Status.badRequest(`previous terminated container "${container}" in pod "${target.name}" not found`)
    }
    return { _tag: "Empty" } satisfies Log
  }
  const state = stateOf(pod, container)
  if (state.running === undefined && state.terminated === undefined) {
    const reason = typeof record(state.waiting).reason === "string" ? String(record(state.waiting).reason) : "ContainerCreating"
    return yield* Status.badRequest(`container "${container}" in pod "${target.name}" is waiting to start: ${reason}`)
  }
  if (!follow || state.running === undefined) return { _tag: "Empty" } satisfies Log
  const uid = KubeObject.meta(pod).uid
  const stopped = Effect.callback<void>((resume) => {
    const unsubscribe = env.store.subscribe((event) => {
      if (event.storage !== target.resource.storage || event.namespace !== (target.namespace ?? "") || KubeObject.meta(event.object).name !== target.name) return
      if (event.type === "DELETED" || KubeObject.meta(event.object).uid !== uid || stateOf(event.object, container).running === undefined) resume(Effect.void)
    })
    return Effect.sync(unsubscribe)
  })
  return { _tag: "Follow", stopped } satisfies Log
})

/**
 * The log as a response body: empty, or a stream that ends when the container stops.
 *
 * @example
 * import * as PodLogs from "./PodLogs.ts"
 * const body = PodLogs.body({ _tag: "Empty" }) // an empty stream
 */
export const body = (log: Log): Stream.Stream<Uint8Array> =>
  log._tag === "Empty" ? Stream.empty : Stream.drain(Stream.fromEffect(log.stopped))
