/**
 * Kubernetes Events about the objects a controller handles, as `kubectl describe` shows them.
 * Recording never slows or fails a reconcile: events go through a bounded queue to one writer, and
 * repeats of the same event for the same object within ten minutes raise its count instead of
 * creating another (client-go's aggregation).
 *
 * @since 0.1.0
 */
import { Clock, Effect, Queue, Scope } from "effect"
import * as Builtins from "../client/Builtins.ts"
import * as Kube from "../client/Kube.ts"
import type * as ObjectMeta from "../client/ObjectMeta.ts"

export interface Event {
  readonly type: "Normal" | "Warning"
  /** A short UpperCamelCase reason, such as "Created" or "ReconcileError". */
  readonly reason: string
  readonly message: string
}

export interface Recorder {
  /** Queues an event about `object`; dropped (oldest first) if the writer falls far behind. */
  readonly record: (object: ObjectMeta.KubeObject, event: Event) => Effect.Effect<void>
}

interface Recorded {
  readonly name: string
  readonly namespace: string
  readonly count: number
  readonly at: number
}

const aggregateWindowMillis = 10 * 60 * 1000
const messageLimit = 1024

/**
 * A recorder writing core/v1 Events as `component`.
 *
 * @example
 * import { Effect } from "effect"
 * import { Events } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const events = yield* Events.make({ component: "widgets" })
 *   yield* events.record({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } },
 *     { type: "Normal", reason: "Created", message: "created the ConfigMap" })
 * })
 */
export const make = (options: { readonly component: string; readonly instance?: string | undefined }): Effect.Effect<Recorder, never, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const pending = yield* Queue.sliding<{ readonly object: ObjectMeta.KubeObject; readonly event: Event }>(1000)
    const recent = new Map<string, Recorded>()

    const write = (object: ObjectMeta.KubeObject, event: Event) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const namespace = object.metadata.namespace ?? "default"
        const message = event.message.length > messageLimit ? `${event.message.slice(0, messageLimit - 1)}…` : event.message
        const identity = [object.metadata.uid, object.kind, namespace, object.metadata.name, event.type, event.reason, message].join("\u0000")
        const time = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z")
        const previous = recent.get(identity)
        if (previous !== undefined && now - previous.at < aggregateWindowMillis) {
          const count = previous.count + 1
          yield* kube.patch(Builtins.Event, previous.name, previous.namespace, { count, lastTimestamp: time }, { type: "merge" })
          recent.set(identity, { ...previous, count, at: now })
          return
        }
        const name = `${object.metadata.name ?? "object"}.${now.toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`
        yield* kube.create(Builtins.Event, {
          apiVersion: "v1",
          kind: "Event",
          metadata: { name, namespace },
          involvedObject: {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.metadata.name,
            namespace: object.metadata.namespace,
            uid: object.metadata.uid,
            resourceVersion: object.metadata.resourceVersion
          },
          type: event.type,
          reason: event.reason,
          message,
          count: 1,
          firstTimestamp: time,
          lastTimestamp: time,
          source: { component: options.component },
          reportingComponent: options.component,
          reportingInstance: options.instance ?? options.component
        } as Builtins.Event)
        recent.set(identity, { name, namespace, count: 1, at: now })
        if (recent.size > 4096) {
          for (const [key, entry] of recent) if (now - entry.at >= aggregateWindowMillis) recent.delete(key)
        }
      }).pipe(Effect.catchCause((cause) => Effect.logDebug("could not record an event", cause)))

    yield* Queue.take(pending).pipe(
      Effect.flatMap(({ event, object }) => write(object, event)),
      Effect.forever,
      Effect.forkScoped
    )

    return { record: (object, event) => Effect.asVoid(Queue.offer(pending, { object, event })) }
  })
