/**
 * kube-apiserver's built-in PodSecurity admission, with its default configuration (every mode
 * privileged unless a namespace's labels say otherwise, no exemptions):
 *
 * - a Pod created, or updated in a way that matters (containers added or removed, an image
 *   changed), is refused with a 403 when it violates its namespace's `enforce` level, and warned
 *   about under `warn`; its status and other subresources are never checked;
 * - the pod templates of workload kinds (Deployments, StatefulSets, DaemonSets, ReplicaSets,
 *   Jobs, CronJobs, ReplicationControllers, PodTemplates) are only warned about: their pods are
 *   what `enforce` refuses;
 * - a Namespace's `pod-security.kubernetes.io/*` labels must parse (422 otherwise), and a
 *   stricter `enforce` level warns about the namespace's existing pods that violate it.
 *
 * Audit annotations are not kept: this server writes no audit log.
 */
import { Effect } from "effect"
import * as PodSecurity from "./PodSecurity.ts"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** A create or update as the admission sees it, its objects defaulted and in the served version. */
export interface Request {
  readonly operation: "CREATE" | "UPDATE"
  readonly resource: Registry.Resource
  readonly subresource: string | undefined
  readonly namespace: string | undefined
  readonly name: string
  readonly object: KubeObject.KubeObject
  readonly oldObject: KubeObject.KubeObject | undefined
}

type Obj = Readonly<Record<string, unknown>>

interface PodLike {
  readonly metadata: Obj
  readonly spec: Obj
}

const { record, records } = KubeObject

const podLike = (value: KubeObject.KubeObject): PodLike => ({ metadata: record(value.metadata), spec: record(value.spec) })

// Where each workload kind keeps its pod template: a struct in Go (read as empty when absent), but
// a pointer in a ReplicationController (none to check when absent).
const templates: ReadonlyMap<string, (object: KubeObject.KubeObject) => PodLike | undefined> = new Map([
  ["/podtemplates", (o: KubeObject.KubeObject) => podLike(record(o.template))],
  ["/replicationcontrollers", (o: KubeObject.KubeObject) => {
    const template = record(o.spec).template
    return KubeObject.isObject(template) ? podLike(template) : undefined
  }],
  ...["apps/replicasets", "apps/deployments", "apps/statefulsets", "apps/daemonsets", "batch/jobs"].map((key) =>
    [key, (o: KubeObject.KubeObject) => podLike(record(record(o.spec).template))] as const
  ),
  ["batch/cronjobs", (o: KubeObject.KubeObject) => podLike(record(record(record(record(o.spec).jobTemplate).spec).template))]
])

const keyOf = (resource: Registry.Resource) => `${resource.type.group}/${resource.type.plural}`

/**
 * Whether a write to this resource and subresource goes through PodSecurity admission at all.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as PodSecurityAdmission from "./PodSecurityAdmission.ts"
 * const pods = Builtins.make().find((r) => r.type.plural === "pods")!
 * PodSecurityAdmission.applies(pods, undefined) // true
 * PodSecurityAdmission.applies(pods, "status") // false
 */
export const applies = (resource: Registry.Resource, subresource: string | undefined): boolean => {
  const key = keyOf(resource)
  if (key === "/pods") return subresource === undefined || !ignoredPodSubresources.has(subresource)
  return subresource === undefined && (key === "/namespaces" || templates.has(key))
}

// Subresources that cannot change what a pod runs; any other (ephemeralcontainers, resize) is checked.
const ignoredPodSubresources = new Set(["exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"])

const podSecurityTarget = (request: Request) => ({ group: request.resource.type.group, plural: request.resource.type.plural })

/**
 * Admits the request: its warnings, or the 403 (a Pod that violates `enforce`) or 422 (labels
 * that do not parse) kube-apiserver answers.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Builtins from "./Builtins.ts"
 * import * as PodSecurityAdmission from "./PodSecurityAdmission.ts"
 * import * as Store from "./Store.ts"
 * const store = Store.make()
 * const namespaces = Builtins.make().find((r) => r.type.plural === "namespaces")!
 * const warnings = Effect.runSync(PodSecurityAdmission.admit(store, {
 *   operation: "CREATE", resource: namespaces, subresource: undefined, namespace: undefined, name: "apps",
 *   object: { metadata: { name: "apps", labels: { "pod-security.kubernetes.io/enforce": "restricted" } } }, oldObject: undefined
 * })) // []
 */
export const admit = (store: Store.Store, request: Request): Effect.Effect<ReadonlyArray<string>, Status.ApiError> => {
  if (!applies(request.resource, request.subresource)) return Effect.succeed([])
  const key = keyOf(request.resource)
  if (key === "/namespaces") return namespace(store, request)
  const ns = store.get("namespaces", "", request.namespace ?? "")
  const { causes, policy } = PodSecurity.policyOf(labelsOf(ns))
  if (key === "/pods") {
    if (causes.length === 0 && fullyPrivileged(policy)) return Effect.succeed([])
    if (request.oldObject !== undefined && !significantUpdate(request.object, request.oldObject)) return Effect.succeed([])
    const pod = podLike(request.object)
    const enforced = PodSecurity.check(policy.enforce, pod.metadata, pod.spec)
    if (enforced.length > 0) {
      return Effect.fail(Status.forbidden(
        podSecurityTarget(request),
        request.name,
        `violates PodSecurity ${JSON.stringify(PodSecurity.format(policy.enforce))}: ${PodSecurity.describe(enforced)}`
      ))
    }
    return Effect.succeed(warn(policy, pod))
  }
  if (causes.length === 0 && policy.warn.level === "privileged" && policy.audit.level === "privileged") return Effect.succeed([])
  const pod = templates.get(key)!(request.object)
  return Effect.succeed(pod === undefined ? [] : warn(policy, pod))
}

const labelsOf = (object: KubeObject.KubeObject | undefined): Readonly<Record<string, string>> | undefined =>
  object === undefined ? undefined : KubeObject.meta(object).labels

const fullyPrivileged = (policy: PodSecurity.Policy) =>
  policy.enforce.level === "privileged" && policy.audit.level === "privileged" && policy.warn.level === "privileged"

const warn = (policy: PodSecurity.Policy, pod: PodLike): ReadonlyArray<string> => {
  const violations = PodSecurity.check(policy.warn, pod.metadata, pod.spec)
  return violations.length === 0
    ? []
    : [`would violate PodSecurity ${JSON.stringify(PodSecurity.format(policy.warn))}: ${PodSecurity.describe(violations)}`]
}

const containersOf = (pod: KubeObject.KubeObject, field: string): ReadonlyArray<Obj> => records(record(pod.spec)[field])

// Only what can change what a pod runs is checked again: the containers' number and images, and
// ephemeral containers added or given another image.
const significantUpdate = (pod: KubeObject.KubeObject, old: KubeObject.KubeObject): boolean => {
  for (const field of ["containers", "initContainers"]) {
    const now = containersOf(pod, field)
    const before = containersOf(old, field)
    if (now.length !== before.length || now.some((c, i) => c.image !== before[i]!.image)) return true
  }
  const before = containersOf(old, "ephemeralContainers")
  return containersOf(pod, "ephemeralContainers").some((c) => {
    const previous = before.find((o) => o.name === c.name)
    return previous === undefined || previous.image !== c.image
  })
}

const maxPodsToCheck = 3000

const namespace = (store: Store.Store, request: Request): Effect.Effect<ReadonlyArray<string>, Status.ApiError> => {
  if (request.subresource !== undefined) return Effect.succeed([])
  const next = PodSecurity.policyOf(labelsOf(request.object))
  const invalid = Status.invalid(request.resource.type, request.name, next.causes)
  if (request.oldObject === undefined) return next.causes.length > 0 ? Effect.fail(invalid) : Effect.succeed([])
  const old = PodSecurity.policyOf(labelsOf(request.oldObject))
  if (next.causes.length > 0 && (old.causes.length === 0 || JSON.stringify(next.causes) !== JSON.stringify(old.causes))) {
    return Effect.fail(invalid)
  }
  const enforce = next.policy.enforce
  const before = old.policy.enforce
  if (enforce.level === before.level && enforce.version === before.version) return Effect.succeed([])
  if (enforce.level === "privileged") return Effect.succeed([])
  if (enforce.version === before.version && PodSecurity.compareLevels(enforce.level, before.level) < 1) return Effect.succeed([])
  return Effect.succeed(existingPods(store, request.name, enforce))
}

// One pod per controller first, so that a namespace of many replicas still has every workload
// checked within the limit; the same reasons are reported once, with a count of the pods.
const existingPods = (store: Store.Store, namespace: string, enforce: PodSecurity.LevelVersion): ReadonlyArray<string> => {
  const pods = store.list("pods", namespace)
  const first: Array<KubeObject.KubeObject> = []
  const replicas: Array<KubeObject.KubeObject> = []
  const controllers = new Set<string>()
  for (const pod of pods) {
    const controller = KubeObject.meta(pod).ownerReferences?.find((owner) => owner.controller === true)
    if (controller === undefined) first.push(pod)
    else if (controllers.has(controller.uid)) replicas.push(pod)
    else {
      controllers.add(controller.uid)
      first.push(pod)
    }
  }
  const checked = [...first, ...replicas].slice(0, maxPodsToCheck)
  const byReasons = new Map<string, { name: string; count: number }>()
  for (const pod of checked) {
    const { metadata, spec } = podLike(pod)
    const violations = PodSecurity.check(enforce, metadata, spec)
    if (violations.length === 0) continue
    const reasons = PodSecurity.reasons(violations)
    const name = KubeObject.meta(pod).name ?? ""
    const seen = byReasons.get(reasons)
    if (seen === undefined) byReasons.set(reasons, { name, count: 1 })
    else byReasons.set(reasons, { name: name < seen.name ? name : seen.name, count: seen.count + 1 })
  }
  const warnings: Array<string> = []
  if (checked.length < pods.length) {
    warnings.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`)
  }
  if (byReasons.size > 0) {
    warnings.push(
      `existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(PodSecurity.format(enforce))}`
    )
  }
  const podWarnings = [...byReasons].map(([reasons, { count, name }]) =>
    count === 1
      ? `${name}: ${reasons}`
      : count === 2
      ? `${name} (and 1 other pod): ${reasons}`
      : `${name} (and ${count - 1} other pods): ${reasons}`
  )
  return [...warnings, ...podWarnings.sort()]
}
