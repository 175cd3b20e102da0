/**
 * Custom resource versions converted by a CRD's conversion webhook (`spec.conversion.strategy:
 * Webhook`), as kube-apiserver 1.32 converts them: the objects not already in the desired version
 * go in one ConversionReview v1; the answer must be a successful review with as many objects, each
 * in the desired version and of the same kind, name, namespace and uid; of their metadata only
 * labels and annotations are taken. Any other answer, or none, fails the request with
 * `conversion webhook for <group/version, Kind=...> failed: ...`.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as Status from "./Status.ts"
import * as WebhookClient from "./WebhookClient.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** Converts objects (of one kind) to `apiVersion`. */
export type Converter = (
  objects: ReadonlyArray<KubeObject.KubeObject>,
  apiVersion: string
) => Effect.Effect<ReadonlyArray<KubeObject.KubeObject>, Status.ApiError>

const { gvkOf } = WebhookClient

const sameMeta = (original: KubeObject.KubeObject, converted: KubeObject.KubeObject): string | undefined => {
  const a = KubeObject.meta(original)
  const b = KubeObject.meta(converted)
  if (original.kind !== converted.kind) return `must have the same kind: ${String(original.kind)} != ${String(converted.kind)}`
  if ((a.name ?? "") !== (b.name ?? "")) return `must have the same name: ${a.name ?? ""} != ${b.name ?? ""}`
  if ((a.namespace ?? "") !== (b.namespace ?? "")) return `must have the same namespace: ${a.namespace ?? ""} != ${b.namespace ?? ""}`
  if ((a.uid ?? "") !== (b.uid ?? "")) return `must have the same UID: ${a.uid ?? ""} != ${b.uid ?? ""}`
  return undefined
}

// restoreObjectMeta: the webhook may change labels and annotations, nothing else of metadata.
const restoreMeta = (original: KubeObject.KubeObject, converted: KubeObject.KubeObject): KubeObject.KubeObject => {
  const { labels, annotations } = KubeObject.meta(converted)
  const { labels: _l, annotations: _a, ...kept } = KubeObject.meta(original)
  return {
    ...converted,
    metadata: { ...kept, ...(labels === undefined ? {} : { labels }), ...(annotations === undefined ? {} : { annotations }) }
  }
}

const verify = (uid: string, review: unknown, sent: ReadonlyArray<KubeObject.KubeObject>, apiVersion: string): ReadonlyArray<KubeObject.KubeObject> | string => {
  const r = KubeObject.record(review)
  if (r.apiVersion !== "apiextensions.k8s.io/v1" || r.kind !== "ConversionReview") {
    return `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${gvkOf(r)}`
  }
  if (!KubeObject.isObject(r.response)) return "no response provided"
  const response = r.response
  if (response.uid !== uid) return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? "")}`
  const result = KubeObject.record(response.result)
  if (result.status !== "Success") {
    return `response.result.status was '${String(result.status ?? "")}', not 'Success'${typeof result.message === "string" && result.message !== "" ? `: ${result.message}` : ""}`
  }
  const converted = KubeObject.records(response.convertedObjects)
  if (converted.length !== sent.length) return `returned ${converted.length} objects, expected ${sent.length}`
  const out: Array<KubeObject.KubeObject> = []
  for (const [i, object] of converted.entries()) {
    if (object.apiVersion !== apiVersion) {
      return `returned invalid converted object at index ${i}: invalid groupVersion (expected ${apiVersion}, received ${String(object.apiVersion ?? "")})`
    }
    const wrongMeta = sameMeta(sent[i]!, object)
    if (wrongMeta !== undefined) return `returned invalid metadata in object at index ${i}: ${wrongMeta}`
    out.push(restoreMeta(sent[i]!, object))
  }
  return out
}

/**
 * The converter of a CRD whose conversion strategy is Webhook, or undefined (strategy None).
 *
 * @example
 * import * as Conversion from "./Conversion.ts"
 * Conversion.webhook({ spec: { conversion: { strategy: "None" } } }) // undefined
 */
export const webhook = (crd: KubeObject.KubeObject, resolve: WebhookClient.Resolver = WebhookClient.noServices): Converter | undefined => {
  const conversion = KubeObject.record(KubeObject.record(crd.spec).conversion)
  if (conversion.strategy !== "Webhook") return undefined
  const clientConfig = KubeObject.record(KubeObject.record(conversion.webhook).clientConfig)
  return (objects, apiVersion) =>
    Effect.gen(function*() {
      const sending = objects.filter((o) => o.apiVersion !== apiVersion)
      if (sending.length === 0) return objects
      const failed = (reason: string) => Status.unknown(`conversion webhook for ${gvkOf(sending[0]!)} failed: ${reason}`)
      const uid = randomUUID()
      const body = JSON.stringify({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "ConversionReview",
        request: { uid, desiredAPIVersion: apiVersion, objects: sending }
      })
      const review = yield* Effect.mapError(WebhookClient.post(clientConfig, 30, body, resolve), (reason) => failed(reason.replace(/^failed to call webhook: /, "")))
      const converted = verify(uid, review, sending, apiVersion)
      if (typeof converted === "string") return yield* failed(converted)
      let next = 0
      return objects.map((o) => o.apiVersion !== apiVersion ? converted[next++]! : o)
    })
}
