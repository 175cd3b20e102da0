/**
 * YAML as kubectl reads and writes it: manifests in, document streams out. One library for all of
 * kubefx (js-yaml, the one `@kubernetes/client-node` uses); timestamps stay strings, as in JSON.
 *
 * @since 0.1.0
 */
import * as JsYaml from "js-yaml"

/**
 * Objects as one YAML stream, documents separated by `---`. Undefined fields are left out and a
 * value shared by two fields is written twice (no anchors), as `JSON.stringify` would.
 *
 * @example
 * import { Yaml } from "@kubefx/kube"
 * Yaml.stringify([{ kind: "A" }, { kind: "B" }]) // "kind: A\n---\nkind: B\n"
 */
export const stringify = (objects: ReadonlyArray<unknown>): string =>
  objects.map((object) => JsYaml.dump(object, { noRefs: true, skipInvalid: true })).join("---\n")

/**
 * The documents of a YAML stream that are objects (empty documents and scalars are skipped).
 * Throws `YAMLException` on malformed YAML, with the line and column.
 *
 * @example
 * import { Yaml } from "@kubefx/kube"
 * Yaml.parseObjects("a: 1\n---\n---\nb: 2\n") // [{ a: 1 }, { b: 2 }]
 */
export const parseObjects = (text: string): ReadonlyArray<Record<string, unknown>> =>
  JsYaml.loadAll(text).filter((document): document is Record<string, unknown> =>
    typeof document === "object" && document !== null && !Array.isArray(document))
