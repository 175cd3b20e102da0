/**
 * One port, two protocols: plain HTTP (what the printed URL and in-process clients use) and HTTPS
 * with the server's self-signed certificate (what kubectl needs: client-go sends credentials only
 * over TLS). The first byte of a connection decides: 0x16 opens a TLS handshake.
 */
import { Effect, Schema } from "effect"
import * as http from "node:http"
import * as net from "node:net"
import { Duplex } from "node:stream"
import * as tls from "node:tls"
import type * as Certificate from "./Certificate.ts"

export class ListenError extends Schema.TaggedError<ListenError>()("ListenError", {
  message: Schema.String
}) {}

export interface Listener {
  readonly host: string
  readonly port: number
}

const tlsHandshake = 0x16

// TLS needs a stream it reads through JavaScript, so the bytes already taken to detect the
// protocol can be handed back (a raw socket's handle would skip them).
const replaying = (socket: net.Socket, first: Buffer): Duplex => {
  const duplex = new Duplex({
    read() {
      socket.resume()
    },
    write(chunk, encoding, callback) {
      socket.write(chunk, encoding, callback)
    },
    final(callback) {
      socket.end()
      callback()
    },
    destroy(error, callback) {
      socket.destroy(error ?? undefined)
      callback(error)
    }
  })
  duplex.push(first)
  socket.on("data", (data) => {
    if (!duplex.push(data)) socket.pause()
  })
  socket.on("end", () => duplex.push(null))
  socket.on("close", () => duplex.destroy())
  socket.on("error", (error) => duplex.destroy(error))
  return duplex
}

/**
 * Listens on `host:port` (0 picks a free port) and serves `handler` over HTTP and HTTPS until the
 * scope closes; closing drops open connections.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Certificate from "./Certificate.ts"
 * import * as Listener from "./Listener.ts"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const listener = yield* Listener.listen({
 *     host: "127.0.0.1", port: 0, certificate: Certificate.selfSigned(), handler: (_, res) => res.end("ok")
 *   })
 *   yield* Effect.log(listener.port)
 * }))
 */
export const listen = Effect.fnUntraced(function*(options: {
  readonly host: string
  readonly port: number
  readonly certificate: Certificate.Certificate
  readonly handler: (request: http.IncomingMessage, response: http.ServerResponse) => void
}) {
  const httpServer = http.createServer({ keepAliveTimeout: 30_000 }, options.handler)
  const secureContext = tls.createSecureContext({ cert: options.certificate.cert, key: options.certificate.key })
  const sockets = new Set<net.Socket>()
  const front = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => socket.destroy())
    socket.once("data", (first) => {
      socket.pause()
      if (first[0] === tlsHandshake) {
        const secure = new tls.TLSSocket(replaying(socket, first) as net.Socket, {
          isServer: true,
          secureContext,
          ALPNProtocols: ["http/1.1"]
        })
        secure.on("error", () => socket.destroy())
        httpServer.emit("connection", secure)
      } else {
        socket.unshift(first)
        httpServer.emit("connection", socket)
      }
      socket.resume()
    })
    socket.resume()
  })
  yield* Effect.callback<void, ListenError>((resume) => {
    const onError = (error: Error) =>
      resume(Effect.fail(new ListenError({ message: `cannot listen on ${options.host}:${options.port}: ${error.message}` })))
    front.once("error", onError)
    front.listen(options.port, options.host, () => {
      front.off("error", onError)
      resume(Effect.void)
    })
  })
  yield* Effect.addFinalizer(() =>
    Effect.callback<void>((resume) => {
      front.close(() => resume(Effect.void))
      httpServer.closeAllConnections()
      for (const socket of sockets) socket.destroy()
    })
  )
  const address = front.address() as net.AddressInfo
  return { host: options.host, port: address.port } satisfies Listener
})
