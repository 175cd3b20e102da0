/**
 * The built-in kinds the server serves without a CRD: the ones operators and kubectl touch most
 * (namespaces, config, workloads' API objects, leases, events, CRDs themselves). No controller
 * runs for the workloads; they are stored, validated lightly and watched like any other object.
 */
import * as BuiltinDefaults from "./BuiltinDefaults.ts"
import * as BuiltinStructures from "./BuiltinStructures.ts"
import * as BuiltinValidation from "./BuiltinValidation.ts"
import * as Crds from "./Crds.ts"
import * as Events from "./Events.ts"
import * as Namespaces from "./Namespaces.ts"
import type * as Registry from "./Registry.ts"
import type * as ResourceType from "./ResourceType.ts"
import * as Structure from "./Structure.ts"

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
  return {
    type,
    storage: spec.storage ?? (spec.group === "" ? spec.plural : `${spec.plural}.${spec.group}`),
    generation: spec.generation ?? false,
    unconditionalUpdate: true,
    ...(defaults === undefined ? {} : { defaults }),
    ...(validate === undefined ? {} : { validate }),
    ...extra
  }
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
    builtin({ group: "", kind: "ConfigMap", plural: "configmaps", shortNames: ["cm"] }),
    builtin({ group: "", kind: "Secret", plural: "secrets", fields: ["type"] }),
    builtin({
      group: "",
      kind: "Service",
      plural: "services",
      shortNames: ["svc"],
      categories: ["all"],
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      status: true
    }),
    builtin({ group: "", kind: "ServiceAccount", plural: "serviceaccounts", shortNames: ["sa"] }),
    builtin({
      group: "",
      kind: "Pod",
      plural: "pods",
      shortNames: ["po"],
      categories: ["all"],
      status: true,
      fields: ["spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "status.phase", "status.podIP"]
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
      deleteFinalizers: Crds.deleteFinalizers
    })
  ]
}
