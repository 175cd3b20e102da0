/**
 * kube-apiserver's response compression (`APIResponseCompression`, on by default): an answer whose
 * body is larger than 128 KiB goes gzipped, at level 1, to a client whose `Accept-Encoding` names
 * gzip. Every client-go client (kubectl, controller-runtime) asks for it, so a large list costs a
 * fraction of its bytes on the wire. Streamed answers (watches, logs) are never compressed, nor is
 * one that already has a content encoding (an extension server's, passed on).
 */
import { Effect } from "effect"
import { HttpBody, HttpServerResponse } from "effect/http"
import { gzip } from "node:zlib"

/** Bodies up to this many bytes go as they are, whatever the client accepts. */
export const thresholdBytes = 128 * 1024

// kube's level: the least CPU, for a size within about 1.3x of the best.
const level = 1

/**
 * Whether an `Accept-Encoding` header asks for gzip: one of its comma-separated tokens is exactly
 * `gzip`, as kube reads it (a token with parameters, `gzip;q=0.5`, is not).
 *
 * @example
 * import * as ResponseCompression from "./ResponseCompression.ts"
 * ResponseCompression.acceptsGzip("gzip, deflate") // true
 * ResponseCompression.acceptsGzip("br") // false
 */
export const acceptsGzip = (header: string | undefined): boolean =>
  header !== undefined && header.split(",").some((token) => token.trim() === "gzip")

/**
 * The response as a client that sent `acceptEncoding` gets it: gzipped when it asks for gzip and the
 * body is over the threshold, unchanged otherwise. Compression runs on libuv's thread pool.
 *
 * @example
 * import { Effect } from "effect"
 * import { HttpServerResponse } from "effect/http"
 * import * as ResponseCompression from "./ResponseCompression.ts"
 * const response = HttpServerResponse.text("x".repeat(200_000), { contentType: "application/json" })
 * const sent = Effect.runPromise(ResponseCompression.compress(response, "gzip"))
 * // (await sent).headers["content-encoding"] === "gzip"
 */
export const compress = (
  response: HttpServerResponse.HttpServerResponse,
  acceptEncoding: string | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const body = response.body
  if (
    body._tag !== "Uint8Array" || body.contentLength <= thresholdBytes || response.headers["content-encoding"] !== undefined ||
    !acceptsGzip(acceptEncoding)
  ) return Effect.succeed(response)
  return Effect.callback<HttpServerResponse.HttpServerResponse>((resume) => {
    gzip(body.body, { level }, (error, compressed) => {
      // A compressor that fails (out of memory) leaves the answer as it was.
      if (error !== null) return resume(Effect.succeed(response))
      const vary = response.headers["vary"]
      resume(Effect.succeed(
        HttpServerResponse.setBody(response, HttpBody.uint8Array(compressed, body.contentType)).pipe(
          HttpServerResponse.setHeaders({
            "content-encoding": "gzip",
            vary: vary === undefined ? "Accept-Encoding" : `${vary}, Accept-Encoding`
          })
        )
      ))
    })
  })
}
