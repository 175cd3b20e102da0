/**
 * One port, two protocols: plain HTTP (what the printed URL and in-process clients use) and HTTPS
 * with the server's self-signed certificate (what kubectl needs: client-go sends credentials only
 * over TLS). The first byte of a connection decides: 0x16 opens a TLS handshake.
 *
 * Over TLS the server offers HTTP/2 first and HTTP/1.1 after it, as kube-apiserver does: client-go
 * (kubectl) then multiplexes every request and watch over one connection, as it does against a
 * cluster; a client that offers only HTTP/1.1 gets it.
 */
import { Effect, Schema } from "effect"
import * as http from "node:http"
import * as http2 from "node:http2"
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

// kube-apiserver's HTTP/2 settings: 100 streams a connection (its flag's default, Go's client
// default), 256 KiB frames and per-stream windows (most objects fit one frame), 1 MiB of headers.
const http2Settings: http2.Settings = {
  maxConcurrentStreams: 100,
  maxFrameSize: 256 * 1024,
  initialWindowSize: 256 * 1024,
  maxHeaderListSize: 1024 * 1024
}

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
  readonly handler: (
    request: http.IncomingMessage | http2.Http2ServerRequest,
    response: http.ServerResponse | http2.Http2ServerResponse
  ) => void
}) {
  const httpServer = http.createServer({ keepAliveTimeout: 30_000 }, options.handler)
  const http2Server = http2.createServer({ settings: http2Settings }, options.handler)
  // Never listens: it takes the connections whose first byte opened a TLS handshake, and hands each
  // on once the handshake chose its protocol.
  const tlsServer = tls.createServer({ cert: options.certificate.cert, key: options.certificate.key, ALPNProtocols: ["h2", "http/1.1"] })
  tlsServer.on("secureConnection", (secure) => (secure.alpnProtocol === "h2" ? http2Server : httpServer).emit("connection", secure))
  tlsServer.on("tlsClientError", (_, secure) => secure.destroy())
  const sockets = new Set<net.Socket>()
  const front = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => socket.destroy())
    socket.once("data", (first) => {
      socket.pause()
      if (first[0] === tlsHandshake) {
        tlsServer.emit("connection", replaying(socket, first))
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
