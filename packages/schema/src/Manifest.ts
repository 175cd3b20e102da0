/**
 * A custom resource checked against its CRD's openAPIV3Schema before it is sent, as kube-apiserver
 * 1.32 would check it: defaults applied, unknown fields pruned (and named), the OpenAPI schema, and
 * the CEL rules in `x-kubernetes-validations` (transition rules against `old` for an update, and
 * errors at values the update leaves as they were ratcheted away).
 *
 * @since 0.1.0
 */
import * as CelValidation from "./CelValidation.ts"
import * as Defaulting from "./Defaulting.ts"
import type * as FieldCauses from "./FieldCauses.ts"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"
import * as Pruning from "./Pruning.ts"
import * as Ratcheting from "./Ratcheting.ts"

/** One refusal, as the API server's 422 names it: the field, and `Invalid value: ...: why`. */
export type Cause = FieldCauses.Cause

/** What checking a manifest found. */
export interface Checked {
  /** The object as the API server would store it: defaulted and pruned. */
  readonly object: Record<string, unknown>
  /** Paths of the fields the schema does not know (dropped, or refused with fieldValidation=Strict). */
  readonly unknownFields: ReadonlyArray<string>
  /** Why the API server would refuse it; empty when it would accept it. */
  readonly causes: ReadonlyArray<Cause>
}

/**
 * Checks a manifest against an openAPIV3Schema (`old`: the object it replaces, for transition rules).
 *
 * @example
 * import { Manifest } from "@kubefx/schema"
 * const schema = {
 *   type: "object",
 *   properties: { spec: { type: "object", properties: { min: { type: "integer" }, max: { type: "integer" } },
 *     "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min must not exceed max" }] } }
 * } as const
 * Manifest.check(schema, { spec: { min: 3, max: 1 } }).causes
 * // [{ reason: "FieldValueInvalid", field: "spec", message: 'Invalid value: "object": min must not exceed max' }]
 */
export const check = (schema: JsonSchemaProps, manifest: unknown, old?: unknown): Checked => {
  const defaulted = Defaulting.apply(KubeObject.isObject(manifest) ? manifest : {}, schema)
  const pruned = Pruning.prune(defaulted, schema)
  const object = pruned.value as Record<string, unknown>
  const causes = Ratcheting.validate(object, schema, old)
  return { object, unknownFields: pruned.unknownFields, causes: [...causes, ...CelValidation.afterSchema(causes, schema, object, old)] }
}
