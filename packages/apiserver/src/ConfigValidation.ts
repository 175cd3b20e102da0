/**
 * 1.32's validation of Secrets and ConfigMaps: keys that are valid config keys, the keys each
 * `kubernetes.io/*` Secret type requires, the 1 MiB size limit, and `immutable` objects whose
 * data may no longer change.
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const maxSize = 1024 * 1024

const keys = (data: Json, field: string): Causes =>
  Object.keys(data).flatMap((k) => NameRules.configKey(k).map((m) => FieldErrors.invalid(`${field}[${k}]`, FieldErrors.quote(k), m)))

// The keys each kubernetes.io Secret type must carry in `data`.
const requiredKeys: Readonly<Record<string, ReadonlyArray<string>>> = {
  "kubernetes.io/dockercfg": [".dockercfg"],
  "kubernetes.io/dockerconfigjson": [".dockerconfigjson"],
  "kubernetes.io/ssh-auth": ["ssh-privatekey"],
  "kubernetes.io/tls": ["tls.crt", "tls.key"]
}

const decoded = (value: unknown): string => Buffer.from(String(value ?? ""), "base64").toString("utf8")

const dockerJson = (data: Json, key: string): Causes => {
  if (data[key] === undefined) return []
  try {
    JSON.parse(decoded(data[key]))
    return []
  } catch (e) {
    return [FieldErrors.invalid(`data[${key}]`, `"<secret contents redacted>"`, (e as Error).message)]
  }
}

const secretType = (object: Json): Causes => {
  const type = String(object.type ?? "")
  const data = KubeObject.record(object.data)
  if (type === "kubernetes.io/service-account-token") {
    const annotations = KubeObject.record(KubeObject.meta(object).annotations)
    return annotations["kubernetes.io/service-account.name"] === undefined
      ? [FieldErrors.required("metadata.annotations[kubernetes.io/service-account.name]")]
      : []
  }
  if (type === "kubernetes.io/basic-auth") {
    return data.username === undefined && data.password === undefined
      ? [FieldErrors.required("data[username]"), FieldErrors.required("data[password]")]
      : []
  }
  const missing = (requiredKeys[type] ?? []).filter((k) => data[k] === undefined).map((k) => FieldErrors.required(`data[${k}]`))
  return [...missing, ...(type === "kubernetes.io/dockerconfigjson" ? dockerJson(data, ".dockerconfigjson") : []), ...(type === "kubernetes.io/dockercfg" ? dockerJson(data, ".dockercfg") : [])]
}

const size = (values: ReadonlyArray<unknown>, decode: boolean): number =>
  values.reduce<number>((n, v) => n + (decode ? Buffer.from(String(v ?? ""), "base64").length : Buffer.byteLength(String(v ?? ""))), 0)

const immutableData = (object: Json, old: Json | undefined, fields: ReadonlyArray<string>): Causes => {
  if (old?.immutable !== true) return []
  return [
    ...(object.immutable === true ? [] : [FieldErrors.forbidden("immutable", "field is immutable when `immutable` is set")]),
    ...fields.filter((f) => !KubeObject.equals(object[f] ?? {}, old[f] ?? {})).map((f) => FieldErrors.forbidden(f, "field is immutable when `immutable` is set"))
  ]
}

/**
 * A Secret: keys, type-specific keys, size; on update its type, and its data once immutable.
 *
 * @example
 * import * as ConfigValidation from "./ConfigValidation.ts"
 * ConfigValidation.secret({ type: "kubernetes.io/tls", data: { "tls.crt": "eA==" } }, undefined).map((c) => c.field) // ["data[tls.key]"]
 */
export const secret = (object: Json, old: Json | undefined): Causes => {
  const data = KubeObject.record(object.data)
  return [
    ...keys(data, "data"),
    ...secretType(object),
    ...(size(Object.values(data), true) > maxSize ? [FieldErrors.tooLong("data", maxSize)] : []),
    ...(old !== undefined && old.type !== object.type ? [FieldErrors.invalid("type", FieldErrors.quote(object.type), "field is immutable")] : []),
    ...immutableData(object, old, ["data"])
  ]
}

/**
 * A ConfigMap: keys of data and binaryData (not both the same), size; data frozen once immutable.
 *
 * @example
 * import * as ConfigValidation from "./ConfigValidation.ts"
 * ConfigValidation.configMap({ data: { "a b": "1" } }, undefined)[0].field // "data[a b]"
 */
export const configMap = (object: Json, old: Json | undefined): Causes => {
  const data = KubeObject.record(object.data)
  const binary = KubeObject.record(object.binaryData)
  const both = Object.keys(binary).filter((k) => Object.hasOwn(data, k))
  const total = size(Object.values(data), false) + size(Object.values(binary), true)
  return [
    ...keys(data, "data"),
    ...keys(binary, "binaryData"),
    ...both.map((k) => FieldErrors.invalid(`binaryData[${k}]`, FieldErrors.quote(k), "duplicate of key present in data")),
    ...(total > maxSize ? [{ reason: "FieldValueTooLong", message: `Too long: must have at most ${maxSize} bytes`, field: "" }] : []),
    ...immutableData(object, old, ["data", "binaryData"])
  ]
}
