/**
 * kube-apiserver 1.32's validation of the built-in kinds (pkg/apis/.../validation), as 422 causes
 * in its wording, keyed by `group/Kind` ("" for the core group).
 */
import type * as KubeObject from "./KubeObject.ts"
import type * as Status from "./Status.ts"

/** Validation of one kind: the causes of a 422, none when the object is valid. */
export type Validator = (
  object: KubeObject.KubeObject,
  old: KubeObject.KubeObject | undefined
) => ReadonlyArray<Status.StatusCause>

const byGroupKind: Readonly<Record<string, Validator>> = {}

/**
 * The validator of a built-in kind, or undefined when it has none.
 *
 * @example
 * import * as BuiltinValidation from "./BuiltinValidation.ts"
 * BuiltinValidation.lookup("", "ConfigMap") // undefined
 */
export const lookup = (group: string, kind: string): Validator | undefined => byGroupKind[`${group}/${kind}`]
