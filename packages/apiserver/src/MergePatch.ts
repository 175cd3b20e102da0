/**
 * JSON merge patch (RFC 7386, `application/merge-patch+json`): objects merge key by key, `null`
 * removes a key, anything else (lists included) replaces the target value whole.
 */
import { Json } from "@kubefx/schema/internal"

/**
 * Applies a merge patch to a document (`undefined` for a missing document).
 *
 * @example
 * import * as MergePatch from "./MergePatch.ts"
 * MergePatch.apply({ a: "b", c: { d: "e", f: "g" } }, { a: "z", c: { f: null } })
 * // { a: "z", c: { d: "e" } }
 */
export const apply = (target: Json.Json | undefined, patch: Json.Json): Json.Json => {
  if (!Json.isObject(patch)) return patch
  // A Map, not property assignment: a "__proto__" key in a patch must stay an ordinary key.
  const out = new Map(Object.entries(Json.isObject(target) ? target : {}))
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) out.delete(key)
    else out.set(key, apply(out.get(key), value))
  }
  return Object.fromEntries(out)
}
