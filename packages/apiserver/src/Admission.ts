/**
 * What every write passes before it is stored: metadata checks, kind-specific validation, for
 * built-in kinds the decoding into their Go types (wrong types refused, unknown fields dropped and
 * reported per `fieldValidation`), and for custom resources pruning of unknown fields (reported
 * likewise), schema defaults and schema validation.
 */
import { Effect } from "effect"
import * as BuiltinSchemas from "./BuiltinSchemas.ts"
import * as Decoding from "./Decoding.ts"
import * as Metadata from "./Metadata.ts"
import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
import * as OmitEmpty from "./OmitEmpty.ts"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import { KubeObject, Pruning } from "@kubefx/schema/internal"

export type FieldValidation = "Ignore" | "Warn" | "Strict"

export interface Admitted {
  readonly object: KubeObject.KubeObject
  readonly warnings: ReadonlyArray<string>
  /**
   * When mutating admission changed the object: the object as the writer sent it (decoded and
   * defaulted), which the writer's field ownership is reckoned from. kube-apiserver records
   * managedFields before mutating admission, so what a plugin or webhook adds belongs to no one.
   */
  readonly owned?: KubeObject.KubeObject | undefined
}

/** Schema handling of custom resources, supplied by the CRD modules. */
export interface Schemas {
  /** Drops fields the schema does not know; returns their paths (e.g. "spec.foo"). */
  readonly prune: (
    resource: Registry.Resource,
    object: KubeObject.KubeObject
  ) => { readonly object: KubeObject.KubeObject; readonly unknown: ReadonlyArray<string> }
  readonly default: (resource: Registry.Resource, object: KubeObject.KubeObject) => KubeObject.KubeObject
  readonly validate: (
    resource: Registry.Resource,
    object: KubeObject.KubeObject,
    old: KubeObject.KubeObject | undefined
  ) => ReadonlyArray<Status.StatusCause>
}

/** The admission webhooks a write reaches (none when no configuration exists). */
export interface Hooks {
  /** Mutating webhooks, on the defaulted object. */
  readonly mutate: (object: KubeObject.KubeObject) => Effect.Effect<Admitted, Status.ApiError>
  /** Validating webhooks, on the object that passed every other check. */
  readonly validate: (object: KubeObject.KubeObject) => Effect.Effect<ReadonlyArray<string>, Status.ApiError>
}

/**
 * Parses the `fieldValidation` parameter (default Warn), or fails with a 400.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Admission from "./Admission.ts"
 * Effect.runSync(Admission.parseFieldValidation(undefined)) // "Warn"
 */
export const parseFieldValidation = (value: string | undefined): Effect.Effect<FieldValidation, Status.ApiError> =>
  value === undefined || value === ""
    ? Effect.succeed("Warn")
    : value === "Ignore" || value === "Warn" || value === "Strict"
    ? Effect.succeed(value)
    : Effect.fail(Status.badRequest(`fieldValidation: Invalid value: "${value}": must be one of Ignore, Warn, Strict`))

/**
 * Admits a create or update of `object` (in the served version; `old` likewise), or fails with
 * the 400/422 a real server gives.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Admission from "./Admission.ts"
 * import * as Builtins from "./Builtins.ts"
 * const cm = Builtins.make().find((r) => r.type.plural === "configmaps")!
 * const admitted = Effect.runSync(Admission.admit(Admission.noSchemas, cm, { metadata: { name: "a" } }, undefined, "Warn"))
 */
export const admit = Effect.fnUntraced(function*(
  schemas: Schemas,
  resource: Registry.Resource,
  object: KubeObject.KubeObject,
  old: KubeObject.KubeObject | undefined,
  fieldValidation: FieldValidation,
  hooks?: Hooks,
  subresource?: string
) {
  const decoded = yield* decode(schemas, resource, object, fieldValidation)
  const warnings = [...decoded.warnings]
  // A refusal after decoding goes with the warnings met until then (an unknown field's among them).
  return yield* Effect.mapError(admitDecoded(schemas, resource, decoded.object, old, hooks, subresource, warnings), (error) => Status.warned(error, warnings))
})

const admitDecoded = Effect.fnUntraced(function*(
  schemas: Schemas,
  resource: Registry.Resource,
  object: KubeObject.KubeObject,
  old: KubeObject.KubeObject | undefined,
  hooks: Hooks | undefined,
  subresource: string | undefined,
  warnings: Array<string>
) {
  const name = KubeObject.meta(object).name ?? ""
  let current = object
  let owned: KubeObject.KubeObject | undefined
  if (hooks !== undefined) {
    // Mutating admission sees the object as kube decodes it, defaulted (not yet allocated); what it
    // returns is decoded and defaulted again.
    if (resource.defaults !== undefined && !resource.type.custom) current = resource.defaults(current, old)
    const mutated = yield* hooks.mutate(current)
    warnings.push(...mutated.warnings)
    if (mutated.object !== current) {
      owned = current
      current = (yield* decode(schemas, resource, mutated.object, "Ignore")).object
    }
  }
  // Defaults, then what the registry allocates (admission is past).
  const settle = (object: KubeObject.KubeObject) => {
    const defaulted = resource.defaults === undefined ? object : resource.defaults(object, old)
    return resource.allocate === undefined ? defaulted : resource.allocate(defaulted, old)
  }
  current = settle(current)
  if (owned !== undefined) owned = settle(owned)
  const causes = [
    ...Metadata.validateMeta(current),
    // A CRD checks its own metadata (its name has a rule of its own); a custom resource's schema does.
    ...(resource.type.custom || resource.type.group === "apiextensions.k8s.io"
      ? []
      : ObjectMetaValidation.validateBuiltinMeta(current.metadata, { group: resource.type.group, resource: resource.type.plural, namespaced: resource.type.namespaced })),
    ...(old === undefined ? [] : Metadata.validateFinalizers(old, current)),
    ...(resource.validate?.(current, old, subresource) ?? []),
    ...(resource.type.custom ? schemas.validate(resource, current, old) : [])
  ]
  if (causes.length > 0) return yield* Status.invalid(resource.type, name, causes)
  if (resource.type.custom) warnings.push(...ObjectMetaValidation.finalizerWarnings(current.metadata, old?.metadata))
  if (hooks !== undefined) warnings.push(...(yield* hooks.validate(current)))
  return { object: current, warnings, owned } satisfies Admitted
})

// A custom resource: defaults, then pruning (kube-apiserver's order); a built-in: its Go type.
const decode = (
  schemas: Schemas,
  resource: Registry.Resource,
  object: KubeObject.KubeObject,
  fieldValidation: FieldValidation
): Effect.Effect<Admitted, Status.ApiError> => {
  if (!resource.type.custom) return decodeBuiltin(resource, object, fieldValidation)
  const pruned = schemas.prune(resource, schemas.default(resource, object))
  if (pruned.unknown.length > 0 && fieldValidation === "Strict") return Effect.fail(undecodable(resource, Pruning.strictDecodingError(pruned.unknown)))
  return Effect.succeed({ object: pruned.object, warnings: fieldValidation === "Warn" ? pruned.unknown.map(Pruning.unknownFieldWarning) : [] })
}

// kube-apiserver's 400 for a body it cannot decode into the kind, custom or built-in.
const undecodable = (resource: Registry.Resource, message: string): Status.ApiError => {
  const { version, kind } = resource.type
  return Status.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${message}`)
}

/**
 * The fields of `object` (as a client sent it) that `resource`'s schema does not declare, as
 * paths (`spec.bogus`); none for a built-in kind without a known Go type.
 *
 * @example
 * import * as Admission from "./Admission.ts"
 * import * as Builtins from "./Builtins.ts"
 * const cm = Builtins.make().find((r) => r.type.plural === "configmaps")!
 * Admission.undeclared(Admission.noSchemas, cm, { metadata: { name: "a" }, bogus: 1 }) // ["bogus"]
 */
export const undeclared = (schemas: Schemas, resource: Registry.Resource, object: KubeObject.KubeObject): ReadonlyArray<string> => {
  if (resource.type.custom) return schemas.prune(resource, object).unknown
  const schema = BuiltinSchemas.lookup(resource.type.group, resource.type.version, resource.type.kind)
  if (schema === undefined) return []
  const decoded = Decoding.decode(object, schema.type)
  return decoded._tag === "Decoded" ? decoded.unknownFields : []
}

/**
 * A built-in kind's write as kube-apiserver decodes it into the served version's Go type: a value
 * of the wrong type is a 400 whatever `fieldValidation` says; unknown fields fail Strict, are
 * warned about under Warn and dropped; fields Go leaves out when empty (`omitempty`: `labels: {}`,
 * `finalizers: []`, a ConfigMap's `data: {}`, a pod's `nodeSelector: null`) are left out, as Go
 * writes its types. Kinds without a known Go type only lose the empty metadata fields.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Admission from "./Admission.ts"
 * import * as Builtins from "./Builtins.ts"
 * const cm = Builtins.make().find((r) => r.type.plural === "configmaps")!
 * Effect.runSync(Admission.decodeBuiltin(cm, { metadata: { name: "a" }, data: { a: "1" }, foo: 1 }, "Warn"))
 * // { object: { metadata: { name: "a" }, data: { a: "1" } }, warnings: ['unknown field "foo"'] }
 */
export const decodeBuiltin = (
  resource: Registry.Resource,
  object: KubeObject.KubeObject,
  fieldValidation: FieldValidation
): Effect.Effect<Admitted, Status.ApiError> => {
  const schema = BuiltinSchemas.lookup(resource.type.group, resource.type.version, resource.type.kind)
  if (schema === undefined) return Effect.succeed({ object: Pruning.omitEmptyMeta(object), warnings: [] })
  const decoded = Decoding.decode(object, schema.type)
  const refuse = (message: string) => Effect.fail(undecodable(resource, message))
  if (decoded._tag === "Failed") return refuse(decoded.message)
  // The Go type's table covers ObjectMeta too, so its empty fields go in the same walk.
  if (decoded.unknownFields.length === 0) return Effect.succeed({ object: OmitEmpty.apply(object, schema.type), warnings: [] })
  if (fieldValidation === "Strict") return refuse(Pruning.strictDecodingError(decoded.unknownFields))
  return Effect.succeed({
    object: OmitEmpty.apply(Pruning.prune(object, schema.schema).value, schema.type),
    warnings: fieldValidation === "Warn" ? decoded.unknownFields.map(Pruning.unknownFieldWarning) : []
  })
}

/**
 * A built-in object created without a status, with the status Go writes for its type's zero value
 * (`{}` for a Job, `{loadBalancer: {}}` for an Ingress, a PodDisruptionBudget's zero counts), as
 * kube-apiserver stores it until a controller writes one. Custom resources are left as they are.
 *
 * @example
 * import * as Admission from "./Admission.ts"
 * import * as Builtins from "./Builtins.ts"
 * const jobs = Builtins.make().find((r) => r.type.plural === "jobs")!
 * Admission.withZeroStatus(jobs, { metadata: { name: "a" }, spec: {} }) // { metadata: { name: "a" }, spec: {}, status: {} }
 */
export const withZeroStatus = (resource: Registry.Resource, object: KubeObject.KubeObject): KubeObject.KubeObject => {
  if (resource.type.custom || object.status !== undefined) return object
  const status = BuiltinSchemas.lookup(resource.type.group, resource.type.version, resource.type.kind)?.type.fields.get("status")
  return status?._tag === "Struct" ? { ...object, status: OmitEmpty.zeroOf(status) } : object
}

/**
 * Schema handling that accepts everything (until CRD schemas are wired in, and for tests).
 */
export const noSchemas: Schemas = {
  prune: (_, object) => ({ object, unknown: [] }),
  default: (_, object) => object,
  validate: () => []
}
