/**
 * What a client's caches need of `@kubefx/schema` (reading and sharing API objects, checking the
 * labels they select by and the selectors they list with), without the CEL and validation
 * machinery behind the package index: an operator that imports only this and
 * `@kubefx/schema/structural` never loads the CEL interpreter (about 27 MB and 0.2 s of a start).
 */
export * as FieldSelectors from "./FieldSelectors.ts"
export * as Interning from "./Interning.ts"
export * as KubeObject from "./KubeObject.ts"
export * as LabelSelectors from "./LabelSelectors.ts"
export * as NameRules from "./NameRules.ts"
export * as QuantityMath from "./QuantityMath.ts"
