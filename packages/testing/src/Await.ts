/**
 * Waiting, in a test, for an object to reach a state: a predicate, or a condition with a status.
 * A wait that times out fails with the object's last state, so a failing test says what it saw.
 *
 * @since 0.1.0
 */
import { Kube, type KubeError, type ObjectMeta, type Resource } from "@kubefx/kube"
import { Duration, Effect, Option, Ref, type Result, Schema } from "effect"

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
export const until = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  name: string,
  namespace: string | undefined,
  predicate: (object: A) => boolean,
  options: Options = {}
): Effect.Effect<A, AwaitTimeout, Kube.Kube> =>
  poll(resource, name, namespace, options, {
    done: (read) => read._tag === "Success" && predicate(read.success) ? Option.some(read.success) : Option.none(),
    missed: (last, within) =>
      `did not reach ${options.description ?? "the awaited state"} within ${within}; ${
        last === undefined ? "it does not exist" : `last seen:\n${JSON.stringify(last, null, 2)}`
      }`
  })

/** Reads the object every {@link pollInterval} until `done` answers, or fails when the timeout passes. */
const poll = Effect.fnUntraced(function*<A extends ObjectMeta.KubeObject, B>(
  resource: Resource.Resource<A>,
  name: string,
  namespace: string | undefined,
  options: Options,
  awaited: {
    readonly done: (read: Result.Result<A, KubeError.KubeError | Resource.DecodeError>) => Option.Option<B>
    readonly missed: (last: A | undefined, within: string) => string
  }
) {
  const kube = yield* Kube.Kube
  const last = yield* Ref.make<A | undefined>(undefined)
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "10 seconds")
  const step: Effect.Effect<Option.Option<B>> = Effect.result(kube.get(resource, name, namespace)).pipe(
    Effect.tap((read) => read._tag === "Success" ? Ref.set(last, read.success) : Effect.void),
    Effect.map(awaited.done)
  )
  const reached = Effect.gen(function*() {
    for (;;) {
      const done = yield* step
      if (Option.isSome(done)) return done.value
      yield* Effect.sleep(pollInterval)
    }
  })
  return yield* reached.pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.flatMap(Ref.get(last), (seen) =>
          Effect.fail(new AwaitTimeout({
            message: `${describe(resource, name, namespace)} ${awaited.missed(seen, Duration.format(timeout))}`,
            last: seen
          })))
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
export const deleted = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  name: string,
  namespace: string | undefined,
  options: Options = {}
): Effect.Effect<void, AwaitTimeout, Kube.Kube> =>
  poll(resource, name, namespace, options, {
    done: (read) => read._tag === "Failure" && read.failure._tag === "NotFound" ? Option.some(undefined) : Option.none(),
    missed: (last, within) => `was not deleted within ${within}; last seen:\n${JSON.stringify(last, null, 2)}`
  })
