/**
 * 1.32's defaults of the pod controllers (Deployment, StatefulSet, DaemonSet, ReplicaSet,
 * ReplicationController, Job, CronJob, PodTemplate): counts, update strategies, history limits,
 * a Job's generated selector and pod labels, and the pod defaults of every template.
 */
import * as PodDefaults from "./PodDefaults.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Defaulter = (object: Json, old: Json | undefined) => Json

const withSpec = (fill: (spec: Json, object: Json) => Json): Defaulter => (object) => ({
  ...object,
  spec: fill(KubeObject.record(object.spec), object)
})

/**
 * A Deployment (apps/v1).
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.deployment({ spec: {} }, undefined).spec.strategy // { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } }
 */
export const deployment: Defaulter = withSpec((spec) => {
  const strategy = KubeObject.record(spec.strategy)
  const type = strategy.type ?? "RollingUpdate"
  return {
    replicas: 1,
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
    ...spec,
    strategy: type === "RollingUpdate"
      ? { ...strategy, type, rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%", ...KubeObject.record(strategy.rollingUpdate) } }
      : { ...strategy, type },
    template: PodDefaults.template(spec.template)
  }
})

// A claim template is defaulted as a claim is; the apps/v1 conversion names its kind.
const claimTemplate = (claim: Json): Json => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  ...claim,
  spec: { volumeMode: "Filesystem", ...KubeObject.record(claim.spec) },
  status: { phase: "Pending", ...KubeObject.record(claim.status) }
})

/**
 * A StatefulSet (apps/v1).
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.statefulSet({ spec: {} }, undefined).spec.updateStrategy // { type: "RollingUpdate", rollingUpdate: { partition: 0 } }
 */
export const statefulSet: Defaulter = withSpec((spec) => {
  const given = KubeObject.record(spec.updateStrategy)
  // A strategy left empty gets a rollingUpdate; an explicit RollingUpdate without one stays so.
  const updateStrategy = given.type === undefined
    ? { ...given, type: "RollingUpdate", rollingUpdate: { partition: 0, ...KubeObject.record(given.rollingUpdate) } }
    : given.type === "RollingUpdate" && KubeObject.isObject(given.rollingUpdate)
    ? { ...given, rollingUpdate: { partition: 0, ...given.rollingUpdate } }
    : given
  return {
    replicas: 1,
    podManagementPolicy: "OrderedReady",
    revisionHistoryLimit: 10,
    ...spec,
    updateStrategy,
    persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain", ...KubeObject.record(spec.persistentVolumeClaimRetentionPolicy) },
    template: PodDefaults.template(spec.template),
    ...(Array.isArray(spec.volumeClaimTemplates) ? { volumeClaimTemplates: KubeObject.records(spec.volumeClaimTemplates).map(claimTemplate) } : {})
  }
})

/**
 * A DaemonSet (apps/v1).
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.daemonSet({ spec: {} }, undefined).spec.updateStrategy.rollingUpdate // { maxUnavailable: 1, maxSurge: 0 }
 */
export const daemonSet: Defaulter = withSpec((spec) => {
  const given = KubeObject.record(spec.updateStrategy)
  const type = given.type ?? "RollingUpdate"
  return {
    revisionHistoryLimit: 10,
    ...spec,
    updateStrategy: type === "RollingUpdate"
      ? { ...given, type, rollingUpdate: { maxUnavailable: 1, maxSurge: 0, ...KubeObject.record(given.rollingUpdate) } }
      : { ...given, type },
    template: PodDefaults.template(spec.template)
  }
})

/**
 * A ReplicaSet (apps/v1).
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.replicaSet({ spec: {} }, undefined).spec.replicas // 1
 */
export const replicaSet: Defaulter = withSpec((spec) => ({ replicas: 1, ...spec, template: PodDefaults.template(spec.template) }))

/**
 * A ReplicationController: selector and labels default to the template's labels.
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.replicationController({ spec: { template: { metadata: { labels: { app: "a" } } } } }, undefined).spec.selector // { app: "a" }
 */
export const replicationController: Defaulter = (object) => {
  const spec = KubeObject.record(object.spec)
  const labels = KubeObject.meta(KubeObject.record(spec.template)).labels
  const hasLabels = labels !== undefined && Object.keys(labels).length > 0
  const own = KubeObject.meta(object).labels
  const withLabels = hasLabels && (own === undefined || Object.keys(own).length === 0) ? KubeObject.withMeta(object, { labels }) : object
  const selector = spec.selector === undefined || Object.keys(KubeObject.record(spec.selector)).length === 0 ? (hasLabels ? labels : spec.selector) : spec.selector
  return {
    ...withLabels,
    spec: { replicas: 1, ...spec, ...(selector === undefined ? {} : { selector }), ...(spec.template === undefined ? {} : { template: PodDefaults.template(spec.template) }) }
  }
}

const uidLabel = "batch.kubernetes.io/controller-uid"

// Unless the user opts into manualSelector, a Job selects its pods by its own uid, and its pods
// carry that uid and the Job's name, each label in its legacy and batch.kubernetes.io form.
const generatedSelector = (spec: Json, uid: string, name: string | undefined): Json => {
  const template = KubeObject.record(spec.template)
  const labels = KubeObject.meta(template).labels ?? {}
  const generated = { "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name, "controller-uid": uid, "job-name": name }
  const selector = KubeObject.record(spec.selector)
  return {
    ...spec,
    selector: { ...selector, matchLabels: { ...KubeObject.record(selector.matchLabels), [uidLabel]: KubeObject.record(selector.matchLabels)[uidLabel] ?? uid } },
    template: KubeObject.withMeta(template, { labels: { ...generated, ...labels } })
  }
}

/**
 * A Job (batch/v1); the selector and pod labels need the Job's uid, set on create.
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.job({ metadata: { name: "j", uid: "u" }, spec: {} }, undefined).spec.selector // { matchLabels: { "batch.kubernetes.io/controller-uid": "u" } }
 */
export const job: Defaulter = (object) => {
  const spec = KubeObject.record(object.spec)
  const m = KubeObject.meta(object)
  const podLabels = KubeObject.meta(KubeObject.record(spec.template)).labels
  // Labels copied from the template before the generated ones are added, as 1.32's defaulter runs first.
  const withLabels = podLabels !== undefined && Object.keys(podLabels).length > 0 && (m.labels === undefined || Object.keys(m.labels).length === 0)
    ? KubeObject.withMeta(object, { labels: podLabels })
    : object
  const defaulted = {
    ...(spec.completions === undefined && spec.parallelism === undefined ? { completions: 1 } : {}),
    parallelism: 1,
    backoffLimit: spec.backoffLimitPerIndex === undefined ? 6 : 2147483647,
    completionMode: "NonIndexed",
    suspend: false,
    podReplacementPolicy: spec.podFailurePolicy === undefined ? "TerminatingOrFailed" : "Failed",
    manualSelector: false,
    ...spec,
    template: PodDefaults.template(spec.template)
  }
  const generated = defaulted.manualSelector === true || m.uid === undefined ? defaulted : generatedSelector(defaulted, m.uid, m.name)
  return { ...withLabels, spec: generated }
}

/**
 * A CronJob (batch/v1); its job template gets pod defaults only (Job defaults apply to Jobs).
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.cronJob({ spec: {} }, undefined).spec.concurrencyPolicy // "Allow"
 */
export const cronJob: Defaulter = withSpec((spec) => {
  const jobTemplate = KubeObject.record(spec.jobTemplate)
  const jobTemplateSpec = KubeObject.record(jobTemplate.spec)
  return {
    concurrencyPolicy: "Allow",
    suspend: false,
    successfulJobsHistoryLimit: 3,
    failedJobsHistoryLimit: 1,
    ...spec,
    jobTemplate: { ...jobTemplate, spec: { ...jobTemplateSpec, template: PodDefaults.template(jobTemplateSpec.template) } }
  }
})

/**
 * A PodTemplate.
 *
 * @example
 * import * as WorkloadDefaults from "./WorkloadDefaults.ts"
 * WorkloadDefaults.podTemplate({ template: { spec: {} } }, undefined).template.spec.dnsPolicy // "ClusterFirst"
 */
export const podTemplate: Defaulter = (object) => ({ ...object, template: PodDefaults.template(object.template) })
