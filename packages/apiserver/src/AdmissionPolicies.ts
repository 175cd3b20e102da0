/**
 * ValidatingAdmissionPolicies as kube-apiserver 1.32 enforces them, after the object passed its
 * own validation and Pod Security, before validating webhooks: each policy whose
 * `matchConstraints` select the request (resource rules and their exclusions, namespace and
 * object selectors) runs for each of its bindings that selects it too (`matchResources`), once per
 * parameter object its `paramRef` finds (by name or selector, in the request's namespace unless
 * it names one; none found is a denial under `parameterNotFoundAction: Deny`). Its
 * `matchConditions` must all hold; then each validation that is not true is a decision, acted on
 * as the binding's `validationActions` say: `Deny` refuses the request with the first such
 * decision (`ValidatingAdmissionPolicy 'p' with binding 'b' denied request: <message>`, the
 * validation's `reason`, Invalid by default, as its status), `Warn` adds a warning, `Audit` does
 * nothing here (no audit log). An expression that fails to compile or to run refuses the request
 * under `failurePolicy: Fail` (the default) and is passed over under `Ignore`.
 *
 * Expressions see `object`, `oldObject`, `request`, `params`, `namespaceObject` and
 * `variables`, read dynamically. Not done: `authorizer` (an expression using it does not
 * compile), matchPolicy Equivalent across versions, cost budgets, and the policy's
 * `status.typeChecking`.
 */
import { isCelError } from "@bufbuild/cel"
import { Effect } from "effect"
import * as AdmissionRules from "./AdmissionRules.ts"
import * as Registry from "./Registry.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { CelRules, CelValidation, CelValues, KubeObject } from "@kubefx/schema/internal"

const policyStorage = "validatingadmissionpolicies.admissionregistration.k8s.io"
const bindingStorage = "validatingadmissionpolicybindings.admissionregistration.k8s.io"

/** A request as policies see it. */
export type Request = AdmissionRules.Request

/**
 * Whether any policy is bound, so that requests need looking at.
 *
 * @example
 * import * as AdmissionPolicies from "./AdmissionPolicies.ts"
 * import * as Store from "./Store.ts"
 * AdmissionPolicies.configured(Store.make()) // false
 */
export const configured = (store: Store.Store): boolean => store.count(bindingStorage, undefined) > 0

type Program = (bindings: never) => unknown

interface Validation {
  readonly expression: string
  readonly program: Program
  readonly message: string | undefined
  readonly messageProgram: Program | undefined
  readonly reason: string | undefined
}

interface Compiled {
  readonly matchConditions: ReadonlyArray<{ readonly expression: string; readonly program: Program }>
  readonly variables: ReadonlyArray<{ readonly name: string; readonly expression: string; readonly program: Program }>
  readonly validations: ReadonlyArray<Validation>
  /** The first expression that does not compile, as kube reports it. */
  readonly error: string | undefined
}

const names = ["object", "oldObject", "request", "params", "namespaceObject", "variables"]

const compiledPolicies = new WeakMap<KubeObject.KubeObject, Compiled>()

const compile = (policy: KubeObject.KubeObject): Compiled => {
  const known = compiledPolicies.get(policy)
  if (known !== undefined) return known
  const spec = KubeObject.record(policy.spec)
  let error: string | undefined
  const program = (expression: string, expected: "bool" | "string" | "any"): Program => {
    const compiled = CelRules.compileUntyped(expression, names, expected)
    if ("detail" in compiled) {
      error ??= compiled.detail
      return () => undefined
    }
    return compiled.program as Program
  }
  const matchConditions = KubeObject.records(spec.matchConditions).map((c) => ({
    expression: String(c.expression ?? ""),
    program: program(String(c.expression ?? ""), "bool")
  }))
  const variables = KubeObject.records(spec.variables).map((v) => ({
    name: String(v.name ?? ""),
    expression: String(v.expression ?? ""),
    program: program(String(v.expression ?? ""), "any")
  }))
  const validations = KubeObject.records(spec.validations).map((v): Validation => {
    const expression = String(v.expression ?? "")
    const messageExpression = typeof v.messageExpression === "string" && v.messageExpression.trim() !== "" ? v.messageExpression : undefined
    return {
      expression,
      program: program(expression, "bool"),
      message: typeof v.message === "string" ? v.message : undefined,
      messageProgram: messageExpression === undefined ? undefined : program(messageExpression, "string"),
      reason: typeof v.reason === "string" && v.reason !== "" ? v.reason : undefined
    }
  })
  const compiled: Compiled = { matchConditions, variables, validations, error }
  compiledPolicies.set(policy, compiled)
  return compiled
}

/** Whether match criteria (a policy's constraints or a binding's resources) select the request. */
const selects = (store: Store.Store, request: Request, criteria: KubeObject.KubeObject): boolean => {
  if (!AdmissionRules.selected(store, request, criteria.namespaceSelector, criteria.objectSelector)) return false
  if (KubeObject.records(criteria.excludeResourceRules).some((rule) => AdmissionRules.ruleMatches(rule, request, request.resource))) return false
  const rules = KubeObject.records(criteria.resourceRules)
  return rules.length === 0 || rules.some((rule) => AdmissionRules.ruleMatches(rule, request, request.resource))
}

interface Decision {
  readonly message: string
  readonly reason: string | undefined
}

type Params = ReadonlyArray<KubeObject.KubeObject | null>

const paramKindText = (kind: KubeObject.KubeObject) => `&ParamKind{APIVersion:${String(kind.apiVersion ?? "")},Kind:${String(kind.kind ?? "")},}`

// The parameter objects a binding's paramRef finds; null stands for "no params".
const collectParams = (store: Store.Store, registry: Registry.Registry, request: Request, paramKind: KubeObject.KubeObject | undefined, paramRef: KubeObject.KubeObject | undefined): Params | string => {
  if (paramKind === undefined || paramRef === undefined) return [null]
  const [group, version] = String(paramKind.apiVersion ?? "").includes("/") ? String(paramKind.apiVersion).split("/", 2) as [string, string] : ["", String(paramKind.apiVersion ?? "")]
  const resource = registry.all().find((r) => r.type.group === group && r.type.version === version && r.type.kind === paramKind.kind)
  if (resource === undefined) return `paramKind kind \`${paramKindText(paramKind)}\` not known`
  const refNamespace = typeof paramRef.namespace === "string" ? paramRef.namespace : ""
  let namespace: string | undefined
  if (resource.type.namespaced) {
    namespace = refNamespace !== "" ? refNamespace : request.namespace ?? ""
    if (namespace === "") return "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
  } else if (refNamespace !== "") return "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
  const stored = (objects: ReadonlyArray<KubeObject.KubeObject>) => objects.map((o) => Registry.served(resource, o))
  let params: Params
  if (typeof paramRef.name === "string" && paramRef.name !== "") {
    if (paramRef.selector !== undefined) return "paramRef.name and paramRef.selector are mutually exclusive"
    const found = store.get(resource.storage, namespace ?? "", paramRef.name)
    params = found === undefined ? [] : stored([found])
  } else if (paramRef.selector !== undefined) {
    params = stored(store.list(resource.storage, namespace).filter((o) => SelectorValidation.matches(paramRef.selector, KubeObject.meta(o).labels)))
  } else return "one of name or selector must be provided"
  if (params.length === 0 && paramRef.parameterNotFoundAction === "Deny") return "no params found for policy binding with `Deny` parameterNotFoundAction"
  return params
}

const cel = (value: unknown) => CelValues.toCel(value, undefined)

const requestObject = (request: Request) => {
  const type = request.resource.type
  const kind = { group: type.group, version: type.version, kind: type.kind }
  const resource = { group: type.group, version: type.version, resource: type.plural }
  return {
    kind,
    resource,
    ...(request.subresource === undefined ? {} : { subResource: request.subresource, requestSubResource: request.subresource }),
    requestKind: kind,
    requestResource: resource,
    name: request.name,
    namespace: request.namespace ?? "",
    operation: request.operation,
    userInfo: { username: request.user.username, groups: request.user.groups },
    dryRun: request.dryRun
  }
}

const run = (program: Program, expression: string, bindings: Record<string, unknown>): { readonly value: unknown } | { readonly error: string } => {
  const result = program(bindings as never)
  return isCelError(result) ? { error: `expression '${expression}' resulted in error: ${CelValidation.goError(result.message)}` } : { value: result }
}

// The decisions of one evaluation of a policy: its failed validations (and errors under Fail).
const evaluate = (compiled: Compiled, failOpen: boolean, bindings: Record<string, unknown>): ReadonlyArray<Decision> => {
  const onError = (message: string): ReadonlyArray<Decision> => (failOpen ? [] : [{ message, reason: undefined }])
  for (const condition of compiled.matchConditions) {
    const result = run(condition.program, condition.expression, bindings)
    if ("error" in result) return onError(result.error)
    if (result.value !== true) return []
  }
  const variables = new Map<string, unknown>()
  const withVariables = { ...bindings, variables }
  for (const variable of compiled.variables) {
    const result = run(variable.program, variable.expression, withVariables)
    if ("value" in result) variables.set(variable.name, result.value)
  }
  return compiled.validations.flatMap((validation): ReadonlyArray<Decision> => {
    const result = run(validation.program, validation.expression, withVariables)
    if ("error" in result) return onError(result.error)
    if (result.value === true) return []
    const given = validation.messageProgram === undefined ? undefined : validation.messageProgram(withVariables as never)
    const fromExpression = typeof given === "string" && !given.includes("\n") ? given.trim() : ""
    const message = fromExpression !== "" ? fromExpression : validation.message?.trim() || `failed expression: ${validation.expression.trim()}`
    return [{ message, reason: validation.reason ?? "Invalid" }]
  })
}

const codes: Readonly<Record<string, number>> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 }

/**
 * Runs the bound policies on a request: its warnings, or the first denial as kube-apiserver
 * answers it.
 *
 * @example
 * import { Effect } from "effect"
 * import * as AdmissionPolicies from "./AdmissionPolicies.ts"
 * declare const store: import("./Store.ts").Store
 * declare const registry: import("./Registry.ts").Registry
 * declare const request: AdmissionPolicies.Request
 * const warnings = AdmissionPolicies.validate(store, registry, request)
 */
export const validate = (store: Store.Store, registry: Registry.Registry, request: Request): Effect.Effect<ReadonlyArray<string>, Status.ApiError> =>
  Effect.suspend(() => {
    if (request.resource.type.group === "admissionregistration.k8s.io" || !configured(store)) return Effect.succeed([])
    const warnings: Array<string> = []
    const denied: Array<{ readonly policy: string; readonly binding: string | undefined; readonly decision: Decision }> = []
    const bindings = store.list(bindingStorage, undefined)
    const namespace = request.namespace !== undefined && !(request.resource.type.group === "" && request.resource.type.plural === "namespaces")
      ? store.get("namespaces", "", request.namespace)
      : undefined
    const base = {
      object: cel(request.object),
      oldObject: cel(request.oldObject),
      request: cel(requestObject(request)),
      namespaceObject: cel(namespace ?? null)
    }
    const policies = [...store.list(policyStorage, undefined)].sort((a, b) => (KubeObject.meta(a).name ?? "").localeCompare(KubeObject.meta(b).name ?? ""))
    for (const policy of policies) {
      const policyName = KubeObject.meta(policy).name ?? ""
      const spec = KubeObject.record(policy.spec)
      const failOpen = spec.failurePolicy === "Ignore"
      if (!selects(store, request, KubeObject.record(spec.matchConstraints))) continue
      const compiled = compile(policy)
      for (const binding of bindings) {
        const bindingSpec = KubeObject.record(binding.spec)
        if (bindingSpec.policyName !== policyName) continue
        const bindingName = KubeObject.meta(binding).name ?? ""
        if (KubeObject.isObject(bindingSpec.matchResources) && !selects(store, request, bindingSpec.matchResources)) continue
        const configError = (message: string) => {
          if (!failOpen) denied.push({ policy: policyName, binding: bindingName, decision: { message, reason: undefined } })
        }
        if (compiled.error !== undefined) {
          configError(compiled.error)
          continue
        }
        const params = collectParams(store, registry, request, KubeObject.isObject(spec.paramKind) ? spec.paramKind : undefined, KubeObject.isObject(bindingSpec.paramRef) ? bindingSpec.paramRef : undefined)
        if (typeof params === "string") {
          configError(`failed to configure binding: ${params}`)
          continue
        }
        const actions = AdmissionRules.strings(bindingSpec.validationActions)
        for (const param of params) {
          for (const decision of evaluate(compiled, failOpen, { ...base, params: cel(param) })) {
            if (actions.includes("Deny")) denied.push({ policy: policyName, binding: bindingName, decision })
            if (actions.includes("Warn")) {
              warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${decision.message}`)
            }
          }
        }
      }
    }
    const first = denied[0]
    if (first === undefined) return Effect.succeed(warnings)
    const message = `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.decision.message}`
    const reason = first.decision.reason ?? "Invalid"
    const forbidden = Status.forbidden(request.resource.type, request.name, message)
    return Effect.fail(new Status.ApiError({
      code: codes[reason] ?? 422,
      reason,
      message: forbidden.message,
      details: { ...forbidden.details, causes: [{ message }] }
    }))
  })
