/**
 * Test support: a server on a random loopback port with its kubeconfig in a fresh temporary
 * directory (removed on close), and a small authenticated JSON client for raw API calls.
 */
import { Effect, Exit, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ApiServer from "./ApiServer.ts"

export interface TestServer extends ApiServer.Running {
  /** The kubeconfig written for this server (in a temporary directory). */
  readonly kubeconfigPath: string
  /** A temporary directory for the test's own files, removed on close. */
  readonly dir: string
  /** Sends a request with the token; JSON bodies in and out. */
  readonly request: (
    method: string,
    path: string,
    options?: { readonly body?: unknown; readonly headers?: Readonly<Record<string, string>> }
  ) => Promise<Reply>
}

/** An answer to {@link TestServer.request}. */
export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed JSON body (undefined when empty, the text when not JSON). */
  readonly json: any
}

/**
 * Starts a server for a test file; `close()` stops it and removes its directory.
 *
 * @example
 * import * as Testing from "./Testing.ts"
 * const server = await Testing.start()
 * const ns = await server.request("GET", "/api/v1/namespaces/default")
 * await server.close()
 */
export const start = async (options: ApiServer.Options = {}): Promise<TestServer> => {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-apiserver-"))
  const kubeconfigPath = options.kubeconfigPath ?? join(dir, "kubeconfig")
  const scope = Effect.runSync(Scope.make())
  try {
    const server = await Effect.runPromise(ApiServer.make({ port: 0, ...options, kubeconfigPath }).pipe(Scope.provide(scope)))
    const request: TestServer["request"] = async (method, path, opts = {}) => {
      const body = opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body)
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${server.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...opts.headers
        },
        ...(body === undefined ? {} : { body })
      })
      const text = await response.text()
      let json: unknown = undefined
      try {
        json = text === "" ? undefined : JSON.parse(text)
      } catch {
        json = text
      }
      return { status: response.status, headers: response.headers, text, json }
    }
    return {
      ...server,
      kubeconfigPath,
      dir,
      request,
      close: async () => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        rmSync(dir, { recursive: true, force: true })
      }
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
}

/**
 * The same server in an Effect scope (e.g. `layer(...)` in @effect/vitest).
 *
 * @example
 * import { Effect } from "effect"
 * import * as Testing from "./Testing.ts"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const server = yield* Testing.scoped()
 *   yield* Effect.log(server.kubeconfigPath)
 * }))
 */
export const scoped = (options: ApiServer.Options = {}) =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (server) => Effect.promise(() => server.close()))
