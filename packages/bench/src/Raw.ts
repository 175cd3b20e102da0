/**
 * A raw HTTP client for the API server: Node's `http` with a keep-alive agent of a fixed number of
 * sockets, a bearer token and JSON bodies. It is what "the limit" sends its writes with, and what
 * the harness seeds and edits objects with, so no client library's overhead is in those figures.
 */
import * as http from "node:http"

export interface Reply {
  readonly status: number
  readonly body: string
}

export interface Raw {
  readonly request: (method: string, path: string, body?: unknown, contentType?: string) => Promise<Reply>
  /** Like `request`, but a status of 400 or more rejects with the answer in the message. */
  readonly ok: (method: string, path: string, body?: unknown, contentType?: string) => Promise<Reply>
  readonly close: () => void
}

/** Server-side apply. */
export const applyPatch = "application/apply-patch+yaml"
/** JSON merge patch. */
export const mergePatch = "application/merge-patch+json"

/**
 * A client of `url` ("http://127.0.0.1:PORT") holding at most `sockets` connections.
 *
 * @example
 * import * as Raw from "./Raw.ts"
 * const raw = Raw.make("http://127.0.0.1:6443", "token", 8)
 * const reply = await raw.request("GET", "/api/v1/namespaces")
 * raw.close()
 */
export const make = (url: string, token: string, sockets: number): Raw => {
  const base = new URL(url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets })
  const request = (method: string, path: string, body?: unknown, contentType = "application/json") =>
    new Promise<Reply>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const req = http.request({
        agent,
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-type": contentType, "content-length": Buffer.byteLength(payload) })
        }
      }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
        response.on("error", reject)
      })
      req.on("error", reject)
      req.end(payload)
    })
  const ok = async (method: string, path: string, body?: unknown, contentType?: string) => {
    const reply = await request(method, path, body, contentType)
    if (reply.status >= 400) throw new Error(`${method} ${path}: ${reply.status} ${reply.body.slice(0, 300)}`)
    return reply
  }
  return { request, ok, close: () => agent.destroy() }
}

/**
 * Runs `work` on every item with at most `concurrency` at a time.
 *
 * @example
 * import * as Raw from "./Raw.ts"
 * await Raw.forEach([1, 2, 3], 2, async (n) => console.log(n))
 */
export const forEach = async <A>(items: ReadonlyArray<A>, concurrency: number, work: (item: A, index: number) => Promise<void>) => {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      await work(items[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}
