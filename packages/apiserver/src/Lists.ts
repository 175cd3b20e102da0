/**
 * Paginated lists: `limit` and opaque `continue` tokens that carry the revision of the first
 * page, so every page is read at that revision (and expires with it).
 */
import { Effect } from "effect"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** The revision of a token that goes on at the latest revision (kube's `-1`). */
export const latest = -1

export interface Token {
  /** The revision every page of the list is read at. */
  readonly revision: number
  /** The key of the last object already returned. */
  readonly after: string
}

/**
 * Encodes a continue token.
 *
 * @example
 * import * as Lists from "./Lists.ts"
 * typeof Lists.encodeToken({ revision: 5, after: "default/a" }) // "string"
 */
export const encodeToken = (token: Token): string =>
  Buffer.from(JSON.stringify({ rv: token.revision, start: token.after })).toString("base64url")

/**
 * Decodes a continue token, or fails with a 400.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Lists from "./Lists.ts"
 * Effect.runSync(Lists.decodeToken(Lists.encodeToken({ revision: 5, after: "a" }))) // { revision: 5, after: "a" }
 */
export const decodeToken = (text: string): Effect.Effect<Token, Status.ApiError> => {
  try {
    const raw: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"))
    if (KubeObject.isObject(raw) && typeof raw.rv === "number" && typeof raw.start === "string") {
      return Effect.succeed({ revision: raw.rv, after: raw.start })
    }
  } catch {
    // fall through to the 400
  }
  return Effect.fail(Status.badRequest(`continue key is not valid: ${text.slice(0, 64)}`))
}

export interface Page {
  readonly items: ReadonlyArray<KubeObject.KubeObject>
  readonly continue: string | undefined
  readonly remaining: number | undefined
}

/**
 * One page of `items`, the objects after the continue key in key order (the store applies the key):
 * at most `limit` of them, with the token for the next page when more remain. `total`, when given,
 * is how many objects follow the continue key in all: `items` then holds only the first of them
 * (the store cut the page out itself).
 *
 * @example
 * import * as Lists from "./Lists.ts"
 * const items = ["a", "b", "c"].map((name) => ({ metadata: { name } }))
 * Lists.page(items, { limit: 2, revision: 7, countRemaining: true }).remaining // 1
 */
export const page = (
  items: ReadonlyArray<KubeObject.KubeObject>,
  options: {
    readonly limit: number | undefined
    readonly revision: number
    readonly countRemaining: boolean
    readonly total?: number | undefined
  }
): Page => {
  const left = options.total ?? items.length
  if (options.limit === undefined || options.limit <= 0 || left <= options.limit) {
    return { items, continue: undefined, remaining: undefined }
  }
  const pageItems = items.slice(0, options.limit)
  const last = KubeObject.meta(pageItems[pageItems.length - 1]!)
  return {
    items: pageItems,
    continue: encodeToken({ revision: options.revision, after: KubeObject.key(last.namespace, last.name ?? "") }),
    remaining: options.countRemaining ? left - options.limit : undefined
  }
}
