/**
 * The fleet workload, shared by every contestant so they all do the same work: N Widgets (the
 * `examples/widgets` kind), each needing one server-side-applied ConfigMap it owns and one status
 * write that records the ConfigMap's name, `Ready=True` and `observedGeneration`.
 */
import { Widget } from "@kubefx/example-widgets"

export { Widget }

/** Where the fleet lives. */
export const namespace = "bench"

/** The field manager the hand-written contestants use (kubefx uses its controller's name). */
export const fieldManager = "bench"

/** `/apis/demo.kubefx.dev/v1` */
export const apiPath = `/apis/${Widget.group}/${Widget.version}`

/**
 * The name of the i-th Widget; zero-padded so names sort as they were created.
 *
 * @example
 * import * as Workload from "./Workload.ts"
 * Workload.widgetName(7) // "w-00007"
 */
export const widgetName = (index: number): string => `w-${String(index).padStart(5, "0")}`

/** What every contestant reads of a Widget. */
export interface WidgetLike {
  readonly metadata?: {
    readonly name?: string | undefined
    readonly namespace?: string | undefined
    readonly uid?: string | undefined
    readonly generation?: number | undefined
  } | undefined
  readonly spec?: { readonly message?: string | undefined; readonly replicas?: number | undefined } | undefined
  readonly status?: {
    readonly observedGeneration?: number | undefined
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string; readonly observedGeneration?: number | undefined }> | undefined
  } | undefined
}

/**
 * A new Widget to create.
 *
 * @example
 * import * as Workload from "./Workload.ts"
 * Workload.widget(1).metadata.name // "w-00001"
 */
export const widget = (index: number) => ({
  apiVersion: Widget.apiVersion,
  kind: Widget.kind,
  metadata: { name: widgetName(index), namespace },
  spec: { replicas: 1 + (index % 3), message: `hello ${index}` }
})

/**
 * The ConfigMap data a Widget asks for (the same as `examples/widgets` writes).
 *
 * @example
 * import * as Workload from "./Workload.ts"
 * Workload.configMapData({ spec: { message: "hi", replicas: 2 } }) // { message: "hi", replicas: "2" }
 */
export const configMapData = (widget: WidgetLike): Record<string, string> => ({
  message: widget.spec?.message ?? "",
  replicas: String(widget.spec?.replicas ?? 0)
})

/** The label every contestant puts on the ConfigMaps it applies. */
export const configMapLabels = { "app.kubernetes.io/managed-by": "kubefx-bench" }

/**
 * The full ConfigMap a hand-written contestant server-side applies for a Widget, owned by it.
 *
 * @example
 * import * as Workload from "./Workload.ts"
 * Workload.configMap({ metadata: { name: "w-00001", namespace: "bench", uid: "u" } }).metadata.name // "w-00001-config"
 */
export const configMap = (widget: WidgetLike) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: `${widget.metadata?.name}-config`,
    namespace: widget.metadata?.namespace ?? namespace,
    labels: configMapLabels,
    ownerReferences: [{
      apiVersion: Widget.apiVersion,
      kind: Widget.kind,
      name: widget.metadata?.name ?? "",
      uid: widget.metadata?.uid ?? "",
      controller: true,
      blockOwnerDeletion: true
    }]
  },
  data: configMapData(widget)
})

/**
 * The status a hand-written contestant writes once the ConfigMap is applied, in one request: what
 * the widgets example states (the ConfigMap's name) and what kubefx adds to it (R10).
 *
 * @example
 * import * as Workload from "./Workload.ts"
 * Workload.readyStatus({ metadata: { name: "w-00001", generation: 3 } }, new Date(0)).observedGeneration // 3
 */
export const readyStatus = (widget: WidgetLike, now: Date) => {
  const generation = widget.metadata?.generation ?? 1
  return {
    configMapName: `${widget.metadata?.name}-config`,
    conditions: [{
      type: "Ready",
      status: "True",
      reason: "Reconciled",
      message: "",
      lastTransitionTime: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
      observedGeneration: generation
    }],
    observedGeneration: generation
  }
}

/**
 * Whether a Widget is done: `Ready=True` for its current generation.
 *
 * @example
 * import * as Workload from "./Workload.ts"
 * Workload.isReady({ metadata: { generation: 1 }, status: Workload.readyStatus({ metadata: { generation: 1 } }, new Date()) }) // true
 */
export const isReady = (widget: WidgetLike): boolean => {
  const generation = widget.metadata?.generation
  const ready = widget.status?.conditions?.find((condition) => condition.type === "Ready")
  return generation !== undefined && widget.status?.observedGeneration === generation && ready?.status === "True" &&
    (ready.observedGeneration === undefined || ready.observedGeneration === generation)
}
