/**
 * The ClusterRole aggregation controller, running in the server as kube-controller-manager runs it:
 * a ClusterRole with an `aggregationRule` holds as its `rules` those of every other ClusterRole its
 * `clusterRoleSelectors` select, kept as ClusterRoles come, change and go. Charts label their roles
 * `aggregate-to-...` so that a role bound elsewhere grows with them.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import * as SelectorValidation from "./SelectorValidation.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

const storage = "clusterroles.rbac.authorization.k8s.io"

const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "clusterrole-aggregation-controller",
  fieldValidation: "Ignore"
}

const selectorsOf = (role: KubeObject.KubeObject): ReadonlyArray<unknown> | undefined => {
  const rule = role.aggregationRule
  return KubeObject.isObject(rule) && Array.isArray(rule.clusterRoleSelectors) ? rule.clusterRoleSelectors : undefined
}

/**
 * The rules of the aggregated ClusterRole `role` among `all`: those of each other ClusterRole one
 * of its selectors selects, by name, each rule once.
 *
 * @example
 * import * as Aggregation from "./Aggregation.ts"
 * const monitoring = { metadata: { name: "monitoring" }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { m: "true" } }] } }
 * const pods = { metadata: { name: "pods", labels: { m: "true" } }, rules: [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }] }
 * Aggregation.rulesOf(monitoring, [monitoring, pods]) // [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }]
 */
export const rulesOf = (role: KubeObject.KubeObject, all: ReadonlyArray<KubeObject.KubeObject>): ReadonlyArray<unknown> => {
  const selectors = selectorsOf(role) ?? []
  const name = KubeObject.meta(role).name
  const seen = new Set<string>()
  const rules: Array<unknown> = []
  const sources = all
    .filter((other) => KubeObject.meta(other).name !== name && selectors.some((selector) => SelectorValidation.matches(selector, KubeObject.meta(other).labels)))
    .sort((a, b) => String(KubeObject.meta(a).name).localeCompare(String(KubeObject.meta(b).name)))
  for (const source of sources) {
    for (const rule of Array.isArray(source.rules) ? source.rules : []) {
      const text = JSON.stringify(rule)
      if (!seen.has(text)) {
        seen.add(text)
        rules.push(rule)
      }
    }
  }
  return rules
}

/**
 * Starts the aggregation controller over `env.store` in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Aggregation from "./Aggregation.ts"
 * import type * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * const started = Effect.scoped(Aggregation.make(env))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env) {
  const { store } = env
  const resource = env.registry.byStorage(storage)[0]!
  const aggregate = (name: string) =>
    Effect.suspend(() => {
      const role = store.get(storage, "", name)
      if (role === undefined || selectorsOf(role) === undefined) return Effect.void
      const rules = rulesOf(role, store.list(storage, undefined))
      if (JSON.stringify(role.rules ?? []) === JSON.stringify(rules)) return Effect.void
      return Rest.update(env, { resource, namespace: undefined, name }, undefined, writeOptions, (current) =>
        Effect.succeed({ ...current, rules: rulesOf(current, store.list(storage, undefined)) })).pipe(
          Effect.catchTag("ApiError", (error) => error.code === 404 ? Effect.void : Effect.fail(error))
        )
    })
  const worker = yield* Worker.make("clusterrole-aggregation", aggregate, (name: string) => name)
  // Any ClusterRole's change may change what an aggregated one selects: every one is looked at again.
  const aggregated = () =>
    store.list(storage, undefined).filter((role) => selectorsOf(role) !== undefined).map((role) => String(KubeObject.meta(role).name))
  const onEvent = (event: Store.Event) => {
    if (event.storage === storage) for (const name of aggregated()) worker.enqueue(name)
  }
  for (const name of aggregated()) worker.enqueue(name)
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending }
})
