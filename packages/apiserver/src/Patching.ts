/**
 * PATCH requests: JSON, merge and strategic merge patches (strategic only for built-in kinds)
 * applied to the current object, and server-side apply with field ownership and conflicts; then
 * the same update rules as PUT (status subresource, generation, finalizers, no-op detection). Also
 * the managedFields bookkeeping of every other write.
 */
import { Effect, Result } from "effect"
import * as Admission from "./Admission.ts"
import * as ManagedFields from "./ManagedFields.ts"
import * as Patch from "./Patch.ts"
import * as ResourceType from "./ResourceType.ts"
import * as Rest from "./Rest.ts"
import * as ServerSideApply from "./ServerSideApply.ts"
import * as Status from "./Status.ts"
import * as Structure from "./Structure.ts"
import * as WebhookClient from "./WebhookClient.ts"
import { type Json, KubeObject } from "@kubefx/schema/internal"

export const applyPatchType = "application/apply-patch+yaml"

export interface Options extends Rest.WriteOptions {
  /** The `force` parameter; only apply patches may set it. */
  readonly force: boolean | undefined
  /** Whether the request named a field manager (apply requires one). */
  readonly fieldManagerGiven: boolean
}

const json = (object: KubeObject.KubeObject): Json.JsonObject => object as unknown as Json.JsonObject
const plain = (object: Json.JsonObject): KubeObject.KubeObject => object as unknown as KubeObject.KubeObject

const patchError = (error: Patch.PatchError): Status.ApiError => {
  switch (error._tag) {
    case "PatchUndecodable":
      return Status.badRequest(error.message)
    case "PatchTooLarge":
      return Status.tooLarge(error.message)
    case "PatchUnsupportedMediaType":
      return Status.unsupportedMediaType([...Patch.contentTypes, applyPatchType])
    case "PatchFailed":
      return new Status.ApiError({ code: 422, reason: "Invalid", message: error.message, details: {} })
    case "PatchRejected":
      return Status.unknown(error.message)
  }
}

/**
 * Applies a json, merge or strategic merge patch to a document.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Patching from "./Patching.ts"
 * Effect.runSync(Patching.patchDocument("application/merge-patch+json", { spec: { replicas: 1 } }, '{"spec":{"replicas":3}}'))
 * // { spec: { replicas: 3 } }
 */
export const patchDocument = (
  contentType: string,
  document: KubeObject.KubeObject,
  body: string,
  structure: Structure.Structure = Structure.unknown,
  fieldValidation: Admission.FieldValidation = "Warn"
): Effect.Effect<KubeObject.KubeObject, Status.ApiError> => {
  const result = Patch.apply(contentType, json(document), body, structure, fieldValidation)
  return Result.isSuccess(result) ? Effect.succeed(plain(result.success)) : Effect.fail(patchError(result.failure))
}

/**
 * Field ownership for writes other than server-side apply: the writer's Update entry gains what
 * it changed.
 *
 * @example
 * import * as Patching from "./Patching.ts"
 * const fields = Patching.fieldManagement // pass as Rest.Env["fields"]
 */
export const fieldManagement: Rest.FieldManagement = {
  update: (resource, old, next, manager, subresource) =>
    Effect.sync(() =>
      plain(ManagedFields.update({
        live: old === undefined ? undefined : json(old),
        next: json(next),
        manager,
        apiVersion: ResourceType.groupVersion(resource.type),
        subresource,
        statusSubresource: resource.type.subresources.status,
        time: KubeObject.timestamp(),
        structure: resource.type.structure
      }))
    )
}

const keepOwnership = (_: KubeObject.KubeObject, next: KubeObject.KubeObject) => Effect.succeed(next)

/**
 * Handles a PATCH of an object (or its `/status`) by Content-Type.
 *
 * @example
 * import * as Patching from "./Patching.ts"
 * import type * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const target: Rest.Target
 * const patched = Patching.patch(env, target, undefined, "application/merge-patch+json", '{"metadata":{"labels":{"a":"b"}}}', {
 *   dryRun: false, fieldManager: "me", fieldManagerGiven: true, fieldValidation: "Warn", force: undefined
 * })
 */
export const patch = (
  env: Rest.Env,
  target: Rest.Target,
  subresource: Rest.Subresource | undefined,
  contentType: string,
  body: string,
  options: Options
): Effect.Effect<Rest.Written, Status.ApiError> => {
  const type = target.resource.type
  if (contentType === applyPatchType) return apply(env, target, subresource, body, options)
  if (options.force !== undefined) {
    return Effect.fail(
      Status.invalidOptions("PatchOptions", [
        Status.fieldInvalid("force", options.force, "may not be specified for non-apply patch")
      ])
    )
  }
  if (contentType === "application/strategic-merge-patch+json" && type.custom) {
    return Effect.fail(
      Status.unsupportedMediaType(["application/json-patch+json", "application/merge-patch+json", applyPatchType])
    )
  }
  if (!(Patch.contentTypes as ReadonlyArray<string>).includes(contentType)) {
    return Effect.fail(Status.unsupportedMediaType([...Patch.contentTypes, applyPatchType]))
  }
  return Rest.update(env, target, subresource, options, (current) =>
    patchDocument(contentType, current, body, type.structure, options.fieldValidation))
}

const apply = Effect.fnUntraced(function*(
  env: Rest.Env,
  target: Rest.Target,
  subresource: Rest.Subresource | undefined,
  body: string,
  options: Options
) {
  const { resource } = target
  const type = resource.type
  if (!options.fieldManagerGiven) {
    return yield* Status.invalidOptions("PatchOptions", [
      Status.fieldRequired("fieldManager", "is required for apply patch")
    ])
  }
  const decoded = ServerSideApply.decodeBody(body)
  if (Result.isFailure(decoded)) return yield* Status.badRequest(decoded.failure.message)
  const applied = plain(decoded.success)
  const m = KubeObject.meta(applied)
  if (typeof applied.apiVersion !== "string" || applied.apiVersion === "") {
    return yield* Status.badRequest("apiVersion must be set in an applied configuration")
  }
  if (typeof applied.kind !== "string" || applied.kind === "") {
    return yield* Status.badRequest("kind must be set in an applied configuration")
  }
  if (m.managedFields !== undefined && m.managedFields !== null) {
    return yield* Status.badRequest("metadata.managedFields must be nil")
  }
  if (m.name !== undefined && m.name !== target.name) {
    return yield* Status.badRequest(`the name of the object (${m.name}) does not match the name on the URL (${target.name})`)
  }
  // An applied configuration cannot hold a field the schema does not declare, whatever
  // fieldValidation says: kube's field manager fails to type it.
  const undeclared = Admission.undeclared(env.schemas, resource, applied)
  if (undeclared.length > 0) {
    const errors = undeclared.map((path) => `.${path}: field not declared in schema`)
    return yield* Status.badRequest(
      `failed to create typed patch object (${target.namespace ?? ""}/${target.name}; ${WebhookClient.gvkOf(applied)}): ${
        errors.length === 1 ? errors[0] : ["errors:", ...errors.map((e) => `  ${e}`)].join("\n")
      }`
    )
  }
  const config = KubeObject.withMeta(applied, { name: target.name })
  const scope: ServerSideApply.Scope = subresource === "status" ? "status" : type.subresources.status ? "withoutStatus" : "all"
  const merge = (live: KubeObject.KubeObject | undefined) => {
    // A resourceVersion in the applied configuration is a precondition, whatever part it applies to.
    if (live !== undefined && m.resourceVersion !== undefined && m.resourceVersion !== "" &&
      m.resourceVersion !== KubeObject.meta(live).resourceVersion) {
      return Effect.fail(Status.conflict(type, target.name, Status.modified))
    }
    const result = ServerSideApply.apply({
      live: live === undefined ? undefined : json(live),
      applied: json(config),
      manager: options.fieldManager,
      apiVersion: ResourceType.groupVersion(type),
      subresource,
      force: options.force === true,
      structure: type.structure,
      time: KubeObject.timestamp(),
      scope
    })
    if (Result.isSuccess(result)) return Effect.succeed(plain(result.success))
    const failure = result.failure
    return Effect.fail(
      failure._tag === "ApplyConflict"
        ? new Status.ApiError({
          code: 409,
          reason: "Conflict",
          message: failure.message,
          details: {
            name: target.name,
            group: type.group,
            kind: type.plural,
            causes: ServerSideApply.conflictCauses(failure.conflicts)
          }
        })
        : new Status.ApiError({ code: 422, reason: "Invalid", message: failure.message })
    )
  }
  const exists = env.store.get(resource.storage, target.namespace ?? "", target.name) !== undefined
  if (!exists) {
    if (subresource !== undefined) return yield* Status.notFound(type, target.name)
    const created = yield* merge(undefined)
    return yield* Rest.create(env, resource, target.namespace, created, options, (object) => Effect.succeed(object)).pipe(
      // Another writer created it first: apply to that object instead.
      Effect.catchIf((e) => e.code === 409 && e.reason === "AlreadyExists", () =>
        Rest.update(env, target, subresource, options, merge, keepOwnership))
    )
  }
  return yield* Rest.update(env, target, subresource, options, merge, keepOwnership)
})
