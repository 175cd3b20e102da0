/**
 * kube-apiserver 1.32's validation of the built-in kinds (pkg/apis/.../validation), as 422 causes
 * in its wording, keyed by `group/Kind` ("" for the core group). Each family of kinds has its
 * own module; this is the table Builtins reads.
 */
import * as AdmissionValidation from "./AdmissionValidation.ts"
import * as ApiServiceValidation from "./ApiServiceValidation.ts"
import * as ConfigValidation from "./ConfigValidation.ts"
import * as EndpointValidation from "./EndpointValidation.ts"
import * as JobValidation from "./JobValidation.ts"
import * as NetworkingValidation from "./NetworkingValidation.ts"
import * as QuotaValidation from "./QuotaValidation.ts"
import * as RbacValidation from "./RbacValidation.ts"
import * as ScalingValidation from "./ScalingValidation.ts"
import * as SchedulingValidation from "./SchedulingValidation.ts"
import * as ServiceValidation from "./ServiceValidation.ts"
import type * as Status from "./Status.ts"
import * as StorageValidation from "./StorageValidation.ts"
import * as WorkloadValidation from "./WorkloadValidation.ts"
import { type KubeObject } from "@kubefx/schema/internal"

/** Validation of one kind: the causes of a 422, none when the object is valid. */
export type Validator = (
  object: KubeObject.KubeObject,
  old: KubeObject.KubeObject | undefined,
  subresource?: string | undefined
) => ReadonlyArray<Status.StatusCause>

const byGroupKind: Readonly<Record<string, Validator>> = {
  "/Secret": ConfigValidation.secret,
  "/ConfigMap": ConfigValidation.configMap,
  "/Service": ServiceValidation.service,
  "/Pod": WorkloadValidation.pod,
  "/PodTemplate": WorkloadValidation.podTemplate,
  "/ReplicationController": WorkloadValidation.replicationController,
  "/PersistentVolumeClaim": StorageValidation.claim,
  "/PersistentVolume": StorageValidation.volume,
  "/Endpoints": EndpointValidation.endpoints,
  "/ResourceQuota": QuotaValidation.quota,
  "/LimitRange": QuotaValidation.limitRange,
  "apps/Deployment": WorkloadValidation.deployment,
  "apps/ReplicaSet": WorkloadValidation.replicaSet,
  "apps/StatefulSet": WorkloadValidation.statefulSet,
  "apps/DaemonSet": WorkloadValidation.daemonSet,
  "batch/Job": JobValidation.job,
  "batch/CronJob": JobValidation.cronJob,
  "discovery.k8s.io/EndpointSlice": EndpointValidation.endpointSlice,
  "networking.k8s.io/Ingress": NetworkingValidation.ingress,
  "networking.k8s.io/NetworkPolicy": NetworkingValidation.networkPolicy,
  "rbac.authorization.k8s.io/Role": RbacValidation.role,
  "rbac.authorization.k8s.io/ClusterRole": RbacValidation.clusterRole,
  "rbac.authorization.k8s.io/RoleBinding": RbacValidation.binding,
  "rbac.authorization.k8s.io/ClusterRoleBinding": RbacValidation.clusterBinding,
  "policy/PodDisruptionBudget": ScalingValidation.disruptionBudget,
  "autoscaling/HorizontalPodAutoscaler": ScalingValidation.autoscaler,
  "scheduling.k8s.io/PriorityClass": SchedulingValidation.priorityClass,
  "apiregistration.k8s.io/APIService": ApiServiceValidation.validate,
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": AdmissionValidation.webhooks(false),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": AdmissionValidation.webhooks(true),
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy": AdmissionValidation.policy,
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": AdmissionValidation.binding
}

/**
 * The validator of a built-in kind, or undefined when it has none.
 *
 * @example
 * import * as BuiltinValidation from "./BuiltinValidation.ts"
 * BuiltinValidation.lookup("", "Lease") // undefined
 * BuiltinValidation.lookup("apps", "Deployment")!({ spec: {} }, undefined)[0].message // "Required value"
 */
export const lookup = (group: string, kind: string): Validator | undefined => byGroupKind[`${group}/${kind}`]
