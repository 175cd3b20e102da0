/**
 * What kube-apiserver 1.32's defaulters set on the built-in kinds when a write is decoded, and the
 * side effects of a create, keyed by `group/Kind` ("" for the core group).
 */
import type * as KubeObject from "./KubeObject.ts"

/** Defaults of one kind: the object as written (and the stored one on update) to the object to admit. */
export type Defaulter = (object: KubeObject.KubeObject, old: KubeObject.KubeObject | undefined) => KubeObject.KubeObject

const byGroupKind: Readonly<Record<string, Defaulter>> = {}

/**
 * The defaulter of a built-in kind, or undefined when it has none.
 *
 * @example
 * import * as BuiltinDefaults from "./BuiltinDefaults.ts"
 * BuiltinDefaults.lookup("", "ConfigMap") // undefined
 */
export const lookup = (group: string, kind: string): Defaulter | undefined => byGroupKind[`${group}/${kind}`]
