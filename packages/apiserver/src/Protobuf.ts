/**
 * Just enough of Kubernetes' protobuf encoding to read the request bodies of kubectl's generator
 * commands (`kubectl create namespace|configmap|secret|serviceaccount`), which send protobuf for
 * built-in kinds: the `k8s\0` envelope (runtime.Unknown) and those kinds' messages. Every response
 * stays JSON, and other kinds sent as protobuf get 415.
 */

type Field =
  | { readonly name: string; readonly type: "string" | "bytes" | "int64" | "bool" | "time" }
  | { readonly name: string; readonly type: "strings" }
  | { readonly name: string; readonly type: "message" | "messages"; readonly message: Message }
  | { readonly name: string; readonly type: "map"; readonly value: "string" | "bytes" }

type Message = Readonly<Record<number, Field>>

const ownerReference: Message = {
  1: { name: "kind", type: "string" },
  3: { name: "name", type: "string" },
  4: { name: "uid", type: "string" },
  5: { name: "apiVersion", type: "string" },
  6: { name: "controller", type: "bool" },
  7: { name: "blockOwnerDeletion", type: "bool" }
}

const objectMeta: Message = {
  1: { name: "name", type: "string" },
  2: { name: "generateName", type: "string" },
  3: { name: "namespace", type: "string" },
  5: { name: "uid", type: "string" },
  6: { name: "resourceVersion", type: "string" },
  7: { name: "generation", type: "int64" },
  8: { name: "creationTimestamp", type: "time" },
  11: { name: "labels", type: "map", value: "string" },
  12: { name: "annotations", type: "map", value: "string" },
  13: { name: "ownerReferences", type: "messages", message: ownerReference },
  14: { name: "finalizers", type: "strings" }
}

const reference: Message = { 1: { name: "kind", type: "string" }, 2: { name: "namespace", type: "string" }, 3: { name: "name", type: "string" } }

const kinds: Readonly<Record<string, Message>> = {
  "v1/Namespace": {
    1: { name: "metadata", type: "message", message: objectMeta },
    2: { name: "spec", type: "message", message: { 1: { name: "finalizers", type: "strings" } } }
  },
  "v1/ConfigMap": {
    1: { name: "metadata", type: "message", message: objectMeta },
    2: { name: "data", type: "map", value: "string" },
    3: { name: "binaryData", type: "map", value: "bytes" },
    4: { name: "immutable", type: "bool" }
  },
  "v1/Secret": {
    1: { name: "metadata", type: "message", message: objectMeta },
    2: { name: "data", type: "map", value: "bytes" },
    3: { name: "type", type: "string" },
    4: { name: "stringData", type: "map", value: "string" },
    5: { name: "immutable", type: "bool" }
  },
  "v1/ServiceAccount": {
    1: { name: "metadata", type: "message", message: objectMeta },
    2: { name: "secrets", type: "messages", message: reference },
    3: { name: "imagePullSecrets", type: "messages", message: { 1: { name: "name", type: "string" } } },
    4: { name: "automountServiceAccountToken", type: "bool" }
  }
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

const decode = (bytes: Uint8Array, message: Message): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const e of entries(bytes)) {
    const field = message[e.field]
    if (field === undefined) continue
    switch (field.type) {
      case "string":
        out[field.name] = text(e.bytes)
        break
      case "bytes":
        out[field.name] = Buffer.from(e.bytes).toString("base64")
        break
      case "int64":
        out[field.name] = Number(e.varint)
        break
      case "bool":
        out[field.name] = e.varint !== 0n
        break
      case "time": {
        const t = decode(e.bytes, { 1: { name: "seconds", type: "int64" } })
        out[field.name] = new Date(Number(t.seconds ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")
        break
      }
      case "strings":
        out[field.name] = [...((out[field.name] as Array<string> | undefined) ?? []), text(e.bytes)]
        break
      case "message":
        out[field.name] = decode(e.bytes, field.message)
        break
      case "messages":
        out[field.name] = [...((out[field.name] as Array<unknown> | undefined) ?? []), decode(e.bytes, field.message)]
        break
      case "map": {
        const pair = decode(e.bytes, { 1: { name: "key", type: "string" }, 2: { name: "value", type: field.value } })
        out[field.name] = { ...(out[field.name] as object | undefined), [String(pair.key ?? "")]: pair.value ?? "" }
      }
    }
  }
  return out
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
    const unknown = decode(body.subarray(4), {
      1: { name: "typeMeta", type: "message", message: { 1: { name: "apiVersion", type: "string" }, 2: { name: "kind", type: "string" } } },
      2: { name: "raw", type: "bytes" }
    })
    const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string }
    const message = kinds[`${typeMeta.apiVersion}/${typeMeta.kind}`]
    if (message === undefined) {
      return { _tag: "Failure", message: `protobuf bodies of ${typeMeta.apiVersion}/${typeMeta.kind} are not supported (use kubectl create -f or apply -f)` }
    }
    const raw = Buffer.from(String(unknown.raw ?? ""), "base64")
    return { _tag: "Success", object: { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...decode(raw, message) } }
  } catch (error) {
    return { _tag: "Failure", message: `malformed protobuf body: ${error instanceof Error ? error.message : String(error)}` }
  }
}
