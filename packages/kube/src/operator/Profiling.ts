/**
 * Profiles of the operator's process taken on demand, as controller-runtime's pprof endpoints:
 * `/debug/profile/cpu?seconds=N`, V8's CPU profile over N seconds (a `.cpuprofile`, for Chrome
 * DevTools or speedscope), and `/debug/profile/heap?seconds=N`, V8's sampling heap profile over N
 * seconds (a `.heapprofile`: what was allocated, and by which code). Served only when the
 * operator's `http` options ask for it (`profiling: true`): a profile shows the code and slows it
 * while it is taken. One profile at a time.
 *
 * Internal to the operator: not exported from `@kubefx/kube`.
 *
 * @since 0.1.0
 */
import { Effect, Option, Schema, type Scope, Semaphore } from "effect"
import { type HttpRouter, HttpServerResponse } from "effect/http"
import { Session } from "node:inspector/promises"

/** How long a profile runs unless asked: 10 seconds; at most 5 minutes. */
const defaultSeconds = 10
const maxSeconds = 300

class InspectorError extends Schema.TaggedError<InspectorError>()("InspectorError", { message: Schema.String }) {}

// A session of the process's own inspector, connected for as long as the profile is taken.
const session = Effect.acquireRelease(
  Effect.sync(() => {
    const opened = new Session()
    opened.connect()
    return opened
  }),
  (opened) => Effect.sync(() => opened.disconnect())
)

const post = (opened: Session, method: string, params?: object) =>
  Effect.tryPromise({
    try: () => opened.post(method as never, params as never) as Promise<unknown>,
    catch: (error) => new InspectorError({ message: `${method}: ${error instanceof Error ? error.message : String(error)}` })
  })

/**
 * V8's CPU profile of the process over `seconds`.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Profiling from "./Profiling.ts"
 * const profile = Effect.scoped(Profiling.cpu(5)) // Effect<unknown>: a .cpuprofile's JSON
 */
export const cpu = (seconds: number) =>
  Effect.gen(function*() {
    const opened = yield* session
    yield* post(opened, "Profiler.enable")
    yield* post(opened, "Profiler.start")
    yield* Effect.sleep(`${seconds} seconds`)
    const { profile } = (yield* post(opened, "Profiler.stop")) as { readonly profile: unknown }
    return profile
  })

/**
 * V8's sampling heap profile of the process over `seconds`: what was allocated, by which code.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Profiling from "./Profiling.ts"
 * const profile = Effect.scoped(Profiling.heap(5)) // Effect<unknown>: a .heapprofile's JSON
 */
export const heap = (seconds: number) =>
  Effect.gen(function*() {
    const opened = yield* session
    yield* post(opened, "HeapProfiler.enable")
    yield* post(opened, "HeapProfiler.startSampling", { samplingInterval: 32_768 })
    yield* Effect.sleep(`${seconds} seconds`)
    const { profile } = (yield* post(opened, "HeapProfiler.stopSampling")) as { readonly profile: unknown }
    return profile
  })

// `?seconds=N`, a whole number from 1 to 300, else why not.
const secondsOf = (url: string): number | string => {
  const asked = new URL(url, "http://localhost").searchParams.get("seconds")
  if (asked === null) return defaultSeconds
  const seconds = Number(asked)
  return Number.isInteger(seconds) && seconds >= 1 && seconds <= maxSeconds
    ? seconds
    : `seconds must be a whole number from 1 to ${maxSeconds}, not ${JSON.stringify(asked)}`
}

/**
 * Adds the profile endpoints to a router.
 *
 * @example
 * import { Effect } from "effect"
 * import { HttpRouter } from "effect/http"
 * import * as Profiling from "./Profiling.ts"
 * const routes = HttpRouter.use((router) => Profiling.mount(router))
 */
export const mount = (router: HttpRouter.HttpRouter) =>
  Effect.gen(function*() {
    // One inspector profile at a time: a second asks again later.
    const one = yield* Semaphore.make(1)
    const busy = () => HttpServerResponse.jsonUnsafe({ message: "a profile is being taken: ask again once it is done" }, { status: 409 })
    const endpoint = (kind: "cpu" | "heap", take: (seconds: number) => Effect.Effect<unknown, InspectorError, Scope.Scope>) =>
      router.add("GET", `/debug/profile/${kind}`, (request) => {
        const seconds = secondsOf(request.url)
        if (typeof seconds === "string") return Effect.succeed(HttpServerResponse.jsonUnsafe({ message: seconds }, { status: 400 }))
        const file = `kubefx-${kind}-${new Date().toISOString().replace(/[:.]/g, "-")}.${kind === "cpu" ? "cpuprofile" : "heapprofile"}`
        return Effect.scoped(take(seconds)).pipe(
          Effect.map((profile) =>
            HttpServerResponse.jsonUnsafe(profile, { headers: { "content-disposition": `attachment; filename="${file}"` } })
          ),
          Effect.catch((error) => Effect.succeed(HttpServerResponse.jsonUnsafe({ message: error.message }, { status: 500 }))),
          one.withPermitsIfAvailable(1),
          Effect.map(Option.getOrElse(busy))
        )
      })
    yield* endpoint("cpu", cpu)
    yield* endpoint("heap", heap)
  })
