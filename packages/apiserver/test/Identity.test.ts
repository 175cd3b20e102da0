import { Effect } from "effect"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { request } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import * as ApiServer from "../src/ApiServer.ts"
import * as Identity from "../src/Identity.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-identity-"))
  dirs.push(dir)
  return dir
}

/** GET over TLS, trusting `ca`: what a client holding an earlier kubeconfig does. */
const get = (url: string, token: string, ca: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request(`${url}/api/v1/namespaces`, { ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on("error", reject)
    req.end()
  })

describe("Identity", () => {
  it("a restart on the same data dir keeps the token and certificate, so earlier clients still connect", async () => {
    const dataDir = join(tempDir(), "data")
    const first = await ApiServer.start({ port: 0, dataDir })
    const { httpsUrl, token, certificateAuthority, port } = first
    await first.close()
    const second = await ApiServer.start({ port, dataDir })
    try {
      expect(second.token).toBe(token)
      expect(second.certificateAuthority).toBe(certificateAuthority)
      expect(await get(httpsUrl, token, certificateAuthority)).toBe(200)
      expect(statSync(Identity.file(dataDir)).mode & 0o777).toBe(0o600)
    } finally {
      await second.close()
    }
  })

  it("without a data dir each start is new; an explicit token wins over the kept one", async () => {
    const a = await Effect.runPromise(Identity.load({ hosts: ["127.0.0.1"] }))
    const b = await Effect.runPromise(Identity.load({ hosts: ["127.0.0.1"] }))
    expect(a.token).not.toBe(b.token)
    expect(a.certificate.cert).not.toBe(b.certificate.cert)
    const dataDir = tempDir()
    const kept = await Effect.runPromise(Identity.load({ hosts: ["127.0.0.1"], dataDir }))
    const given = await Effect.runPromise(Identity.load({ hosts: ["127.0.0.1"], dataDir, token: "given" }))
    expect(given.token).toBe("given")
    expect(given.certificate.cert).toBe(kept.certificate.cert)
    // Another bind address needs another certificate.
    const moved = await Effect.runPromise(Identity.load({ hosts: ["127.0.0.2"], dataDir }))
    expect(moved.certificate.cert).not.toBe(kept.certificate.cert)
    expect(moved.token).toBe("given")
  })
})
