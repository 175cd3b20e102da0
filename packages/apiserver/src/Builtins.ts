/**
 * The built-in kinds the server serves without a CRD: the ones operators and kubectl touch most
 * (namespaces, config, workloads' API objects, leases, events, CRDs themselves). No controller
 * runs for the workloads; they are stored, validated lightly and watched like any other object.
 */
import * as AccessReviews from "./AccessReviews.ts"
import * as AuthenticationReviews from "./AuthenticationReviews.ts"
import * as Bindings from "./Bindings.ts"
import * as ComponentStatuses from "./ComponentStatuses.ts"
import * as BuiltinDefaults from "./BuiltinDefaults.ts"
import * as BuiltinStructures from "./BuiltinStructures.ts"
import * as BuiltinValidation from "./BuiltinValidation.ts"
import * as Crds from "./Crds.ts"
import * as DaemonSets from "./DaemonSets.ts"
import * as Events from "./Events.ts"
import * as HorizontalPodAutoscalers from "./HorizontalPodAutoscalers.ts"
import * as Namespaces from "./Namespaces.ts"
import * as Printers from "./Printers.ts"
import type * as Registry from "./Registry.ts"
import type * as ResourceType from "./ResourceType.ts"
import * as ServiceDefaults from "./ServiceDefaults.ts"
import * as Structure from "./Structure.ts"
import { KubeObject } from "@kubefx/schema/internal"

const allVerbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

interface Spec {
  readonly group: string
  readonly version?: string
  readonly kind: string
  readonly plural: string
  readonly namespaced?: boolean
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
  readonly verbs?: ReadonlyArray<string>
  readonly status?: boolean
  readonly scale?: boolean
  readonly generation?: boolean
  readonly fields?: ReadonlyArray<string>
  readonly storage?: string
}

// The selectable fields kube derives (GetAttrs): booleans and counts as Go writes them (absent is
// false or 0), an Event's `source` (its component), and a Pod's `spec.host`, the old name of
// `spec.nodeName`.
const fieldValues: Readonly<Record<string, Registry.Resource["fieldValues"]>> = {
  "/Pod": {
    "spec.hostNetwork": (o) => String(KubeObject.getPath(o, "spec.hostNetwork") === true),
    "spec.host": (o) => String(KubeObject.getPath(o, "spec.nodeName") ?? "")
  },
  "/Node": { "spec.unschedulable": (o) => String(KubeObject.getPath(o, "spec.unschedulable") === true) },
  "batch/Job": { "status.successful": (o) => String(KubeObject.number(KubeObject.getPath(o, "status.succeeded"))) },
  "/Event": { source: (o) => String(KubeObject.getPath(o, "source.component") ?? "") }
}

const builtin = (spec: Spec, extra: Partial<Registry.Resource> = {}): Registry.Resource => {
  const type: ResourceType.ResourceType = {
    group: spec.group,
    version: spec.version ?? "v1",
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    namespaced: spec.namespaced ?? true,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: spec.verbs ?? allVerbs,
    subresources: {
      status: spec.status ?? false,
      ...(spec.scale === true
        ? { scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } }
        : {})
    },
    custom: false,
    structure: BuiltinStructures.lookup(spec.group, spec.kind) ?? Structure.unknown,
    selectableFields: spec.fields ?? [],
    printerColumns: []
  }
  const defaults = BuiltinDefaults.lookup(spec.group, spec.kind)
  const validate = BuiltinValidation.lookup(spec.group, spec.kind)
  const printer = printerOf(spec, extra)
  const values = fieldValues[`${spec.group}/${spec.kind}`]
  return {
    type,
    storage: spec.storage ?? (spec.group === "" ? spec.plural : `${spec.plural}.${spec.group}`),
    generation: spec.generation ?? false,
    unconditionalUpdate: true,
    ...(defaults === undefined ? {} : { defaults }),
    ...(validate === undefined ? {} : { validate }),
    ...(printer === undefined ? {} : { printer }),
    ...(values === undefined ? {} : { fieldValues: values }),
    ...extra
  }
}

// kube-apiserver prints the internal version, which is what this server stores: a version that
// converts on the way in is printed from its stored form.
const printerOf = (spec: Spec, extra: Partial<Registry.Resource>): Printers.Printer | undefined => {
  const printer = Printers.lookup(spec.group, spec.kind)
  const toStorage = extra.toStorage
  return printer === undefined || toStorage === undefined ? printer : Printers.contramap(printer, toStorage)
}

const eventFields = [
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type"
]

/**
 * The built-in resources, with the merge structure of each kind from BuiltinStructures.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * Builtins.make().map((r) => r.type.plural).includes("leases") // true
 */
export const make = (): ReadonlyArray<Registry.Resource> => {
  return [
    builtin({
      group: "",
      kind: "Namespace",
      plural: "namespaces",
      namespaced: false,
      shortNames: ["ns"],
      verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
      status: true,
      fields: ["status.phase"]
    }, { prepareCreate: Namespaces.prepareCreate }),
    Bindings.resource,
    builtin({ group: "", kind: "ComponentStatus", plural: "componentstatuses", namespaced: false, shortNames: ["cs"], verbs: ["get", "list"] }, {
      computed: ComponentStatuses.all,
      deprecationWarning: ComponentStatuses.deprecationWarning
    }),
    builtin({ group: "", kind: "ConfigMap", plural: "configmaps", shortNames: ["cm"] }),
    builtin({ group: "", kind: "Secret", plural: "secrets", fields: ["type"] }),
    builtin({
      group: "",
      kind: "Service",
      plural: "services",
      shortNames: ["svc"],
      categories: ["all"],
      status: true,
      fields: ["spec.clusterIP", "spec.type"]
    }, { allocate: ServiceDefaults.allocated, prepareUpdate: ServiceDefaults.prepareUpdate }),
    builtin({ group: "", kind: "ServiceAccount", plural: "serviceaccounts", shortNames: ["sa"] }),
    builtin({
      group: "",
      kind: "Pod",
      plural: "pods",
      shortNames: ["po"],
      categories: ["all"],
      status: true,
      fields: [
        "spec.nodeName",
        "spec.host",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName"
      ]
    }),
    builtin({ group: "", kind: "Event", plural: "events", shortNames: ["ev"], fields: eventFields }),
    builtin({
      group: "apps",
      kind: "Deployment",
      plural: "deployments",
      shortNames: ["deploy"],
      categories: ["all"],
      status: true,
      scale: true,
      generation: true
    }),
    builtin({
      group: "apps",
      kind: "StatefulSet",
      plural: "statefulsets",
      shortNames: ["sts"],
      categories: ["all"],
      status: true,
      scale: true,
      generation: true
    }),
    builtin({ group: "coordination.k8s.io", kind: "Lease", plural: "leases" }),
    builtin(
      {
        group: "events.k8s.io",
        kind: "Event",
        plural: "events",
        shortNames: ["ev"],
        storage: "events",
        fields: ["regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid", "reason", "reportingController", "type"]
      },
      {
        fromStorage: Events.toEventsV1,
        toStorage: Events.toCore,
        validate: (object) => Events.validateEventsV1(object)
      }
    ),
    builtin({
      group: "apiextensions.k8s.io",
      kind: "CustomResourceDefinition",
      plural: "customresourcedefinitions",
      namespaced: false,
      shortNames: ["crd", "crds"],
      categories: ["api-extensions"],
      status: true,
      generation: true
    }, {
      prepareCreate: Crds.prepareCreate,
      prepareUpdate: Crds.prepareUpdate,
      validate: Crds.validate,
      deleteFinalizers: Crds.deleteFinalizers,
      markDeleted: Crds.markDeleted
    }),
    ...more.map((spec) => builtin(spec)),
    builtin({ group: "apps", kind: "DaemonSet", plural: "daemonsets", shortNames: ["ds"], ...workload }, {
      prepareCreate: DaemonSets.prepareCreate,
      prepareUpdate: DaemonSets.prepareUpdate
    }),
    autoscalerV1(),
    ...AccessReviews.resources, ...AuthenticationReviews.resources
  ]
}

const withStatus = { status: true } as const
const workload = { categories: ["all"], status: true, generation: true } as const
const admission = { group: "admissionregistration.k8s.io", namespaced: false, categories: ["api-extensions"], generation: true } as const
const autoscaler = {
  group: "autoscaling",
  kind: "HorizontalPodAutoscaler",
  plural: "horizontalpodautoscalers",
  shortNames: ["hpa"],
  categories: ["all"],
  status: true
} as const

// The rest of what 1.32 serves that bundles and charts contain. Generation is kept where 1.32's
// strategies keep it (workloads, Jobs and CronJobs, networking and policy objects, EndpointSlices,
// PodTemplates, admission configurations); not for HPAs, whose generation came after 1.32.
const more: ReadonlyArray<Spec> = [
  { group: "", kind: "Endpoints", plural: "endpoints", shortNames: ["ep"] },
  { group: "", kind: "LimitRange", plural: "limitranges", shortNames: ["limits"] },
  { group: "", kind: "Node", plural: "nodes", namespaced: false, shortNames: ["no"], ...withStatus, fields: ["spec.unschedulable"] },
  { group: "", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", shortNames: ["pvc"], ...withStatus },
  { group: "", kind: "PersistentVolume", plural: "persistentvolumes", namespaced: false, shortNames: ["pv"], ...withStatus },
  { group: "", kind: "PodTemplate", plural: "podtemplates", generation: true },
  {
    group: "",
    kind: "ReplicationController",
    plural: "replicationcontrollers",
    shortNames: ["rc"],
    ...workload,
    scale: true,
    fields: ["status.replicas"]
  },
  { group: "", kind: "ResourceQuota", plural: "resourcequotas", shortNames: ["quota"], ...withStatus },
  { group: "apps", kind: "ControllerRevision", plural: "controllerrevisions" },
  { group: "apps", kind: "ReplicaSet", plural: "replicasets", shortNames: ["rs"], ...workload, scale: true, fields: ["status.replicas"] },
  { ...autoscaler, version: "v2" },
  { group: "batch", kind: "CronJob", plural: "cronjobs", shortNames: ["cj"], ...workload },
  { group: "batch", kind: "Job", plural: "jobs", ...workload, fields: ["status.successful"] },
  { group: "discovery.k8s.io", kind: "EndpointSlice", plural: "endpointslices", generation: true },
  { group: "networking.k8s.io", kind: "IngressClass", plural: "ingressclasses", namespaced: false, generation: true },
  { group: "networking.k8s.io", kind: "Ingress", plural: "ingresses", shortNames: ["ing"], ...withStatus, generation: true },
  { group: "networking.k8s.io", kind: "NetworkPolicy", plural: "networkpolicies", shortNames: ["netpol"], generation: true },
  { group: "node.k8s.io", kind: "RuntimeClass", plural: "runtimeclasses", namespaced: false },
  { group: "flowcontrol.apiserver.k8s.io", kind: "FlowSchema", plural: "flowschemas", namespaced: false, ...withStatus },
  { group: "flowcontrol.apiserver.k8s.io", kind: "PriorityLevelConfiguration", plural: "prioritylevelconfigurations", namespaced: false, ...withStatus },
  { group: "policy", kind: "PodDisruptionBudget", plural: "poddisruptionbudgets", shortNames: ["pdb"], ...withStatus, generation: true },
  { group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding", plural: "clusterrolebindings", namespaced: false },
  { group: "rbac.authorization.k8s.io", kind: "ClusterRole", plural: "clusterroles", namespaced: false },
  { group: "rbac.authorization.k8s.io", kind: "RoleBinding", plural: "rolebindings" },
  { group: "rbac.authorization.k8s.io", kind: "Role", plural: "roles" },
  { group: "scheduling.k8s.io", kind: "PriorityClass", plural: "priorityclasses", namespaced: false, shortNames: ["pc"] },
  { group: "storage.k8s.io", kind: "StorageClass", plural: "storageclasses", namespaced: false, shortNames: ["sc"] },
  { group: "storage.k8s.io", kind: "CSIDriver", plural: "csidrivers", namespaced: false },
  { group: "storage.k8s.io", kind: "CSINode", plural: "csinodes", namespaced: false },
  { group: "storage.k8s.io", kind: "CSIStorageCapacity", plural: "csistoragecapacities" },
  { group: "storage.k8s.io", kind: "VolumeAttachment", plural: "volumeattachments", namespaced: false, ...withStatus },
  { group: "apiregistration.k8s.io", kind: "APIService", plural: "apiservices", namespaced: false, categories: ["api-extensions"], ...withStatus },
  { ...admission, kind: "MutatingWebhookConfiguration", plural: "mutatingwebhookconfigurations" },
  { ...admission, kind: "ValidatingAdmissionPolicy", plural: "validatingadmissionpolicies", ...withStatus },
  { ...admission, kind: "ValidatingAdmissionPolicyBinding", plural: "validatingadmissionpolicybindings" },
  { ...admission, kind: "ValidatingWebhookConfiguration", plural: "validatingwebhookconfigurations" }
]

// autoscaling/v1 serves the stored v2 objects through a conversion; v2 stays the preferred version.
const autoscalerV1 = (): Registry.Resource =>
  builtin({ ...autoscaler, version: "v1" }, { fromStorage: HorizontalPodAutoscalers.toV1, toStorage: HorizontalPodAutoscalers.toV2 })
