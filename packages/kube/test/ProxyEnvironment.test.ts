/**
 * The proxy the environment names, as Go's ProxyFromEnvironment (client-go, kubectl) reads it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ProxyEnvironment from "../src/client/ProxyEnvironment.ts"

const proxy = "http://proxy.corp:3128"
const via = (server: string, env: ProxyEnvironment.Environment) => ProxyEnvironment.proxyFor(server, env)

describe("ProxyEnvironment.proxyFor", () => {
  it("HTTPS_PROXY for https servers, HTTP_PROXY for http ones, uppercase before lowercase, and none when unset or empty", () => {
    assert.strictEqual(via("https://api.example.com:6443", { HTTPS_PROXY: proxy }), proxy)
    assert.strictEqual(via("https://api.example.com:6443", { https_proxy: proxy }), proxy)
    assert.strictEqual(via("https://api.example.com:6443", { HTTPS_PROXY: proxy, https_proxy: "http://other:1" }), proxy)
    assert.isUndefined(via("https://api.example.com:6443", { HTTP_PROXY: proxy }))
    assert.strictEqual(via("http://api.example.com:8080", { HTTP_PROXY: proxy }), proxy)
    assert.isUndefined(via("https://api.example.com:6443", {}))
    assert.isUndefined(via("https://api.example.com:6443", { HTTPS_PROXY: " " }))
  })

  it("never for localhost or a loopback address", () => {
    for (const server of ["https://localhost:6443", "https://127.0.0.1:6443", "https://127.9.9.9", "https://[::1]:6443", "https://kube.localhost"]) {
      assert.isUndefined(via(server, { HTTPS_PROXY: proxy }), server)
    }
  })

  it("NO_PROXY: a name and its subdomains, a leading dot for subdomains only, IPs, CIDRs, ports and *", () => {
    const env = (noProxy: string) => ({ HTTPS_PROXY: proxy, NO_PROXY: noProxy })
    assert.isUndefined(via("https://api.example.com", env("example.com")))
    assert.isUndefined(via("https://example.com", env("example.com")))
    assert.strictEqual(via("https://notexample.com", env("example.com")), proxy)
    assert.isUndefined(via("https://api.example.com", env(".example.com")))
    assert.strictEqual(via("https://example.com", env(".example.com")), proxy)
    assert.isUndefined(via("https://10.1.2.3:6443", env("10.0.0.0/8")))
    assert.strictEqual(via("https://11.1.2.3:6443", env("10.0.0.0/8")), proxy)
    assert.isUndefined(via("https://10.1.2.3:6443", env("10.1.2.3")))
    assert.isUndefined(via("https://[fd00::1]:6443", env("fd00::/8")))
    assert.isUndefined(via("https://api.example.com:6443", env("api.example.com:6443")))
    assert.strictEqual(via("https://api.example.com:443", env("api.example.com:6443")), proxy)
    assert.isUndefined(via("https://api.example.com", env("api.example.com:443")))
    assert.isUndefined(via("https://anything.example", env("*")))
    assert.isUndefined(via("https://API.Example.com", env(" other.org , EXAMPLE.COM ")))
    assert.isUndefined(via("https://api.example.com", { HTTPS_PROXY: proxy, no_proxy: "example.com" }))
  })

  it("a proxy without a scheme is http://; a SOCKS one is left to a kubeconfig's proxy-url", () => {
    assert.strictEqual(via("https://api.example.com", { HTTPS_PROXY: "proxy.corp:3128" }), "http://proxy.corp:3128")
    assert.strictEqual(via("https://api.example.com", { HTTPS_PROXY: "https://proxy.corp" }), "https://proxy.corp")
    assert.isUndefined(via("https://api.example.com", { HTTPS_PROXY: "socks5://proxy.corp:1080" }))
  })
})
