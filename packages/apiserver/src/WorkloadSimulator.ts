/**
 * An opt-in stand-in for kube-controller-manager's workload controllers and the kubelet, so that
 * workloads roll out and report readiness without running anything. A Deployment rolls out as
 * 1.32's controller does: a ReplicaSet per pod template (`<name>-<pod-template-hash>`, numbered by
 * `deployment.kubernetes.io/revision`, old ones kept to `revisionHistoryLimit`; an earlier template
 * takes its ReplicaSet back as the newest revision), scaled up as old ones scale down by the
 * rolling update's surge and unavailable allowance (or Recreate), each ReplicaSet making and
 * deleting its Pods, and the statuses counted from the Pods. A StatefulSet's Pods are made as
 * 1.32's controller makes them (`<name>-<ordinal>`, their claims from `volumeClaimTemplates`, one at
 * a time in order or in parallel, updated highest ordinal first above the partition, revisions kept
 * as ControllerRevisions), with the controller's events. A Deployment's ReplicaSet whose pods
 * admission refuses (its ServiceAccount missing, or its namespace's Pod Security level) gets a
 * `ReplicaFailure` condition (reason `FailedCreate`) with the refusal, and a StatefulSet a
 * `FailedCreate` event, until the ServiceAccount's creation or a relabelled namespace lets its
 * pods in. A Job's Pods are made as 1.32's Job controller makes them (from its template, up to its
 * parallelism, tracked by a finalizer until counted) and each ends `delay` after it runs, as
 * `jobOutcome` says: the Job completes, or its failed pods are replaced until its backoff limit
 * fails it; it is suspended (its active pods deleted) and resumed as its spec says, and deleted
 * `ttlSecondsAfterFinished` after it ended. A CronJob makes a Job at each schedule time, as its
 * concurrency policy allows, and keeps its finished Jobs to the history limits. An HPA holds its
 * target within its bounds and reports that no metrics can be read. A PodDisruptionBudget's status
 * is counted from its pods, so evictions (`kubectl drain`) honour it. The simulator's kubelet
 * registers a Node, `kubefx-node`, and a DaemonSet runs a pod for each node it should run on. The
 * scheduler binds a Pod to it when the Pod fits there (else it stays Pending, `Unschedulable`), and
 * the kubelet runs it, every container started and ready, after `delay`, until it is deleted: then
 * it is `Terminating` for `delay` (or its grace period, if shorter) before it is gone; a pod
 * `crashing` picks crashes and is restarted in a `CrashLoopBackOff` loop. Off unless passed in
 * `ApiServer.Options.controllers`.
 */
import { Duration, Effect, FiberMap, type Scope } from "effect"
import type * as ApiServer from "./ApiServer.ts"
import * as AutoscalerSimulation from "./AutoscalerSimulation.ts"
import * as ControllerEvents from "./ControllerEvents.ts"
import * as CronJobSimulation from "./CronJobSimulation.ts"
import * as DaemonSetSimulation from "./DaemonSetSimulation.ts"
import * as DeploymentSimulation from "./DeploymentSimulation.ts"
import * as DisruptionSimulation from "./DisruptionSimulation.ts"
import * as EndpointsSimulation from "./EndpointsSimulation.ts"
import * as JobRuns from "./JobRuns.ts"
import * as JobSimulation from "./JobSimulation.ts"
import * as LoadBalancerSimulation from "./LoadBalancerSimulation.ts"
import * as NodeLifecycle from "./NodeLifecycle.ts"
import * as PodReferences from "./PodReferences.ts"
import * as PodRuns from "./PodRuns.ts"
import * as PodSimulation from "./PodSimulation.ts"
import * as Rest from "./Rest.ts"
import * as StatefulSetSimulation from "./StatefulSetSimulation.ts"
import * as SimulatedController from "./SimulatedController.ts"
import * as ServiceEndpoints from "./ServiceEndpoints.ts"
import * as SimulatedNode from "./SimulatedNode.ts"
import type * as Status from "./Status.ts"
import * as StorageProtection from "./StorageProtection.ts"
import type * as Store from "./Store.ts"
import * as VolumeSimulation from "./VolumeSimulation.ts"
import * as Worker from "./Worker.ts"
import { KubeObject, Quantity } from "@kubefx/schema/internal"

export interface Options {
  /** How long a Pod takes to run and turn Ready, and a Job's pod to end once running; default 1 second. */
  readonly delay?: Duration.Input
  /** How each of a Job's pods ends once it ran (the Job's and the pod's say); default every pod succeeds. */
  readonly jobOutcome?: ((job: KubeObject.KubeObject, pod: KubeObject.KubeObject) => JobRuns.Outcome) | undefined
  /**
   * The pods whose containers crash (not a Job's): each runs for `delay`, exits with code 1 and
   * waits out a back-off of `delay` in `CrashLoopBackOff` (the restart count going up, the pod not
   * ready) before it is restarted, over and over; default none.
   */
  readonly crashing?: ((pod: KubeObject.KubeObject) => boolean) | undefined
  /**
   * An IPv4 pool ("172.18.255.200/29") the LoadBalancer Services without a `loadBalancerClass` get
   * their addresses from, as a cloud's service controller (kind's cloud-provider-kind, MetalLB)
   * gives them; default none: they stay pending, as on kind without one.
   */
  readonly loadBalancerAddresses?: string | undefined
  /**
   * What the simulated node has, per resource, in place of a kind node's (the host's cpus and
   * memory, 110 pods): `{ cpu: "4", memory: "8Gi", "nvidia.com/gpu": "2" }`. The scheduler binds a
   * pod only where its requests fit beside the other pods' (else `Insufficient cpu`).
   */
  readonly nodeCapacity?: Readonly<Record<string, string>> | undefined
}

type Kind =
  | "Deployment"
  | "ReplicaSet"
  | "StatefulSet"
  | "DaemonSet"
  | "CronJob"
  | "Job"
  | "Pod"
  | "Service"
  | "HorizontalPodAutoscaler"
  | "PodDisruptionBudget"
  | "PersistentVolumeClaim"
  | "PersistentVolume"

const kinds: ReadonlyMap<string, Kind> = new Map([
  ["deployments.apps", "Deployment"],
  ["replicasets.apps", "ReplicaSet"],
  ["statefulsets.apps", "StatefulSet"],
  ["daemonsets.apps", "DaemonSet"],
  ["cronjobs.batch", "CronJob"],
  ["jobs.batch", "Job"],
  ["pods", "Pod"],
  ["services", "Service"],
  ["horizontalpodautoscalers.autoscaling", "HorizontalPodAutoscaler"],
  ["poddisruptionbudgets.policy", "PodDisruptionBudget"],
  ["persistentvolumeclaims", "PersistentVolumeClaim"],
  ["persistentvolumes", "PersistentVolume"]
])

interface Key {
  readonly phase: "observe" | "complete"
  readonly storage: string
  readonly namespace: string
  readonly name: string
}

// The controllers that look at what they own changing: by owned kind, the owner kinds' storage.
const owners: ReadonlyMap<Kind, ReadonlyMap<string, string>> = new Map([
  ["ReplicaSet", new Map([["Deployment", "deployments.apps"]])],
  ["Job", new Map([["CronJob", "cronjobs.batch"]])],
  ["Pod", new Map([["ReplicaSet", "replicasets.apps"], ["StatefulSet", "statefulsets.apps"], ["DaemonSet", "daemonsets.apps"], ["Job", "jobs.batch"]])]
])

const objectId = (key: Key) => `${key.storage}|${key.namespace}|${key.name}`

// As kube's components write: the controller manager's unless a write says whose it is.
const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "kube-controller-manager",
  fieldValidation: "Ignore"
}
const kubeletOptions: Rest.WriteOptions = { ...writeOptions, fieldManager: "kubelet" }

const record = KubeObject.record
const count = KubeObject.number

const refusedBefore = (object: KubeObject.KubeObject) =>
  KubeObject.records(record(object.status).conditions).some((c) => c.type === "ReplicaFailure" && c.status === "True")

// What the simulator looks at: workloads on every change; Services it keeps the endpoints of; Pods
// to start, and a Job's pod being deleted.
const pending = (store: Store.Store, kind: Kind, object: KubeObject.KubeObject) =>
  kind === "Service"
    ? ServiceEndpoints.kept(object) || LoadBalancerSimulation.concerns(object)
    : kind === "Pod"
    ? (PodRuns.pending(object) && !PodRuns.scheduled(object)) || PodRuns.ephemeralPending(object) || JobSimulation.heldWhileDeleted(object) ||
      PodSimulation.terminating(store, object)
    : kind === "PersistentVolumeClaim"
    ? VolumeSimulation.pending(object) || VolumeSimulation.resizing(object)
    : kind === "PersistentVolume"
    ? VolumeSimulation.fresh(object)
    : true

// A Job running with no pod active: admission refused its pods.
const refusedJob = (object: KubeObject.KubeObject) => JobRuns.stage(object) === "running" && count(record(object.status).active) === 0

/**
 * The simulator as a controller for `ApiServer.Options.controllers`. Throws for a
 * `loadBalancerAddresses` that is not an IPv4 CIDR, naming it.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ApiServer from "./ApiServer.ts"
 * import * as WorkloadSimulator from "./WorkloadSimulator.ts"
 * const program = Effect.scoped(ApiServer.make({ controllers: [WorkloadSimulator.make({ delay: "200 millis" })] }))
 */
export const make = (options: Options = {}): (server: ApiServer.ApiServer) => Effect.Effect<void, never, Scope.Scope> => {
  const pool = options.loadBalancerAddresses
  if (pool !== undefined && LoadBalancerSimulation.hosts(pool) === undefined) {
    throw new Error(`loadBalancerAddresses takes an IPv4 pool such as 172.18.255.200/29, not ${pool}`)
  }
  for (const [resource, quantity] of Object.entries(options.nodeCapacity ?? {})) {
    const wrong = resource === "" ? "a resource needs a name" : Quantity.parseError(String(quantity))
    if (wrong !== undefined) throw new Error(`nodeCapacity ${resource}=${quantity}: ${wrong}`)
  }
  return (server) => simulate(options, server)
}

const simulate = (options: Options, server: ApiServer.ApiServer): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const delay = Duration.fromInputUnsafe(options.delay ?? "1 second")
    const { env } = server
    const rollouts = yield* FiberMap.make<string>()

    const target = (key: SimulatedController.Key): Rest.Target | undefined => {
      const resource = env.registry.byStorage(key.storage)[0]
      return resource === undefined ? undefined : { resource, namespace: key.namespace, name: key.name }
    }
    // One gone or changed meanwhile is left to its next event.
    const update: SimulatedController.Context["update"] = (key, subresource, next, manager) => {
      const at = target(key)
      if (at === undefined) return Effect.void
      const options = { ...writeOptions, fieldManager: manager ?? SimulatedController.managerOf(key.storage, subresource) }
      return Rest.update(env, at, subresource, options, (current) => Effect.succeed(next(current))).pipe(
        Effect.asVoid,
        Effect.catchIf((error: Status.ApiError) => error.code === 404 || error.code === 409, () => Effect.void)
      )
    }
    // `keep`: a timer already running for the object stays (a deletion's, which later events must not push back).
    const completeAfter = (key: Key, after: Duration.Duration, keep = false) =>
      FiberMap.run(
        rollouts,
        objectId(key),
        Effect.sleep(after).pipe(Effect.andThen(Effect.sync(() => worker.enqueue({ ...key, phase: "complete" })))),
        { onlyIfMissing: keep }
      )

    const controllers: SimulatedController.Context = {
      env,
      writeOptions,
      update,
      again: (key, after) => completeAfter({ phase: "complete", ...key }, after)
    }

    // When each pod waiting out a NoExecute taint was first seen waiting, by node and uid.
    const waiting = new Map<string, number>()
    const handle = (key: Key): Effect.Effect<void, Status.ApiError> =>
      Effect.gen(function*() {
        if (key.storage === "nodes") {
          const node = env.store.get("nodes", "", key.name)
          if (node === undefined) return
          yield* NodeLifecycle.node(controllers, key, node, waiting)
          return yield* PodSimulation.releaseOutOfService(controllers, node)
        }
        const kind = kinds.get(key.storage)!
        const object = env.store.get(key.storage, key.namespace, key.name)
        if (object === undefined) {
          // A managed Service gone: its Endpoints go too.
          if (kind === "Service" && key.phase === "complete") yield* EndpointsSimulation.forget(controllers, key.namespace, key.name)
          // A claim gone: its volume is reclaimed.
          if (kind === "PersistentVolumeClaim") yield* VolumeSimulation.reclaim(controllers, key.namespace, key.name)
          return
        }
        if (kind === "Job") return yield* handleJob(key, object)
        if (kind === "CronJob") return yield* CronJobSimulation.cronJob(controllers, key, object)
        if (kind === "HorizontalPodAutoscaler") return yield* AutoscalerSimulation.autoscaler(controllers, key, object)
        if (kind === "PodDisruptionBudget") return yield* DisruptionSimulation.budget(controllers, key, object)
        if (kind === "DaemonSet") return yield* DaemonSetSimulation.daemonSet(controllers, key, object)
        if (kind === "PersistentVolumeClaim") return yield* VolumeSimulation.claim(controllers, key, object)
        if (kind === "PersistentVolume") return yield* VolumeSimulation.volume(controllers, key, object)
        if (kind === "Pod") return yield* handlePod(key, object)
        if (kind === "Service") {
          if (options.loadBalancerAddresses !== undefined) yield* LoadBalancerSimulation.service(controllers, key, object, options.loadBalancerAddresses)
          return yield* EndpointsSimulation.endpoints(controllers, key, object)
        }
        if (kind === "Deployment") return yield* DeploymentSimulation.deployment(controllers, key, object)
        if (kind === "ReplicaSet") return yield* DeploymentSimulation.replicaSet(controllers, key, object)
        return yield* StatefulSetSimulation.statefulSet(controllers, key, object)
      })

    // The Job controller's look, then a finished Job's time to live.
    const handleJob = (key: Key, job: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
      Effect.gen(function*() {
        yield* JobSimulation.job(controllers, key, job)
        const now = env.store.get(key.storage, key.namespace, key.name)
        if (now !== undefined && JobRuns.stage(now) === "finished") yield* expireAfter(key, now)
      })

    // A Pod is bound to the simulated node when it fits there, and runs, every container ready,
    // after the delay; a Job's pod ends after the delay again, as the Job's outcome says. (Any other
    // runs until deleted: nothing here knows when its processes would end.) A running Pod being
    // deleted is stopped after the delay, or its grace period if shorter, and deleted for good.
    const jobOf = (pod: KubeObject.KubeObject) => {
      const owner = (KubeObject.meta(pod).ownerReferences ?? []).find((ref) => ref.controller === true && ref.kind === "Job")
      const job = owner === undefined ? undefined : env.store.get("jobs.batch", KubeObject.meta(pod).namespace ?? "", String(owner.name))
      return job !== undefined && KubeObject.meta(job).uid === owner?.uid ? job : undefined
    }
    const handlePod = (key: Key, pod: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
      Effect.gen(function*() {
        // Bound to a node that is gone: collected once the delay (the collector's quarantine) passed.
        if (PodSimulation.orphaned(env.store, pod)) {
          if (key.phase === "complete") return yield* PodSimulation.collect(controllers, key, pod)
          return yield* completeAfter(key, delay)
        }
        if (KubeObject.meta(pod).deletionTimestamp !== undefined) {
          // A Job's pod being deleted is the Job's to count; one whose Job is gone is let go, as the
          // Job controller lets orphans go.
          if (jobOf(pod) === undefined) yield* JobSimulation.release(controllers, pod)
          if (!PodSimulation.terminating(env.store, pod)) return
          // Containers never started stop at once; running ones take the delay, or the grace period.
          if (key.phase === "complete" || record(pod.status).phase !== "Running") return yield* PodSimulation.terminate(controllers, key, pod)
          const grace = KubeObject.meta(pod).deletionGracePeriodSeconds ?? 0
          return yield* Effect.asVoid(completeAfter(key, Duration.min(delay, Duration.seconds(grace)), true))
        }
        if (PodRuns.ephemeralPending(pod)) return yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.withEphemeral(current, KubeObject.timestamp()))
        const job = jobOf(pod)
        const running = record(pod.status).phase === "Running"
        if (key.phase === "complete" && running && job === undefined && crashing(pod)) return yield* crashLoop(key, pod)
        if (key.phase === "complete" && running && job !== undefined) {
          const succeeded = (options.jobOutcome?.(job, pod) ?? "Complete") === "Complete"
          // A pod that restarts on failure is restarted in place by its kubelet, and runs again.
          if (!succeeded && record(pod.spec).restartPolicy === "OnFailure") {
            yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.restarted(current, KubeObject.timestamp()))
            return yield* completeAfter(key, delay)
          }
          return yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.ended(current, KubeObject.timestamp(), succeeded))
        }
        // Its node back, the kubelet reports a pod the node lifecycle controller marked ready again.
        if (running && PodRuns.readyButForNode(pod) && PodSimulation.runs(env.store, pod) && !crashing(pod)) {
          return yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.readyAgain(current, KubeObject.timestamp()))
        }
        if (!PodRuns.pending(pod)) return
        if (PodSimulation.unbound(pod)) {
          // The ephemeral volume controller makes its claims first; their making brings it back here.
          yield* VolumeSimulation.ensureEphemeral(controllers, pod)
          if (yield* PodSimulation.schedule(controllers, key, pod)) yield* completeAfter(key, delay)
          return
        }
        // A Pod bound to a node with no kubelet (gone, or not ready) stays Pending.
        if (!PodSimulation.runs(env.store, pod)) return
        if (key.phase === "observe") {
          if (!PodRuns.scheduled(pod) && !(yield* PodSimulation.admit(controllers, key, pod))) return
          return yield* completeAfter(key, delay)
        }
        // What its volumes mount and its environment reads must exist first; their making brings it back.
        const blocked = PodReferences.blocked(env.store, pod)
        if (blocked !== undefined) {
          // Backing off a failed pull already: the kubelet tries again only after minutes.
          if (blocked._tag === "Pull" && PodRuns.pulledBackOff(pod, blocked.container)) return
          yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.waiting(current, KubeObject.timestamp(), blocked, PodRuns.podIP(current)))
          for (const event of PodRuns.blockedEvents(pod, blocked)) yield* ControllerEvents.record(env, writeOptions, pod, ControllerEvents.kubelet(pod), event)
          // A failed pull backs off: the next look, after the delay, finds it backing off.
          if (blocked._tag === "Pull") yield* completeAfter(key, delay)
          return
        }
        yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.running(current, KubeObject.timestamp(), PodRuns.podIP(current)))
        for (const started of PodRuns.startEvents(pod)) yield* ControllerEvents.record(env, writeOptions, pod, ControllerEvents.kubelet(pod), started)
        if (job !== undefined || crashing(pod)) yield* completeAfter(key, delay)
      })

    // A crashing pod's next step: its containers crash and back off, or are restarted; either way
    // the next comes after the delay.
    const crashing = options.crashing ?? (() => false)
    const crashLoop = (key: Key, pod: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> =>
      Effect.gen(function*() {
        const now = KubeObject.timestamp()
        if (PodRuns.backingOff(pod)) {
          yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.backedOff(current, now))
        } else {
          yield* SimulatedController.writeStatus(controllers, key, (current) => PodRuns.crashed(current, now))
          const { name, namespace, uid } = KubeObject.meta(pod)
          for (const container of KubeObject.records(record(pod.spec).containers)) {
            yield* ControllerEvents.record(env, writeOptions, pod, ControllerEvents.kubelet(pod), {
              type: "Warning",
              reason: "BackOff",
              message: `Back-off restarting failed container ${String(container.name ?? "")} in pod ${name}_${namespace}(${uid})`,
              fieldPath: `spec.containers{${String(container.name ?? "")}}`
            })
          }
        }
        yield* completeAfter(key, delay)
      })

    // kube's TTL-after-finished controller: a finished Job with `ttlSecondsAfterFinished` is
    // deleted (foreground, its pods first) that long after it ended.
    const expireAfter = (key: Key, job: KubeObject.KubeObject) => {
      const ttl = record(job.spec).ttlSecondsAfterFinished
      const at = target(key)
      if (typeof ttl !== "number" || at === undefined) return Effect.void
      const endedAt = Date.parse(JobRuns.endedAt(job) ?? "")
      const left = Math.max(0, (Number.isNaN(endedAt) ? Date.now() : endedAt) + ttl * 1000 - Date.now())
      const remove = Rest.remove(env, at, { propagationPolicy: "Foreground", preconditions: { uid: KubeObject.meta(job).uid ?? "" }, dryRun: false }).pipe(
        Effect.asVoid,
        Effect.catchIf((error: Status.ApiError) => error.code === 404 || error.code === 409, () => Effect.void)
      )
      return FiberMap.run(rollouts, objectId(key), Effect.sleep(Duration.millis(left)).pipe(Effect.andThen(remove)))
    }

    const worker: Worker.Worker<Key> = yield* Worker.make("workload-simulator", handle, (key) => `${key.phase}|${objectId(key)}`)

    // Refused rollouts are tried again when what refused them may have changed: the namespace's
    // Pod Security labels, a ServiceAccount created, a quota or limit range. (Pods already running stay, as a stricter
    // level never evicts them.)
    const retryRefused = (namespace: string) => {
      for (const [storage, kind] of kinds) {
        for (const object of env.store.list(storage, namespace)) {
          const name = String(KubeObject.meta(object).name)
          // A StatefulSet or DaemonSet stuck on a refused pod says so only in events: each is looked at again.
          if ((kind === "Job" && refusedJob(object)) || (kind === "ReplicaSet" && refusedBefore(object)) || kind === "StatefulSet" || kind === "DaemonSet") {
            worker.enqueue({ phase: "observe", storage, namespace, name })
          }
        }
      }
    }
    const relabelled = (event: Store.Event) => {
      if (event.type !== "MODIFIED" || event.prev === undefined) return
      const before = KubeObject.meta(event.prev).labels ?? {}
      const after = KubeObject.meta(event.object).labels ?? {}
      const keys = new Set([...Object.keys(before), ...Object.keys(after)])
      if ([...keys].some((label) => label.startsWith("pod-security.kubernetes.io/") && before[label] !== after[label])) {
        retryRefused(String(KubeObject.meta(event.object).name))
      }
    }

    const retryPendingClaims = () => {
      for (const claim of env.store.list("persistentvolumeclaims", undefined)) {
        const m = KubeObject.meta(claim)
        if (VolumeSimulation.pending(claim)) worker.enqueue({ phase: "observe", storage: "persistentvolumeclaims", namespace: m.namespace ?? "", name: m.name ?? "" })
      }
    }

    const onEvent = (event: Store.Event) => {
      if (event.storage === "namespaces") return relabelled(event)
      if (event.storage === "serviceaccounts") return event.type === "ADDED" ? retryRefused(event.namespace) : undefined
      // A quota or limit range changed or gone (its usage recounted as pods go) may let refused pods in.
      if (event.storage === "resourcequotas" || event.storage === "limitranges") return retryRefused(event.namespace)
      // A Secret or ConfigMap made or changed may be what a pod's kubelet waits for.
      if (event.storage === "secrets" || event.storage === "configmaps") {
        if (event.type === "DELETED") return
        for (const pod of env.store.list("pods", event.namespace)) {
          if (PodRuns.waitingForReferences(pod)) worker.enqueue({ phase: "complete", storage: "pods", namespace: event.namespace, name: KubeObject.meta(pod).name ?? "" })
        }
        return
      }
      // A class made or changed may be what a claim waited for.
      if (event.storage === "storageclasses.storage.k8s.io") return event.type === "DELETED" ? undefined : retryPendingClaims()
      // A node's change is every DaemonSet's, and the scheduler's for every Pod not yet bound.
      if (event.storage === "nodes") {
        if (event.type !== "DELETED") worker.enqueue({ phase: "observe", storage: "nodes", namespace: "", name: String(KubeObject.meta(event.object).name) })
        for (const ds of env.store.list("daemonsets.apps", undefined)) {
          const m = KubeObject.meta(ds)
          worker.enqueue({ phase: "observe", storage: "daemonsets.apps", namespace: m.namespace ?? "", name: m.name ?? "" })
        }
        const name = KubeObject.meta(event.object).name
        const gone = event.type === "DELETED" ? name : undefined
        // A node ready again has its kubelet back: the pods bound to it start, or finish going.
        const back = event.type === "MODIFIED" && event.prev !== undefined && !NodeLifecycle.ready(event.prev) && NodeLifecycle.ready(event.object)
        for (const pod of env.store.list("pods", undefined)) {
          const m = KubeObject.meta(pod)
          const bound = record(pod.spec).nodeName
          if ((PodRuns.pending(pod) && PodSimulation.unbound(pod)) || (gone !== undefined && bound === gone) || (back && bound === name)) {
            worker.enqueue({ phase: "observe", storage: "pods", namespace: m.namespace ?? "", name: m.name ?? "" })
          }
        }
        return
      }
      const kind = kinds.get(event.storage)
      if (kind === undefined) return
      if (kind === "Service" && event.type === "DELETED") {
        if (ServiceEndpoints.kept(event.object)) {
          worker.enqueue({ phase: "complete", storage: "services", namespace: event.namespace, name: String(KubeObject.meta(event.object).name) })
        }
        return
      }
      // A Pod's change is every Service's that selects it, before or after; a pod on a node with
      // NoExecute taints is the taint eviction controller's to look at.
      if (kind === "Pod") {
        const on = String(record(event.object.spec).nodeName ?? "")
        const node = on === "" || event.type === "DELETED" ? undefined : env.store.get("nodes", "", on)
        if (node !== undefined && NodeLifecycle.evicting(node)) worker.enqueue({ phase: "observe", storage: "nodes", namespace: "", name: on })
        for (const service of env.store.list("services", event.namespace)) {
          if (ServiceEndpoints.selects(service, event.object) || (event.prev !== undefined && ServiceEndpoints.selects(service, event.prev))) {
            worker.enqueue({ phase: "observe", storage: "services", namespace: event.namespace, name: String(KubeObject.meta(service).name) })
          }
        }
        // A pod gone or ended may have been what kept another from its node (anti-affinity, its
        // requests, its host ports): the scheduler tries again.
        if (event.type === "DELETED" || (PodRuns.done(event.object) && (event.prev === undefined || !PodRuns.done(event.prev)))) {
          for (const waiting of env.store.list("pods", undefined)) {
            if (PodRuns.pending(waiting) && PodSimulation.unschedulable(waiting)) {
              const m = KubeObject.meta(waiting)
              worker.enqueue({ phase: "observe", storage: "pods", namespace: m.namespace ?? "", name: m.name ?? "" })
            }
          }
        }
      }
      // A claim's change is the scheduler's for the pods waiting on it; a claim gone, its volume's.
      if (kind === "PersistentVolumeClaim") {
        const name = KubeObject.meta(event.object).name
        for (const pod of env.store.list("pods", event.namespace)) {
          if (PodRuns.pending(pod) && PodSimulation.unbound(pod) && StorageProtection.claimsOf(pod).includes(name ?? "")) {
            worker.enqueue({ phase: "observe", storage: "pods", namespace: event.namespace, name: KubeObject.meta(pod).name ?? "" })
          }
        }
        if (event.type === "DELETED") worker.enqueue({ phase: "complete", storage: "persistentvolumeclaims", namespace: event.namespace, name: name ?? "" })
      }
      // A volume that turned Available may be what a pending claim waits for.
      if (kind === "PersistentVolume" && record(event.object.status).phase === "Available" && record(event.prev?.status).phase !== "Available") {
        retryPendingClaims()
      }
      // A pod's change, or its controllers', is the namespace's disruption budgets' to count again.
      if (kind === "Pod" || kind === "ReplicaSet" || kind === "Deployment" || kind === "StatefulSet") {
        for (const pdb of env.store.list("poddisruptionbudgets.policy", event.namespace)) {
          worker.enqueue({ phase: "observe", storage: "poddisruptionbudgets.policy", namespace: event.namespace, name: String(KubeObject.meta(pdb).name) })
        }
      }
      // A scale target's change is its autoscalers' to look at.
      if (kind === "Deployment" || kind === "ReplicaSet" || kind === "StatefulSet") {
        for (const hpa of env.store.list("horizontalpodautoscalers.autoscaling", event.namespace)) {
          const ref = record(record(hpa.spec).scaleTargetRef)
          if (ref.kind === event.object.kind && ref.name === KubeObject.meta(event.object).name) {
            worker.enqueue({ phase: "observe", storage: "horizontalpodautoscalers.autoscaling", namespace: event.namespace, name: String(KubeObject.meta(hpa).name) })
          }
        }
      }
      // A ReplicaSet's change is its Deployment's to look at, a Job's its CronJob's, a pod's its controller's.
      const owner = (KubeObject.meta(event.object).ownerReferences ?? []).find((ref) => ref.controller === true)
      const ownerStorage = owner === undefined ? undefined : owners.get(kind)?.get(owner.kind)
      if (ownerStorage !== undefined) worker.enqueue({ phase: "observe", storage: ownerStorage, namespace: event.namespace, name: String(owner!.name) })
      if (event.type === "DELETED" || !pending(env.store, kind, event.object)) return
      worker.enqueue({ phase: "observe", storage: event.storage, namespace: event.namespace, name: String(KubeObject.meta(event.object).name) })
    }
    // The kubelet registers its Node first, for the scheduler (kept when the server restarts with its data).
    // Its status is posted again when what it has changed since (a server restarted with its data).
    const nodes = env.registry.byStorage("nodes")[0]
    const capacity = SimulatedNode.capacity(options.nodeCapacity)
    if (nodes !== undefined && env.store.get("nodes", "", SimulatedNode.name) === undefined) {
      yield* Effect.ignore(Rest.create(env, nodes, undefined, SimulatedNode.node(), kubeletOptions))
    }
    const registered = env.store.get("nodes", "", SimulatedNode.name)
    // A kubelet starting records it about its node (a reference whose uid is the node's name), and
    // the node lifecycle controller registers the node.
    if (registered !== undefined) {
      const kubelet = { component: "kubelet", host: SimulatedNode.name }
      const reference = { kind: "Node", metadata: { name: SimulatedNode.name, uid: SimulatedNode.name } }
      for (const event of SimulatedNode.startEvents()) yield* ControllerEvents.record(env, writeOptions, reference, kubelet, event)
      yield* ControllerEvents.record(env, writeOptions, registered, "node-controller", {
        type: "Normal",
        reason: "RegisteredNode",
        message: `Node ${SimulatedNode.name} event: Registered Node ${SimulatedNode.name} in Controller`
      })
    }
    if (registered !== undefined && JSON.stringify(record(registered.status).capacity) !== JSON.stringify(capacity)) {
      yield* Effect.ignore(update({ storage: "nodes", namespace: "", name: SimulatedNode.name }, "status", (current) =>
        ({ ...current, status: SimulatedNode.status(KubeObject.timestamp(), capacity) })))
    }
    // Its kubelet holds the node's Lease and renews it every ten seconds, as a 1.32 kubelet does.
    const leases = env.registry.byStorage("leases.coordination.k8s.io")[0]
    const nodeUid = KubeObject.meta(registered ?? {}).uid
    if (leases !== undefined && nodeUid !== undefined) {
      const leaseKey = { storage: leases.storage, namespace: "kube-node-lease", name: SimulatedNode.name }
      const renew = Effect.suspend(() =>
        env.store.get(leases.storage, leaseKey.namespace, leaseKey.name) === undefined
          ? Effect.ignore(Rest.create(env, leases, leaseKey.namespace, SimulatedNode.lease(nodeUid, Date.now()), kubeletOptions))
          : update(leaseKey, undefined, (current) => ({ ...current, spec: { ...record(current.spec), renewTime: SimulatedNode.lease(nodeUid, Date.now()).spec.renewTime } }))
      )
      yield* Effect.ignore(renew)
      yield* Effect.forkScoped(Effect.forever(Effect.delay(Effect.ignore(renew), Duration.seconds(SimulatedNode.leaseDurationSeconds / 4))))
    }
    yield* VolumeSimulation.ensureDefaultClass(env, writeOptions)
    for (const node of env.store.list("nodes", undefined)) worker.enqueue({ phase: "observe", storage: "nodes", namespace: "", name: KubeObject.meta(node).name ?? "" })
    for (const [storage, kind] of kinds) {
      for (const object of env.store.list(storage, undefined)) {
        const m = KubeObject.meta(object)
        const key: Key = { phase: "observe", storage, namespace: m.namespace ?? "", name: m.name ?? "" }
        if (pending(env.store, kind, object)) worker.enqueue(key)
        // Pods that were starting still run; a Job's running pods still end.
        else if (kind === "Pod" && (PodRuns.pending(object) || (record(object.status).phase === "Running" && jobOf(object) !== undefined))) {
          yield* completeAfter(key, delay)
        }
      }
    }
    const unsubscribe = env.store.subscribe(onEvent)
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  })

/**
 * The simulator with its default one-second rollouts, as `kubefx dev` starts it.
 *
 * @example
 * import * as ApiServer from "./ApiServer.ts"
 * import * as WorkloadSimulator from "./WorkloadSimulator.ts"
 * const server = ApiServer.make({ controllers: [WorkloadSimulator.controller] })
 */
export const controller: (server: ApiServer.ApiServer) => Effect.Effect<void, never, Scope.Scope> = make()
