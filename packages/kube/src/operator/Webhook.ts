/**
 * Admission webhooks as values: a validating webhook answers a typed request with `allow` or
 * `deny`; a mutating webhook returns the object as it should be, and the JSON patch the API server
 * needs is computed from what changed. An operator serves them over HTTPS (`Operator.make`'s
 * `webhooks`), `kubefx manifests` registers them with the CA bundle, and the embedded API server
 * calls them as kube-apiserver does.
 *
 * A handler that fails answers "not allowed" with code 500 and the error's message; an object the
 * resource's Schema cannot decode answers 400; neither ever reaches the handler's caller as a
 * defect.
 *
 * @since 0.1.0
 */
import { Cause, Effect, JsonPatch, Schema, type Scope } from "effect"
import type * as Builtins from "../client/Builtins.ts"
import * as Crd from "../client/Crd.ts"
import * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import type * as ObjectMeta from "../client/ObjectMeta.ts"
import * as Resource from "../client/Resource.ts"

export type Operation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT"

/** One admission request, its objects decoded with the webhook's resource. */
export interface Request<A> {
  readonly uid: string
  readonly operation: Operation
  readonly name: string
  readonly namespace: string | undefined
  /** `status` for a write of the status subresource. */
  readonly subResource: string | undefined
  readonly dryRun: boolean
  readonly userInfo: { readonly username: string; readonly groups: ReadonlyArray<string> }
  /** The object being written; undefined for deletes. */
  readonly object: A | undefined
  /** The object before the write; undefined for creates. */
  readonly oldObject: A | undefined
}

/** A validating webhook's answer. */
export type Verdict =
  | { readonly _tag: "Allowed"; readonly warnings: ReadonlyArray<string> }
  | { readonly _tag: "Denied"; readonly message: string; readonly code: number; readonly reason: string; readonly warnings: ReadonlyArray<string> }

/**
 * Lets the request through, with warnings `kubectl` prints.
 *
 * @example
 * import { Webhook } from "@kubefx/kube"
 * Webhook.allow({ warnings: ["spec.size is deprecated"] })
 */
export const allow = (options: { readonly warnings?: ReadonlyArray<string> | undefined } = {}): Verdict => ({
  _tag: "Allowed",
  warnings: options.warnings ?? []
})

/**
 * Refuses the request: the client sees `admission webhook "<name>" denied the request: <message>`.
 *
 * @example
 * import { Webhook } from "@kubefx/kube"
 * Webhook.deny("size must be even", { code: 422, reason: "Invalid" })
 */
export const deny = (
  message: string,
  options: { readonly code?: number | undefined; readonly reason?: string | undefined; readonly warnings?: ReadonlyArray<string> | undefined } = {}
): Verdict => ({ _tag: "Denied", message, code: options.code ?? 403, reason: options.reason ?? "Forbidden", warnings: options.warnings ?? [] })

/** Where and how the API server calls a webhook (the fields of its configuration). */
export interface Registration {
  /** The webhook's name in its configuration, a qualified name such as `vwidget.demo.kubefx.dev`. */
  readonly name: string
  readonly kind: "Validating" | "Mutating"
  /** The HTTPS path the operator serves it on. */
  readonly path: `/${string}`
  readonly resource: Resource.Resource
  readonly operations: ReadonlyArray<Operation>
  /** Subresources besides the object itself, e.g. `["status"]`. */
  readonly subresources: ReadonlyArray<string>
  readonly failurePolicy: "Fail" | "Ignore"
  readonly timeoutSeconds: number
  readonly namespaceSelector: Builtins.LabelSelector | undefined
  readonly objectSelector: Builtins.LabelSelector | undefined
}

/** A webhook, declared; `R` is what its handler needs. */
export interface Webhook<R = never> extends Registration {
  readonly _tag: "Webhook"
  /** Answers an AdmissionReview v1 (JSON) with one; never fails. */
  readonly review: (review: unknown) => Effect.Effect<unknown, never, R>
}

interface Common<A extends ObjectMeta.KubeObject> {
  readonly name: string
  readonly resource: Resource.Resource<A>
  /** Default `/validate-<plural>` or `/mutate-<plural>`. */
  readonly path?: `/${string}` | undefined
  /** Default CREATE and UPDATE. */
  readonly operations?: ReadonlyArray<Operation> | undefined
  readonly subresources?: ReadonlyArray<string> | undefined
  /** Default Fail: a webhook that cannot be reached refuses the write. */
  readonly failurePolicy?: "Fail" | "Ignore" | undefined
  /** Default 10. */
  readonly timeoutSeconds?: number | undefined
  readonly namespaceSelector?: Builtins.LabelSelector | undefined
  readonly objectSelector?: Builtins.LabelSelector | undefined
}

const registration = <A extends ObjectMeta.KubeObject>(kind: Registration["kind"], options: Common<A>): Registration => ({
  name: options.name,
  kind,
  path: options.path ?? `/${kind === "Validating" ? "validate" : "mutate"}-${options.resource.plural}`,
  resource: options.resource,
  operations: options.operations ?? ["CREATE", "UPDATE"],
  subresources: options.subresources ?? [],
  failurePolicy: options.failurePolicy ?? "Fail",
  timeoutSeconds: options.timeoutSeconds ?? 10,
  namespaceSelector: options.namespaceSelector,
  objectSelector: options.objectSelector
})

// ---------------------------------------------------------------------------------------------
// AdmissionReview
// ---------------------------------------------------------------------------------------------

const AdmissionRequest = Schema.Struct({
  uid: Schema.String,
  operation: Schema.Literals(["CREATE", "UPDATE", "DELETE", "CONNECT"]),
  name: Schema.optionalKey(Schema.String),
  namespace: Schema.optionalKey(Schema.String),
  subResource: Schema.optionalKey(Schema.String),
  dryRun: Schema.optionalKey(Schema.Boolean),
  userInfo: Schema.optionalKey(Schema.Struct({
    username: Schema.optionalKey(Schema.String),
    groups: Schema.optionalKey(Schema.Array(Schema.String))
  })),
  object: Schema.optionalKey(Schema.NullOr(Schema.Unknown)),
  oldObject: Schema.optionalKey(Schema.NullOr(Schema.Unknown))
})

const AdmissionReview = Schema.Struct({ request: AdmissionRequest })
type AdmissionRequest = typeof AdmissionRequest.Type

const response = (uid: string, fields: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  response: { uid, ...fields }
})

const errored = (uid: string, code: number, message: string) =>
  response(uid, { allowed: false, status: { code, message } })

const messageOf = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
}

const decodeObjects = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, request: AdmissionRequest) =>
  Effect.gen(function*() {
    const decodeOne = (value: unknown) => value === undefined || value === null ? Effect.succeed(undefined) : Resource.decode(resource, value)
    const typed: Request<A> = {
      uid: request.uid,
      operation: request.operation,
      name: request.name ?? "",
      namespace: request.namespace,
      subResource: request.subResource,
      dryRun: request.dryRun === true,
      userInfo: { username: request.userInfo?.username ?? "", groups: request.userInfo?.groups ?? [] },
      object: yield* decodeOne(request.object),
      oldObject: yield* decodeOne(request.oldObject)
    }
    return typed
  })

/** Parses the review and decodes its objects; answers 400 for what does not decode. */
const handle = <A extends ObjectMeta.KubeObject, R>(
  resource: Resource.Resource<A>,
  answer: (request: Request<A>, raw: AdmissionRequest) => Effect.Effect<unknown, unknown, R>
) =>
(review: unknown): Effect.Effect<unknown, never, R> =>
  Effect.gen(function*() {
    const parsed = yield* Effect.result(Schema.decodeUnknownEffect(AdmissionReview)(review))
    if (parsed._tag === "Failure") return errored("", 400, `invalid AdmissionReview: ${parsed.failure.message}`)
    const raw = parsed.success.request
    const decoded = yield* Effect.result(decodeObjects(resource, raw))
    if (decoded._tag === "Failure") return errored(raw.uid, 400, decoded.failure.message)
    return yield* answer(decoded.success, raw).pipe(
      Effect.catchCause((cause) => Effect.succeed(errored(raw.uid, 500, messageOf(cause))))
    )
  })

/**
 * A validating webhook: the handler sees the typed request and answers `allow()` or `deny(...)`.
 *
 * @example
 * import { Effect } from "effect"
 * import { Webhook } from "@kubefx/kube"
 * declare const Widget: import("@kubefx/kube").Resource.Resource<{ metadata: { name?: string }; spec: { size: number } }>
 * export const evenSizes = Webhook.validating({
 *   name: "vwidget.demo.kubefx.dev",
 *   resource: Widget,
 *   validate: ({ object }) =>
 *     Effect.succeed(object !== undefined && object.spec.size % 2 === 1 ? Webhook.deny("size must be even") : Webhook.allow())
 * })
 */
export const validating = <A extends ObjectMeta.KubeObject, E = never, R = never>(
  options: Common<A> & { readonly validate: (request: Request<A>) => Effect.Effect<Verdict, E, R> }
): Webhook<R> => ({
  _tag: "Webhook",
  ...registration("Validating", options),
  review: handle(options.resource, (request) =>
    Effect.map(options.validate(request), (verdict) =>
      verdict._tag === "Allowed"
        ? response(request.uid, { allowed: true, ...(verdict.warnings.length > 0 ? { warnings: verdict.warnings } : {}) })
        : response(request.uid, {
          allowed: false,
          status: { code: verdict.code, reason: verdict.reason, message: verdict.message },
          ...(verdict.warnings.length > 0 ? { warnings: verdict.warnings } : {})
        })))
})

/**
 * A mutating webhook: the handler returns the object as it should be stored; the answer carries
 * the JSON patch from the object as sent to the one returned (no patch when nothing changed).
 * Deletes are let through without calling the handler (there is no object to change).
 *
 * @example
 * import { Effect } from "effect"
 * import { Webhook } from "@kubefx/kube"
 * declare const Widget: import("@kubefx/kube").Resource.Resource<{ metadata: { name?: string; labels?: Record<string, string> }; spec: { size: number } }>
 * export const labelled = Webhook.mutating({
 *   name: "mwidget.demo.kubefx.dev",
 *   resource: Widget,
 *   mutate: (widget) => Effect.succeed({ ...widget, metadata: { ...widget.metadata, labels: { ...widget.metadata.labels, sized: "yes" } } })
 * })
 */
export const mutating = <A extends ObjectMeta.KubeObject, E = never, R = never>(
  options: Common<A> & { readonly mutate: (object: A, request: Request<A>) => Effect.Effect<A, E, R> }
): Webhook<R> => ({
  _tag: "Webhook",
  ...registration("Mutating", options),
  review: handle(options.resource, (request) =>
    Effect.gen(function*() {
      if (request.object === undefined) return response(request.uid, { allowed: true })
      const before = yield* Resource.encode(options.resource, request.object)
      const after = yield* Resource.encode(options.resource, yield* options.mutate(request.object, request))
      const patch = JsonPatch.get(before as Schema.Json, after as Schema.Json)
      return patch.length === 0
        ? response(request.uid, { allowed: true })
        : response(request.uid, { allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") })
    }))
})

/** The conversion webhook of custom resources with several versions; made by {@link conversion}. */
export interface Conversion {
  readonly _tag: "Conversion"
  readonly path: `/${string}`
  readonly resources: ReadonlyArray<Resource.Resource>
  /** Answers a ConversionReview v1 (JSON) with one; never fails. */
  readonly review: (review: unknown) => Effect.Effect<unknown>
}

const ConversionReview = Schema.Struct({
  request: Schema.Struct({
    uid: Schema.String,
    desiredAPIVersion: Schema.String,
    objects: Schema.Array(Schema.Record(Schema.String, Schema.Unknown))
  })
})

const converted = (uid: string, result: Record<string, unknown>) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "ConversionReview",
  response: { uid, ...result }
})

/** Each served version's `{ spec, status }` codec, whose type is the hub's parts: made once per resource. */
const codecsOf = (resource: Resource.Resource, custom: Resource.CustomDefinition): ReadonlyMap<string, Schema.Codec<unknown, unknown>> =>
  new Map([
    [resource.version, Schema.Struct({ spec: custom.spec, status: Schema.optionalKey(custom.status ?? Schema.Unknown) }) as unknown as Schema.Codec<unknown, unknown>],
    ...custom.versions.map((v) => [v.name, v.parts] as const)
  ])

/** Converts one object's spec and status from its version to `to`, through the hub. */
const convertOne = (resource: Resource.Resource, codecs: ReadonlyMap<string, Schema.Codec<unknown, unknown>>, object: Record<string, unknown>, to: string) =>
  Effect.gen(function*() {
    const from = String(object.apiVersion ?? "").split("/")[1] ?? ""
    if (from === to) return object
    const codecOf = (version: string) => {
      const codec = codecs.get(version)
      return codec === undefined ? Effect.fail(new Error(`${resource.kind} has no version ${version}`)) : Effect.succeed(codec)
    }
    const parts = { spec: object.spec, ...(object.status === undefined ? {} : { status: object.status }) }
    const hub = yield* Schema.decodeUnknownEffect(yield* codecOf(from))(parts)
    const out = (yield* Schema.encodeUnknownEffect(yield* codecOf(to))(hub)) as { readonly spec: unknown; readonly status?: unknown }
    const { status: _, ...rest } = object
    return { ...rest, apiVersion: `${resource.group}/${to}`, spec: out.spec, ...(out.status === undefined ? {} : { status: out.status }) }
  })

/**
 * The conversion webhook for custom resources with several versions (`Resource.withVersions`):
 * served at `/convert`, it converts each object through the hub version with the versions' Schema
 * transformations. An object that does not decode, or of a kind it does not know, fails the whole
 * review with its message (the API server then fails the request).
 *
 * @example
 * import { Webhook } from "@kubefx/kube"
 * declare const Widget: import("@kubefx/kube").Resource.Resource
 * export const conversion = Webhook.conversion(Widget)
 */
export const conversion = (...resources: ReadonlyArray<Resource.Resource>): Conversion => {
  const converters = resources.flatMap((resource) => resource.custom === undefined ? [] : [{ resource, codecs: codecsOf(resource, resource.custom) }])
  return {
    _tag: "Conversion",
    path: "/convert",
    resources,
    review: (review) =>
      Effect.gen(function*() {
        const parsed = yield* Effect.result(Schema.decodeUnknownEffect(ConversionReview)(review))
        if (parsed._tag === "Failure") return converted("", { result: { status: "Failure", message: `invalid ConversionReview: ${parsed.failure.message}` } })
        const request = parsed.success.request
        const [group, to = ""] = request.desiredAPIVersion.split("/")
        return yield* Effect.forEach(request.objects, (object) => {
          const converter = converters.find((c) => c.resource.group === group && c.resource.kind === object.kind)
          return converter === undefined
            ? Effect.fail(new Error(`no conversion for ${String(object.kind)} in ${group}`))
            : convertOne(converter.resource, converter.codecs, object, to)
        }).pipe(
          Effect.map((objects) => converted(request.uid, { result: { status: "Success" }, convertedObjects: objects })),
          // A conversion that fails or throws is the review's failure, with its message.
          Effect.catchCause((cause) => Effect.succeed(converted(request.uid, { result: { status: "Failure", message: messageOf(cause) } })))
        )
      })
  }
}

/**
 * Whether a value (a module's export, say) is a webhook made by `validating` or `mutating`.
 *
 * @example
 * import { Webhook } from "@kubefx/kube"
 * Webhook.isWebhook({}) // false
 */
export const isWebhook = (value: unknown): value is Webhook<unknown> =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "Webhook" &&
  typeof (value as { review?: unknown }).review === "function"

/**
 * Whether a value is a conversion webhook made by `conversion`.
 *
 * @example
 * import { Webhook } from "@kubefx/kube"
 * Webhook.isConversion({}) // false
 */
export const isConversion = (value: unknown): value is Conversion =>
  typeof value === "object" && value !== null && (value as { _tag?: unknown })._tag === "Conversion" &&
  typeof (value as { review?: unknown }).review === "function"

/** Where the API server reaches the operator's webhook server. */
export type ClientConfig =
  | { readonly _tag: "Url"; readonly url: string }
  | { readonly _tag: "Service"; readonly name: string; readonly namespace: string; readonly port: number }

const webhookEntry = (hook: Registration, client: ClientConfig, caBundle: string) => ({
  name: hook.name,
  admissionReviewVersions: ["v1"],
  sideEffects: "None",
  failurePolicy: hook.failurePolicy,
  timeoutSeconds: hook.timeoutSeconds,
  matchPolicy: "Equivalent",
  clientConfig: {
    ...(client._tag === "Url"
      ? { url: `${client.url}${hook.path}` }
      : { service: { name: client.name, namespace: client.namespace, port: client.port, path: hook.path } }),
    caBundle
  },
  rules: [{
    operations: hook.operations,
    apiGroups: [hook.resource.group],
    apiVersions: [hook.resource.version],
    resources: [hook.resource.plural, ...hook.subresources.map((s) => `${hook.resource.plural}/${s}`)],
    scope: hook.resource.namespaced ? "Namespaced" : "Cluster"
  }],
  ...(hook.namespaceSelector === undefined ? {} : { namespaceSelector: hook.namespaceSelector }),
  ...(hook.objectSelector === undefined ? {} : { objectSelector: hook.objectSelector })
})

/**
 * The Mutating- and ValidatingWebhookConfiguration (each only when it has webhooks) that register
 * these webhooks, named `<name>`, trusting `caBundle` (base64 PEM).
 *
 * @example
 * import { Webhook } from "@kubefx/kube"
 * declare const hooks: ReadonlyArray<Webhook.Webhook<unknown>>
 * const configurations = Webhook.configurations("widgets-operator", hooks, { _tag: "Url", url: "https://127.0.0.1:9443" }, "LS0t...")
 */
export const configurations = (
  name: string,
  hooks: ReadonlyArray<Registration>,
  client: ClientConfig,
  caBundle: string
): ReadonlyArray<{ readonly apiVersion: string; readonly kind: string; readonly metadata: { readonly name: string }; readonly webhooks: ReadonlyArray<unknown> }> =>
  (["Mutating", "Validating"] as const).flatMap((kind) => {
    const ofKind = hooks.filter((hook) => hook.kind === kind)
    return ofKind.length === 0 ? [] : [{
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: `${kind}WebhookConfiguration`,
      metadata: { name },
      webhooks: ofKind.map((hook) => webhookEntry(hook, client, caBundle))
    }]
  })

const configurationPaths: Readonly<Record<string, string>> = {
  MutatingWebhookConfiguration: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
  ValidatingWebhookConfiguration: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
}

/**
 * Registers webhooks served at `url` with the cluster for the current scope: their
 * configurations, named `name` (replacing earlier ones of that name, removed when the scope
 * closes), and the conversion webhook in the CRDs of the resources it converts. For development
 * and tests against a server that reaches `url`; in a cluster, `kubefx manifests` registers them.
 *
 * @example
 * import { Effect } from "effect"
 * import { Webhook } from "@kubefx/kube"
 * declare const hooks: ReadonlyArray<Webhook.Webhook | Webhook.Conversion>
 * const registered = Webhook.register("my-operator", hooks, { url: "https://127.0.0.1:9443", caBundle: "LS0t..." })
 */
export const register = (
  name: string,
  hooks: ReadonlyArray<Webhook<unknown> | Conversion>,
  server: { readonly url: string; readonly caBundle: string }
): Effect.Effect<void, KubeError.KubeError | Resource.DecodeError, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const admission = hooks.filter(isWebhook)
    for (const configuration of configurations(name, admission, { _tag: "Url", url: server.url }, server.caBundle)) {
      const collection = configurationPaths[configuration.kind]!
      const path = `${collection}/${configuration.metadata.name}`
      yield* kube.request({ method: "DELETE", path }).pipe(Effect.catchTag("NotFound", () => Effect.void))
      yield* Effect.acquireRelease(
        kube.request({ method: "POST", path: collection, body: configuration }),
        () => Effect.ignore(kube.request({ method: "DELETE", path }))
      )
    }
    const converted = hooks.flatMap((hook) => hook._tag === "Conversion" ? hook.resources : []).filter(Crd.isCustom)
    if (converted.length > 0) {
      yield* Crd.install(converted, { fieldManager: name, conversion: { url: `${server.url}/convert`, caBundle: server.caBundle } })
    }
  })

