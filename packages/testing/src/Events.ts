/**
 * The Events recorded about an object, as `kubectl describe` shows them: what a controller told
 * users about it.
 *
 * @since 0.1.0
 */
import { Builtins, Kube, type KubeError, type Resource } from "@kubefx/kube"
import { Effect } from "effect"

/**
 * The Events whose involved object is `name` in `namespace` (of `kind`, when given), oldest first.
 *
 * @example
 * import { Events } from "@kubefx/testing"
 * const events = Events.about("a", "default", "Widget")
 */
export const about: (
  name: string,
  namespace: string,
  kind?: string
) => Effect.Effect<ReadonlyArray<Builtins.Event>, KubeError.KubeError | Resource.DecodeError, Kube.Kube> = Effect.fn("Events.about")(function*(
  name: string,
  namespace: string,
  kind?: string
) {
  const kube = yield* Kube.Kube
  const selector = [`involvedObject.name=${name}`, ...(kind === undefined ? [] : [`involvedObject.kind=${kind}`])].join(",")
  const list = yield* kube.list(Builtins.Event, { namespace, fieldSelector: selector })
  return [...list.items].sort((a, b) =>
    (a.lastTimestamp ?? a.eventTime ?? "").localeCompare(b.lastTimestamp ?? b.eventTime ?? ""))
})
