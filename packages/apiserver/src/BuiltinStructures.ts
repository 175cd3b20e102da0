/**
 * The merge structure of the built-in kinds: which lists merge by key (and the key, patch merge key
 * first), which are sets, which lists and maps are atomic. Strategic merge patch and server-side
 * apply read these; everything not listed follows the default (objects granular, lists atomic).
 * Taken from the Kubernetes API types' `+listType`, `+listMapKey`, `+mapType` and patch strategy
 * markers, as far as the served kinds need them.
 */
import type { Structure } from "./Structure.ts"

const obj = (fields: Readonly<Record<string, Structure>>): Structure => ({ fields })
const mapList = (
  keys: ReadonlyArray<string>,
  items?: Structure,
  keyDefaults?: Readonly<Record<string, string>>
): Structure => ({
  listType: { _tag: "Map", keys, ...(keyDefaults === undefined ? {} : { keyDefaults }) },
  ...(items === undefined ? {} : { items })
})
const setList: Structure = { listType: { _tag: "Set" } }
const atomicList: Structure = { listType: { _tag: "Atomic" } }
const atomicMap: Structure = { mapType: "atomic" }
/** A map with arbitrary keys, each owned on its own (labels, annotations, ConfigMap data). */
const granularMap: Structure = { additional: {} }
const conditions = mapList(["type"])

/**
 * `metadata` of every kind, custom resources included: labels and annotations are granular maps,
 * `ownerReferences` merge by `uid`, `finalizers` are a set, `managedFields` are never merged.
 *
 * @example
 * import * as BuiltinStructures from "./BuiltinStructures.ts"
 * BuiltinStructures.objectMeta.fields?.finalizers?.listType // { _tag: "Set" }
 */
export const objectMeta: Structure = obj({
  labels: granularMap,
  annotations: granularMap,
  ownerReferences: mapList(["uid"]),
  finalizers: setList,
  managedFields: atomicList
})

/**
 * The structure with `objectMeta` as its `metadata`: how a custom resource's structure (from its
 * schema) gets the common metadata rules.
 *
 * @example
 * import * as BuiltinStructures from "./BuiltinStructures.ts"
 * BuiltinStructures.withObjectMeta({ fields: { spec: {} } }).fields?.metadata === BuiltinStructures.objectMeta // true
 */
export const withObjectMeta = (structure: Structure): Structure => ({
  ...structure,
  fields: { ...structure.fields, metadata: objectMeta }
})

const kind = (fields: Readonly<Record<string, Structure>>): Structure => withObjectMeta(obj(fields))

const container = obj({
  ports: mapList(["containerPort", "protocol"], undefined, { protocol: "TCP" }),
  env: mapList(["name"]),
  volumeMounts: mapList(["mountPath"]),
  volumeDevices: mapList(["devicePath"]),
  resources: obj({ limits: granularMap, requests: granularMap, claims: mapList(["name"]) })
})

const podSpec = obj({
  containers: mapList(["name"], container),
  initContainers: mapList(["name"], container),
  ephemeralContainers: mapList(["name"], container),
  volumes: mapList(["name"]),
  imagePullSecrets: mapList(["name"]),
  hostAliases: mapList(["ip"]),
  topologySpreadConstraints: mapList(["topologyKey", "whenUnsatisfiable"]),
  resourceClaims: mapList(["name"]),
  schedulingGates: mapList(["name"]),
  tolerations: atomicList,
  readinessGates: atomicList,
  nodeSelector: atomicMap
})

const podTemplate = obj({ metadata: objectMeta, spec: podSpec })

const podStatus = obj({ conditions, podIPs: mapList(["ip"]), hostIPs: mapList(["ip"]) })

const workload = (spec: Readonly<Record<string, Structure>>): Structure =>
  kind({ spec: obj({ selector: atomicMap, template: podTemplate, ...spec }), status: obj({ conditions }) })

// A webhook's own lists are atomic except its match conditions, which merge by name.
const webhook = obj({ rules: atomicList, admissionReviewVersions: atomicList, matchConditions: mapList(["name"]) })

// Core and events.k8s.io Events are one stored object under two names.
const event = kind({ involvedObject: atomicMap, regarding: atomicMap, related: atomicMap })

const byGroupKind: Readonly<Record<string, Structure>> = {
  "/Pod": kind({ spec: podSpec, status: podStatus }),
  "/Service": kind({
    spec: obj({
      ports: mapList(["port", "protocol"], undefined, { protocol: "TCP" }),
      selector: atomicMap,
      clusterIPs: atomicList,
      externalIPs: atomicList,
      ipFamilies: atomicList
    }),
    status: obj({ conditions, loadBalancer: obj({ ingress: atomicList }) })
  }),
  "/ConfigMap": kind({ data: granularMap, binaryData: granularMap }),
  "/Secret": kind({ data: granularMap, stringData: granularMap }),
  "/Namespace": kind({ spec: obj({ finalizers: atomicList }), status: obj({ conditions }) }),
  "/ServiceAccount": kind({ secrets: mapList(["name"]), imagePullSecrets: atomicList }),
  "/Event": event,
  "events.k8s.io/Event": event,
  "coordination.k8s.io/Lease": kind({}),
  "apps/Deployment": workload({}),
  "apps/ReplicaSet": workload({}),
  "apps/DaemonSet": workload({}),
  "apps/StatefulSet": workload({ volumeClaimTemplates: atomicList }),
  "apps/ControllerRevision": kind({}),
  "/ReplicationController": kind({ spec: obj({ selector: atomicMap, template: podTemplate }), status: obj({ conditions }) }),
  "/PodTemplate": kind({ template: podTemplate }),
  "/PersistentVolumeClaim": kind({
    spec: obj({ accessModes: atomicList, selector: atomicMap, resources: obj({ limits: granularMap, requests: granularMap }) }),
    status: obj({ conditions, accessModes: atomicList, capacity: granularMap, allocatedResources: granularMap })
  }),
  "/PersistentVolume": kind({
    spec: obj({ accessModes: atomicList, capacity: granularMap, claimRef: atomicMap, mountOptions: atomicList })
  }),
  "/Endpoints": kind({ subsets: atomicList }),
  "/Node": kind({
    spec: obj({ podCIDRs: setList, taints: atomicList }),
    status: obj({ conditions, addresses: mapList(["type"]), capacity: granularMap, allocatable: granularMap, images: atomicList })
  }),
  "/ResourceQuota": kind({ spec: obj({ hard: granularMap, scopes: atomicList }), status: obj({ hard: granularMap, used: granularMap }) }),
  "/LimitRange": kind({ spec: obj({ limits: atomicList }) }),
  "batch/Job": workload({ podFailurePolicy: obj({ rules: atomicList }) }),
  "batch/CronJob": kind({
    spec: obj({ jobTemplate: obj({ metadata: objectMeta, spec: obj({ selector: atomicMap, template: podTemplate }) }) }),
    status: obj({ active: atomicList })
  }),
  "networking.k8s.io/Ingress": kind({ spec: obj({ rules: atomicList, tls: atomicList }), status: obj({ loadBalancer: obj({ ingress: atomicList }) }) }),
  "networking.k8s.io/IngressClass": kind({}),
  "networking.k8s.io/NetworkPolicy": kind({ spec: obj({ podSelector: atomicMap, ingress: atomicList, egress: atomicList, policyTypes: atomicList }) }),
  "discovery.k8s.io/EndpointSlice": kind({ endpoints: atomicList, ports: atomicList }),
  "policy/PodDisruptionBudget": kind({ spec: obj({ selector: atomicMap }), status: obj({ conditions, disruptedPods: granularMap }) }),
  "autoscaling/HorizontalPodAutoscaler": kind({ spec: obj({ metrics: atomicList }), status: obj({ conditions, currentMetrics: atomicList }) }),
  "rbac.authorization.k8s.io/Role": kind({ rules: atomicList }),
  "rbac.authorization.k8s.io/ClusterRole": kind({ rules: atomicList, aggregationRule: obj({ clusterRoleSelectors: atomicList }) }),
  "rbac.authorization.k8s.io/RoleBinding": kind({ subjects: atomicList }),
  "rbac.authorization.k8s.io/ClusterRoleBinding": kind({ subjects: atomicList }),
  "scheduling.k8s.io/PriorityClass": kind({}),
  "storage.k8s.io/StorageClass": kind({ parameters: granularMap, mountOptions: atomicList, allowedTopologies: atomicList }),
  "node.k8s.io/RuntimeClass": kind({ scheduling: obj({ nodeSelector: granularMap, tolerations: atomicList }) }),
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": kind({ webhooks: mapList(["name"], webhook) }),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": kind({ webhooks: mapList(["name"], webhook) }),
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy": kind({
    spec: obj({ validations: atomicList, matchConditions: mapList(["name"]), variables: atomicList, auditAnnotations: atomicList }),
    status: obj({ conditions })
  }),
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": kind({ spec: obj({ validationActions: setList }) }),
  "apiregistration.k8s.io/APIService": kind({ status: obj({ conditions }) }),
  "apiextensions.k8s.io/CustomResourceDefinition": kind({
    spec: obj({ versions: mapList(["name"]) }),
    status: obj({ conditions })
  })
}

/**
 * The structure of a built-in kind, or `undefined` for kinds this module does not know.
 *
 * @example
 * import * as BuiltinStructures from "./BuiltinStructures.ts"
 * import * as Structure from "./Structure.ts"
 * const deployment = BuiltinStructures.lookup("apps", "Deployment")!
 * const spec = Structure.field(Structure.field(Structure.field(deployment, "spec"), "template"), "spec")
 * Structure.field(spec, "containers").listType // { _tag: "Map", keys: ["name"] }
 */
export const lookup = (group: string, kindName: string): Structure | undefined => byGroupKind[`${group}/${kindName}`]

/**
 * The structures by kind name, for registries keyed by kind (no two built-in groups here give one
 * kind name different structures).
 *
 * @example
 * import * as BuiltinStructures from "./BuiltinStructures.ts"
 * BuiltinStructures.byKind.ConfigMap === BuiltinStructures.lookup("", "ConfigMap") // true
 */
export const byKind: Readonly<Record<string, Structure>> = Object.fromEntries(
  Object.entries(byGroupKind).map(([groupKind, structure]) => [groupKind.split("/")[1]!, structure])
)
