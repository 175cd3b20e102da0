/**
 * A Pod's graceful deletion, as kube-apiserver's pod strategy decides it: a Pod bound to a node and
 * still running is marked (`deletionTimestamp` that many seconds ahead, `deletionGracePeriodSeconds`)
 * and left to its kubelet, which stops its containers and deletes it for good; one on no node, or
 * ended, goes at once. A delete of a Pod already being deleted may only shorten its grace period.
 */
import { KubeObject } from "@kubefx/schema/internal"

export type Plan =
  /** Deleted as any object is: at once, or marked while finalizers hold it. */
  | { readonly _tag: "Immediate" }
  /** Already being deleted within the grace period asked for: nothing changes. */
  | { readonly _tag: "Pending" }
  /** Marked with this deletion time and grace period (0: marked, then deleted at once). */
  | { readonly _tag: "Graceful"; readonly deletionTimestamp: string; readonly gracePeriodSeconds: number }

/**
 * What a delete asking for `gracePeriodSeconds` (undefined: the Pod's own) does to the Pod at
 * `now` (epoch milliseconds). A negative grace period counts as one second.
 *
 * @example
 * import * as GracefulDeletion from "./GracefulDeletion.ts"
 * const pod = { spec: { nodeName: "node-1", terminationGracePeriodSeconds: 30 }, status: { phase: "Running" } }
 * GracefulDeletion.plan(pod, undefined, Date.parse("2026-01-01T00:00:00Z"))
 * // { _tag: "Graceful", deletionTimestamp: "2026-01-01T00:00:30Z", gracePeriodSeconds: 30 }
 */
export const plan = (pod: KubeObject.KubeObject, gracePeriodSeconds: number | undefined, now: number): Plan => {
  const asked = gracePeriodSeconds !== undefined && gracePeriodSeconds < 0 ? 1 : gracePeriodSeconds
  const m = KubeObject.meta(pod)
  if (m.deletionTimestamp !== undefined) {
    const current = m.deletionGracePeriodSeconds
    if (current === undefined || current <= 0) return { _tag: "Immediate" }
    if (asked === undefined || asked >= current) return { _tag: "Pending" }
    const shortened = Date.parse(m.deletionTimestamp) + (asked - current) * 1000
    return { _tag: "Graceful", deletionTimestamp: KubeObject.timestamp(new Date(shortened)), gracePeriodSeconds: asked }
  }
  const spec = KubeObject.record(pod.spec)
  const phase = KubeObject.record(pod.status).phase
  const own = typeof spec.terminationGracePeriodSeconds === "number" ? spec.terminationGracePeriodSeconds : 0
  const unbound = typeof spec.nodeName !== "string" || spec.nodeName === ""
  const period = unbound || phase === "Succeeded" || phase === "Failed" ? 0 : asked ?? own
  return { _tag: "Graceful", deletionTimestamp: KubeObject.timestamp(new Date(now + period * 1000)), gracePeriodSeconds: period }
}
