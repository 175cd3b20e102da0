/**
 * Events as kube-controller-manager's controllers record them (client-go's event recorder): a
 * core/v1 Event about the object, named `<object>.<hex time>`, from the controller's component; the
 * same event again (same object, type, reason and message) counts up the one recorded.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** What an event says about its object (one of a Pod's containers: `spec.containers{web}`). */
export interface Event {
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly message: string
  readonly fieldPath?: string
}

/** Who records: a controller's component, or a component on a host (a node's kubelet). */
export type Source = string | { readonly component: string; readonly host: string }

/**
 * The kubelet of the node a Pod is bound to, as the source of its events.
 *
 * @example
 * import * as ControllerEvents from "./ControllerEvents.ts"
 * ControllerEvents.kubelet({ spec: { nodeName: "kubefx-node" } }) // { component: "kubelet", host: "kubefx-node" }
 */
export const kubelet = (pod: KubeObject.KubeObject): Source => {
  const nodeName = KubeObject.record(pod.spec).nodeName
  return { component: "kubelet", host: typeof nodeName === "string" ? nodeName : "" }
}

const componentOf = (source: Source) => (typeof source === "string" ? source : source.component)
const hostOf = (source: Source) => (typeof source === "string" ? "" : source.host)

// client-go names an event by its time in nanoseconds, in hex; the clock here counts milliseconds.
const suffix = () => (BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000))).toString(16)

/**
 * The Event recording `event` about `involved` from `source`, at `now`.
 *
 * @example
 * import * as ControllerEvents from "./ControllerEvents.ts"
 * const db = { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "db", namespace: "default", uid: "u" } }
 * ControllerEvents.make(db, "statefulset-controller", { type: "Normal", reason: "SuccessfulCreate", message: "create Pod db-0 in StatefulSet db successful" }, "2026-01-01T00:00:00Z").involvedObject
 */
export const make = (involved: KubeObject.KubeObject, source: Source, event: Event, now: string): KubeObject.KubeObject => {
  const m = KubeObject.meta(involved)
  const component = componentOf(source)
  const host = hostOf(source)
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${m.name ?? ""}.${suffix()}`, namespace: m.namespace ?? "default" },
    // Only what the object has: a cluster-scoped one has no namespace, a node's kubelet refers to
    // its node by name alone.
    involvedObject: Object.fromEntries(Object.entries({
      kind: involved.kind,
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      apiVersion: involved.apiVersion,
      resourceVersion: m.resourceVersion,
      fieldPath: event.fieldPath
    }).filter(([, value]) => value !== undefined)),
    reason: event.reason,
    message: event.message,
    source: host === "" ? { component } : { component, host },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    type: event.type,
    eventTime: null,
    reportingComponent: component,
    reportingInstance: host
  }
}

const sameEvent = (stored: KubeObject.KubeObject, involved: KubeObject.KubeObject, source: Source, event: Event) => {
  const about = KubeObject.record(stored.involvedObject)
  return about.uid === KubeObject.meta(involved).uid && about.fieldPath === event.fieldPath && stored.reason === event.reason &&
    stored.message === event.message && stored.type === event.type && KubeObject.record(stored.source).component === componentOf(source)
}

/**
 * Records `event` about `involved` from `source`: a new Event, or the same one counted up. A
 * refused write is dropped, as the recorder drops it.
 *
 * @example
 * import * as ControllerEvents from "./ControllerEvents.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const options: import("./Rest.ts").WriteOptions
 * declare const db: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const recorded = ControllerEvents.record(env, options, db, "statefulset-controller", { type: "Warning", reason: "FailedCreate", message: "..." })
 */
export const record = (
  env: Rest.Env,
  written: Rest.WriteOptions,
  involved: KubeObject.KubeObject,
  source: Source,
  event: Event
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const events = env.registry.byStorage("events")[0]
    if (events === undefined) return Effect.void
    const namespace = KubeObject.meta(involved).namespace ?? "default"
    const now = KubeObject.timestamp()
    // Recorded by the component's binary: its field manager.
    const component = componentOf(source)
    const options = {
      ...written,
      fieldManager: component === "kubelet" ? "kubelet" : component === "default-scheduler" ? "kube-scheduler" : written.fieldManager
    }
    const before = env.store.list("events", namespace).find((stored) => sameEvent(stored, involved, source, event))
    if (before === undefined) return Effect.ignore(Rest.create(env, events, namespace, make(involved, source, event, now), options))
    const target = { resource: events, namespace, name: KubeObject.meta(before).name ?? "" }
    return Effect.ignore(Rest.update(env, target, undefined, options, (current) =>
      Effect.succeed({ ...current, count: KubeObject.number(current.count, 1) + 1, lastTimestamp: now })))
  })
