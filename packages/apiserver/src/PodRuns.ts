/**
 * A Pod's status as a 1.32 kubelet writes it, for the workload simulator, which runs a Pod without
 * running it: running with every container started and ready (init containers completed), a pod
 * IP, and the images as the runtime reports them; then ended.
 */
import { createHash } from "node:crypto"
import type * as ControllerEvents from "./ControllerEvents.ts"
import type * as PodReferences from "./PodReferences.ts"
import * as SimulatedNode from "./SimulatedNode.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const list = KubeObject.records

/**
 * Whether the simulator has something to do for the Pod: one not yet running, nor ended, nor
 * being deleted.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.pending({ metadata: {}, status: { phase: "Pending" } }) // true
 */
export const pending = (pod: KubeObject.KubeObject): boolean => {
  const phase = record(pod.status).phase
  return KubeObject.meta(pod).deletionTimestamp === undefined && (phase === undefined || phase === "Pending")
}

/**
 * Whether the Pod has ended: its phase `Succeeded` or `Failed`, for good.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.done({ status: { phase: "Failed" } }) // true
 */
export const done = (pod: KubeObject.KubeObject): boolean => {
  const phase = record(pod.status).phase
  return phase === "Succeeded" || phase === "Failed"
}

/**
 * Whether the scheduler has placed the Pod (its `PodScheduled` condition holds).
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.scheduled({ status: { conditions: [{ type: "PodScheduled", status: "True" }] } }) // true
 */
export const scheduled = (pod: KubeObject.KubeObject): boolean =>
  list(record(pod.status).conditions).some((c) => c.type === "PodScheduled" && c.status === "True")

const condition = (type: string, now: string) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: now })

/**
 * An image as the container runtime reports it: `nginx` is `docker.io/library/nginx:latest`.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.reportedImage("nginx") // "docker.io/library/nginx:latest"
 * PodRuns.reportedImage("ghcr.io/acme/app:1.2") // "ghcr.io/acme/app:1.2"
 */
export const reportedImage = (image: string): string => {
  const slash = image.indexOf("/")
  const first = slash < 0 ? "" : image.slice(0, slash)
  const hasRegistry = first.includes(".") || first.includes(":") || first === "localhost"
  const named = hasRegistry ? image : `docker.io/${slash < 0 ? "library/" : ""}${image}`
  const lastPart = named.slice(named.lastIndexOf("/") + 1)
  return named.includes("@") || lastPart.includes(":") ? named : `${named}:latest`
}

// The image's digest, made up but the same for the same image.
const imageId = (image: string): string => {
  const reported = reportedImage(image)
  const repository = reported.includes("@") ? reported.slice(0, reported.indexOf("@")) : reported.slice(0, reported.lastIndexOf(":"))
  return `${repository}@sha256:${createHash("sha256").update(reported).digest("hex")}`
}

// A container's id: each restart is a new container.
const containerId = (pod: KubeObject.KubeObject, name: string, restarts = 0): string =>
  `containerd://${createHash("sha256").update(`${KubeObject.meta(pod).uid ?? ""}/${name}${restarts === 0 ? "" : `/${restarts}`}`).digest("hex")}`

// `previous`: the container's status before, whose restarts (and the last one's end) it keeps.
const status = (
  pod: KubeObject.KubeObject,
  container: Readonly<Record<string, unknown>>,
  state: Record<string, unknown>,
  ready: boolean,
  previous?: Readonly<Record<string, unknown>>
) => {
  const name = String(container.name ?? "")
  const image = String(container.image ?? "")
  const restartCount = KubeObject.number(previous?.restartCount, 0)
  return {
    containerID: containerId(pod, name, restartCount),
    image: reportedImage(image),
    imageID: imageId(image),
    lastState: previous?.lastState ?? {},
    name,
    ready,
    restartCount,
    started: "running" in state,
    state
  }
}

/**
 * The status a kubelet reports once every container runs and is ready: `Running`, the five
 * conditions 1.32 sets, a pod IP (`podIP`), init containers completed (sidecars, init containers
 * with `restartPolicy: Always`, running).
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * const pod = { metadata: { uid: "u" }, spec: { containers: [{ name: "web", image: "nginx" }] }, status: { phase: "Pending" } }
 * PodRuns.running(pod, "2026-01-01T00:00:00Z", "10.244.0.7").phase // "Running"
 */
export const running = (pod: KubeObject.KubeObject, now: string, podIP: string): Record<string, unknown> => {
  const spec = record(pod.spec)
  const previous = record(pod.status)
  const scheduledAt = list(previous.conditions).find((c) => c.type === "PodScheduled")?.lastTransitionTime ?? now
  const inits = list(spec.initContainers)
  return {
    ...previous,
    phase: "Running",
    conditions: [
      condition("PodReadyToStartContainers", now),
      condition("Initialized", now),
      condition("Ready", now),
      condition("ContainersReady", now),
      { ...condition("PodScheduled", now), lastTransitionTime: scheduledAt }
    ],
    hostIP: SimulatedNode.address,
    hostIPs: [{ ip: SimulatedNode.address }],
    podIP,
    podIPs: [{ ip: podIP }],
    startTime: typeof previous.startTime === "string" ? previous.startTime : now,
    ...(inits.length === 0 ? {} : {
      initContainerStatuses: inits.map((c) =>
        c.restartPolicy === "Always"
          ? status(pod, c, { running: { startedAt: now } }, true)
          : status(pod, c, { terminated: { containerID: containerId(pod, String(c.name ?? "")), exitCode: 0, finishedAt: now, reason: "Completed", startedAt: now } }, true))
    }),
    containerStatuses: list(spec.containers).map((c) => status(pod, c, { running: { startedAt: now } }, true)),
    ...ephemeralStatuses(pod, now)
  }
}

/**
 * The status a kubelet reports for a pod it cannot start yet (see PodReferences): `Pending`, its
 * containers waiting, `ContainerCreating` while a volume cannot be mounted (no sandbox, no IP), or
 * `CreateContainerConfigError` with why for the container whose environment cannot be made, or
 * `ErrImagePull` then `ImagePullBackOff` for one whose image cannot be pulled (the sandbox up, the
 * pod's IP given); not ready.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * const pod = { metadata: { uid: "u" }, spec: { containers: [{ name: "app", image: "nginx" }] }, status: { phase: "Pending" } }
 * PodRuns.waiting(pod, "2026-01-01T00:00:00Z", { _tag: "Mount", message: "..." }, "10.244.0.7").containerStatuses[0].state // { waiting: { reason: "ContainerCreating" } }
 */
export const waiting = (
  pod: KubeObject.KubeObject,
  now: string,
  blocked: PodReferences.Blocked,
  podIP: string
): Record<string, unknown> => {
  const spec = record(pod.spec)
  const previous = record(pod.status)
  const containers = list(spec.containers)
  const inits = list(spec.initContainers)
  const sandbox = blocked._tag !== "Mount"
  const since = (type: string, status: "True" | "False") =>
    String(list(previous.conditions).find((c) => c.type === type && c.status === status)?.lastTransitionTime ?? now)
  const notReady = (type: string) => ({
    type,
    status: "False",
    lastProbeTime: null,
    lastTransitionTime: since(type, "False"),
    reason: "ContainersNotReady",
    message: `containers with unready status: [${containers.map((c) => String(c.name ?? "")).join(" ")}]`
  })
  const state = (container: Readonly<Record<string, unknown>>, otherwise: string) => {
    if (blocked._tag === "Mount" || container.name !== blocked.container) return { waiting: { reason: otherwise } }
    if (blocked._tag === "Config") return { waiting: { reason: "CreateContainerConfigError", message: blocked.message } }
    // A failed pull is tried again after a back-off: the next look finds it backing off.
    return pullFailed(pod, blocked.container)
      ? { waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${blocked.image}"` } }
      : { waiting: { reason: "ErrImagePull", message: blocked.message } }
  }
  const waitingStatus = (container: Readonly<Record<string, unknown>>, otherwise: string) => ({
    image: reportedImage(String(container.image ?? "")),
    imageID: "",
    lastState: {},
    name: String(container.name ?? ""),
    ready: false,
    restartCount: 0,
    started: false,
    state: state(container, otherwise)
  })
  const initialized = inits.length === 0
  return {
    ...previous,
    phase: "Pending",
    conditions: [
      { type: "PodReadyToStartContainers", status: sandbox ? "True" : "False", lastProbeTime: null, lastTransitionTime: since("PodReadyToStartContainers", sandbox ? "True" : "False") },
      initialized
        ? condition("Initialized", since("Initialized", "True"))
        : {
          type: "Initialized",
          status: "False",
          lastProbeTime: null,
          lastTransitionTime: since("Initialized", "False"),
          reason: "ContainersNotInitialized",
          message: `containers with incomplete status: [${inits.map((c) => String(c.name ?? "")).join(" ")}]`
        },
      notReady("Ready"),
      notReady("ContainersReady"),
      ...list(previous.conditions).filter((c) => c.type === "PodScheduled")
    ],
    hostIP: SimulatedNode.address,
    hostIPs: [{ ip: SimulatedNode.address }],
    ...(sandbox ? { podIP, podIPs: [{ ip: podIP }] } : {}),
    startTime: typeof previous.startTime === "string" ? previous.startTime : now,
    ...(inits.length === 0 ? {} : { initContainerStatuses: inits.map((c) => waitingStatus(c, "PodInitializing")) }),
    containerStatuses: containers.map((c) => waitingStatus(c, inits.length === 0 ? "ContainerCreating" : "PodInitializing"))
  }
}

// How far the kubelet got failing to pull `container`'s image: the reason it waits with.
const pullState = (pod: KubeObject.KubeObject, container: string): "ErrImagePull" | "ImagePullBackOff" | undefined => {
  const status = record(pod.status)
  const found = [...list(status.initContainerStatuses), ...list(status.containerStatuses)].find((c) => c.name === container)
  const reason = record(record(found?.state).waiting).reason
  return reason === "ErrImagePull" || reason === "ImagePullBackOff" ? reason : undefined
}

const pullFailed = (pod: KubeObject.KubeObject, container: string) => pullState(pod, container) !== undefined

/**
 * Whether the kubelet is backing off pulling `container`'s image (it retries only after minutes).
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.pulledBackOff({ status: { containerStatuses: [{ name: "app", state: { waiting: { reason: "ImagePullBackOff" } } }] } }, "app") // true
 */
export const pulledBackOff = (pod: KubeObject.KubeObject, container: string): boolean => pullState(pod, container) === "ImagePullBackOff"

// The reference events about a container carry: `spec.containers{app}`.
const fieldPathOf = (pod: KubeObject.KubeObject, container: string): string =>
  list(record(pod.spec).initContainers).some((c) => c.name === container) ? `spec.initContainers{${container}}` : `spec.containers{${container}}`

/**
 * The events a kubelet records for a pod it cannot start (see {@link waiting}): `FailedMount`; a
 * container's `Failed` config; or a pull's `Pulling` and `Failed`, then on the next look `BackOff`.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.blockedEvents({ spec: { containers: [{ name: "app" }] } }, { _tag: "Config", container: "app", message: 'secret "db" not found' })
 * // [{ type: "Warning", reason: "Failed", message: 'Error: secret "db" not found', fieldPath: "spec.containers{app}" }]
 */
export const blockedEvents = (pod: KubeObject.KubeObject, blocked: PodReferences.Blocked): ReadonlyArray<ControllerEvents.Event> => {
  if (blocked._tag === "Mount") return [{ type: "Warning", reason: "FailedMount", message: blocked.message }]
  const fieldPath = fieldPathOf(pod, blocked.container)
  if (blocked._tag === "Config") return [{ type: "Warning", reason: "Failed", message: `Error: ${blocked.message}`, fieldPath }]
  return pullFailed(pod, blocked.container)
    ? [
      { type: "Normal", reason: "BackOff", message: `Back-off pulling image "${blocked.image}"`, fieldPath },
      { type: "Warning", reason: "Failed", message: "Error: ImagePullBackOff", fieldPath }
    ]
    : [
      { type: "Normal", reason: "Pulling", message: `Pulling image "${blocked.image}"`, fieldPath },
      { type: "Warning", reason: "Failed", message: `Failed to pull image "${blocked.image}": ${blocked.message}`, fieldPath },
      { type: "Warning", reason: "Failed", message: "Error: ErrImagePull", fieldPath }
    ]
}

/**
 * Whether the pod waits for what its kubelet could not find (see {@link waiting}).
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.waitingForReferences({ status: { phase: "Pending", containerStatuses: [{ state: { waiting: { reason: "ContainerCreating" } } }] } }) // true
 */
export const waitingForReferences = (pod: KubeObject.KubeObject): boolean => {
  const status = record(pod.status)
  return status.phase === "Pending" && [...list(status.initContainerStatuses), ...list(status.containerStatuses)].some((c) => {
    const reason = record(record(c.state).waiting).reason
    return reason === "ContainerCreating" || reason === "CreateContainerConfigError" || reason === "PodInitializing"
  })
}

/**
 * The events a kubelet records as it starts a pod's containers, init containers first: the image
 * pulled (`Pulling`, `Pulled`; with `imagePullPolicy: Always`, the default for `:latest`) or found
 * on the node, then `Created` and `Started`.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.startEvents({ spec: { containers: [{ name: "web", image: "nginx:1.27", imagePullPolicy: "IfNotPresent" }] } }).map((e) => e.reason)
 * // ["Pulled", "Created", "Started"]
 */
export const startEvents = (pod: KubeObject.KubeObject): ReadonlyArray<ControllerEvents.Event> => {
  const spec = record(pod.spec)
  const containers = [
    ...list(spec.initContainers).map((container) => ["initContainers", container] as const),
    ...list(spec.containers).map((container) => ["containers", container] as const)
  ]
  return containers.flatMap(([field, container]) => {
    const image = String(container.image ?? "")
    const name = String(container.name ?? "")
    const fieldPath = `spec.${field}{${name}}`
    const normal = (reason: string, message: string): ControllerEvents.Event => ({ type: "Normal", reason, message, fieldPath })
    // A made-up size, the same for the same image, as its id is.
    const size = 10_000_000 + (createHash("sha256").update(image).digest().readUInt32BE(0) % 90_000_000)
    const pulled = container.imagePullPolicy === "Always"
      ? [
        normal("Pulling", `Pulling image "${image}"`),
        normal("Pulled", `Successfully pulled image "${image}" in 1.002s (1.002s including waiting). Image size: ${size} bytes.`)
      ]
      : [normal("Pulled", `Container image "${image}" already present on machine`)]
    return [...pulled, normal("Created", `Created container: ${name}`), normal("Started", `Started container ${name}`)]
  })
}

// A pod's Ready condition set to `ready`, its other conditions as they were.
const withReady = (pod: KubeObject.KubeObject, ready: "True" | "False", now: string): Record<string, unknown> => {
  const status = record(pod.status)
  return {
    ...status,
    conditions: list(status.conditions).map((c) => c.type === "Ready" && c.status !== ready ? { ...c, status: ready, lastTransitionTime: now } : c)
  }
}

/**
 * The node lifecycle controller's mark on a pod of a node that is not ready: `Ready` false, its
 * containers still ready as far as anyone knows.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.nodeNotReady({ status: { conditions: [{ type: "Ready", status: "True" }] } }, "2026-01-01T00:00:00Z").conditions[0].status // "False"
 */
export const nodeNotReady = (pod: KubeObject.KubeObject, now: string): Record<string, unknown> => withReady(pod, "False", now)

/**
 * Whether the pod is not ready for its node alone: `Ready` false while its containers are ready
 * (what the node lifecycle controller leaves), so its kubelet, back, reports it ready again.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.readyButForNode({ status: { conditions: [{ type: "Ready", status: "False" }, { type: "ContainersReady", status: "True" }] } }) // true
 */
export const readyButForNode = (pod: KubeObject.KubeObject): boolean => {
  const conditions = list(record(pod.status).conditions)
  const of = (type: string) => conditions.find((c) => c.type === type)?.status
  return of("Ready") === "False" && of("ContainersReady") === "True"
}

/**
 * The kubelet's report of a pod whose node is ready again: `Ready` true.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.readyAgain({ status: { conditions: [{ type: "Ready", status: "False" }] } }, "2026-01-01T00:00:00Z").conditions[0].status // "True"
 */
export const readyAgain = (pod: KubeObject.KubeObject, now: string): Record<string, unknown> => withReady(pod, "True", now)

/**
 * The status a kubelet reports once a Pod's containers exited (a Job's pod, whose restart policy
 * lets it end): `Succeeded` with every container `Completed` (exit code 0), or `Failed` with them in
 * `Error` (exit code 1); not ready, its sandbox gone.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * const pod = { metadata: { uid: "u" }, spec: { containers: [{ name: "work", image: "busybox" }] }, status: { phase: "Running", startTime: "2026-01-01T00:00:00Z" } }
 * PodRuns.ended(pod, "2026-01-01T00:00:05Z", true).containerStatuses[0].state.terminated.reason // "Completed"
 */
export const ended = (pod: KubeObject.KubeObject, now: string, succeeded: boolean): Record<string, unknown> => {
  const previous = record(pod.status)
  const reason = succeeded ? "PodCompleted" : "PodFailed"
  const since = (type: string) => list(previous.conditions).find((c) => c.type === type)?.lastTransitionTime ?? now
  const notReady = (type: string) => ({ type, status: "False", lastProbeTime: null, lastTransitionTime: now, reason })
  return {
    ...previous,
    phase: succeeded ? "Succeeded" : "Failed",
    conditions: [
      { ...condition("PodReadyToStartContainers", now), status: "False" },
      { ...condition("Initialized", now), lastTransitionTime: since("Initialized"), reason: "PodCompleted" },
      notReady("Ready"),
      notReady("ContainersReady"),
      { ...condition("PodScheduled", now), lastTransitionTime: since("PodScheduled") }
    ],
    containerStatuses: list(record(pod.spec).containers).map((c) => {
      const before = statusOf(previous, c)
      return status(pod, c, { terminated: exited(pod, c, before, now, succeeded) }, false, before)
    })
  }
}

// The status the Pod reported for `container` before, if any.
const statusOf = (previous: Readonly<Record<string, unknown>>, container: Readonly<Record<string, unknown>>) =>
  list(previous.containerStatuses).find((s) => s.name === container.name)

// A container's status once its run failed and the kubelet restarts it: the count one up, the
// failed run as its last state.
const failedRun = (pod: KubeObject.KubeObject, container: Readonly<Record<string, unknown>>, before: Readonly<Record<string, unknown>> | undefined, now: string) => ({
  ...before,
  restartCount: KubeObject.number(before?.restartCount, 0) + 1,
  lastState: { terminated: exited(pod, container, before, now, false) }
})

// How a container's run ended: exit code 0 (`Completed`) or 1 (`Error`).
const exited = (
  pod: KubeObject.KubeObject,
  container: Readonly<Record<string, unknown>>,
  before: Readonly<Record<string, unknown>> | undefined,
  now: string,
  succeeded: boolean
) => ({
  containerID: containerId(pod, String(container.name ?? ""), KubeObject.number(before?.restartCount, 0)),
  exitCode: succeeded ? 0 : 1,
  finishedAt: now,
  reason: succeeded ? "Completed" : "Error",
  startedAt: record(record(before?.state).running).startedAt ?? now
})

/**
 * The status a kubelet reports once it restarted a Pod's failed containers (`restartPolicy:
 * OnFailure`): each running again as a new container, its restart count one up and its failed run
 * (exit code 1, `Error`) as its last state; the Pod still `Running`.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * const pod = { metadata: { uid: "u" }, spec: { restartPolicy: "OnFailure", containers: [{ name: "work", image: "busybox" }] }, status: { phase: "Running" } }
 * PodRuns.restarted(pod, "2026-01-01T00:00:05Z").containerStatuses[0].restartCount // 1
 */
export const restarted = (pod: KubeObject.KubeObject, now: string): Record<string, unknown> => {
  const previous = record(pod.status)
  return {
    ...previous,
    containerStatuses: list(record(pod.spec).containers).map((c) =>
      status(pod, c, { running: { startedAt: now } }, true, failedRun(pod, c, statusOf(previous, c), now))
    )
  }
}

// Go's duration text of kube's crash back-off: 10s, doubling, at most five minutes.
const backOff = (restarts: number): string => {
  const seconds = Math.min(300, 10 * 2 ** Math.max(0, restarts - 1))
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m${seconds % 60}s`
}

/**
 * The status a kubelet reports when a Pod's containers crashed (exit code 1) and wait out their
 * back-off before it restarts them (`restartPolicy: Always`): `CrashLoopBackOff`, the restart count
 * one up, the failed run as the last state, the Pod `Running` but not ready.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * const pod = { metadata: { name: "web", namespace: "default", uid: "u" }, spec: { containers: [{ name: "app", image: "nginx" }] }, status: { phase: "Running" } }
 * PodRuns.crashed(pod, "2026-01-01T00:00:05Z").containerStatuses[0].state.waiting.reason // "CrashLoopBackOff"
 */
export const crashed = (pod: KubeObject.KubeObject, now: string): Record<string, unknown> => {
  const previous = record(pod.status)
  const { name, namespace, uid } = KubeObject.meta(pod)
  const containers = list(record(pod.spec).containers)
  const notReady = (type: string) => ({
    type,
    status: "False",
    lastProbeTime: null,
    lastTransitionTime: now,
    reason: "ContainersNotReady",
    message: `containers with unready status: [${containers.map((c) => String(c.name ?? "")).join(" ")}]`
  })
  return {
    ...previous,
    conditions: list(previous.conditions).map((c) => c.type === "Ready" || c.type === "ContainersReady" ? notReady(String(c.type)) : c),
    containerStatuses: containers.map((c) => {
      const again = failedRun(pod, c, statusOf(previous, c), now)
      const waiting = {
        reason: "CrashLoopBackOff",
        message: `back-off ${backOff(again.restartCount)} restarting failed container=${String(c.name ?? "")} pod=${name}_${namespace}(${uid})`
      }
      return status(pod, c, { waiting }, false, again)
    })
  }
}

/**
 * The status a kubelet reports once it restarted a Pod's crashed containers after their back-off:
 * running again, each a new container, ready, and the Pod ready.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * const pod = { metadata: { uid: "u" }, spec: { containers: [{ name: "app", image: "nginx" }] }, status: { phase: "Running" } }
 * PodRuns.backedOff(PodRuns.crashed(pod, "2026-01-01T00:00:05Z") as any, "2026-01-01T00:00:06Z")
 */
export const backedOff = (pod: KubeObject.KubeObject, now: string): Record<string, unknown> => {
  const previous = record(pod.status)
  return {
    ...previous,
    conditions: list(previous.conditions).map((c) => c.type === "Ready" || c.type === "ContainersReady" ? condition(String(c.type), now) : c),
    containerStatuses: list(record(pod.spec).containers).map((c) => status(pod, c, { running: { startedAt: now } }, true, statusOf(previous, c)))
  }
}

/**
 * Whether a Pod's containers wait out a crash back-off.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.backingOff({ status: { containerStatuses: [{ state: { waiting: { reason: "CrashLoopBackOff" } } }] } }) // true
 */
export const backingOff = (pod: KubeObject.KubeObject): boolean =>
  list(record(pod.status).containerStatuses).some((s) => record(record(s.state).waiting).reason === "CrashLoopBackOff")

/**
 * The restarts of a Pod's containers, its init containers' included.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.restarts({ status: { containerStatuses: [{ restartCount: 2 }], initContainerStatuses: [{ restartCount: 1 }] } }) // 3
 */
export const restarts = (pod: KubeObject.KubeObject): number =>
  [...list(record(pod.status).initContainerStatuses), ...list(record(pod.status).containerStatuses)]
    .reduce((sum, s) => sum + KubeObject.number(s.restartCount, 0), 0)

// Ephemeral containers run once started and are never ready (no probe may say so).
const ephemeralStatuses = (pod: KubeObject.KubeObject, now: string) => {
  const ephemeral = list(record(pod.spec).ephemeralContainers)
  if (ephemeral.length === 0) return {}
  const known = new Map(list(record(pod.status).ephemeralContainerStatuses).map((c) => [c.name, c]))
  return { ephemeralContainerStatuses: ephemeral.map((c) => known.get(c.name) ?? status(pod, c, { running: { startedAt: now } }, false)) }
}

/**
 * Whether a running Pod has an ephemeral container its status does not show yet (`kubectl debug`
 * added one).
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.ephemeralPending({ spec: { ephemeralContainers: [{ name: "debugger" }] }, status: { phase: "Running" } }) // true
 */
export const ephemeralPending = (pod: KubeObject.KubeObject): boolean =>
  record(pod.status).phase === "Running" &&
  list(record(pod.spec).ephemeralContainers).length > list(record(pod.status).ephemeralContainerStatuses).length

/**
 * A running Pod's status with its ephemeral containers started.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * const pod = { metadata: { uid: "u" }, spec: { ephemeralContainers: [{ name: "debugger", image: "busybox" }] }, status: { phase: "Running" } }
 * PodRuns.withEphemeral(pod, "2026-01-01T00:00:00Z").ephemeralContainerStatuses[0].state // { running: { startedAt: "2026-01-01T00:00:00Z" } }
 */
export const withEphemeral = (pod: KubeObject.KubeObject, now: string): Record<string, unknown> => ({
  ...record(pod.status),
  ...ephemeralStatuses(pod, now)
})

/**
 * The Pod's IP: from the cluster's pod range, the same for the same Pod; the node's own address
 * for a Pod on the host's network.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.podIP({ metadata: { uid: "u-1" } }).startsWith("10.244.") // true
 * PodRuns.podIP({ metadata: { uid: "u-1" }, spec: { hostNetwork: true } }) // "172.18.0.2"
 */
export const podIP = (pod: KubeObject.KubeObject): string => {
  if (record(pod.spec).hostNetwork === true) return SimulatedNode.address
  const digest = createHash("sha256").update(KubeObject.meta(pod).uid ?? KubeObject.meta(pod).name ?? "").digest()
  return `10.244.${digest[0]!}.${Math.max(2, digest[1]!)}`
}

/**
 * A Pod's status with the `DisruptionTarget` condition, as what is about to end it for a reason of
 * its own (an eviction, the pod garbage collector) sets it.
 *
 * @example
 * import * as PodRuns from "./PodRuns.ts"
 * PodRuns.disrupted({ status: { phase: "Running" } }, "EvictionByEvictionAPI", "Eviction API: evicting", "2026-01-01T00:00:00Z").conditions[0].type // "DisruptionTarget"
 */
export const disrupted = (pod: KubeObject.KubeObject, reason: string, message: string, now: string): Record<string, unknown> => {
  const status = record(pod.status)
  const marked = { type: "DisruptionTarget", status: "True", lastProbeTime: null, lastTransitionTime: now, reason, message }
  return { ...status, conditions: [...list(status.conditions).filter((c) => c.type !== "DisruptionTarget"), marked] }
}
