/**
 * 1.32's validation of Pods and the pod controllers' specs (Deployment, ReplicaSet, StatefulSet,
 * DaemonSet, ReplicationController, PodTemplate): selectors that select their template, counts,
 * update strategies, the template's pod spec, and what an update may not change.
 */
import * as FieldErrors from "./FieldErrors.ts"
import * as PodDefaults from "./PodDefaults.ts"
import * as PodValidation from "./PodValidation.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import type * as Status from "./Status.ts"
import * as WorkloadDefaults from "./WorkloadDefaults.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>
type Validator = (object: Json, old: Json | undefined, subresource?: string | undefined) => Causes

/**
 * `field >= 0` for an optional count.
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.nonNegative(-1, "spec.replicas")[0].message // "Invalid value: -1: must be greater than or equal to 0"
 */
export const nonNegative = (value: unknown, field: string): Causes =>
  typeof value === "number" && value < 0 ? [FieldErrors.invalid(field, String(value), "must be greater than or equal to 0")] : []

// The restart policy and deadline a controller's pods must have; `owner` names the kind in kube's message.
const controlledPods = (podSpec: Json, path: string, owner: string): Causes => [
  ...PodValidation.alwaysRestart(podSpec, `${path}.template.spec`),
  ...(podSpec.activeDeadlineSeconds === undefined
    ? []
    : [FieldErrors.forbidden(`${path}.template.spec.activeDeadlineSeconds`, `activeDeadlineSeconds in ${owner} is not Supported`)])
]

const template = (spec: Json, path: string): Causes => {
  const podSpec = KubeObject.record(KubeObject.record(spec.template).spec)
  return [...PodValidation.validateSpec(podSpec, `${path}.template.spec`), ...controlledPods(podSpec, path, "ReplicaSet")]
}

// 1.32 does not validate a StatefulSet's pod spec (its volume mounts may name claim templates): a
// pod it refuses is the controller's `FailedCreate` event.
const statefulSetTemplate = (spec: Json): Causes =>
  controlledPods(KubeObject.record(KubeObject.record(spec.template).spec), "spec", "StatefulSet")

const immutableSelector = (object: Json, old: Json | undefined): Causes => {
  if (old === undefined) return []
  const selector = KubeObject.record(object.spec).selector
  return KubeObject.equals(selector, KubeObject.record(old.spec).selector)
    ? []
    : [FieldErrors.invalid("spec.selector", FieldErrors.labelSelector(selector), "field is immutable")]
}

const percentOrCount = (value: unknown, field: string, capped: boolean): Causes => {
  if (typeof value === "number") return nonNegative(value, field)
  const m = /^(\d+)%$/.exec(String(value))
  if (m === null) return [FieldErrors.invalid(field, FieldErrors.quote(value), "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
  return capped && Number(m[1]) > 100 ? [FieldErrors.invalid(field, FieldErrors.quote(value), "must not be greater than 100%")] : []
}

const isZero = (value: unknown) => value === 0 || value === "0%"

const rollingUpdate = (rolling: Json, path: string): Causes => [
  ...percentOrCount(rolling.maxUnavailable, `${path}.maxUnavailable`, true),
  ...percentOrCount(rolling.maxSurge, `${path}.maxSurge`, false),
  ...(isZero(rolling.maxUnavailable) && isZero(rolling.maxSurge)
    ? [FieldErrors.invalid(`${path}.maxUnavailable`, FieldErrors.intOrString(rolling.maxUnavailable), "may not be 0 when `maxSurge` is 0")]
    : [])
]

const strategy = (spec: Json): Causes => {
  const s = KubeObject.record(spec.strategy)
  if (s.type === "Recreate") {
    return s.rollingUpdate === undefined ? [] : [FieldErrors.forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")]
  }
  if (s.type !== "RollingUpdate") return [FieldErrors.notSupported("spec.strategy.type", s.type, ["Recreate", "RollingUpdate"])]
  return rollingUpdate(KubeObject.record(s.rollingUpdate), "spec.strategy.rollingUpdate")
}

const counts = (spec: Json): Causes => [
  ...nonNegative(spec.replicas, "spec.replicas"),
  ...nonNegative(spec.minReadySeconds, "spec.minReadySeconds"),
  ...nonNegative(spec.revisionHistoryLimit, "spec.revisionHistoryLimit")
]

/**
 * A Deployment (apps/v1).
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.deployment({ spec: { template: {} } }, undefined)[0].field // "spec.selector"
 */
export const deployment: Validator = (object, old) => {
  const spec = KubeObject.record(object.spec)
  const deadline = spec.progressDeadlineSeconds
  return [
    ...counts(spec),
    ...SelectorValidation.selectsTemplate(spec, "spec", "deployment"),
    ...template(spec, "spec"),
    ...strategy(spec),
    ...(typeof deadline === "number" && deadline <= Number(spec.minReadySeconds ?? 0)
      ? [FieldErrors.invalid("spec.progressDeadlineSeconds", String(deadline), "must be greater than minReadySeconds")]
      : []),
    ...immutableSelector(object, old)
  ]
}

/**
 * A ReplicaSet (apps/v1).
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.replicaSet({ spec: { replicas: -1, selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "i" }] } } } }, undefined)[0].field // "spec.replicas"
 */
export const replicaSet: Validator = (object, old) => {
  const spec = KubeObject.record(object.spec)
  return [...counts(spec), ...SelectorValidation.selectsTemplate(spec, "spec", "deployment"), ...template(spec, "spec"), ...immutableSelector(object, old)]
}

// What 1.32 lets an update of a StatefulSet's spec change.
const statefulSetMutable = ["replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds"]

const withoutMutable = (spec: Json): Json =>
  Object.fromEntries(Object.entries(spec).filter(([k]) => !statefulSetMutable.includes(k)))

/**
 * A StatefulSet (apps/v1); on update only the fields 1.32 lists may change.
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.statefulSet({ spec: { podManagementPolicy: "Random" } }, undefined).some((c) => c.field === "spec.podManagementPolicy") // true
 */
export const statefulSet: Validator = (object, old) => {
  const spec = KubeObject.record(object.spec)
  const update = KubeObject.record(spec.updateStrategy)
  const policy = spec.podManagementPolicy
  const causes: Array<Status.StatusCause> = [
    ...counts(spec),
    ...SelectorValidation.selectsTemplate(spec, "spec", "statefulset"),
    ...statefulSetTemplate(spec)
  ]
  if (policy !== undefined && policy !== "OrderedReady" && policy !== "Parallel") {
    causes.push(FieldErrors.notSupported("spec.podManagementPolicy", policy, ["OrderedReady", "Parallel"]))
  }
  if (update.type === "OnDelete" && update.rollingUpdate !== undefined) {
    causes.push(FieldErrors.invalid("spec.updateStrategy.rollingUpdate", "null", "only allowed for updateStrategy 'RollingUpdate'"))
  } else if (update.type !== undefined && update.type !== "OnDelete" && update.type !== "RollingUpdate") {
    causes.push(FieldErrors.notSupported("spec.updateStrategy", update.type, ["OnDelete", "RollingUpdate"]))
  }
  causes.push(...nonNegative(KubeObject.record(update.rollingUpdate).partition, "spec.updateStrategy.rollingUpdate.partition"))
  // Compared with the stored object's defaulted form, so that objects stored before a default
  // existed can still be updated.
  if (old !== undefined && !KubeObject.equals(withoutMutable(spec), withoutMutable(KubeObject.record(WorkloadDefaults.statefulSet(old, old).spec)))) {
    causes.push(FieldErrors.forbidden(
      "spec",
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    ))
  }
  return causes
}

/**
 * A DaemonSet (apps/v1).
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.daemonSet({ spec: { selector: {} } }, undefined)[0].message.endsWith("empty selector is invalid for daemonset") // true
 */
export const daemonSet: Validator = (object, old) => {
  const spec = KubeObject.record(object.spec)
  const update = KubeObject.record(spec.updateStrategy)
  return [
    ...SelectorValidation.selectsTemplate(spec, "spec", "daemonset"),
    ...template(spec, "spec"),
    ...nonNegative(spec.revisionHistoryLimit, "spec.revisionHistoryLimit"),
    ...(update.type === "RollingUpdate"
      ? rollingUpdate(KubeObject.record(update.rollingUpdate), "spec.updateStrategy.rollingUpdate")
      : update.type === "OnDelete" || update.type === undefined
      ? []
      : [FieldErrors.notSupported("spec.updateStrategy.type", update.type, ["OnDelete", "RollingUpdate"])]),
    ...immutableSelector(object, old)
  ]
}

/**
 * A ReplicationController: its selector is a plain label map, defaulted from the template.
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.replicationController({ spec: {} }, undefined).map((c) => c.field) // ["spec.selector", "spec.template"]
 */
export const replicationController: Validator = (object) => {
  const spec = KubeObject.record(object.spec)
  const selector = KubeObject.record(spec.selector)
  const causes: Array<Status.StatusCause> = [...nonNegative(spec.replicas, "spec.replicas")]
  if (Object.keys(selector).length === 0) causes.push(FieldErrors.required("spec.selector"))
  if (!KubeObject.isObject(spec.template)) return [...causes, FieldErrors.required("spec.template")]
  const labels = KubeObject.meta(spec.template).labels
  if (Object.keys(selector).length > 0 && !SelectorValidation.matches({ matchLabels: selector }, labels)) {
    causes.push(FieldErrors.invalid("spec.template.metadata.labels", FieldErrors.stringMap(labels), "`selector` does not match template `labels`"))
  }
  return [...causes, ...template(spec, "spec")]
}

/**
 * A PodTemplate: its template's pod spec, any restart policy.
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.podTemplate({ template: { spec: { containers: [] } } }, undefined)[0].field // "template.spec.containers"
 */
export const podTemplate: Validator = (object) => PodValidation.validateSpec(KubeObject.record(KubeObject.record(object.template).spec), "template.spec")

/**
 * A Pod: its spec, and on update only what 1.32 lets change.
 *
 * @example
 * import * as WorkloadValidation from "./WorkloadValidation.ts"
 * WorkloadValidation.pod({ spec: { containers: [{ name: "a" }] } }, undefined)[0].field // "spec.containers[0].image"
 */
export const pod: Validator = (object, old, subresource) => {
  const spec = KubeObject.record(object.spec)
  if (subresource === "ephemeralcontainers" && old !== undefined) {
    return [...PodValidation.validateSpec(spec, "spec"), ...PodValidation.validateEphemeralUpdate(spec, KubeObject.record(old.spec))]
  }
  return [
    ...PodValidation.validateSpec(spec, "spec"),
    ...(old === undefined
      ? KubeObject.records(spec.ephemeralContainers).length === 0 ? [] : [FieldErrors.forbidden("spec.ephemeralContainers", "cannot be set on create")]
      : PodValidation.validateUpdate(spec, KubeObject.record(PodDefaults.pod(old, old).spec)))
  ]
}
