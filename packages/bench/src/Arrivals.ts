/**
 * In a latency child: the Kube layer for the bench's kubeconfig, its Widget watches observed at the
 * HTTP client. The first answer bytes carrying a pending sample's edit are its arrival: the moment
 * the operator's process has the event, before anything of kubefx (parsing, decoding, the informer,
 * the queue, a worker) has touched it. Arrival to reconcile start is kubefx's own part of a sample.
 */
import { Kube } from "@kubefx/kube"
import { Layer } from "effect"
import * as Intercepted from "./Intercepted.ts"
import * as Latency from "./Latency.ts"

// A pending edit is found in a chunk, or across a chunk's start and the end of the one before it.
const carried = 64

const needles = new WeakMap<object, Buffer>()
const needleOf = (sample: { readonly message: string }): Buffer => {
  let needle = needles.get(sample)
  if (needle === undefined) needles.set(sample, needle = Buffer.from(`"message":"${sample.message}"`))
  return needle
}

const observer = (waiting: Latency.Waiting) => {
  let tail: Buffer = Buffer.alloc(0)
  return (chunk: Buffer): void => {
    for (const sample of waiting.values()) {
      if (sample.arrivedAt !== undefined) continue
      const needle = needleOf(sample)
      if (chunk.includes(needle) || Buffer.concat([tail, chunk.subarray(0, needle.length)]).includes(needle)) {
        sample.arrivedAt = Latency.clockMillis()
      }
    }
    tail = chunk.subarray(Math.max(0, chunk.length - carried))
  }
}

/**
 * The Kube layer of `kubeconfigPath` whose watches of Widgets stamp `arrivedAt` on the samples
 * `waiting` holds.
 *
 * @example
 * import * as Arrivals from "./Arrivals.ts"
 * const waiting: Latency.Waiting = new Map()
 * Child.runEffect(program, Arrivals.layer(input.kubeconfigPath, waiting))
 */
export const layer = (kubeconfigPath: string, waiting: Latency.Waiting): Layer.Layer<Kube.Kube, unknown> =>
  Layer.effect(
    Kube.Kube,
    Intercepted.kube(kubeconfigPath, (dispatch) => (options, handler) => {
      const path = String(options.path)
      if (!path.includes(`/${Latency.watchedPlural}`) || !path.includes("watch=true")) return dispatch(options, handler)
      const observe = observer(waiting)
      const observed: typeof handler = Object.create(handler)
      observed.onResponseData = (controller, chunk) => {
        observe(chunk)
        handler.onResponseData?.(controller, chunk)
      }
      return dispatch(options, observed)
    })
  )
