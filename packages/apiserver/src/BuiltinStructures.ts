/**
 * The merge structure of the built-in kinds: which lists merge by key (and the key, patch merge key
 * first), which are sets, which lists and maps are atomic. Strategic merge patch and server-side
 * apply read these; everything not listed follows the default (objects granular, lists atomic).
 * Taken from the Kubernetes API types' `+listType`, `+listMapKey`, `+mapType` and patch strategy
 * markers, as far as the served kinds need them.
 */
import type { Structure } from "./Structure.ts"

const obj = (fields: Readonly<Record<string, Structure>>): Structure => ({ fields })
const mapList = (keys: ReadonlyArray<string>, items?: Structure): Structure => ({
  listType: { _tag: "Map", keys },
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
  ports: mapList(["containerPort", "protocol"]),
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

// Core and events.k8s.io Events are one stored object under two names.
const event = kind({ involvedObject: atomicMap, regarding: atomicMap, related: atomicMap })

const byGroupKind: Readonly<Record<string, Structure>> = {
  "/Pod": kind({ spec: podSpec, status: podStatus }),
  "/Service": kind({
    spec: obj({
      ports: mapList(["port", "protocol"]),
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
  "/PersistentVolumeClaim": kind({ spec: obj({ accessModes: atomicList }), status: obj({ conditions }) }),
  "/Node": kind({ status: obj({ conditions, addresses: mapList(["type"]) }) }),
  "batch/Job": workload({}),
  "batch/CronJob": kind({ spec: obj({ jobTemplate: obj({ metadata: objectMeta, spec: obj({ selector: atomicMap, template: podTemplate }) }) }) }),
  "policy/PodDisruptionBudget": kind({ status: obj({ conditions }) }),
  "autoscaling/HorizontalPodAutoscaler": kind({ status: obj({ conditions }) }),
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": kind({ webhooks: mapList(["name"]) }),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": kind({ webhooks: mapList(["name"]) }),
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
