/**
 * The pieces the protobuf messages of the built-in kinds are written with: a field of each type,
 * with the flags its Go type and JSON tag give it, and meta/v1's ObjectMeta and LabelSelector.
 */
import type * as Protobuf from "./Protobuf.ts"

type Field = Protobuf.Field
type Message = Protobuf.Message
type Flags = Protobuf.Flags

/** A Go pointer: a zero value that was sent is kept. */
export const ptr: Flags = { pointer: true }
/** No `omitempty`: zero values are kept, and an absent list, map or pointer is null. */
export const always: Flags = { always: true }
/** A pointer without `omitempty`: null when not sent. */
export const nullable: Flags = { pointer: true, always: true }

export const str = (name: string, flags: Flags = {}): Field => ({ name, type: "string", ...flags })
export const int = (name: string, flags: Flags = {}): Field => ({ name, type: "int64", ...flags })
export const ints = (name: string, flags: Flags = {}): Field => ({ name, type: "int64s", ...flags })
export const bool = (name: string, flags: Flags = {}): Field => ({ name, type: "bool", ...flags })
export const strs = (name: string, flags: Flags = {}): Field => ({ name, type: "strings", ...flags })
export const msg = (name: string, message: Message, flags: Flags = {}): Field => ({ name, type: "message", message, ...flags })
export const msgs = (name: string, message: Message, flags: Flags = {}): Field => ({ name, type: "messages", message, ...flags })
export const inline = (message: Message): Field => ({ name: "", type: "message", message, inline: true })

// meta/v1

const ownerReference: Message = {
  1: str("kind", always),
  3: str("name", always),
  4: str("uid", always),
  5: str("apiVersion", always),
  6: bool("controller", ptr),
  7: bool("blockOwnerDeletion", ptr)
}

const managedFieldsEntry: Message = {
  1: str("manager"),
  2: str("operation"),
  3: str("apiVersion"),
  4: { name: "time", type: "time", pointer: true },
  6: str("fieldsType"),
  7: { name: "fieldsV1", type: "fieldsV1", pointer: true },
  8: str("subresource")
}

/** metav1.ObjectMeta as clients send it, managedFields too (a typed client sends back what it read). */
export const objectMeta: Message = {
  1: str("name"),
  2: str("generateName"),
  3: str("namespace"),
  4: str("selfLink"),
  5: str("uid"),
  6: str("resourceVersion"),
  7: int("generation"),
  8: { name: "creationTimestamp", type: "time" },
  9: { name: "deletionTimestamp", type: "time", pointer: true },
  10: int("deletionGracePeriodSeconds", ptr),
  11: { name: "labels", type: "map", value: "string" },
  12: { name: "annotations", type: "map", value: "string" },
  13: msgs("ownerReferences", ownerReference),
  14: strs("finalizers"),
  17: msgs("managedFields", managedFieldsEntry)
}

export const labelSelector: Message = {
  1: { name: "matchLabels", type: "map", value: "string" },
  2: msgs("matchExpressions", { 1: str("key", always), 2: str("operator", always), 3: strs("values") })
}
