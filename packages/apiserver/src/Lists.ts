/**
 * Paginated lists: `limit` and opaque `continue` tokens that carry the revision of the first
 * page, so every page is read at that revision (and expires with it).
 */
import { Effect } from "effect"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

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
 * One page of `items` (ordered by key): those after `after`, at most `limit` of them, with the
 * token for the next page when more remain.
 *
 * @example
 * import * as Lists from "./Lists.ts"
 * const items = ["a", "b", "c"].map((name) => ({ metadata: { name } }))
 * Lists.page(items, { limit: 2, after: undefined, revision: 7, countRemaining: true }).remaining // 1
 */
export const page = (
  items: ReadonlyArray<KubeObject.KubeObject>,
  options: {
    readonly limit: number | undefined
    readonly after: string | undefined
    readonly revision: number
    readonly countRemaining: boolean
  }
): Page => {
  const keyOf = (o: KubeObject.KubeObject) => {
    const m = KubeObject.meta(o)
    return KubeObject.key(m.namespace, m.name ?? "")
  }
  const start = options.after === undefined ? items : items.filter((o) => keyOf(o) > options.after!)
  if (options.limit === undefined || options.limit <= 0 || start.length <= options.limit) {
    return { items: start, continue: undefined, remaining: undefined }
  }
  const pageItems = start.slice(0, options.limit)
  return {
    items: pageItems,
    continue: encodeToken({ revision: options.revision, after: keyOf(pageItems[pageItems.length - 1]!) }),
    remaining: options.countRemaining ? start.length - options.limit : undefined
  }
}
