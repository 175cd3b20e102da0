/**
 * A resource declaration: where a kind lives in the API (group, version, plural, scope) and the
 * Schema its objects decode with. Custom resources declare their spec and status schemas, from which
 * the CRD is generated; built-in kinds declare their object schema.
 *
 * @since 0.1.0
 */
import { Effect, Exit, Schema, SchemaAST, SchemaTransformation } from "effect"
import * as ObjectMeta from "./ObjectMeta.ts"
import * as PlainMetadata from "./PlainMetadata.ts"

/** A printer column of a custom resource (`kubectl get` output). */
export interface PrinterColumn {
  readonly name: string
  readonly type: "string" | "integer" | "number" | "boolean" | "date"
  readonly jsonPath: string
  readonly description?: string
  readonly priority?: number
}

/**
 * Another version a custom resource serves besides the one its `Resource` value reads (the hub),
 * with a codec whose encoded side is this version's `{ spec, status }` and whose type is the hub's:
 * decoding converts to the hub, encoding converts back. Made by {@link version}.
 */
export interface Version {
  readonly name: string
  readonly spec: Schema.Top
  readonly status: Schema.Top | undefined
  readonly parts: Schema.Codec<unknown, unknown>
  /** The warning clients get for using this version, if it is deprecated. */
  readonly deprecationWarning: string | undefined
}

/** What a custom resource adds to its declaration: the parts its CRD is generated from. */
export interface CustomDefinition {
  readonly spec: Schema.Top
  readonly status: Schema.Top | undefined
  /** The other served versions, converted to and from this one by the operator's conversion webhook. */
  readonly versions: ReadonlyArray<Version>
  /** The version objects are stored in (this one unless another is named). */
  readonly storageVersion: string
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
  /** Set on a resource read as its objects' metadata alone (see {@link metadataOnly}). */
  readonly metadataOnly?: true | undefined
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
      versions: [],
      storageVersion: options.version,
      singular: options.singular ?? options.kind.toLowerCase(),
      listKind: `${options.kind}List`,
      shortNames: options.shortNames ?? [],
      categories: options.categories ?? [],
      printerColumns: options.printerColumns ?? []
    }
  }
}

/** A version's `{ spec, status }`, as its schemas decode them. */
export interface Parts<Spec, Status> {
  readonly spec: Spec
  readonly status?: Status
}

/**
 * Another version of a custom resource, converted to and from the hub (the version `hub` reads)
 * by a Schema transformation (`SchemaTransformation.transform` of `conversion`): `decode` turns this
 * version's `{ spec, status }` into the hub's, `encode` turns the hub's back. Add it with
 * {@link withVersions}.
 *
 * @example
 * import { Schema } from "effect"
 * import { Resource } from "@kubefx/kube"
 * declare const WidgetV2: Resource.Resource<Resource.CustomObject<{ size: { value: number } }, never>> & { custom: Resource.CustomDefinition }
 * const v1 = Resource.version(WidgetV2, {
 *   name: "v1",
 *   spec: Schema.Struct({ size: Schema.Int }),
 *   conversion: {
 *     decode: (v1) => ({ spec: { size: { value: v1.spec.size } } }),
 *     encode: (v2) => ({ spec: { size: v2.spec.size.value } })
 *   }
 * })
 */
export const version = <
  A extends CustomObject<unknown, unknown>,
  Spec extends Schema.Top,
  // Without a status schema of its own, the version shares the hub's.
  Status extends Schema.Top = Schema.Codec<NonNullable<A["status"]>, unknown>
>(
  hub: Resource<A> & { readonly custom: CustomDefinition },
  options: {
    readonly name: string
    readonly spec: Spec
    readonly status?: Status
    /** The transformation's two directions: to the hub's parts, and back. */
    readonly conversion: {
      readonly decode: (parts: Parts<Spec["Type"], Status["Type"]>) => Parts<A["spec"], NonNullable<A["status"]>>
      readonly encode: (hub: Parts<A["spec"], NonNullable<A["status"]>>) => Parts<Spec["Type"], Status["Type"]>
    }
    readonly deprecationWarning?: string
  }
): Version => {
  const ownParts = Schema.Struct({
    spec: options.spec,
    status: Schema.optionalKey(options.status ?? hub.custom.status ?? Schema.Unknown)
  })
  const hubParts = Schema.Struct({
    spec: hub.custom.spec,
    status: Schema.optionalKey(hub.custom.status ?? Schema.Unknown)
  })
  return {
    name: options.name,
    spec: options.spec,
    status: options.status ?? hub.custom.status,
    // The transformation's types are the parts' own: only the generic Top schemas hide it here.
    parts: ownParts.pipe(Schema.decodeTo(Schema.toType(hubParts), SchemaTransformation.transform(options.conversion) as never)) as unknown as Schema.Codec<unknown, unknown>,
    deprecationWarning: options.deprecationWarning
  }
}

/**
 * The resource serving other versions too, stored in `storage` (default: the hub's version).
 * Controllers keep reading the hub's version only; the operator's conversion webhook
 * (`Webhook.conversion`) converts between the versions for the API server.
 *
 * @example
 * import { Resource } from "@kubefx/kube"
 * declare const WidgetV2: Resource.Resource<Resource.CustomObject<{ size: { value: number } }, never>> & { custom: Resource.CustomDefinition }
 * declare const v1: Resource.Version
 * export const Widget = Resource.withVersions(WidgetV2, { versions: [v1], storage: "v1" })
 */
export const withVersions = <A extends ObjectMeta.KubeObject>(
  hub: Resource<A> & { readonly custom: CustomDefinition },
  options: { readonly versions: ReadonlyArray<Version>; readonly storage?: string | undefined }
): Resource<A> & { readonly custom: CustomDefinition } => {
  const names = [hub.version, ...options.versions.map((v) => v.name)]
  const storage = options.storage ?? hub.version
  if (!names.includes(storage)) throw new Error(`${hub.kind}: storage version ${storage} is not one of ${names.join(", ")}`)
  if (new Set(names).size !== names.length) throw new Error(`${hub.kind}: versions ${names.join(", ")} repeat a name`)
  return { ...hub, custom: { ...hub.custom, versions: options.versions, storageVersion: storage } }
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

/** An object as its metadata alone, as a metadata-only resource reads it (`kind` is "PartialObjectMetadata"). */
export interface PartialObjectMetadata extends ObjectMeta.KubeObject {
  readonly apiVersion: string
  readonly kind: string
}

const partialObjectMetadata: Schema.Codec<PartialObjectMetadata, unknown> = Schema.Struct({
  apiVersion: Schema.String,
  kind: Schema.String,
  metadata: ObjectMeta.ObjectMeta
}) as unknown as Schema.Codec<PartialObjectMetadata, unknown>

const metadataViews = new WeakMap<Resource<any>, Resource<PartialObjectMetadata>>()

/**
 * The same kind read as its objects' metadata alone: gets, lists and watches ask the server for
 * `PartialObjectMetadata`, so an informer of it (controller-runtime's `OnlyMetadata`) decodes and
 * caches names, labels, annotations, owner references and versions, and none of a big object's
 * body (a Secret's data, a Pod's spec). For owned or watched kinds the reconciler does not read.
 * One value per resource, so informers and `Context.cached` of it are shared.
 *
 * @example
 * import { Builtins, Resource } from "@kubefx/kube"
 * const SecretMetadata = Resource.metadataOnly(Builtins.Secret)
 * SecretMetadata === Resource.metadataOnly(Builtins.Secret) // true
 * SecretMetadata.plural // "secrets"
 */
export const metadataOnly = <A extends ObjectMeta.KubeObject>(resource: Resource<A>): Resource<PartialObjectMetadata> => {
  if (resource.metadataOnly === true) return resource as unknown as Resource<PartialObjectMetadata>
  const known = metadataViews.get(resource)
  if (known !== undefined) return known
  const view: Resource<PartialObjectMetadata> = {
    group: resource.group,
    version: resource.version,
    kind: resource.kind,
    plural: resource.plural,
    namespaced: resource.namespaced,
    apiVersion: resource.apiVersion,
    schema: partialObjectMetadata,
    custom: undefined,
    metadataOnly: true
  }
  metadataViews.set(resource, view)
  return view
}

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
 * import { Effect, Schema, SchemaTransformation } from "effect"
 * import { Resource } from "@kubefx/kube"
 * const Widget = Resource.custom({ group: "demo.kubefx.dev", version: "v1", kind: "Widget", plural: "widgets", spec: Schema.Struct({ size: Schema.Int }) })
 * const widget = Resource.decode(Widget, { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "a" }, spec: { size: 1 } })
 */
export const decode = <A extends ObjectMeta.KubeObject>(resource: Resource<A>, value: unknown): Effect.Effect<A, DecodeError> => {
  const decoders = decodersOf(resource)
  const decoder = decoders.plainMetadata !== undefined && PlainMetadata.is((value as { readonly metadata?: unknown } | null)?.metadata)
    ? decoders.plainMetadata
    : decoders.full
  // A Schema without effects decodes at once, into an Exit: it is answered as that Exit, which
  // costs its reader no step of the Effect runtime.
  return Effect.mapErrorEager(decoder(value), (error) =>
    new DecodeError({
      kind: resource.kind,
      name: nameOf(value),
      message: error.message
    }))
}

/**
 * Decodes an API object at once: the object, or undefined when the Schema refuses it or has effects
 * of its own (then `decode` tells why, or runs them). For loops over many objects, where an Effect
 * per object would cost more than decoding it.
 *
 * @example
 * import { Schema } from "effect"
 * import { Resource } from "@kubefx/kube"
 * const Widget = Resource.custom({ group: "demo.kubefx.dev", version: "v1", kind: "Widget", plural: "widgets", spec: Schema.Struct({ size: Schema.Int }) })
 * Resource.decodeNow(Widget, { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "a" }, spec: { size: 1 } })?.spec.size // 1
 * Resource.decodeNow(Widget, { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "a" }, spec: { size: "1" } }) // undefined
 */
export const decodeNow = <A extends ObjectMeta.KubeObject>(resource: Resource<A>, value: unknown): A | undefined => {
  const result = decode(resource, value)
  // An Effect<A, E> that is an Exit is an Exit<A, E>.
  return Exit.isExit(result) && Exit.isSuccess(result) ? (result as Exit.Success<A, DecodeError>).value : undefined
}

interface Decoders<A> {
  readonly full: (value: unknown) => Effect.Effect<A, Schema.SchemaError>
  /** The schema with its metadata taken as it is, for metadata `PlainMetadata.is` vouches for. */
  readonly plainMetadata: ((value: unknown) => Effect.Effect<A, Schema.SchemaError>) | undefined
}

const decoders = new WeakMap<Resource<any>, Decoders<any>>()

// An object with plain metadata (see PlainMetadata) is decoded with its metadata taken as it is,
// which is what the metadata Schema would give back, without its cost.
const decodersOf = <A extends ObjectMeta.KubeObject>(resource: Resource<A>): Decoders<A> => {
  const known = decoders.get(resource)
  if (known !== undefined) return known
  const ast = resource.schema.ast
  // Only a struct decoded as it is (no transformation of the whole object) holds its metadata as a field.
  const struct = SchemaAST.isObjects(ast) && ast.encoding === undefined ? ast : undefined
  const metadata = struct === undefined
    ? -1
    : struct.propertySignatures.findIndex((property) => property.name === "metadata" && property.type === ObjectMeta.ObjectMeta.ast)
  const plainMetadata = struct === undefined || metadata < 0 ? undefined : Schema.decodeUnknownEffect(
    Schema.make<Schema.Codec<A, unknown>>(
      new SchemaAST.Objects(
        struct.propertySignatures.map((property, index) =>
          index === metadata ? new SchemaAST.PropertySignature("metadata", SchemaAST.unknown) : property
        ),
        struct.indexSignatures,
        struct.annotations,
        struct.checks,
        undefined,
        struct.context,
        struct.encodingChecks
      )
    )
  )
  const made: Decoders<A> = { full: Schema.decodeUnknownEffect(resource.schema), plainMetadata }
  decoders.set(resource, made)
  return made
}

/**
 * Encodes a typed object into the JSON the API server accepts, with apiVersion and kind set.
 *
 * @example
 * import { Effect, Schema, SchemaTransformation } from "effect"
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
