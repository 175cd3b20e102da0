import { describe, expect, it } from "vitest"
import * as Protobuf from "../src/Protobuf.ts"

// A tiny protobuf writer for the test's envelopes.
const varint = (n: number): Array<number> => {
  const out: Array<number> = []
  for (let v = n; ; v = Math.floor(v / 128)) {
    if (v < 128) return [...out, v]
    out.push((v & 0x7f) | 0x80)
  }
}
const field = (n: number, bytes: Uint8Array | string): Array<number> => {
  const b = typeof bytes === "string" ? Buffer.from(bytes) : bytes
  return [...varint((n << 3) | 2), ...varint(b.length), ...b]
}
const flag = (n: number, value: boolean) => [...varint(n << 3), value ? 1 : 0]
const message = (...parts: Array<Array<number>>) => new Uint8Array(parts.flat())
const envelope = (apiVersion: string, kind: string, raw: Uint8Array) =>
  new Uint8Array([0x6b, 0x38, 0x73, 0x00, ...field(1, message(field(1, apiVersion), field(2, kind))), ...field(2, raw)])

describe("Protobuf", () => {
  it("decodes a ConfigMap with metadata, labels and data", () => {
    const raw = message(
      field(1, message(field(1, "cm"), field(3, "ns"), field(11, message(field(1, "app"), field(2, "web"))), field(14, "a/b"))),
      field(2, message(field(1, "k"), field(2, "v"))),
      field(3, message(field(1, "bin"), field(2, new Uint8Array([0, 255])))),
      flag(4, true)
    )
    expect(Protobuf.decodeObject(envelope("v1", "ConfigMap", raw))).toEqual({
      _tag: "Success",
      object: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "cm", namespace: "ns", labels: { app: "web" }, finalizers: ["a/b"] },
        data: { k: "v" },
        binaryData: { bin: "AP8=" },
        immutable: true
      }
    })
  })

  it("refuses kinds it does not know, non-envelopes and truncated bodies", () => {
    expect(Protobuf.decodeObject(envelope("apps/v1", "DaemonSet", message()))._tag).toBe("Failure")
    expect(Protobuf.decodeObject(Buffer.from('{"kind":"ConfigMap"}'))._tag).toBe("Failure")
    expect(Protobuf.decodeObject(new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x50, 1]))._tag).toBe("Failure")
  })
})
