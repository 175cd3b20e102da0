import { assert, describe, it } from "@effect/vitest"
import { Builtins } from "@kubefx/kube"
import * as Written from "../src/client/Written.ts"

const configMap = (name: string, resourceVersion: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion },
  data: { version: resourceVersion }
})

describe("Written", () => {
  it("answers a raw object with the decoded write of the same uid and resourceVersion, and nothing else", () => {
    const written = Written.make()
    const decoded = configMap("a", "5")
    written.remember(Builtins.ConfigMap, decoded)
    assert.strictEqual(written.lookup(Builtins.ConfigMap, JSON.parse(JSON.stringify(decoded))), decoded)
    // a newer version, another object, another resource declaration: decoded anew
    assert.isUndefined(written.lookup(Builtins.ConfigMap, configMap("a", "6")))
    assert.isUndefined(written.lookup(Builtins.ConfigMap, configMap("b", "5")))
    assert.isUndefined(written.lookup(Builtins.Secret, configMap("a", "5")))
    assert.isUndefined(written.lookup(Builtins.ConfigMap, { metadata: {} }))
  })

  it("keeps at most its capacity, dropping the oldest", () => {
    const written = Written.make(2)
    const [a, b, c] = [configMap("a", "1"), configMap("b", "2"), configMap("c", "3")]
    for (const object of [a, b, c]) written.remember(Builtins.ConfigMap, object)
    assert.isUndefined(written.lookup(Builtins.ConfigMap, a))
    assert.strictEqual(written.lookup(Builtins.ConfigMap, b), b)
    assert.strictEqual(written.lookup(Builtins.ConfigMap, c), c)
  })

  it("answers the exact text of a write answer with its decoded object, once, and nothing else", () => {
    const written = Written.make()
    const decoded = configMap("a", "5")
    const text = JSON.stringify(decoded)
    written.remember(Builtins.ConfigMap, decoded, text)
    // one character off, another declaration of the kind: not this write
    assert.isUndefined(written.takeText(Builtins.ConfigMap, text.replace('"5"}', '"6"}')))
    assert.isUndefined(written.takeText(Builtins.Secret, text))
    assert.strictEqual(written.takeText(Builtins.ConfigMap, text), decoded)
    // a watch brings a version back once: the memo lets go of text and object, so a second line of
    // it is parsed and decoded anew
    assert.isUndefined(written.takeText(Builtins.ConfigMap, text))
    assert.isUndefined(written.lookup(Builtins.ConfigMap, JSON.parse(text)))
    // an object whose text was not kept stays found by its version
    const other = configMap("b", "7")
    written.remember(Builtins.ConfigMap, other)
    assert.strictEqual(written.lookup(Builtins.ConfigMap, JSON.parse(JSON.stringify(other))), other)
  })

  it("tells texts of one length and resourceVersion apart, and keeps no text without a resourceVersion", () => {
    const written = Written.make()
    // Two answers that differ only in the name's last letter: the same length and version.
    const [a, b] = [configMap("a", "5"), configMap("b", "5")]
    written.remember(Builtins.ConfigMap, a, JSON.stringify(a))
    assert.isUndefined(written.takeText(Builtins.ConfigMap, JSON.stringify(b)))
    // the later of the two is the one kept
    written.remember(Builtins.ConfigMap, b, JSON.stringify(b))
    assert.isUndefined(written.takeText(Builtins.ConfigMap, JSON.stringify(a)))
    assert.strictEqual(written.takeText(Builtins.ConfigMap, JSON.stringify(b)), b)
    // a text without a resourceVersion is not kept, and a line without one is not looked up
    const bare = { ...configMap("c", "7"), metadata: { name: "c", namespace: "default", uid: "uid-c", resourceVersion: "7" } }
    const unversioned = JSON.stringify({ ...bare, metadata: { name: "c", namespace: "default", uid: "uid-c" } })
    written.remember(Builtins.ConfigMap, bare, unversioned)
    assert.isUndefined(written.takeText(Builtins.ConfigMap, unversioned))
    assert.strictEqual(written.lookup(Builtins.ConfigMap, bare), bare)
  })

  it("keeps at most its text capacity, dropping the oldest", () => {
    const written = Written.make(10, 2)
    const objects = [configMap("a", "1"), configMap("b", "2"), configMap("c", "3")]
    for (const object of objects) written.remember(Builtins.ConfigMap, object, JSON.stringify(object))
    assert.isUndefined(written.takeText(Builtins.ConfigMap, JSON.stringify(objects[0])))
    assert.strictEqual(written.takeText(Builtins.ConfigMap, JSON.stringify(objects[2])), objects[2])
    // the object memo keeps its own, larger capacity
    assert.strictEqual(written.lookup(Builtins.ConfigMap, objects[0]), objects[0])
  })

  it("keeps at most its text characters, dropping the oldest, and no text larger than all of them", () => {
    const [a, b, c] = [configMap("a", "1"), configMap("b", "2"), configMap("c", "3")]
    const size = JSON.stringify(a).length
    const written = Written.make(10, 10, 2 * size)
    for (const object of [a, b, c]) written.remember(Builtins.ConfigMap, object, JSON.stringify(object))
    assert.isUndefined(written.takeText(Builtins.ConfigMap, JSON.stringify(a)))
    assert.strictEqual(written.takeText(Builtins.ConfigMap, JSON.stringify(b)), b)
    assert.strictEqual(written.takeText(Builtins.ConfigMap, JSON.stringify(c)), c)
    const large = { ...configMap("d", "4"), data: { message: "x".repeat(3 * size) } }
    written.remember(Builtins.ConfigMap, large, JSON.stringify(large))
    assert.isUndefined(written.takeText(Builtins.ConfigMap, JSON.stringify(large)))
    // a taken text gives its characters back: two more fit
    written.remember(Builtins.ConfigMap, a, JSON.stringify(a))
    written.remember(Builtins.ConfigMap, c, JSON.stringify(c))
    assert.strictEqual(written.takeText(Builtins.ConfigMap, JSON.stringify(a)), a)
    assert.strictEqual(written.takeText(Builtins.ConfigMap, JSON.stringify(c)), c)
  })
})
