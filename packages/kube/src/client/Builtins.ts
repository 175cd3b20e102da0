/**
 * Built-in Kubernetes kinds as ready-to-use `Resource`s. The Schemas name the fields controllers
 * commonly read and write; every object keeps the fields it does not name, at every level, so a
 * decoded object written back loses nothing.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import * as Crd from "./Crd.ts"
import * as ObjectMeta from "./ObjectMeta.ts"
import * as Resource from "./Resource.ts"

const Rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

/** A struct that keeps the fields it does not name. */
const open = <Fields extends Schema.Struct.Fields>(fields: Fields) => Schema.StructWithRest(Schema.Struct(fields), Rest)

const opt = Schema.optionalKey
const StringMap = Schema.Record(Schema.String, Schema.String)
const Strings = Schema.Array(Schema.String)

/** A top-level object: apiVersion, kind, metadata and the kind's own fields. */
const kubeObject = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  open({ apiVersion: opt(Schema.String), kind: opt(Schema.String), metadata: ObjectMeta.ObjectMeta, ...fields })

/** Every kind here is at version v1 of its group. */
const v1 = <S extends Schema.Top & { readonly Type: ObjectMeta.KubeObject }>(
  group: string,
  kind: string,
  plural: string,
  schema: S,
  namespaced = true
) => Resource.builtin({ group, version: "v1", kind, plural, namespaced, schema })

/** metav1.Time: RFC 3339 with seconds, `2026-01-02T15:04:05Z`. */
export const Time = Schema.String.annotate({ description: "RFC 3339 time in seconds", format: "date-time" })

/** metav1.MicroTime: RFC 3339 with 6 fractional digits, `2026-01-02T15:04:05.000000Z`; kept as written. */
export const MicroTime = Schema.String.annotate({ description: "RFC 3339 time in microseconds", format: "date-time" })

// toISOString always ends in ".sssZ" (years 0-9999, the only ones a metav1.Time holds): the
// time formats cut its tail.
/**
 * Formats a time as metav1.Time (RFC 3339, whole seconds, UTC).
 *
 * @example
 * import { Builtins } from "@kubefx/kube"
 * Builtins.formatTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)) // "2026-01-02T03:04:05Z"
 */
export const formatTime = (time: Date | number): string => `${new Date(time).toISOString().slice(0, -5)}Z`

/**
 * Formats a time as metav1.MicroTime (RFC 3339, 6 fractional digits, UTC).
 *
 * @example
 * import { Builtins } from "@kubefx/kube"
 * Builtins.formatMicroTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)) // "2026-01-02T03:04:05.678000Z"
 */
export const formatMicroTime = (time: Date | number): string => `${new Date(time).toISOString().slice(0, -1)}000Z`

/** A reference to another object (corev1.ObjectReference). */
export const ObjectReference = open({
  apiVersion: opt(Schema.String),
  kind: opt(Schema.String),
  name: opt(Schema.String),
  namespace: opt(Schema.String),
  uid: opt(Schema.String),
  resourceVersion: opt(Schema.String),
  fieldPath: opt(Schema.String)
})

/** metav1.LabelSelector. */
export const LabelSelector = open({
  matchLabels: opt(StringMap),
  matchExpressions: opt(Schema.Array(open({ key: Schema.String, operator: Schema.String, values: opt(Strings) })))
})
export type LabelSelector = typeof LabelSelector.Type

/** The condition shape workloads use (with lastUpdateTime), not metav1.Condition. */
const WorkloadCondition = open({
  type: Schema.String,
  status: Schema.String,
  reason: opt(Schema.String),
  message: opt(Schema.String),
  lastTransitionTime: opt(Time),
  lastUpdateTime: opt(Time)
})

export const Container = open({
  name: Schema.String,
  image: opt(Schema.String),
  command: opt(Strings),
  args: opt(Strings),
  env: opt(Schema.Array(open({ name: Schema.String, value: opt(Schema.String) }))),
  ports: opt(Schema.Array(open({ containerPort: Schema.Int, name: opt(Schema.String), protocol: opt(Schema.String) })))
})

export const PodSpec = open({
  containers: Schema.Array(Container),
  initContainers: opt(Schema.Array(Container)),
  serviceAccountName: opt(Schema.String),
  restartPolicy: opt(Schema.String),
  nodeSelector: opt(StringMap),
  volumes: opt(Schema.Array(open({ name: Schema.String })))
})

export const PodTemplateSpec = open({ metadata: opt(ObjectMeta.ObjectMeta), spec: opt(PodSpec) })

const ConfigMapObject = kubeObject({
  data: opt(StringMap),
  binaryData: opt(StringMap),
  immutable: opt(Schema.Boolean)
})
export const ConfigMap = v1("", "ConfigMap", "configmaps", ConfigMapObject)
export type ConfigMap = typeof ConfigMapObject.Type

const SecretObject = kubeObject({
  type: opt(Schema.String),
  /** base64-encoded values */
  data: opt(StringMap),
  /** plain values, merged into data by the server on write */
  stringData: opt(StringMap),
  immutable: opt(Schema.Boolean)
})
export const Secret = v1("", "Secret", "secrets", SecretObject)
export type Secret = typeof SecretObject.Type

export const ServicePort = open({
  name: opt(Schema.String),
  protocol: opt(Schema.String),
  port: Schema.Int,
  targetPort: opt(Crd.IntOrString),
  nodePort: opt(Schema.Int)
})
const ServiceObject = kubeObject({
  spec: opt(open({
    type: opt(Schema.String),
    selector: opt(StringMap),
    ports: opt(Schema.Array(ServicePort)),
    clusterIP: opt(Schema.String)
  })),
  status: opt(open({}))
})
export const Service = v1("", "Service", "services", ServiceObject)
export type Service = typeof ServiceObject.Type

const ServiceAccountObject = kubeObject({
  secrets: opt(Schema.Array(ObjectReference)),
  imagePullSecrets: opt(Schema.Array(open({ name: opt(Schema.String) }))),
  automountServiceAccountToken: opt(Schema.Boolean)
})
export const ServiceAccount = v1("", "ServiceAccount", "serviceaccounts", ServiceAccountObject)
export type ServiceAccount = typeof ServiceAccountObject.Type

const workloadStatus = {
  observedGeneration: opt(Schema.Int),
  replicas: opt(Schema.Int),
  readyReplicas: opt(Schema.Int),
  availableReplicas: opt(Schema.Int),
  updatedReplicas: opt(Schema.Int),
  conditions: opt(Schema.Array(WorkloadCondition))
}

const DeploymentObject = kubeObject({
  spec: opt(open({
    replicas: opt(Schema.Int),
    selector: LabelSelector,
    template: PodTemplateSpec,
    strategy: opt(open({ type: opt(Schema.String) })),
    paused: opt(Schema.Boolean)
  })),
  status: opt(open({ ...workloadStatus, unavailableReplicas: opt(Schema.Int) }))
})
export const Deployment = v1("apps", "Deployment", "deployments", DeploymentObject)
export type Deployment = typeof DeploymentObject.Type

const StatefulSetObject = kubeObject({
  spec: opt(open({
    replicas: opt(Schema.Int),
    selector: LabelSelector,
    serviceName: opt(Schema.String),
    template: PodTemplateSpec,
    podManagementPolicy: opt(Schema.String),
    updateStrategy: opt(open({ type: opt(Schema.String), rollingUpdate: opt(open({ partition: opt(Schema.Int) })) })),
    volumeClaimTemplates: opt(Schema.Array(Schema.Unknown))
  })),
  status: opt(open({ ...workloadStatus, currentReplicas: opt(Schema.Int), currentRevision: opt(Schema.String), updateRevision: opt(Schema.String) }))
})
export const StatefulSet = v1("apps", "StatefulSet", "statefulsets", StatefulSetObject)
export type StatefulSet = typeof StatefulSetObject.Type

const PodObject = kubeObject({
  spec: opt(PodSpec),
  status: opt(open({
    phase: opt(Schema.String),
    conditions: opt(Schema.Array(WorkloadCondition)),
    podIP: opt(Schema.String),
    hostIP: opt(Schema.String),
    startTime: opt(Time),
    containerStatuses: opt(Schema.Array(open({ name: Schema.String, ready: opt(Schema.Boolean), restartCount: opt(Schema.Int) })))
  }))
})
export const Pod = v1("", "Pod", "pods", PodObject)
export type Pod = typeof PodObject.Type

const NamespaceObject = kubeObject({
  spec: opt(open({ finalizers: opt(Strings) })),
  status: opt(open({ phase: opt(Schema.String) }))
})
export const Namespace = v1("", "Namespace", "namespaces", NamespaceObject, false)
export type Namespace = typeof NamespaceObject.Type

const LeaseObject = kubeObject({
  spec: opt(open({
    holderIdentity: opt(Schema.String),
    leaseDurationSeconds: opt(Schema.Int),
    acquireTime: opt(MicroTime),
    renewTime: opt(MicroTime),
    leaseTransitions: opt(Schema.Int)
  }))
})
export const Lease = v1("coordination.k8s.io", "Lease", "leases", LeaseObject)
export type Lease = typeof LeaseObject.Type

const EventSeries = open({ count: opt(Schema.Int), lastObservedTime: opt(MicroTime) })

const EventObject = kubeObject({
  involvedObject: ObjectReference,
  reason: opt(Schema.String),
  message: opt(Schema.String),
  type: opt(Schema.String),
  source: opt(open({ component: opt(Schema.String), host: opt(Schema.String) })),
  firstTimestamp: opt(Schema.NullOr(Time)),
  lastTimestamp: opt(Schema.NullOr(Time)),
  count: opt(Schema.Int),
  eventTime: opt(Schema.NullOr(MicroTime)),
  series: opt(EventSeries),
  action: opt(Schema.String),
  related: opt(ObjectReference),
  reportingComponent: opt(Schema.String),
  reportingInstance: opt(Schema.String)
})
/** core/v1 Event. */
export const Event = v1("", "Event", "events", EventObject)
export type Event = typeof EventObject.Type

const EventsV1EventObject = kubeObject({
  eventTime: MicroTime,
  series: opt(EventSeries),
  reportingController: opt(Schema.String),
  reportingInstance: opt(Schema.String),
  action: opt(Schema.String),
  reason: opt(Schema.String),
  regarding: opt(ObjectReference),
  related: opt(ObjectReference),
  note: opt(Schema.String),
  type: opt(Schema.String),
  deprecatedSource: opt(open({ component: opt(Schema.String), host: opt(Schema.String) })),
  deprecatedFirstTimestamp: opt(Schema.NullOr(Time)),
  deprecatedLastTimestamp: opt(Schema.NullOr(Time)),
  deprecatedCount: opt(Schema.Int)
})
/** events.k8s.io/v1 Event: the same stored events as core/v1, with the newer field names. */
export const EventsV1Event = v1("events.k8s.io", "Event", "events", EventsV1EventObject)
export type EventsV1Event = typeof EventsV1EventObject.Type
