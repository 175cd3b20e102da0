/**
 * In a kubefx child: the bench kubeconfig's Kube client with an undici interceptor in front of its
 * dispatcher, so a child can count or observe every request the client sends without touching
 * kubefx.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
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
    // Read as an operator reads it (`Kube.layer`'s way): the bench's plain kubeconfig needs no
    // client-node, whose modules would sit in the heap the bench measures.
    const connection = yield* KubeConfig.connection({ _tag: "File", path })
    const dispatcher = connection.dispatcher ?? (yield* NodeHttpClient.makeDispatcher)
    return yield* Kube.make({ ...connection, dispatcher: dispatcher.compose(interceptor) })
  })
