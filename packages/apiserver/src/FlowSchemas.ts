/**
 * kube-apiserver's priority-and-fairness config consumer, as far as objects show it: each
 * FlowSchema's `Dangling` condition says whether the PriorityLevelConfiguration it names exists
 * (`kubectl get flowschemas` shows it as MISSINGPL). Requests are not throttled by them here.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import type * as Status from "./Status.ts"
import * as StatusConditions from "./StatusConditions.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

const flowSchemas = "flowschemas.flowcontrol.apiserver.k8s.io"
const priorityLevels = "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io"

const writeOptions: Rest.WriteOptions = {
  dryRun: false,
  fieldManager: "api-priority-and-fairness-config-consumer-v1",
  fieldValidation: "Ignore"
}

/**
 * The `Dangling` condition of a FlowSchema that names `level`, which `exists` or not.
 *
 * @example
 * import * as FlowSchemas from "./FlowSchemas.ts"
 * FlowSchemas.dangling("workload-high", true).status // "False"
 */
export const dangling = (level: string, exists: boolean): StatusConditions.Condition =>
  exists
    ? { type: "Dangling", status: "False", reason: "Found", message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists` }
    : { type: "Dangling", status: "True", reason: "NotFound", message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object` }

export interface FlowSchemaStatus {
  /** Completes when nothing is queued. */
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
}

/**
 * Starts keeping FlowSchemas' `Dangling` conditions over `env.store`, in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as FlowSchemas from "./FlowSchemas.ts"
 * declare const env: import("./Rest.ts").Env
 * const program = Effect.scoped(Effect.flatMap(FlowSchemas.make(env), (controller) => controller.idle))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env) {
  const { store } = env
  const resource = env.registry.byStorage(flowSchemas)[0]
  const settled = (error: Status.ApiError) => error.code === 404 || error.code === 409

  const ensure = (name: string) =>
    Effect.suspend(() => {
      const schema = store.get(flowSchemas, "", name)
      if (resource === undefined || schema === undefined) return Effect.void
      const level = String(KubeObject.record(KubeObject.record(schema.spec).priorityLevelConfiguration).name ?? "")
      const wanted = dangling(level, store.get(priorityLevels, "", level) !== undefined)
      const previous = KubeObject.record(schema.status).conditions
      const conditions = StatusConditions.set(previous, [wanted], { keep: () => true })
      // Stated as it was, it is the condition stored: nothing to write.
      if (conditions.includes(KubeObject.records(previous).find((c) => c.type === "Dangling"))) return Effect.void
      return Rest.update(env, { resource, namespace: undefined, name }, "status", writeOptions, (latest) =>
        Effect.succeed({
          ...latest,
          status: { ...KubeObject.record(latest.status), conditions: StatusConditions.set(KubeObject.record(latest.status).conditions, [wanted], { keep: () => true }) }
        })).pipe(Effect.asVoid, Effect.catchIf(settled, () => Effect.void))
    })

  const worker = yield* Worker.make("apf-config-consumer", ensure, (name: string) => name)
  const all = () => store.list(flowSchemas, undefined).map((schema) => String(KubeObject.meta(schema).name))
  const onEvent = (event: Store.Event) => {
    if (event.storage === flowSchemas && event.type !== "DELETED") worker.enqueue(String(KubeObject.meta(event.object).name))
    else if (event.storage === priorityLevels) for (const name of all()) worker.enqueue(name)
  }
  for (const name of all()) worker.enqueue(name)
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending } satisfies FlowSchemaStatus
})
