/**
 * Just enough of Kubernetes' protobuf encoding to read the request bodies kubectl sends for
 * built-in kinds (its generator commands, `kubectl create deployment|service|job|...`, and its auth
 * commands): the `k8s\0` envelope (runtime.Unknown) and those kinds' messages, decoded to the JSON
 * the same Go object would marshal to. Every response stays JSON, and other kinds sent as protobuf
 * get 415. Also a small writer, for the protobuf documents the server itself serves.
 */
import * as ProtobufFields from "./ProtobufFields.ts"
import * as ProtobufKinds from "./ProtobufKinds.ts"

/** How a field's Go type and JSON tag shape its JSON form. */
export interface Flags {
  /** A Go pointer: a zero value that was sent is kept. */
  readonly pointer?: boolean
  /** No `omitempty` in the JSON tag: zero values are kept; an absent list, map or pointer is null. */
  readonly always?: boolean
  /** An embedded struct (`json:",inline"`): its fields join the parent's. */
  readonly inline?: boolean
}

/**
 * Scalar fields; `time` is metav1.Time, `intOrString` and `quantity` the apimachinery types,
 * `fieldsV1` a managed fields entry's set (raw JSON in a message).
 */
export type Scalar = "string" | "bytes" | "int64" | "bool" | "time" | "intOrString" | "quantity" | "fieldsV1"

/** One field of a message: its JSON name and how it is encoded. */
export type Field = Flags & (
  | { readonly name: string; readonly type: Scalar }
  | { readonly name: string; readonly type: "strings" | "int64s" }
  | { readonly name: string; readonly type: "message" | "messages"; readonly message: Message }
  | { readonly name: string; readonly type: "map"; readonly value: "string" | "bytes" | "quantity" | "time" }
)

/** A message: its fields by number. */
export type Message = Readonly<Record<number, Field>>

const objectMeta = ProtobufFields.objectMeta

// The create-only kinds of kubectl's auth commands and `kubectl create token` (status is the server's).
const selectorAttributes: Message = {
  1: { name: "rawSelector", type: "string" },
  2: {
    name: "requirements",
    type: "messages",
    message: { 1: { name: "key", type: "string" }, 2: { name: "operator", type: "string" }, 3: { name: "values", type: "strings" } }
  }
}
const attributes: Message = {
  1: {
    name: "resourceAttributes",
    type: "message",
    message: {
      ...Object.fromEntries(["namespace", "verb", "group", "version", "resource", "subresource", "name"].map((name, i) => [i + 1, { name, type: "string" }])),
      8: { name: "fieldSelector", type: "message", message: selectorAttributes },
      9: { name: "labelSelector", type: "message", message: selectorAttributes }
    }
  },
  2: { name: "nonResourceAttributes", type: "message", message: { 1: { name: "path", type: "string" }, 2: { name: "verb", type: "string" } } }
}
const subjectAttributes: Message = {
  ...attributes,
  3: { name: "user", type: "string" },
  4: { name: "groups", type: "strings" },
  6: { name: "uid", type: "string" }
}
const withSpec = (spec: Message): Message => ({
  1: { name: "metadata", type: "message", message: objectMeta },
  2: { name: "spec", type: "message", message: spec }
})
const boundObjectRef: Message = Object.fromEntries(["kind", "apiVersion", "name", "uid"].map((name, i) => [i + 1, { name, type: "string" }]))

const reviews: Readonly<Record<string, Message>> = {
  "authorization.k8s.io/v1/SelfSubjectAccessReview": withSpec(attributes),
  "authorization.k8s.io/v1/SelfSubjectRulesReview": withSpec({ 1: { name: "namespace", type: "string" } }),
  "authorization.k8s.io/v1/SubjectAccessReview": withSpec(subjectAttributes),
  "authorization.k8s.io/v1/LocalSubjectAccessReview": withSpec(subjectAttributes),
  "authentication.k8s.io/v1/SelfSubjectReview": { 1: { name: "metadata", type: "message", message: objectMeta } },
  "authentication.k8s.io/v1/TokenReview": withSpec({ 1: { name: "token", type: "string" }, 2: { name: "audiences", type: "strings" } }),
  "authentication.k8s.io/v1/TokenRequest": withSpec({
    1: { name: "audiences", type: "strings" },
    3: { name: "boundObjectRef", type: "message", message: boundObjectRef },
    4: { name: "expirationSeconds", type: "int64" }
  })
}

// Kinds whose messages skip fields they do not list (their status, which the server computes).
const lenientKinds: Readonly<Record<string, Message>> = {
  ...reviews
}

/** The protobuf media type. */
export const mediaType = "application/vnd.kubernetes.protobuf"

const magic = [0x6b, 0x38, 0x73, 0x00]

interface Entry {
  readonly field: number
  readonly wire: number
  readonly varint: bigint
  readonly bytes: Uint8Array
}

const entries = (bytes: Uint8Array): Array<Entry> => {
  const out: Array<Entry> = []
  let i = 0
  const varint = (): bigint => {
    let result = 0n
    for (let shift = 0n; ; shift += 7n) {
      if (i >= bytes.length || shift > 63n) throw new Error("truncated varint")
      const b = bytes[i++]!
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return result
    }
  }
  while (i < bytes.length) {
    const key = Number(varint())
    const field = key >>> 3
    const wire = key & 7
    if (wire === 0) out.push({ field, wire, varint: varint(), bytes: new Uint8Array() })
    else if (wire === 2) {
      const length = Number(varint())
      if (i + length > bytes.length) throw new Error("truncated field")
      out.push({ field, wire, varint: 0n, bytes: bytes.subarray(i, i + length) })
      i += length
    } else if (wire === 1 || wire === 5) {
      i += wire === 1 ? 8 : 4
    } else {
      throw new Error(`unsupported wire type ${wire}`)
    }
  }
  return out
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

const timestamp: Message = { 1: { name: "seconds", type: "int64" }, 2: { name: "nanos", type: "int64" } }
const intOrString: Message = { 1: { name: "type", type: "int64" }, 2: { name: "intVal", type: "int64" }, 3: { name: "strVal", type: "string" } }
const quantity: Message = { 1: { name: "string", type: "string" } }

// The JSON of each type's Go zero value.
const zero: Readonly<Record<Scalar, unknown>> = {
  string: "",
  bytes: "",
  int64: 0,
  bool: false,
  time: null,
  intOrString: 0,
  quantity: "0",
  fieldsV1: null
}
const structLike: ReadonlySet<string> = new Set(["message", "time", "intOrString", "quantity", "fieldsV1"])

const wireOf = (type: Scalar) => (type === "int64" || type === "bool" ? 0 : 2)

interface Decoding {
  /** Refuse fields a message does not list (instead of skipping them). */
  readonly strict: boolean
  /** Where in the object, for error messages. */
  readonly path: string
}

const scalar = (type: Scalar, e: Entry, at: Decoding): unknown => {
  if (e.wire !== wireOf(type)) throw new Error(`${at.path}: wire type ${e.wire} for a ${type}`)
  switch (type) {
    case "string":
      return text(e.bytes)
    case "bytes":
      return Buffer.from(e.bytes).toString("base64")
    case "int64":
      return Number(BigInt.asIntN(64, e.varint))
    case "bool":
      return e.varint !== 0n
    case "time": {
      // metav1.Time: an empty message is the zero time, which marshals to null; seconds only, as in Go.
      if (e.bytes.length === 0) return null
      const t = decode(e.bytes, timestamp, at)
      return new Date(Number(t.seconds ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")
    }
    case "intOrString": {
      const v = decode(e.bytes, intOrString, at)
      return v.type === 1 ? (v.strVal ?? "") : (v.intVal ?? 0)
    }
    case "quantity":
      return decode(e.bytes, quantity, at).string ?? "0"
    case "fieldsV1": {
      // FieldsV1 { bytes Raw = 1 }: the set as the JSON its JSON form holds.
      const raw = entries(e.bytes).findLast((inner) => inner.field === 1)
      if (raw === undefined) return null
      try {
        return JSON.parse(text(raw.bytes))
      } catch {
        throw new Error(`${at.path}: fieldsV1 is not JSON`)
      }
    }
  }
}

const isZero = (value: unknown) => value === "" || value === 0 || value === false || value === null

const mapEntry = (value: Scalar, e: Entry, at: Decoding): [string, unknown] => {
  const pair = decode(e.bytes, { 1: { name: "key", type: "string", always: true }, 2: { name: "value", type: value, always: true } }, at)
  return [String(pair.key), pair.value]
}

// One field's JSON value from its occurrences on the wire (the last wins), or undefined to omit it.
const fieldValue = (field: Field, found: ReadonlyArray<Entry>, at: Decoding): unknown => {
  const absent = field.always ? null : undefined
  const last = found[found.length - 1]
  const inner = { ...at, path: at.path === "" ? field.name : `${at.path}.${field.name}` }
  switch (field.type) {
    case "strings":
      return found.length === 0 ? absent : found.map((e) => scalar("string", e, inner))
    case "int64s":
      return found.length === 0 ? absent : found.map((e) => scalar("int64", e, inner))
    case "messages":
      return found.length === 0 ? absent : found.map((e) => decode(e.bytes, field.message, inner))
    case "map":
      return found.length === 0 ? absent : Object.fromEntries(found.map((e) => mapEntry(field.value, e, inner)))
    case "message":
      if (last === undefined) return absent
      if (last.wire !== 2) throw new Error(`${inner.path}: wire type ${last.wire} for a message`)
      return decode(last.bytes, field.message, inner)
    default: {
      if (last === undefined) return field.always ? (field.pointer || structLike.has(field.type) ? null : zero[field.type]) : undefined
      const value = scalar(field.type, last, inner)
      // Go writes every non-pointer field; its JSON drops the zero ones tagged omitempty (not structs).
      return field.pointer || field.always || structLike.has(field.type) || !isZero(value) ? value : undefined
    }
  }
}

const decode = (bytes: Uint8Array, message: Message, at: Decoding): Record<string, unknown> => {
  const found = new Map<number, Array<Entry>>()
  for (const e of entries(bytes)) {
    if (message[e.field] === undefined) {
      if (at.strict) throw new Error(`field ${e.field} of ${at.path === "" ? "the object" : at.path} is not supported`)
      continue
    }
    found.set(e.field, [...(found.get(e.field) ?? []), e])
  }
  const out: Record<string, unknown> = {}
  for (const [number, field] of Object.entries(message) as Array<[string, Field]>) {
    const occurrences = found.get(Number(number)) ?? []
    if (field.inline === true && field.type === "message") {
      const last = occurrences[occurrences.length - 1]
      if (last !== undefined) Object.assign(out, decode(last.bytes, field.message, at))
      continue
    }
    const value = fieldValue(field, occurrences, at)
    if (value !== undefined) out[field.name] = value
  }
  return out
}

const envelope: Message = {
  1: { name: "typeMeta", type: "message", message: { 1: { name: "apiVersion", type: "string" }, 2: { name: "kind", type: "string" } } },
  2: { name: "raw", type: "bytes" }
}

/**
 * Decodes a protobuf request body into the JSON object it stands for, or explains why it cannot.
 *
 * @example
 * import * as Protobuf from "./Protobuf.ts"
 * Protobuf.decodeObject(new Uint8Array([1, 2, 3])) // { _tag: "Failure", message: "not a Kubernetes protobuf envelope" }
 */
export const decodeObject = (
  body: Uint8Array
): { readonly _tag: "Success"; readonly object: Record<string, unknown> } | { readonly _tag: "Failure"; readonly message: string } => {
  if (body.length < 4 || magic.some((b, i) => body[i] !== b)) return { _tag: "Failure", message: "not a Kubernetes protobuf envelope" }
  try {
    const unknown = decode(body.subarray(4), envelope, { strict: false, path: "" })
    const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string }
    const key = `${typeMeta.apiVersion}/${typeMeta.kind}`
    const strict = typeMeta.kind === "DeleteOptions" ? ProtobufKinds.deleteOptions : ProtobufKinds.kinds[key]
    const message = strict ?? lenientKinds[key]
    if (message === undefined) {
      return { _tag: "Failure", message: `protobuf bodies of ${key} are not supported (use kubectl create -f or apply -f)` }
    }
    const raw = Buffer.from(String(unknown.raw ?? ""), "base64")
    const object = decode(raw, message, { strict: strict !== undefined, path: "" })
    return { _tag: "Success", object: { kind: typeMeta.kind, apiVersion: typeMeta.apiVersion, ...object } }
  } catch (error) {
    return { _tag: "Failure", message: `malformed protobuf body: ${error instanceof Error ? error.message : String(error)}` }
  }
}

const varintBytes = (value: number): Array<number> => {
  const out: Array<number> = []
  for (let v = value; ; v = Math.floor(v / 128)) {
    if (v < 128) return [...out, v]
    out.push((v % 128) | 0x80)
  }
}

/**
 * Encodes length-delimited fields (strings and nested messages), in the order given: enough for
 * the documents the server serves as protobuf.
 *
 * @example
 * import * as Protobuf from "./Protobuf.ts"
 * Protobuf.encode([[1, "2.0"]]) // Uint8Array [10, 3, 50, 46, 48]
 */
export const encode = (fields: ReadonlyArray<readonly [number, string | Uint8Array]>): Uint8Array =>
  new Uint8Array(fields.flatMap(([number, value]) => {
    const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value
    return [...varintBytes(number * 8 + 2), ...varintBytes(bytes.length), ...bytes]
  }))
