import { assert, describe, it } from "@effect/vitest"
import { X509Certificate } from "node:crypto"
import * as Certificate from "../src/Certificate.ts"

describe("Certificate", () => {
  it("every self-signed certificate is valid DER, whatever its random serial (1,000 of them)", () => {
    for (let i = 0; i < 1000; i++) {
      const certificate = Certificate.selfSigned(["127.0.0.1", "localhost"])
      const parsed = new X509Certificate(certificate.cert)
      assert.isTrue(parsed.checkHost("localhost") !== undefined)
      // A DER serial has no redundant leading zero byte.
      assert.isFalse(/^00[0-7]/i.test(parsed.serialNumber), parsed.serialNumber)
    }
  })
})
