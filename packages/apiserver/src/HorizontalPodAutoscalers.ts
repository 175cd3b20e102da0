/**
 * HorizontalPodAutoscalers are stored once, as autoscaling/v2, and served as v2 and v1. v1 knows
 * only a CPU utilization target; what it cannot express (other metrics, current metrics,
 * conditions, behavior) rides along in the `autoscaling.alpha.kubernetes.io/*` annotations, in
 * v1's metric format, so that a v1 client's read-modify-write keeps it, as kube-apiserver does.
 */
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

const metricsAnnotation = "autoscaling.alpha.kubernetes.io/metrics"
const currentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
const conditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"
const behaviorAnnotation = "autoscaling.alpha.kubernetes.io/behavior"
const roundTrip = [metricsAnnotation, currentMetricsAnnotation, conditionsAnnotation, behaviorAnnotation]

/** The object without the keys whose value is undefined, as Go's omitempty leaves them out. */
const compact = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

const isCpuUtilization = (m: Json) =>
  m.type === "Resource" && KubeObject.record(m.resource).name === "cpu" && KubeObject.record(KubeObject.record(m.resource).target).averageUtilization !== undefined

// v2 keeps a metric's identity and target apart; v1 (v2beta1's shape) flattens them per source.
const specToV1 = (m: Json): Json => {
  const source = (key: string) => KubeObject.record(m[key])
  const target = (key: string) => KubeObject.record(source(key).target)
  const metric = (key: string) => KubeObject.record(source(key).metric)
  switch (m.type) {
    case "Resource":
    case "ContainerResource": {
      const key = m.type === "Resource" ? "resource" : "containerResource"
      const s = source(key)
      return { type: m.type, [key]: compact({ name: s.name, container: s.container, targetAverageUtilization: target(key).averageUtilization, targetAverageValue: target(key).averageValue }) }
    }
    case "Pods":
      return { type: "Pods", pods: compact({ metricName: metric("pods").name, selector: metric("pods").selector, targetAverageValue: target("pods").averageValue }) }
    case "Object":
      return {
        type: "Object",
        object: compact({ target: source("object").describedObject, metricName: metric("object").name, selector: metric("object").selector, targetValue: target("object").value, averageValue: target("object").averageValue })
      }
    case "External":
      return {
        type: "External",
        external: compact({ metricName: metric("external").name, metricSelector: metric("external").selector, targetValue: target("external").value, targetAverageValue: target("external").averageValue })
      }
    default:
      return { type: m.type }
  }
}

const targetOf = (utilization: unknown, averageValue: unknown, value: unknown): Json =>
  utilization !== undefined
    ? { type: "Utilization", averageUtilization: utilization }
    : averageValue !== undefined
    ? compact({ type: "AverageValue", averageValue, value })
    : compact({ type: "Value", value })

const specToV2 = (m: Json): Json => {
  const s = KubeObject.record(m[String(m.type).charAt(0).toLowerCase() + String(m.type).slice(1)])
  switch (m.type) {
    case "Resource":
    case "ContainerResource": {
      const key = m.type === "Resource" ? "resource" : "containerResource"
      return { type: m.type, [key]: compact({ name: s.name, container: s.container, target: targetOf(s.targetAverageUtilization, s.targetAverageValue, undefined) }) }
    }
    case "Pods":
      return { type: "Pods", pods: { metric: compact({ name: s.metricName, selector: s.selector }), target: targetOf(undefined, s.targetAverageValue, undefined) } }
    case "Object":
      return {
        type: "Object",
        object: { describedObject: s.target, metric: compact({ name: s.metricName, selector: s.selector }), target: targetOf(undefined, s.averageValue, s.targetValue) }
      }
    case "External":
      return {
        type: "External",
        external: { metric: compact({ name: s.metricName, selector: s.metricSelector }), target: targetOf(undefined, s.targetAverageValue, s.targetValue) }
      }
    default:
      return { type: m.type }
  }
}

const statusToV1 = (m: Json): Json => {
  const key = String(m.type).charAt(0).toLowerCase() + String(m.type).slice(1)
  const s = KubeObject.record(m[key])
  const current = KubeObject.record(s.current)
  const metric = KubeObject.record(s.metric)
  switch (m.type) {
    case "Resource":
    case "ContainerResource":
      return { type: m.type, [key]: compact({ name: s.name, container: s.container, currentAverageUtilization: current.averageUtilization, currentAverageValue: current.averageValue }) }
    case "Pods":
      return { type: "Pods", pods: compact({ metricName: metric.name, selector: metric.selector, currentAverageValue: current.averageValue }) }
    case "Object":
      return { type: "Object", object: compact({ target: s.describedObject, metricName: metric.name, selector: metric.selector, currentValue: current.value, averageValue: current.averageValue }) }
    case "External":
      return { type: "External", external: compact({ metricName: metric.name, metricSelector: metric.selector, currentValue: current.value, currentAverageValue: current.averageValue }) }
    default:
      return { type: m.type }
  }
}

const statusToV2 = (m: Json): Json => {
  const key = String(m.type).charAt(0).toLowerCase() + String(m.type).slice(1)
  const s = KubeObject.record(m[key])
  switch (m.type) {
    case "Resource":
    case "ContainerResource":
      return { type: m.type, [key]: compact({ name: s.name, container: s.container, current: compact({ averageUtilization: s.currentAverageUtilization, averageValue: s.currentAverageValue }) }) }
    case "Pods":
      return { type: "Pods", pods: { metric: compact({ name: s.metricName, selector: s.selector }), current: compact({ averageValue: s.currentAverageValue }) } }
    case "Object":
      return { type: "Object", object: { describedObject: s.target, metric: compact({ name: s.metricName, selector: s.selector }), current: compact({ value: s.currentValue, averageValue: s.averageValue }) } }
    case "External":
      return { type: "External", external: { metric: compact({ name: s.metricName, selector: s.metricSelector }), current: compact({ value: s.currentValue, averageValue: s.currentAverageValue }) } }
    default:
      return { type: m.type }
  }
}

const decode = (annotations: Readonly<Record<string, string>>, key: string): ReadonlyArray<Json> | Json | undefined => {
  const text = annotations[key]
  if (text === undefined) return undefined
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

/**
 * A stored (v2) HorizontalPodAutoscaler as autoscaling/v1 serves it.
 *
 * @example
 * import * as HorizontalPodAutoscalers from "./HorizontalPodAutoscalers.ts"
 * HorizontalPodAutoscalers.toV1({ spec: { maxReplicas: 5, metrics: [{ type: "Resource",
 *   resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }] } }).spec
 * // { maxReplicas: 5, targetCPUUtilizationPercentage: 70 }
 */
export const toV1 = (v2: Json): Json => {
  const spec = KubeObject.record(v2.spec)
  const status = KubeObject.record(v2.status)
  const metrics = KubeObject.records(spec.metrics)
  const cpu = metrics.find(isCpuUtilization)
  const others = metrics.filter((m) => !isCpuUtilization(m)).map(specToV1)
  const current = KubeObject.records(status.currentMetrics)
  const cpuNow = current.find((m) => m.type === "Resource" && KubeObject.record(m.resource).name === "cpu")
  const m = KubeObject.meta(v2)
  const annotations = {
    ...Object.fromEntries(Object.entries(m.annotations ?? {}).filter(([k]) => !roundTrip.includes(k))),
    ...(others.length > 0 ? { [metricsAnnotation]: JSON.stringify(others) } : {}),
    ...(current.length > 0 ? { [currentMetricsAnnotation]: JSON.stringify(current.map(statusToV1)) } : {}),
    ...(KubeObject.records(status.conditions).length > 0 ? { [conditionsAnnotation]: JSON.stringify(status.conditions) } : {}),
    ...(spec.behavior !== undefined ? { [behaviorAnnotation]: JSON.stringify(spec.behavior) } : {})
  }
  const { metrics: _m, behavior: _b, ...v1Spec } = spec
  const { currentMetrics: _c, conditions: _k, ...v1Status } = status
  const out: Json = {
    ...v2,
    apiVersion: "autoscaling/v1",
    spec: compact({ ...v1Spec, targetCPUUtilizationPercentage: KubeObject.record(KubeObject.record(cpu?.resource).target).averageUtilization }),
    ...(v2.status === undefined ? {} : {
      status: compact({ ...v1Status, currentCPUUtilizationPercentage: KubeObject.record(KubeObject.record(cpuNow?.resource).current).averageUtilization })
    })
  }
  return KubeObject.withMeta(out, { annotations: Object.keys(annotations).length === 0 ? undefined : annotations })
}

/**
 * An autoscaling/v1 HorizontalPodAutoscaler as it is stored (v2), folding the round-trip
 * annotations back into the spec and status.
 *
 * @example
 * import * as HorizontalPodAutoscalers from "./HorizontalPodAutoscalers.ts"
 * HorizontalPodAutoscalers.toV2({ spec: { maxReplicas: 5, targetCPUUtilizationPercentage: 70 } }).spec
 * // { maxReplicas: 5, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }] }
 */
export const toV2 = (v1: Json): Json => {
  const m = KubeObject.meta(v1)
  const given = m.annotations ?? {}
  const { targetCPUUtilizationPercentage: cpu, ...spec } = KubeObject.record(v1.spec)
  const { currentCPUUtilizationPercentage: cpuNow, ...status } = KubeObject.record(v1.status)
  const others = KubeObject.records(decode(given, metricsAnnotation)).map(specToV2)
  const cpuMetric = cpu === undefined ? [] : [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: cpu } } }]
  const metrics = [...others, ...cpuMetric]
  const annotated = KubeObject.records(decode(given, currentMetricsAnnotation)).map(statusToV2)
  const current = annotated.length > 0 || cpuNow === undefined
    ? annotated
    : [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: cpuNow } } }]
  const conditions = decode(given, conditionsAnnotation)
  const behavior = decode(given, behaviorAnnotation)
  const kept = Object.fromEntries(Object.entries(given).filter(([k]) => !roundTrip.includes(k)))
  const out: Json = {
    ...v1,
    apiVersion: "autoscaling/v2",
    spec: compact({ ...spec, metrics: metrics.length === 0 ? undefined : metrics, behavior }),
    ...(v1.status === undefined ? {} : {
      status: compact({ ...status, currentMetrics: current.length === 0 ? undefined : current, conditions: Array.isArray(conditions) ? conditions : undefined })
    })
  }
  return KubeObject.withMeta(out, { annotations: Object.keys(kept).length === 0 ? undefined : kept })
}
