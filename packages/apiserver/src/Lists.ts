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
 * token for the next page when more remain. `total`, when given, is how many objects follow `after`
 * in all: `items` then holds only the first of them (the store cut the page out itself).
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
    readonly total?: number | undefined
  }
): Page => {
  const from = options.after === undefined ? 0 : firstAfter(items, options.after)
  const left = options.total ?? items.length - from
  if (options.limit === undefined || options.limit <= 0 || left <= options.limit) {
    return { items: from === 0 ? items : items.slice(from), continue: undefined, remaining: undefined }
  }
  const pageItems = items.slice(from, from + options.limit)
  return {
    items: pageItems,
    continue: encodeToken({ revision: options.revision, after: keyOf(pageItems[pageItems.length - 1]!) }),
    remaining: options.countRemaining ? left - options.limit : undefined
  }
}

const keyOf = (o: KubeObject.KubeObject): string => {
  const m = KubeObject.meta(o)
  return KubeObject.key(m.namespace, m.name ?? "")
}

// The items are ordered by key, so the page starts at the first key past `after`: found by bisection,
// a page costs the same at the end of 100,000 objects as at their start.
const firstAfter = (items: ReadonlyArray<KubeObject.KubeObject>, after: string): number => {
  let low = 0
  let high = items.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (keyOf(items[mid]!) > after) high = mid
    else low = mid + 1
  }
  return low
}
