/**
 * The subset of OpenAPI v3 schema that CustomResourceDefinitions use (apiextensions.k8s.io/v1
 * JSONSchemaProps), with the Kubernetes extensions.
 */
export interface JsonSchemaProps {
  readonly type?: "object" | "array" | "string" | "integer" | "number" | "boolean"
  readonly format?: string
  readonly description?: string
  readonly title?: string
  readonly default?: unknown
  readonly nullable?: boolean
  readonly enum?: ReadonlyArray<unknown>
  readonly maximum?: number
  readonly minimum?: number
  readonly exclusiveMaximum?: boolean
  readonly exclusiveMinimum?: boolean
  readonly multipleOf?: number
  readonly maxLength?: number
  readonly minLength?: number
  readonly pattern?: string
  readonly maxItems?: number
  readonly minItems?: number
  readonly uniqueItems?: boolean
  readonly maxProperties?: number
  readonly minProperties?: number
  readonly required?: ReadonlyArray<string>
  readonly properties?: Readonly<Record<string, JsonSchemaProps>>
  readonly additionalProperties?: JsonSchemaProps | boolean
  readonly items?: JsonSchemaProps
  readonly allOf?: ReadonlyArray<JsonSchemaProps>
  readonly anyOf?: ReadonlyArray<JsonSchemaProps>
  readonly oneOf?: ReadonlyArray<JsonSchemaProps>
  readonly not?: JsonSchemaProps
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean
  readonly "x-kubernetes-embedded-resource"?: boolean
  readonly "x-kubernetes-int-or-string"?: boolean
  readonly "x-kubernetes-list-type"?: "atomic" | "set" | "map"
  readonly "x-kubernetes-list-map-keys"?: ReadonlyArray<string>
  readonly "x-kubernetes-map-type"?: "granular" | "atomic"
  readonly "x-kubernetes-validations"?: ReadonlyArray<{
    readonly rule: string
    readonly message?: string
    readonly messageExpression?: string
    readonly reason?: string
    readonly fieldPath?: string
    readonly optionalOldSelf?: boolean
  }>
}
