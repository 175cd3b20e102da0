/**
 * A resource declaration: where a kind lives in the API (group, version, plural, scope) and the
 * Schema its objects decode with. Custom resources declare their spec and status schemas, from which
 * the CRD is generated; built-in kinds declare their object schema.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import * as ObjectMeta from "./ObjectMeta.ts"

/** A printer column of a custom resource (`kubectl get` output). */
export interface PrinterColumn {
  readonly name: string
  readonly type: "string" | "integer" | "number" | "boolean" | "date"
  readonly jsonPath: string
  readonly description?: string
  readonly priority?: number
}

/** What a custom resource adds to its declaration: the parts its CRD is generated from. */
export interface CustomDefinition {
  readonly spec: Schema.Top
  readonly status: Schema.Top | undefined
  readonly singular: string
  readonly listKind: string
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  readonly printerColumns: ReadonlyArray<PrinterColumn>
}

export interface Resource<A extends ObjectMeta.KubeObject = ObjectMeta.KubeObject> {
  /** "" for the core group. */
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
  /** "apps/v1", or "v1" in the core group. */
  readonly apiVersion: string
  /** Decodes an API object; encodes a typed one for writes. */
  readonly schema: Schema.Codec<A, unknown>
  /** Present for custom resources. */
  readonly custom: CustomDefinition | undefined
}

/** The object type of a custom resource. */
export interface CustomObject<Spec, Status> extends ObjectMeta.KubeObject {
  readonly apiVersion: string
  readonly kind: string
  readonly spec: Spec
  readonly status?: Status | undefined
}

const apiVersionOf = (group: string, version: string) => group === "" ? version : `${group}/${version}`

/**
 * Declares a custom resource from the schemas of its spec and status.
 *
 * @example
 * import { Schema } from "effect"
 * import { Resource } from "@kubefx/kube"
 *
 * export const Widget = Resource.custom({
 *   group: "demo.kubefx.dev",
 *   version: "v1",
 *   kind: "Widget",
 *   plural: "widgets",
 *   spec: Schema.Struct({ replicas: Schema.Int, message: Schema.String }),
 *   status: Schema.Struct({ configMapName: Schema.optionalKey(Schema.String) }),
 *   printerColumns: [{ name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }]
 * })
 */
export const custom = <Spec extends Schema.Top, Status extends Schema.Top = Schema.Struct<{}>>(options: {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly plural: string
  readonly singular?: string
  readonly namespaced?: boolean
  readonly spec: Spec
  readonly status?: Status
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
  readonly printerColumns?: ReadonlyArray<PrinterColumn>
}): Resource<CustomObject<Spec["Type"], Status["Type"]>> & { readonly custom: CustomDefinition } => {
  const apiVersion = apiVersionOf(options.group, options.version)
  const schema = Schema.Struct({
    apiVersion: Schema.String,
    kind: Schema.String,
    metadata: ObjectMeta.ObjectMeta,
    spec: options.spec,
    ...(options.status === undefined ? {} : { status: Schema.optionalKey(options.status) })
  })
  return {
    group: options.group,
    version: options.version,
    kind: options.kind,
    plural: options.plural,
    namespaced: options.namespaced ?? true,
    apiVersion,
    // The Struct's type is CustomObject's field for field; inside this generic function TypeScript
    // cannot resolve Spec's and Status's service types to prove it, so it is stated once here.
    schema: schema as unknown as Schema.Codec<CustomObject<Spec["Type"], Status["Type"]>, unknown>,
    custom: {
      spec: options.spec,
      status: options.status,
      singular: options.singular ?? options.kind.toLowerCase(),
      listKind: `${options.kind}List`,
      shortNames: options.shortNames ?? [],
      categories: options.categories ?? [],
      printerColumns: options.printerColumns ?? []
    }
  }
}

/**
 * Declares a built-in kind from the schema of its objects.
 *
 * @example
 * import { Schema } from "effect"
 * import { ObjectMeta, Resource } from "@kubefx/kube"
 *
 * const ConfigMap = Resource.builtin({
 *   group: "",
 *   version: "v1",
 *   kind: "ConfigMap",
 *   plural: "configmaps",
 *   schema: Schema.Struct({
 *     metadata: ObjectMeta.ObjectMeta,
 *     data: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
 *   })
 * })
 */
export const builtin = <S extends Schema.Top & { readonly Type: ObjectMeta.KubeObject }>(options: {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly plural: string
  readonly namespaced?: boolean
  readonly schema: S
}): Resource<S["Type"]> => ({
  group: options.group,
  version: options.version,
  kind: options.kind,
  plural: options.plural,
  namespaced: options.namespaced ?? true,
  apiVersion: apiVersionOf(options.group, options.version),
  schema: options.schema as unknown as Schema.Codec<S["Type"], unknown>,
  custom: undefined
})

/** An API object that did not decode with its resource's schema. */
export class DecodeError extends Schema.TaggedError<DecodeError>()("DecodeError", {
  kind: Schema.String,
  name: Schema.String,
  message: Schema.String
}) {}

/**
 * Decodes an API object.
 *
 * @example
 * import { Effect, Schema } from "effect"
 * import { Resource } from "@kubefx/kube"
 * const Widget = Resource.custom({ group: "demo.kubefx.dev", version: "v1", kind: "Widget", plural: "widgets", spec: Schema.Struct({ size: Schema.Int }) })
 * const widget = Resource.decode(Widget, { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "a" }, spec: { size: 1 } })
 */
export const decode = <A extends ObjectMeta.KubeObject>(resource: Resource<A>, value: unknown): Effect.Effect<A, DecodeError> =>
  Schema.decodeUnknownEffect(resource.schema)(value).pipe(
    Effect.mapError((error) =>
      new DecodeError({
        kind: resource.kind,
        name: nameOf(value),
        message: error.message
      })
    )
  )

/**
 * Encodes a typed object into the JSON the API server accepts, with apiVersion and kind set.
 *
 * @example
 * import { Effect, Schema } from "effect"
 * import { Resource } from "@kubefx/kube"
 * const Widget = Resource.custom({ group: "demo.kubefx.dev", version: "v1", kind: "Widget", plural: "widgets", spec: Schema.Struct({ size: Schema.Int }) })
 * const json = Resource.encode(Widget, { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "a" }, spec: { size: 1 } })
 */
export const encode = <A extends ObjectMeta.KubeObject>(
  resource: Resource<A>,
  object: A
): Effect.Effect<Record<string, unknown>, DecodeError> =>
  Schema.encodeUnknownEffect(resource.schema)(object).pipe(
    Effect.map((encoded) => ({ ...(encoded as Record<string, unknown>), apiVersion: resource.apiVersion, kind: resource.kind })),
    Effect.mapError((error) => new DecodeError({ kind: resource.kind, name: nameOf(object), message: error.message }))
  )

const nameOf = (value: unknown): string => {
  const metadata = typeof value === "object" && value !== null ? (value as { metadata?: { name?: unknown } }).metadata : undefined
  return typeof metadata?.name === "string" ? metadata.name : ""
}

/**
 * The REST path of a resource's collection, in a namespace or across all.
 *
 * @example
 * import { Resource } from "@kubefx/kube"
 * // "/apis/demo.kubefx.dev/v1/namespaces/default/widgets"
 */
export const collectionPath = (resource: Resource, namespace?: string | undefined): string => {
  const base = resource.group === "" ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`
  return resource.namespaced && namespace !== undefined ? `${base}/namespaces/${namespace}/${resource.plural}` : `${base}/${resource.plural}`
}

/**
 * The REST path of one object, optionally of a subresource.
 *
 * @example
 * import { Resource } from "@kubefx/kube"
 * // Resource.objectPath(Widget, "default", "a", "status") === "/apis/demo.kubefx.dev/v1/namespaces/default/widgets/a/status"
 */
export const objectPath = (
  resource: Resource,
  namespace: string | undefined,
  name: string,
  subresource?: string
): string =>
  `${collectionPath(resource, namespace)}/${encodeURIComponent(name)}${subresource === undefined ? "" : `/${subresource}`}`
