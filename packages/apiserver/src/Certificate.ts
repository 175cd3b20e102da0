/**
 * A self-signed serving certificate, made at start. kubectl (client-go) only sends credentials
 * over TLS, so the server also speaks HTTPS, and the kubeconfig it writes trusts this certificate.
 * Node has no API that issues certificates, so the X.509 structure is encoded here (DER) and
 * signed with an ECDSA P-256 key.
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto"

export interface Certificate {
  /** The certificate, PEM; also the CA that clients trust. */
  readonly cert: string
  /** The private key, PKCS#8 PEM. */
  readonly key: string
}

const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n])
  const bytes: Array<number> = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

const tlv = (tag: number, ...content: ReadonlyArray<Buffer>): Buffer => {
  const body = Buffer.concat(content)
  return Buffer.concat([Buffer.from([tag]), length(body.length), body])
}

const sequence = (...content: ReadonlyArray<Buffer>) => tlv(0x30, ...content)
const set = (...content: ReadonlyArray<Buffer>) => tlv(0x31, ...content)
const octets = (...content: ReadonlyArray<Buffer>) => tlv(0x04, ...content)
const bits = (content: Buffer) => tlv(0x03, Buffer.from([0]), content)
const bool = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0]))
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"))
const explicit = (n: number, ...content: ReadonlyArray<Buffer>) => tlv(0xa0 + n, ...content)

// DER integers are minimal: no leading zero byte unless the next byte would read as negative.
const integer = (bytes: Buffer): Buffer => {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0 && (bytes[start + 1]! & 0x80) === 0) start++
  const minimal = bytes.subarray(start)
  return tlv(0x02, (minimal[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), minimal]) : minimal)
}

const oid = (dotted: string): Buffer => {
  const [a, b, ...rest] = dotted.split(".").map(Number)
  const out: Array<number> = [a! * 40 + b!]
  for (const n of rest) {
    const chunk: Array<number> = [n & 0x7f]
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80)
    out.push(...chunk)
  }
  return tlv(0x06, Buffer.from(out))
}

const utcTime = (date: Date): Buffer => {
  const pad = (n: number) => String(n).padStart(2, "0")
  const text = `${pad(date.getUTCFullYear() % 100)}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}` +
    `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`
  return tlv(0x17, Buffer.from(text, "ascii"))
}

const ipBytes = (ip: string): Buffer | undefined => {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return Buffer.from(ip.split(".").map(Number))
  if (ip === "::1") return Buffer.from([...new Array(15).fill(0), 1])
  return undefined
}

const ecdsaWithSha256 = sequence(oid("1.2.840.10045.4.3.2"))

/**
 * A self-signed certificate for `localhost`, 127.0.0.1, ::1 and `hosts`, valid from an hour ago for
 * `days` (default 365).
 *
 * @example
 * import { X509Certificate } from "node:crypto"
 * import * as Certificate from "./Certificate.ts"
 * const { cert } = Certificate.selfSigned(["127.0.0.1"])
 * new X509Certificate(cert).subjectAltName // "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1"
 */
export const selfSigned = (hosts: ReadonlyArray<string> = [], options: { readonly days?: number | undefined } = {}): Certificate => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const name = sequence(set(sequence(oid("2.5.4.3"), utf8("kubefx"))))
  const now = Date.now()
  const ips = [...new Set(["127.0.0.1", "::1", ...hosts])].flatMap((h) => ipBytes(h) ?? [])
  const dns = [...new Set(["localhost", ...hosts.filter((h) => ipBytes(h) === undefined && h !== "")])]
  const altNames = sequence(
    ...dns.map((d) => tlv(0x82, Buffer.from(d, "ascii"))),
    ...ips.map((ip) => tlv(0x87, ip))
  )
  const extensions = explicit(
    3,
    sequence(
      sequence(oid("2.5.29.19"), bool(true), octets(sequence(bool(true)))),
      // digitalSignature and keyCertSign
      sequence(oid("2.5.29.15"), bool(true), octets(tlv(0x03, Buffer.from([2, 0x84])))),
      sequence(oid("2.5.29.37"), octets(sequence(oid("1.3.6.1.5.5.7.3.1")))),
      sequence(oid("2.5.29.17"), octets(altNames))
    )
  )
  const serial = randomBytes(16)
  serial[0] = serial[0]! & 0x7f
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(utcTime(new Date(now - 60 * 60 * 1000)), utcTime(new Date(now + (options.days ?? 365) * 24 * 60 * 60 * 1000))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    extensions
  )
  const der = sequence(tbs, ecdsaWithSha256, bits(sign("sha256", tbs, privateKey)))
  const base64 = der.toString("base64").replace(/(.{64})/g, "$1\n").trimEnd()
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`,
    key: String(privateKey.export({ type: "pkcs8", format: "pem" }))
  }
}
