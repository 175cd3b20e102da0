/**
 * Kubernetes structural schemas, one implementation for the operator and the embedded API server:
 * the `JsonSchemaProps` of a CRD's openAPIV3Schema, generated from an `effect/Schema`
 * (`StructuralSchema.make`), and checking a manifest against it as kube-apiserver 1.32 does
 * (defaults, pruning, OpenAPI validation, CEL rules).
 */
export type { JsonSchemaProps } from "./JsonSchemaProps.ts"
export * as Manifest from "./Manifest.ts"
export * as StructuralSchema from "./StructuralSchema.ts"
