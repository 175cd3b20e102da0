/**
 * HTTP exchanges with the API server straight over an undici dispatcher: one `dispatch` per
 * request, its answer read as text, a watch's answer read as lines. An operator sends a request or
 * two per reconcile; a general HTTP client's per-request work (request and response objects,
 * header conversions, a stream and a fiber per body) cost it more CPU than the exchange itself.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Queue, Stream } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import { gunzip } from "node:zlib"
import type * as Undici from "undici"
import * as KubeError from "./KubeError.ts"

export interface Request {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** Path and query. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | undefined
}

/** Told each answer's status code as it arrives, or `<error>` when none came (client-go's codes). */
export type Observe = (code: string) => void

export interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

const ignore: Observe = () => {}
const noAnswer = "<error>"

/** The longest an answer may keep the client waiting: for its headers, and between body chunks. */
export const answerTimeoutMillis = 60_000

const isTimeout = (error: Error & { readonly code?: unknown }) =>
  error.code === "UND_ERR_HEADERS_TIMEOUT" || error.code === "UND_ERR_BODY_TIMEOUT"

const failure = (path: string, error: Error): KubeError.Transport | KubeError.Timeout =>
  isTimeout(error)
    ? new KubeError.Timeout({ message: `no answer from ${path} in ${answerTimeoutMillis / 1000}s`, code: 504 })
    : new KubeError.Transport({ message: error.message })

const dispatchOptions = (origin: string, request: Request, bodyTimeout: number): Undici.Dispatcher.DispatchOptions => ({
  origin,
  method: request.method,
  path: request.path,
  headers: request.headers,
  body: request.body ?? null,
  headersTimeout: answerTimeoutMillis,
  bodyTimeout
})

// undici fails every request queued on a connection that could not be made, then asserts that none
// is left: a request sent again from inside that failure (a retry, the next run of a worker) would
// land on the same connection and throw past every handler. Failures reach the client after it.
const afterUndici = (failed: () => void) => queueMicrotask(failed)

const text = (chunks: ReadonlyArray<Buffer>) =>
  chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")

/**
 * Sends `request` to `origin` and reads the whole answer; interrupting it aborts the request.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Exchange from "./Exchange.ts"
 * declare const dispatcher: import("undici").Dispatcher
 * const reply = Exchange.send(dispatcher, "https://127.0.0.1:6443", {
 *   method: "GET", path: "/api/v1/namespaces", headers: { accept: "application/json" }
 * })
 */
export const send = (
  dispatcher: Undici.Dispatcher,
  origin: string,
  request: Request,
  observe: Observe = ignore
): Effect.Effect<Reply, KubeError.Transport | KubeError.Timeout> =>
  Effect.callback((resume) => {
    let controller: Undici.Dispatcher.DispatchController | undefined
    let status = 0
    let headers: IncomingHttpHeaders = {}
    const chunks: Array<Buffer> = []
    dispatcher.dispatch(dispatchOptions(origin, request, answerTimeoutMillis), {
      onRequestStart: (started) => {
        controller = started
      },
      onResponseStart: (_, code, answered) => {
        status = code
        headers = answered
        observe(String(code))
      },
      onResponseData: (_, chunk) => {
        chunks.push(chunk)
      },
      onResponseEnd: () => {
        if (headers["content-encoding"] !== "gzip") return resume(Effect.succeed({ status, headers, body: text(chunks) }))
        // A large answer to a client that asked for gzip: inflated on libuv's thread pool.
        gunzip(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), (error, inflated) =>
          resume(
            error === null
              ? Effect.succeed({ status, headers, body: inflated.toString("utf8") })
              : Effect.fail(new KubeError.Transport({ message: `unreadable gzip answer from ${request.path}: ${error.message}` }))
          ))
      },
      onResponseError: (_, error) => {
        if (status === 0) observe(noAnswer)
        afterUndici(() => resume(Effect.fail(failure(request.path, error))))
      }
    })
    return Effect.sync(() => controller?.abort(new Error("interrupted")))
  })

// A consumer that falls this many lines behind pauses the socket until it catches up.
const highWaterLines = 4096

/**
 * Sends `request` and streams the answer's lines (without their line breaks, empty ones dropped)
 * as they arrive. An answer with a status of 400 or more fails the stream with `refused`'s error
 * for it, its body read whole. Ending the stream aborts the request.
 *
 * @example
 * import { Stream } from "effect"
 * import * as Exchange from "./Exchange.ts"
 * import * as KubeError from "./KubeError.ts"
 * declare const dispatcher: import("undici").Dispatcher
 * const events = Exchange.lines(dispatcher, "https://127.0.0.1:6443", {
 *   method: "GET", path: "/api/v1/configmaps?watch=true", headers: {}
 * }, (reply) => KubeError.fromStatus(reply.status, JSON.parse(reply.body)))
 */
export const lines = <E>(
  dispatcher: Undici.Dispatcher,
  origin: string,
  request: Request,
  refused: (reply: Reply) => E,
  observe: Observe = ignore
): Stream.Stream<string, E | KubeError.Transport | KubeError.Timeout> =>
  Stream.suspend(() => {
    let controller: Undici.Dispatcher.DispatchController | undefined
    let paused = false
    const answer = Stream.callback<string, E | KubeError.Transport | KubeError.Timeout>((queue) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const decoder = new TextDecoder()
          let status = 0
          let headers: IncomingHttpHeaders = {}
          let rest = ""
          const refusal: Array<Buffer> = []
          // A read's lines go to the consumer together, so it takes them as one batch.
          const push = (text: string) => {
            const parts = (rest + text).split("\n")
            rest = parts.pop()!
            const complete = parts.filter((part) => part.length > 0)
            if (complete.length > 0) Queue.offerAllUnsafe(queue, complete)
          }
          dispatcher.dispatch(dispatchOptions(origin, request, 0), {
            onRequestStart: (started) => {
              controller = started
            },
            onResponseStart: (_, code, answered) => {
              status = code
              headers = answered
              observe(String(code))
            },
            onResponseData: (current, chunk) => {
              if (status >= 400) {
                refusal.push(chunk)
                return
              }
              push(decoder.decode(chunk, { stream: true }))
              if (!paused && Queue.sizeUnsafe(queue) >= highWaterLines) {
                paused = true
                current.pause()
              }
            },
            onResponseEnd: () => {
              if (status >= 400) {
                Queue.failCauseUnsafe(queue, Cause.fail(refused({ status, headers, body: text(refusal) })))
              } else {
                push(decoder.decode() + "\n")
                Queue.endUnsafe(queue)
              }
            },
            onResponseError: (_, error) => {
              if (status === 0) observe(noAnswer)
              afterUndici(() => Queue.failCauseUnsafe(queue, Cause.fail(failure(request.path, error))))
            }
          })
        }),
        () => Effect.sync(() => controller?.abort(new Error("watch ended")))
      ))
    // What the consumer took, it took all of: the socket may read again.
    return Stream.mapArray(answer, (batch) => {
      if (paused) {
        paused = false
        controller?.resume()
      }
      return batch
    })
  })
