/**
 * Status conditions as kube's controllers keep them: a condition stated as it was keeps its times;
 * a changed one is stamped (Deployments' `lastUpdateTime`, Jobs' `lastProbeTime`; HPAs' and
 * APIServices' have no such time) and keeps its `lastTransitionTime` unless its status changed.
 */
import { KubeObject } from "@kubefx/schema/internal"

/** A condition as a controller states it. */
export interface Condition {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly reason: string
  readonly message: string
}

/**
 * The conditions after a controller states `next` over `previous`: those it does not state stay
 * when `keep` says so, before the stated ones, in their order.
 *
 * @example
 * import * as StatusConditions from "./StatusConditions.ts"
 * const available = { type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "ok" } as const
 * const [stated] = StatusConditions.set([], [available], { stamp: "lastUpdateTime", keep: () => false, now: "2026-01-01T00:00:00Z" })
 * // { ...available, lastUpdateTime: "2026-01-01T00:00:00Z", lastTransitionTime: "2026-01-01T00:00:00Z" }
 */
export const set = (
  previous: unknown,
  next: ReadonlyArray<Condition>,
  options: {
    /** The time a changed condition is stamped with besides `lastTransitionTime`, for kinds that keep one. */
    readonly stamp?: "lastUpdateTime" | "lastProbeTime" | undefined
    readonly keep: (type: string) => boolean
    readonly now?: string | undefined
  }
): ReadonlyArray<unknown> => {
  const now = options.now ?? KubeObject.timestamp()
  const old = KubeObject.records(previous)
  return [
    ...old.filter((c) => !next.some((n) => n.type === c.type) && options.keep(KubeObject.text(c.type))),
    ...next.map((condition) => {
      const before = old.find((c) => c.type === condition.type)
      if (before !== undefined && before.status === condition.status && before.reason === condition.reason && before.message === condition.message) return before
      const transition = before?.status === condition.status && typeof before.lastTransitionTime === "string" ? before.lastTransitionTime : now
      return { ...condition, ...(options.stamp === undefined ? {} : { [options.stamp]: now }), lastTransitionTime: transition }
    })
  ]
}
