/**
 * The proxy the environment names for an API server, as client-go's transport finds it (Go's
 * `ProxyFromEnvironment`): `HTTPS_PROXY` for an https server and `HTTP_PROXY` for an http one (or
 * their lowercase forms), unless `NO_PROXY` names the host, and never for localhost or a loopback
 * address. A kubeconfig's `proxy-url` goes before it; an HTTP(S) proxy only (a SOCKS one is for a
 * kubeconfig's `proxy-url`).
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */
import { BlockList, isIP } from "node:net"

/** The variables read: `process.env` unless given. */
export type Environment = Readonly<Record<string, string | undefined>>

const variable = (env: Environment, name: string): string | undefined => {
  const value = env[name] ?? env[name.toLowerCase()]
  return value === undefined || value.trim() === "" ? undefined : value.trim()
}

// "[::1]" -> "::1"
const bare = (host: string): string => host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host

/**
 * Whether a URL's host is this machine: localhost, a 127.0.0.0/8 address or ::1 (brackets allowed).
 *
 * @example
 * import * as ProxyEnvironment from "./ProxyEnvironment.ts"
 * ProxyEnvironment.isLoopback("127.0.0.1") // true
 * ProxyEnvironment.isLoopback("[::1]") // true
 * ProxyEnvironment.isLoopback("10.0.0.1") // false
 */
export const isLoopback = (hostname: string): boolean => {
  const host = bare(hostname)
  if (host === "localhost" || host.endsWith(".localhost")) return true
  const family = isIP(host)
  return family === 4 ? host.startsWith("127.") : family === 6 ? host === "::1" : false
}

// One NO_PROXY entry against the host and port: an IP, a CIDR, a domain (itself and its
// subdomains) or ".domain" (its subdomains only), each with an optional port.
const excludes = (entry: string, host: string, port: string): boolean => {
  if (entry === "*") return true
  const cidr = entry.match(/^(.+)\/(\d+)$/)
  if (cidr !== null) {
    const family = isIP(cidr[1]!)
    if (family === 0 || isIP(host) !== family) return false
    const list = new BlockList()
    list.addSubnet(cidr[1]!, Number(cidr[2]), family === 4 ? "ipv4" : "ipv6")
    return list.check(host, family === 4 ? "ipv4" : "ipv6")
  }
  const withPort = entry.match(/^(\[[^\]]+\]|[^:]+):(\d+)$/)
  const name = bare((withPort?.[1] ?? entry).toLowerCase())
  if (withPort !== null && withPort[2] !== port) return false
  if (isIP(name) !== 0) return name === host
  if (name.startsWith(".")) return host.endsWith(name)
  return host === name || host.endsWith(`.${name}`)
}

/**
 * The proxy URL for requests to `server`, or undefined to connect directly.
 *
 * @example
 * import * as ProxyEnvironment from "./ProxyEnvironment.ts"
 * ProxyEnvironment.proxyFor("https://api.example.com:6443", { HTTPS_PROXY: "http://proxy:3128" }) // "http://proxy:3128"
 * ProxyEnvironment.proxyFor("https://api.example.com:6443", { HTTPS_PROXY: "http://proxy:3128", NO_PROXY: ".example.com" }) // undefined
 * ProxyEnvironment.proxyFor("https://127.0.0.1:6443", { HTTPS_PROXY: "http://proxy:3128" }) // undefined
 */
export const proxyFor = (server: string, env: Environment = process.env): string | undefined => {
  let url: URL
  try {
    url = new URL(server)
  } catch {
    return undefined
  }
  const proxy = variable(env, url.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY")
  const host = bare(url.hostname.toLowerCase())
  if (proxy === undefined || isLoopback(host)) return undefined
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80"
  const exclusions = (variable(env, "NO_PROXY") ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  if (exclusions.some((entry) => excludes(entry, host, port))) return undefined
  // Go reads a proxy given without a scheme as http://; a SOCKS one is left to the kubeconfig.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`
  return /^https?:\/\//i.test(withScheme) ? withScheme : undefined
}
