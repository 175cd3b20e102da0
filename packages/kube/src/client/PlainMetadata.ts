/**
 * Object metadata as the API server sends it, recognised without its Schema: decoding metadata
 * with `ObjectMeta.ObjectMeta` (a struct that keeps unknown fields) is most of the cost of decoding
 * an object, and gives back a value equal to its input whenever the input is plain JSON metadata.
 * Mirrors `ObjectMeta.ObjectMeta` field for field; `Resource.test.ts` holds the two to the same
 * answers.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */

import { SchemaAST } from "effect"
import * as ObjectMeta from "./ObjectMeta.ts"

type Check = (value: unknown) => boolean

const isString: Check = (value) => typeof value === "string"
const isBoolean: Check = (value) => typeof value === "boolean"
const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const isStringMap: Check = (value) => isRecord(value) && Object.values(value).every(isString)
const isListOf = (item: Check): Check => (value) => Array.isArray(value) && value.every(item)

// Whether `value` is a record whose fields pass `checks`. A field the Schema reads (`modeled`) with
// no check here, say one added to the Schema since, answers false: the Schema decides for it.
const plain = (
  value: unknown,
  checks: ReadonlyMap<string, Check>,
  modeled: ReadonlySet<string>,
  others: "kept" | "dropped"
): boolean => {
  if (!isRecord(value)) return false
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const field = value[key]
    if (key === "__proto__" || field === undefined) return false
    const check = checks.get(key)
    if (check === undefined ? modeled.has(key) || others === "dropped" : !check(field)) return false
  }
  return true
}

const fieldsOf = (ast: SchemaAST.AST): ReadonlySet<string> =>
  new Set(SchemaAST.isObjects(ast) ? ast.propertySignatures.map((property) => String(property.name)) : [])

const ownerReferenceChecks = new Map<string, Check>([
  ["apiVersion", isString],
  ["kind", isString],
  ["name", isString],
  ["uid", isString],
  ["controller", isBoolean],
  ["blockOwnerDeletion", isBoolean]
])
const ownerReferenceFields = fieldsOf(ObjectMeta.OwnerReference.ast)
const requiredOwnerReferenceFields = ["apiVersion", "kind", "name", "uid"]
// An owner reference is a struct without other fields (its decoding drops them), four of them required.
const isPlainOwnerReference: Check = (value) =>
  plain(value, ownerReferenceChecks, ownerReferenceFields, "dropped") &&
  requiredOwnerReferenceFields.every((field) => Object.hasOwn(value as object, field))

const metadataChecks = new Map<string, Check>([
  ...["name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"]
    .map((field): [string, Check] => [field, isString]),
  ["generation", Number.isFinite],
  ["labels", isStringMap],
  ["annotations", isStringMap],
  ["finalizers", isListOf(isString)],
  ["ownerReferences", isListOf(isPlainOwnerReference)],
  ["managedFields", Array.isArray]
])
const metadataFields = fieldsOf(ObjectMeta.ObjectMeta.ast)

/**
 * Whether `ObjectMeta.ObjectMeta` decodes `value` to an equal value: the fields it reads with the
 * types it reads them as, anything else kept as it is. Conservative: anything unusual (an undefined
 * field, a `__proto__` key, an unknown field of an owner reference, a field the Schema reads that
 * this module does not check) answers false, and the Schema answers for it.
 *
 * @example
 * PlainMetadata.is({ name: "web", labels: { app: "web" }, selfLink: "/api/v1/..." }) // true
 * PlainMetadata.is({ name: "web", labels: { replicas: 3 } }) // false: the Schema rejects it
 */
export const is = (value: unknown): boolean => plain(value, metadataChecks, metadataFields, "kept")
