/**
 * CustomResourceDefinitions generated from a custom `Resource`: the `apiextensions.k8s.io/v1`
 * object and its YAML, with the structural schema of the resource's spec and status Schemas
 * (see `StructuralSchema`). Kubernetes list/map/int-or-string markers are Schema annotations,
 * made by the helpers here.
 *
 * @since 0.1.0
 */
import type { Manifest } from "@kubefx/schema"
import * as StructuralSchema from "@kubefx/schema/structural"
import { type Duration, Effect, Schedule, Schema } from "effect"
import * as Kube from "./Kube.ts"
import type * as KubeError from "./KubeError.ts"
import type * as Resource from "./Resource.ts"
import * as Yaml from "./Yaml.ts"

/** An `apiextensions.k8s.io/v1` CustomResourceDefinition with one served and stored version. */
export interface CustomResourceDefinition {
  readonly apiVersion: "apiextensions.k8s.io/v1"
  readonly kind: "CustomResourceDefinition"
  readonly metadata: { readonly name: string }
  readonly spec: {
    readonly group: string
    readonly names: {
      readonly kind: string
      readonly listKind: string
      readonly plural: string
      readonly singular: string
      readonly shortNames?: ReadonlyArray<string>
      readonly categories?: ReadonlyArray<string>
    }
    readonly scope: "Namespaced" | "Cluster"
    readonly versions: ReadonlyArray<{
      readonly name: string
      readonly served: boolean
      readonly storage: boolean
      readonly deprecated?: boolean
      readonly deprecationWarning?: string
      readonly schema: { readonly openAPIV3Schema: StructuralSchema.JsonSchemaProps }
      readonly subresources?: { readonly status: {} }
      readonly additionalPrinterColumns?: ReadonlyArray<Resource.PrinterColumn>
    }>
    readonly conversion?: {
      readonly strategy: "None" | "Webhook"
      readonly webhook?: {
        readonly conversionReviewVersions: ReadonlyArray<string>
        readonly clientConfig: ConversionClientConfig
      }
    }
  }
}

/** A resource declared with `Resource.custom`, which has what a CRD is generated from. */
export interface CustomResource extends Resource.Resource {
  readonly custom: Resource.CustomDefinition
}

// ---------------------------------------------------------------------------------------------
// Markers: annotations copied verbatim onto the generated schema node
// ---------------------------------------------------------------------------------------------

/**
 * How server-side apply merges a list: whole (`atomic`), per scalar item (`set`) or per keyed item
 * (`map`, see {@link listMap}).
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd } from "@kubefx/kube"
 * const Tags = Schema.Array(Schema.String).annotate(Crd.listType("set"))
 */
export const listType = (type: "atomic" | "set" | "map") => ({ "x-kubernetes-list-type": type }) as const

/**
 * A list merged per item, items identified by the given keys (which must be required scalars).
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd } from "@kubefx/kube"
 * const Ports = Schema.Array(Schema.Struct({ name: Schema.String, port: Schema.Int })).annotate(Crd.listMap("name"))
 */
export const listMap = (...keys: readonly [string, ...Array<string>]) =>
  ({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys }) as const

/**
 * Whether server-side apply merges an object's keys separately (`granular`) or replaces it whole.
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd } from "@kubefx/kube"
 * const Selector = Schema.Record(Schema.String, Schema.String).annotate(Crd.mapType("atomic"))
 */
export const mapType = (type: "granular" | "atomic") => ({ "x-kubernetes-map-type": type }) as const

/**
 * Keeps fields the schema does not name instead of pruning them.
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd } from "@kubefx/kube"
 * const Values = Schema.Struct({ name: Schema.String }).annotate(Crd.preserveUnknownFields)
 */
export const preserveUnknownFields = { "x-kubernetes-preserve-unknown-fields": true } as const

/**
 * Marks an object as a whole Kubernetes object (apiVersion, kind, metadata validated as such).
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd } from "@kubefx/kube"
 * const Template = Schema.Record(Schema.String, Schema.Unknown).annotate(Crd.embeddedResource)
 */
export const embeddedResource = { "x-kubernetes-embedded-resource": true } as const

/**
 * Accepts an integer or a string (like a Service's targetPort).
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd } from "@kubefx/kube"
 * const Port = Schema.Union([Schema.Int, Schema.String]).annotate(Crd.intOrString)
 */
export const intOrString = { "x-kubernetes-int-or-string": true } as const

/**
 * CEL rules the API server evaluates on the value.
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd } from "@kubefx/kube"
 * const Range = Schema.Struct({ min: Schema.Int, max: Schema.Int }).annotate(
 *   Crd.validations({ rule: "self.min <= self.max", message: "min must not exceed max" })
 * )
 */
export const validations = (...rules: readonly [StructuralSchema.Validation, ...Array<StructuralSchema.Validation>]) =>
  ({ "x-kubernetes-validations": rules }) as const

/** An integer or a string, as Kubernetes' IntOrString. */
export const IntOrString = Schema.Union([Schema.Int, Schema.String]).annotate(intOrString)

// ---------------------------------------------------------------------------------------------
// The CustomResourceDefinition
// ---------------------------------------------------------------------------------------------

/**
 * Whether a resource was declared with `Resource.custom` (and so has a CRD).
 *
 * @example
 * import { Crd } from "@kubefx/kube"
 * // Crd.isCustom(Widget) === true; Crd.isCustom(Builtins.ConfigMap) === false
 */
export const isCustom = (resource: Resource.Resource): resource is CustomResource => resource.custom !== undefined

const definitionOf = (resource: Resource.Resource): Resource.CustomDefinition => {
  if (resource.custom === undefined) {
    throw new Error(`${resource.kind} (${resource.apiVersion}) is a built-in kind: it has no CustomResourceDefinition`)
  }
  return resource.custom
}

/**
 * The schema of a whole custom object: apiVersion, kind, metadata, spec (required) and status.
 * Throws for a built-in kind.
 *
 * @example
 * import { Crd } from "@kubefx/kube"
 * // Crd.openApiSchema(Widget).properties.spec is StructuralSchema.make(Widget.custom.spec)
 */
export const openApiSchema = (resource: Resource.Resource): StructuralSchema.JsonSchemaProps => {
  const { spec, status } = definitionOf(resource)
  return objectSchema(spec, status)
}

const objectSchema = (spec: Schema.Top, status: Schema.Top | undefined): StructuralSchema.JsonSchemaProps => {
  return {
    type: "object",
    properties: {
      apiVersion: { type: "string", description: "The versioned schema of this object: group/version." },
      kind: { type: "string", description: "The REST resource this object represents." },
      metadata: { type: "object" },
      spec: StructuralSchema.make(spec),
      ...(status === undefined ? {} : { status: StructuralSchema.make(status) })
    },
    required: ["spec"]
  }
}

/**
 * The CustomResourceDefinition of a custom resource: named `<plural>.<group>`, its version and
 * those of `Resource.withVersions` (each served, the storage one marked, deprecated ones with their
 * warning), the status subresource when a status schema exists, printer columns, and with
 * `conversion` the conversion webhook's client config.
 * Throws for a built-in kind (see {@link isCustom}).
 *
 * @example
 * import { Schema } from "effect"
 * import { Crd, Resource } from "@kubefx/kube"
 * const Widget = Resource.custom({ group: "demo.kubefx.dev", version: "v1", kind: "Widget", plural: "widgets", spec: Schema.Struct({ size: Schema.Int }) })
 * Crd.make(Widget).metadata.name // "widgets.demo.kubefx.dev"
 */
export const make = (resource: Resource.Resource, options: MakeOptions = {}): CustomResourceDefinition => {
  const custom = definitionOf(resource)
  const version = (name: string, spec: Schema.Top, status: Schema.Top | undefined, deprecationWarning: string | undefined) => ({
    name,
    served: true,
    storage: name === custom.storageVersion,
    ...(deprecationWarning === undefined ? {} : { deprecated: true, deprecationWarning }),
    schema: { openAPIV3Schema: objectSchema(spec, status) },
    ...(status === undefined ? {} : { subresources: { status: {} } }),
    ...(custom.printerColumns.length > 0 ? { additionalPrinterColumns: custom.printerColumns } : {})
  })
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${resource.plural}.${resource.group}` },
    spec: {
      group: resource.group,
      names: {
        kind: resource.kind,
        listKind: custom.listKind,
        plural: resource.plural,
        singular: custom.singular,
        ...(custom.shortNames.length > 0 ? { shortNames: custom.shortNames } : {}),
        ...(custom.categories.length > 0 ? { categories: custom.categories } : {})
      },
      scope: resource.namespaced ? "Namespaced" : "Cluster",
      versions: [
        version(resource.version, custom.spec, custom.status, undefined),
        ...custom.versions.map((v) => version(v.name, v.spec, v.status, v.deprecationWarning))
      ],
      ...(custom.versions.length === 0 || options.conversion === undefined ? {} : {
        conversion: { strategy: "Webhook", webhook: { conversionReviewVersions: ["v1"], clientConfig: options.conversion } }
      })
    }
  }
}

/** Where the API server reaches the conversion webhook (`Webhook.conversion`), and the CA it trusts. */
export type ConversionClientConfig =
  | { readonly url: string; readonly caBundle: string }
  | { readonly service: { readonly name: string; readonly namespace: string; readonly path: string; readonly port: number }; readonly caBundle: string }

export interface MakeOptions {
  /**
   * For a resource with several versions: the conversion webhook's client config. Without it the
   * CRD converts with strategy None (only apiVersion changes), which suits versions of one shape.
   */
  readonly conversion?: ConversionClientConfig | undefined
}

/**
 * Checks an object of a custom resource as the API server will when it is written (defaults,
 * pruning, the CRD's schema and its CEL rules; `old`: the object it replaces, for transition
 * rules), without a cluster: `causes` is empty when it would be accepted. The CEL interpreter is
 * loaded on the first check, so an operator that never checks never loads it.
 *
 * @example
 * import { Effect } from "effect"
 * import { Crd } from "@kubefx/kube"
 * declare const Widget: Crd.CustomResource
 * const causes = Effect.map(
 *   Crd.check(Widget, { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "a" }, spec: { replicas: 11 } }),
 *   (checked) => checked.causes
 * )
 * // [{ field: "spec.replicas", message: "Invalid value: 11: spec.replicas in body should be less than or equal to 10", ... }]
 */
export const check = (resource: Resource.Resource, object: unknown, old?: unknown): Effect.Effect<Manifest.Checked> =>
  Effect.map(schemaPackage, ({ Manifest }) => Manifest.check(openApiSchema(resource), object, old))

const schemaPackage = Effect.promise(() => import("@kubefx/schema"))

/**
 * CRDs as a YAML stream, documents separated by `---`.
 *
 * @example
 * import { Crd } from "@kubefx/kube"
 * // process.stdout.write(Crd.toYaml([Crd.make(Widget), Crd.make(Gadget)]))
 */
export const toYaml = (crds: ReadonlyArray<CustomResourceDefinition>): string =>
  Yaml.stringify(crds)

/**
 * Creates or updates the CRDs of custom resources (server-side apply as `fieldManager`) and waits
 * until the API server serves each kind.
 *
 * @example
 * import { Effect } from "effect"
 * import { Crd } from "@kubefx/kube"
 * declare const Widget: Crd.CustomResource
 * const installed = Crd.install([Widget], { fieldManager: "widgets-operator" })
 */
export const install = (
  resources: ReadonlyArray<CustomResource>,
  options: MakeOptions & { readonly fieldManager?: string | undefined; readonly timeout?: Duration.Input | undefined } = {}
): Effect.Effect<void, KubeError.KubeError | Resource.DecodeError, Kube.Kube> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    yield* Effect.forEach(resources, (resource) => {
      const crd = make(resource, options)
      return kube.request({
        method: "PATCH",
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
        query: { fieldManager: options.fieldManager ?? "kubefx", force: "true" },
        contentType: "application/apply-patch+yaml",
        body: crd
      })
    }, { discard: true })
    // Served once a list answers; until Established the kind's endpoints are 404.
    yield* Effect.forEach(resources, (resource) =>
      kube.list(resource, { limit: 1 }).pipe(
        Effect.retry({
          while: (error) => error._tag === "NotFound",
          schedule: Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: options.timeout ?? "30 seconds" }))
        })
      ), { discard: true, concurrency: "unbounded" })
  })
