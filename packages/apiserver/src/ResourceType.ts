import type { Structure } from "./Structure.ts"
import type { JsonSchemaProps } from "@kubefx/schema"

/**
 * Everything the server knows about one served resource (a group/version/kind): its names for URLs
 * and discovery, its scope and subresources, and for custom resources the schema that validates,
 * prunes and defaults it.
 */
export interface ResourceType {
  /** "" for the core group. */
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly listKind: string
  readonly plural: string
  readonly singular: string
  readonly namespaced: boolean
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  readonly subresources: {
    readonly status: boolean
    readonly scale?: {
      readonly specReplicasPath: string
      readonly statusReplicasPath: string
      readonly labelSelectorPath?: string
    }
  }
  /** True for kinds served from a CustomResourceDefinition. */
  readonly custom: boolean
  /** openAPIV3Schema of a custom resource version; undefined for built-in kinds. */
  readonly schema?: JsonSchemaProps
  /** How lists and maps merge and are owned, for patches and server-side apply. */
  readonly structure: Structure
  readonly selectableFields: ReadonlyArray<string>
  readonly printerColumns: ReadonlyArray<{
    readonly name: string
    readonly type: string
    readonly jsonPath: string
    readonly description?: string
    readonly priority?: number
    readonly format?: string
  }>
}

/**
 * "apps/v1", or "v1" for the core group.
 *
 * @example
 * import * as ResourceType from "./ResourceType.ts"
 * ResourceType.groupVersion({ group: "", version: "v1" }) // "v1"
 */
export const groupVersion = (type: Pick<ResourceType, "group" | "version">): string =>
  type.group === "" ? type.version : `${type.group}/${type.version}`

/**
 * The name Kubernetes uses in messages: "crontabs.stable.example.com", or "configmaps" in the core group.
 *
 * @example
 * import * as ResourceType from "./ResourceType.ts"
 * ResourceType.qualifiedResource({ group: "apps", plural: "deployments" }) // "deployments.apps"
 */
export const qualifiedResource = (type: Pick<ResourceType, "group" | "plural">): string =>
  type.group === "" ? type.plural : `${type.plural}.${type.group}`

/**
 * "CronTab.stable.example.com", the kind as Kubernetes qualifies it in 422 messages.
 *
 * @example
 * import * as ResourceType from "./ResourceType.ts"
 * ResourceType.qualifiedKind({ group: "", kind: "ConfigMap" }) // "ConfigMap"
 */
export const qualifiedKind = (type: Pick<ResourceType, "group" | "kind">): string =>
  type.group === "" ? type.kind : `${type.kind}.${type.group}`
