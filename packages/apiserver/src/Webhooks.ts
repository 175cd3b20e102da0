/**
 * Admission webhooks as kube-apiserver 1.32 calls them: the stored Mutating- and
 * ValidatingWebhookConfigurations (ordered by name) select webhooks by their rules (operations,
 * groups, versions, resources and subresources, scope), namespaceSelector and objectSelector;
 * each is sent an AdmissionReview v1 over HTTPS, trusting its caBundle, within timeoutSeconds
 * (default 10). Mutating webhooks run one after another and their JSON patches apply in turn;
 * validating webhooks run together after the object passed its schema. A webhook that cannot be
 * reached, times out or answers something that is not an AdmissionReview fails the request with
 * 1.32's 500 under failurePolicy Fail (the default) and is skipped under Ignore; a denial is the
 * webhook's status, at least 400, its message prefixed `admission webhook "<name>" denied the
 * request`. Dry runs reach every webhook, told so: admissionregistration/v1 only admits webhooks
 * without side effects (None or NoneOnDryRun).
 * The configuration kinds themselves never go through webhooks, so no webhook can lock them.
 */
import { Effect, Exit, Result } from "effect"
import { randomUUID } from "node:crypto"
import * as AdmissionRules from "./AdmissionRules.ts"
import * as Patch from "./Patch.ts"
import * as RequestMetrics from "./RequestMetrics.ts"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import * as WebhookClient from "./WebhookClient.ts"
import { Json, KubeObject } from "@kubefx/schema/internal"

/** What is being admitted, and how to reach its other served versions. */
export interface Attributes extends AdmissionRules.Request {
  /** The kind of `object` when it is not the resource's own (a Scale, for the scale subresource). */
  readonly kind?: { readonly group: string; readonly version: string; readonly kind: string } | undefined
  /**
   * The other served versions of the same resource, and how to convert objects between versions:
   * a webhook with matchPolicy Equivalent (the default) whose rules name another version gets the
   * request in that version.
   */
  readonly equivalents?: {
    readonly resources: ReadonlyArray<Registry.Resource>
    readonly convert: (objects: ReadonlyArray<KubeObject.KubeObject>, to: Registry.Resource) => Effect.Effect<ReadonlyArray<KubeObject.KubeObject>, Status.ApiError>
  } | undefined
}

const mutatingStorage = "mutatingwebhookconfigurations.admissionregistration.k8s.io"
const validatingStorage = "validatingwebhookconfigurations.admissionregistration.k8s.io"

type Webhook = KubeObject.KubeObject

const webhooksOf = (store: Store.Store, storage: string): ReadonlyArray<Webhook> =>
  [...store.list(storage, undefined)]
    .sort((a, b) => (KubeObject.meta(a).name ?? "").localeCompare(KubeObject.meta(b).name ?? ""))
    .flatMap((configuration) => KubeObject.records(configuration.webhooks))

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

const exempt = (at: Attributes) =>
  at.resource.type.group === "admissionregistration.k8s.io"

/** A webhook this request reaches, and the version it is sent in. */
interface Reached {
  readonly hook: Webhook
  readonly as: Registry.Resource
}

// Exact: the request's version only; Equivalent: else the first other served version the rules name.
const versionFor = (hook: Webhook, at: Attributes): Registry.Resource | undefined => {
  const rules = KubeObject.records(hook.rules)
  if (rules.some((rule) => AdmissionRules.ruleMatches(rule, at, at.resource))) return at.resource
  if (hook.matchPolicy === "Exact") return undefined
  return at.equivalents?.resources.find((other) => rules.some((rule) => AdmissionRules.ruleMatches(rule, at, other)))
}

/** The webhooks of these configurations that this request reaches. */
const selected = (store: Store.Store, storage: string, at: Attributes): ReadonlyArray<Reached> => {
  if (exempt(at)) return []
  return webhooksOf(store, storage).flatMap((hook) => {
    const as = versionFor(hook, at)
    if (as === undefined) return []
    return AdmissionRules.selected(store, at, hook.namespaceSelector, hook.objectSelector) ? [{ hook, as }] : []
  })
}

/** The request as the webhook sees it: in the version its rules name, converted if need be. */
const inVersion = (at: Attributes, as: Registry.Resource): Effect.Effect<Attributes, Status.ApiError> => {
  if (as === at.resource || at.equivalents === undefined) return Effect.succeed(at)
  const present = [at.object, at.oldObject].filter((o): o is KubeObject.KubeObject => o !== undefined)
  return Effect.map(at.equivalents.convert(present, as), (converted) => {
    let next = 0
    return {
      ...at,
      requested: at.resource,
      resource: as,
      object: at.object === undefined ? undefined : converted[next++],
      oldObject: at.oldObject === undefined ? undefined : converted[next++]
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Calling
// ---------------------------------------------------------------------------------------------

/** Why a webhook could not be used: a failure of the call, not a denial. */
interface CallFailure {
  readonly _tag: "CallFailure"
  readonly reason: string
}

const callFailure = (reason: string): CallFailure => ({ _tag: "CallFailure", reason })

const post = (hook: Webhook, body: string, resolve: WebhookClient.Resolver): Effect.Effect<unknown, CallFailure> =>
  WebhookClient.post(KubeObject.record(hook.clientConfig), typeof hook.timeoutSeconds === "number" ? hook.timeoutSeconds : 10, body, resolve).pipe(
    Effect.mapError(callFailure)
  )

interface Answer {
  readonly allowed: boolean
  readonly result: KubeObject.KubeObject | undefined
  readonly patch: string | undefined
  readonly warnings: ReadonlyArray<string>
}

/** The AdmissionReview's response, as VerifyAdmissionResponse accepts it. */
const verify = (uid: string, mutating: boolean, review: unknown): Result.Result<Answer, string> => {
  const r = KubeObject.record(review)
  if (!KubeObject.isObject(r.response)) return Result.fail("webhook response was absent")
  const response = r.response
  if (response.uid !== uid) return Result.fail(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(response.uid ?? "")}`)
  if (r.apiVersion !== "admission.k8s.io/v1" || r.kind !== "AdmissionReview") {
    return Result.fail(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${WebhookClient.gvkOf(r)}`)
  }
  const patch = typeof response.patch === "string" && response.patch !== "" ? response.patch : undefined
  if (mutating) {
    if (patch !== undefined && response.patchType === undefined) return Result.fail("webhook returned response.patch but not response.patchType")
    if (patch === undefined && response.patchType !== undefined) return Result.fail("webhook returned response.patchType but not response.patch")
    if (response.patchType !== undefined && response.patchType !== "JSONPatch") {
      return Result.fail(`webhook returned invalid response.patchType of ${JSON.stringify(response.patchType)}`)
    }
  } else {
    if (patch !== undefined) return Result.fail("validating webhook may not return response.patch")
    if (response.patchType !== undefined) return Result.fail("validating webhook may not return response.patchType")
  }
  return Result.succeed({
    allowed: response.allowed === true,
    result: KubeObject.isObject(response.status) ? response.status : undefined,
    patch,
    warnings: AdmissionRules.strings(response.warnings)
  })
}

const optionsKind = { CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions" } as const

const review = (uid: string, at: Attributes & { readonly requested?: Registry.Resource }) => {
  const type = at.resource.type
  const kind = at.kind ?? { group: type.group, version: type.version, kind: type.kind }
  const resource = { group: type.group, version: type.version, resource: type.plural }
  const requestedType = (at.requested ?? at.resource).type
  const requestKind = at.kind ?? { group: requestedType.group, version: requestedType.version, kind: requestedType.kind }
  const requestResource = { group: requestedType.group, version: requestedType.version, resource: requestedType.plural }
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind,
      resource,
      ...(at.subresource === undefined ? {} : { subResource: at.subresource, requestSubResource: at.subresource }),
      requestKind,
      requestResource,
      name: at.name,
      ...(at.namespace === undefined ? {} : { namespace: at.namespace }),
      operation: at.operation,
      userInfo: { username: at.user.username, groups: at.user.groups },
      object: at.object ?? null,
      oldObject: at.oldObject ?? null,
      dryRun: at.dryRun,
      options: { apiVersion: "meta.k8s.io/v1", kind: optionsKind[at.operation] }
    }
  }
}

/** `webhookerrors.ToStatusErr`: a denial as the webhook's status, at least a 400, named. */
const denial = (name: string, result: KubeObject.KubeObject | undefined): Status.ApiError => {
  const status = result ?? {}
  const code = typeof status.code === "number" && status.code >= 400 ? status.code : 400
  const deniedBy = `admission webhook ${JSON.stringify(name)} denied the request`
  const message = typeof status.message === "string" && status.message !== ""
    ? `${deniedBy}: ${status.message}`
    : typeof status.reason === "string" && status.reason !== ""
    ? `${deniedBy}: ${status.reason}`
    : `${deniedBy} without explanation`
  return new Status.ApiError({
    code,
    reason: typeof status.reason === "string" ? status.reason : "",
    message,
    ...(KubeObject.isObject(status.details) ? { details: status.details as Status.StatusDetails } : {})
  })
}

type Outcome =
  | { readonly _tag: "Answered"; readonly answer: Answer }
  | { readonly _tag: "Skipped" }

/** Calls one webhook; a call failure fails the request or is skipped, by failurePolicy. */
const call = (hook: Webhook, at: Attributes, mutating: boolean, resolve: WebhookClient.Resolver): Effect.Effect<Outcome, Status.ApiError> => {
  const name = String(hook.name ?? "")
  const failOpen = hook.failurePolicy === "Ignore"
  const failed = (failure: CallFailure): Effect.Effect<Outcome, Status.ApiError> =>
    failOpen
      ? Effect.as(Effect.logWarning(`Failed calling webhook, failing open ${name}: ${failure.reason}`), { _tag: "Skipped" } as const)
      : Effect.fail(Status.internal(`failed calling webhook ${JSON.stringify(name)}: ${failure.reason}`))
  const uid = randomUUID()
  const calledAt = performance.now()
  return post(hook, JSON.stringify(review(uid, at)), resolve).pipe(
    Effect.flatMap((answer) => {
      const verified = verify(uid, mutating, answer)
      return Result.isSuccess(verified)
        ? Effect.succeed<Outcome>({ _tag: "Answered", answer: verified.success })
        : Effect.fail(callFailure(`received invalid webhook response: ${verified.failure}`))
    }),
    Effect.catch(failed),
    // Rejected: denied, or failed with failurePolicy Fail.
    Effect.onExit((exit) =>
      Effect.map(RequestMetrics.CurrentAdmission, (admission) =>
        admission?.metrics.webhookCalled({
          name,
          operation: at.operation,
          type: mutating ? "admit" : "validating",
          rejected: Exit.isFailure(exit) || (exit.value._tag === "Answered" && !exit.value.answer.allowed)
        }, (performance.now() - calledAt) / 1000))
    )
  )
}

// A phase's webhook calls take this long of the request's time, which its SLI leaves out (the
// validating ones run concurrently: the phase's time, not their sum).
const timed = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    const startedAt = performance.now()
    return Effect.onExit(effect, () =>
      Effect.map(RequestMetrics.CurrentAdmission, (admission) => {
        if (admission !== undefined) admission.webhookSeconds += (performance.now() - startedAt) / 1000
      }))
  })

const applyPatch = (object: KubeObject.KubeObject, patch: string): Result.Result<KubeObject.KubeObject, string> => {
  const operations = Json.parse(Buffer.from(patch, "base64").toString("utf8"))
  if (Result.isFailure(operations)) return Result.fail(operations.failure)
  // The webhook's patch is read as jsonpatch.DecodePatch reads it, with no typed first pass.
  const patched = Patch.jsonPatch(object as Json.Json, operations.success, "Ignore")
  if (Result.isFailure(patched)) return Result.fail(patched.failure.message)
  return Json.isObject(patched.success) ? Result.succeed(patched.success as KubeObject.KubeObject) : Result.fail("the patched document is not an object")
}

/** What admission webhooks made of a request: the object to store and warnings for the client. */
export interface Admitted {
  readonly object: KubeObject.KubeObject | undefined
  readonly warnings: ReadonlyArray<string>
}

/**
 * Runs the mutating webhooks this request reaches, in order, each seeing the previous one's patch.
 *
 * @example
 * import * as Webhooks from "./Webhooks.ts"
 * declare const store: import("./Store.ts").Store
 * declare const attributes: Webhooks.Attributes
 * const mutated = Webhooks.mutate(store, attributes) // Effect<{ object, warnings }, ApiError>
 */
export const mutate = (store: Store.Store, at: Attributes): Effect.Effect<Admitted, Status.ApiError> => {
  // The warnings of the webhooks that answered go with a failure after them too.
  const warnings: Array<string> = []
  return timed(Effect.gen(function*() {
    let object = at.object
    for (const { hook, as } of selected(store, mutatingStorage, at)) {
      const sent = yield* inVersion({ ...at, object }, as)
      const outcome = yield* call(hook, sent, true, WebhookClient.resolver(store))
      if (outcome._tag === "Skipped") continue
      const { answer } = outcome
      warnings.push(...answer.warnings)
      if (!answer.allowed) return yield* denial(String(hook.name ?? ""), answer.result)
      if (answer.patch === undefined || sent.object === undefined) continue
      const patched = applyPatch(sent.object, answer.patch)
      if (Result.isFailure(patched)) return yield* Status.internal(patched.failure)
      // The patch is in the webhook's version; the request goes on in its own.
      object = as === at.resource || at.equivalents === undefined
        ? patched.success
        : (yield* at.equivalents.convert([patched.success], at.resource))[0]
    }
    return { object, warnings }
  })).pipe(Effect.mapError((error) => Status.warned(error, warnings)))
}

/**
 * Runs the validating webhooks this request reaches, concurrently; the first denial or failure
 * (in configuration order) fails the request.
 *
 * @example
 * import * as Webhooks from "./Webhooks.ts"
 * declare const store: import("./Store.ts").Store
 * declare const attributes: Webhooks.Attributes
 * const checked = Webhooks.validate(store, attributes) // Effect<warnings, ApiError>
 */
export const validate = (store: Store.Store, at: Attributes): Effect.Effect<ReadonlyArray<string>, Status.ApiError> =>
  timed(Effect.gen(function*() {
    const hooks = selected(store, validatingStorage, at)
    const outcomes = yield* Effect.forEach(
      hooks,
      ({ hook, as }) => Effect.result(Effect.flatMap(inVersion(at, as), (sent) => call(hook, sent, false, WebhookClient.resolver(store)))),
      { concurrency: "unbounded" }
    )
    // Every webhook that answered adds its warnings, whichever of them fails the request.
    const warnings = outcomes.flatMap((outcome) => Result.isSuccess(outcome) && outcome.success._tag !== "Skipped" ? outcome.success.answer.warnings : [])
    for (const [i, outcome] of outcomes.entries()) {
      if (Result.isFailure(outcome)) return yield* Status.warned(outcome.failure, warnings)
      if (outcome.success._tag === "Skipped") continue
      const { answer } = outcome.success
      if (!answer.allowed) return yield* Status.warned(denial(String(hooks[i]!.hook.name ?? ""), answer.result), warnings)
    }
    return warnings
  }))

/**
 * Whether any webhook configuration exists (a write skips the webhook machinery otherwise).
 *
 * @example
 * import * as Webhooks from "./Webhooks.ts"
 * declare const store: import("./Store.ts").Store
 * Webhooks.configured(store) // false on a fresh server
 */
export const configured = (store: Store.Store): boolean =>
  store.size(mutatingStorage) > 0 || store.size(validatingStorage) > 0
