/**
 * What 1.32's HorizontalPodAutoscaler controller makes of an HPA when no metrics can be read, as
 * pure functions for the workload simulator: the target held between `minReplicas` and
 * `maxReplicas` (a target scaled to zero left alone), and otherwise the metric's failure stated in
 * the HPA's conditions and events, as a cluster without a metrics server states it.
 */
import * as StatusConditions from "./StatusConditions.ts"
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const count = KubeObject.number

/** A condition as the HPA controller states it. */
export interface Condition {
  readonly type: "AbleToScale" | "ScalingActive" | "ScalingLimited"
  readonly status: "True" | "False"
  readonly reason: string
  readonly message: string
}

/** What one look at an HPA decides. */
export interface Decision {
  /** The replica count to scale the target to, when it must be rescaled. */
  readonly rescale: number | undefined
  /** The `desiredReplicas` the status keeps. */
  readonly desired: number
  readonly conditions: ReadonlyArray<Condition>
  readonly events: ReadonlyArray<{ readonly type: "Normal" | "Warning"; readonly reason: string; readonly message: string }>
}

const metricKinds: Readonly<Record<string, string>> = {
  Resource: "ResourceMetric",
  ContainerResource: "ContainerResourceMetric",
  Pods: "PodsMetric",
  Object: "ObjectMetric",
  External: "ExternalMetric"
}

// Why the first metric cannot be read, worded as the controller words it: the resource metrics
// API is `metrics` (what discovery answered for metrics.k8s.io), the others have no API here.
const metricFailure = (metric: Readonly<Record<string, unknown>>, metrics: string): string => {
  const type = String(metric.type ?? "")
  if (type === "Resource" || type === "ContainerResource") {
    const source = record(metric[type === "Resource" ? "resource" : "containerResource"])
    const name = String(source.name ?? "")
    return `failed to get ${name} utilization: unable to get metrics for resource ${name}: unable to fetch metrics from resource metrics API: ${metrics} (get pods.metrics.k8s.io)`
  }
  const source = record(metric[type === "Pods" ? "pods" : type === "Object" ? "object" : "external"])
  const name = String(record(source.metric).name ?? "")
  return type === "External"
    ? `unable to get external metric ${name}: unable to fetch metrics from external metrics API: the server could not find the requested resource (get ${name}.external.metrics.k8s.io)`
    : `unable to get metric ${name}: unable to fetch metrics from custom metrics API: the server could not find the requested resource (get ${name}.custom.metrics.k8s.io)`
}

/**
 * The controller's decision for an HPA whose target asks for `specReplicas`, when
 * the resource metrics API answers `metrics` (`the server could not find the requested resource`
 * without a metrics server): below `minReplicas` or above `maxReplicas` the target is rescaled;
 * within them the metric cannot be read, so nothing is.
 *
 * @example
 * import * as AutoscalerRuns from "./AutoscalerRuns.ts"
 * const hpa = { spec: { minReplicas: 2, maxReplicas: 5, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }] } }
 * AutoscalerRuns.decide(hpa, 1, "the server could not find the requested resource").rescale // 2
 */
export const decide = (hpa: KubeObject.KubeObject, specReplicas: number, metrics: string): Decision => {
  const spec = record(hpa.spec)
  const min = count(spec.minReplicas, 1)
  const max = count(spec.maxReplicas)
  const previous = count(record(hpa.status).desiredReplicas)
  if (specReplicas === 0 && min !== 0) {
    return {
      rescale: undefined,
      desired: 0,
      conditions: [{ type: "ScalingActive", status: "False", reason: "ScalingDisabled", message: "scaling is disabled since the replica count of the target is zero" }],
      events: []
    }
  }
  // Bounds are kept on the replicas the target asks for, not those it runs (a rollout's surge).
  const bound = specReplicas > max
    ? { desired: max, reason: "Current number of replicas above Spec.MaxReplicas" }
    : specReplicas < min
    ? { desired: min, reason: "Current number of replicas below Spec.MinReplicas" }
    : undefined
  if (bound !== undefined) {
    return {
      rescale: bound.desired,
      desired: bound.desired,
      conditions: [{ type: "AbleToScale", status: "True", reason: "SucceededRescale", message: `the HPA controller was able to update the target scale to ${bound.desired}` }],
      events: [{ type: "Normal", reason: "SuccessfulRescale", message: `New size: ${bound.desired}; reason: ${bound.reason}` }]
    }
  }
  const metricsList = KubeObject.records(spec.metrics)
  const first = metricsList[0] ?? {}
  const failure = metricFailure(first, metrics)
  const reason = `FailedGet${metricKinds[String(first.type ?? "")] ?? "ResourceMetric"}`
  return {
    rescale: undefined,
    desired: previous,
    conditions: [
      { type: "AbleToScale", status: "True", reason: "SucceededGetScale", message: "the HPA controller was able to get the target's current scale" },
      { type: "ScalingActive", status: "False", reason, message: `the HPA was unable to compute the replica count: ${failure}` }
    ],
    events: [
      { type: "Warning", reason, message: failure },
      {
        type: "Warning",
        reason: "FailedComputeMetricsReplicas",
        message: `invalid metrics (${metricsList.length} invalid out of ${metricsList.length}), first error is: ${failure}`
      }
    ]
  }
}

/**
 * The HPA's status after a look: the target's current replicas (kept as they were when its scale
 * could not be read), the desired count, the rescale's time, and the conditions stated.
 *
 * @example
 * import * as AutoscalerRuns from "./AutoscalerRuns.ts"
 * AutoscalerRuns.status({ status: {} }, 2, { rescale: 3, desired: 3, conditions: [], events: [] }, "2026-01-01T00:00:00Z").lastScaleTime // "2026-01-01T00:00:00Z"
 */
export const status = (hpa: KubeObject.KubeObject, currentReplicas: number | undefined, decision: Decision, now: string): Record<string, unknown> => {
  const previous = record(hpa.status)
  const order = ["AbleToScale", "ScalingActive", "ScalingLimited"]
  const merged = [...StatusConditions.set(previous.conditions, decision.conditions, { keep: () => true, now })]
    .sort((a, b) => order.indexOf(String(record(a).type)) - order.indexOf(String(record(b).type)))
  return {
    ...previous,
    ...(decision.rescale === undefined ? {} : { lastScaleTime: now }),
    ...(currentReplicas === undefined ? {} : { currentReplicas }),
    desiredReplicas: decision.desired,
    conditions: merged
  }
}
