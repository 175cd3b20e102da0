/**
 * In a kubefx child: the bench kubeconfig's Kube client with an undici interceptor in front of its
 * dispatcher, so a child can count or observe every request the client sends without touching
 * kubefx.
 */
import { Kube, KubeConfig } from "@kubefx/kube"
import { Effect, type Scope } from "effect"
import type * as Undici from "undici"

/** An undici interceptor: given the next dispatch, the dispatch to use instead. */
export type Interceptor = (dispatch: Undici.Dispatcher.Dispatch) => Undici.Dispatcher.Dispatch

/**
 * The Kube client of the kubeconfig at `path`, every request going through `interceptor`.
 *
 * @example
 * import * as Intercepted from "./Intercepted.ts"
 * const kube = yield* Intercepted.kube(input.kubeconfigPath, (dispatch) => (options, handler) => {
 *   console.log(options.method, options.path)
 *   return dispatch(options, handler)
 * })
 */
export const kube = (path: string, interceptor: Interceptor): Effect.Effect<Kube.Client, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* KubeConfig.connect(yield* KubeConfig.load({ _tag: "File", path }))
    const dispatcher = connection.dispatcher?.compose(interceptor)
    if (dispatcher === undefined) return yield* Effect.die(new Error("expected an undici dispatcher for the bench kubeconfig"))
    return yield* Kube.make({ ...connection, dispatcher })
  })
