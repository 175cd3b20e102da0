/**
 * The building blocks of `@kubefx/schema` for the embedded API server, which formats every other
 * error with the same Go-compatible causes, and for the client's caches (`Interning`): not for
 * operators, whose surface is the package index.
 */
export * as CelLibrary from "./CelLibrary.ts"
export * as CelRules from "./CelRules.ts"
export * as CelSchemaChecks from "./CelSchemaChecks.ts"
export * as CelTypes from "./CelTypes.ts"
export * as CelValidation from "./CelValidation.ts"
export * as CelValues from "./CelValues.ts"
export * as Defaulting from "./Defaulting.ts"
export * as FieldCauses from "./FieldCauses.ts"
export * as FieldSelectors from "./FieldSelectors.ts"
export * as Interning from "./Interning.ts"
export * as Json from "./Json.ts"
export * as KubeObject from "./KubeObject.ts"
export * as LabelSelectors from "./LabelSelectors.ts"
export * as NameRules from "./NameRules.ts"
export * as OpenApiValidation from "./OpenApiValidation.ts"
export * as Pruning from "./Pruning.ts"
export * as Quantity from "./Quantity.ts"
export * as QuantityMath from "./QuantityMath.ts"
export * as Ratcheting from "./Ratcheting.ts"
export * as SchemaFormats from "./SchemaFormats.ts"
