/**
 * Waiting, in a test, for an object to reach a state: a predicate, or a condition with a status.
 * A wait that times out fails with the object's last state, so a failing test says what it saw.
 *
 * @since 0.1.0
 */
import { Kube, type ObjectMeta, type Resource } from "@kubefx/kube"
import { Duration, Effect, Schema } from "effect"

/** The object did not reach the awaited state in time; `message` shows its last state. */
export class AwaitTimeout extends Schema.TaggedError<AwaitTimeout>()("AwaitTimeout", {
  message: Schema.String,
  /** The object as last read (undefined if it never existed). */
  last: Schema.Unknown
}) {}

export interface Options {
  /** How long to wait (default 10 seconds). */
  readonly timeout?: Duration.Input
  /** Says what was awaited, in the timeout's message. */
  readonly description?: string
}

const pollInterval = Duration.millis(50)

/**
 * Reads the object until `predicate` holds and returns it; fails with {@link AwaitTimeout} after
 * the timeout, showing the last state read.
 *
 * @example
 * import { Await } from "@kubefx/testing"
 * import { Builtins } from "@kubefx/kube"
 * const filled = Await.until(Builtins.ConfigMap, "settings", "default", (cm) => cm.data?.mode !== undefined)
 */
export const until = Effect.fn("Await.until")(function*<A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  name: string,
  namespace: string | undefined,
  predicate: (object: A) => boolean,
  options: Options = {}
) {
  const kube = yield* Kube.Kube
  let last: A | undefined
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "10 seconds")
  const reached = Effect.gen(function*() {
    for (;;) {
      const found = yield* Effect.option(kube.get(resource, name, namespace))
      if (found._tag === "Some") {
        last = found.value
        if (predicate(found.value)) return found.value
      }
      yield* Effect.sleep(pollInterval)
    }
  })
  return yield* reached.pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => {
        const state = last === undefined ? "it does not exist" : `last seen:\n${JSON.stringify(last, null, 2)}`
        return Effect.fail(new AwaitTimeout({
          message: `${describe(resource, name, namespace)} did not reach ${options.description ?? "the awaited state"} within ${Duration.format(timeout)}; ${state}`,
          last
        }))
      }
    })
  )
})

const describe = (resource: Resource.Resource<any>, name: string, namespace: string | undefined) =>
  `${resource.kind} ${namespace === undefined ? "" : `${namespace}/`}${name}`

interface WithConditions {
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }> | undefined } | undefined
}

/**
 * Waits until the object's condition `type` has `status` (default "True") and returns the object.
 *
 * @example
 * import { Await } from "@kubefx/testing"
 * declare const Widget: import("@kubefx/kube").Resource.Resource<import("@kubefx/kube").ObjectMeta.KubeObject & { status?: { conditions?: ReadonlyArray<{ type: string; status: string }> } }>
 * const ready = Await.condition(Widget, "a", "default", "Ready")
 */
export const condition = <A extends ObjectMeta.KubeObject & WithConditions>(
  resource: Resource.Resource<A>,
  name: string,
  namespace: string | undefined,
  type: string,
  status: "True" | "False" | "Unknown" = "True",
  options: Options = {}
): Effect.Effect<A, AwaitTimeout, Kube.Kube> =>
  until(resource, name, namespace, (object) => object.status?.conditions?.some((c) => c.type === type && c.status === status) === true, {
    description: `${type}=${status}`,
    ...options
  })

/**
 * Waits until the object is gone (404).
 *
 * @example
 * import { Await } from "@kubefx/testing"
 * import { Builtins } from "@kubefx/kube"
 * const collected = Await.deleted(Builtins.ConfigMap, "a-config", "default")
 */
export const deleted = Effect.fn("Await.deleted")(function*<A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  name: string,
  namespace: string | undefined,
  options: Options = {}
) {
  const kube = yield* Kube.Kube
  let last: A | undefined
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "10 seconds")
  const gone = Effect.gen(function*() {
    for (;;) {
      const read = yield* Effect.result(kube.get(resource, name, namespace))
      if (read._tag === "Failure" && read.failure._tag === "NotFound") return
      if (read._tag === "Success") last = read.success
      yield* Effect.sleep(pollInterval)
    }
  })
  return yield* gone.pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(new AwaitTimeout({
          message: `${describe(resource, name, namespace)} was not deleted within ${Duration.format(timeout)}; last seen:\n${JSON.stringify(last, null, 2)}`,
          last
        }))
    })
  )
})
