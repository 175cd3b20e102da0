/**
 * Fault injection for reliability tests: rules that add latency or answer a share of requests
 * with 5xx, 409 (writes only) or 429 with Retry-After, optionally only for some resources, verbs
 * or namespaces; and controls over open watches (close them, expire them with 410, hold their
 * events and deliver them in order on resume). Random choices come from a seeded generator, so a
 * run with the same seed and the same request sequence injects the same faults.
 */
import { Effect, Schema } from "effect"
import * as Status from "./Status.ts"

export const Verb = Schema.Literals(["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"])
export type Verb = typeof Verb.Type

const Latency = Schema.Union([
  Schema.Number,
  Schema.Struct({ min: Schema.Number, max: Schema.Number })
])

/** One fault rule. A request takes the first rule that matches it. */
export const Rule = Schema.Struct({
  /** Plural resource name, optionally with group: "configmaps", "widgets.example.com". */
  resource: Schema.optionalKey(Schema.String),
  verbs: Schema.optionalKey(Schema.Array(Verb)),
  namespace: Schema.optionalKey(Schema.String),
  /** Milliseconds added before the request is handled: fixed, or uniform in [min, max]. */
  latencyMs: Schema.optionalKey(Latency),
  /** Share (0..1) of matching requests answered with `errorCode` (default 500). */
  errorRate: Schema.optionalKey(Schema.Number),
  errorCode: Schema.optionalKey(Schema.Int),
  /** Share of matching writes answered 409 Conflict. */
  conflictRate: Schema.optionalKey(Schema.Number),
  /** Share of matching requests answered 429 with Retry-After `retryAfterSeconds` (default 1). */
  throttleRate: Schema.optionalKey(Schema.Number),
  retryAfterSeconds: Schema.optionalKey(Schema.Int)
})
export type Rule = typeof Rule.Type

export const Config = Schema.Struct({
  seed: Schema.optionalKey(Schema.Number),
  rules: Schema.Array(Rule)
})
export type Config = typeof Config.Type

/** Which watches a watch control applies to (all when empty). */
export const WatchTarget = Schema.Struct({
  resource: Schema.optionalKey(Schema.String),
  namespace: Schema.optionalKey(Schema.String)
})
export type WatchTarget = typeof WatchTarget.Type

/** What a request is, for matching rules. */
export interface RequestInfo {
  readonly verb: Verb
  readonly group: string
  readonly plural: string
  readonly namespace: string | undefined
  readonly name?: string | undefined
}

/** What to do to one request: wait `delayMs`, then fail with `error` if set. */
export interface Decision {
  readonly delayMs: number
  readonly error: Status.ApiError | undefined
}

/** An open watch as fault injection sees it. */
export interface WatchHandle {
  readonly group: string
  readonly plural: string
  readonly namespace: string | undefined
  readonly close: () => void
  readonly expire: () => void
}

export interface Faults {
  readonly set: (config: Config) => void
  readonly clear: () => void
  readonly config: () => Config
  readonly decide: (request: RequestInfo) => Decision
  /** Ends matching open watches (clients see the stream end and re-watch). Returns how many. */
  readonly closeWatches: (target?: WatchTarget) => number
  /** Sends matching open watches a 410 Expired ERROR event and ends them. Returns how many. */
  readonly expireWatches: (target?: WatchTarget) => number
  /** Holds events of matching watches (new ones too) until `resumeWatches`. */
  readonly pauseWatches: (target?: WatchTarget) => void
  readonly resumeWatches: () => void
  /** Registers an open watch; returns the function that unregisters it. */
  readonly register: (watch: WatchHandle) => () => void
  /** Completes at once, or when delivery to a watch on this resource is resumed. */
  readonly awaitDelivery: (watch: Pick<WatchHandle, "group" | "plural" | "namespace">) => Effect.Effect<void>
}

const writes: ReadonlyArray<Verb> = ["create", "update", "patch", "delete", "deletecollection"]

/**
 * A deterministic generator of numbers in [0, 1) (mulberry32).
 *
 * @example
 * import * as Faults from "./Faults.ts"
 * const a = Faults.random(7)
 * const b = Faults.random(7)
 * a() === b() // true
 */
export const random = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const matchesResource = (pattern: string | undefined, group: string, plural: string): boolean =>
  pattern === undefined || pattern === plural || pattern === (group === "" ? plural : `${plural}.${group}`)

const matchesTarget = (target: WatchTarget | undefined, watch: Pick<WatchHandle, "group" | "plural" | "namespace">) =>
  target === undefined ||
  (matchesResource(target.resource, watch.group, watch.plural) &&
    (target.namespace === undefined || target.namespace === watch.namespace))

/**
 * A fault injector with no rules.
 *
 * @example
 * import * as Faults from "./Faults.ts"
 * const faults = Faults.make()
 * faults.set({ seed: 1, rules: [{ resource: "configmaps", verbs: ["create"], throttleRate: 1 }] })
 * faults.decide({ verb: "create", group: "", plural: "configmaps", namespace: "default" }).error?.code // 429
 */
export const make = (): Faults => {
  let config: Config = { rules: [] }
  let next = random(0)
  const watches = new Set<WatchHandle>()
  let paused: ReadonlyArray<WatchTarget | undefined> = []
  const resumers = new Set<() => void>()

  const isPaused = (watch: Pick<WatchHandle, "group" | "plural" | "namespace">) =>
    paused.some((target) => matchesTarget(target, watch))

  const decide = (request: RequestInfo): Decision => {
    const rule = config.rules.find((r) =>
      matchesResource(r.resource, request.group, request.plural) &&
      (r.verbs === undefined || r.verbs.includes(request.verb)) &&
      (r.namespace === undefined || r.namespace === request.namespace)
    )
    if (rule === undefined) return { delayMs: 0, error: undefined }
    const latency = rule.latencyMs
    const delayMs = latency === undefined
      ? 0
      : typeof latency === "number"
      ? latency
      : latency.min + next() * Math.max(0, latency.max - latency.min)
    const target = { group: request.group, plural: request.plural, kind: "" }
    const name = request.name ?? ""
    let error: Status.ApiError | undefined
    if (rule.throttleRate !== undefined && next() < rule.throttleRate) {
      error = Status.tooManyRequests(rule.retryAfterSeconds ?? 1)
    } else if (rule.errorRate !== undefined && next() < rule.errorRate) {
      error = Status.serverError(rule.errorCode ?? 500, "injected fault: server error")
    } else if (rule.conflictRate !== undefined && writes.includes(request.verb) && next() < rule.conflictRate) {
      error = Status.conflict(target, name, Status.modified)
    }
    return { delayMs, error }
  }

  const each = (target: WatchTarget | undefined, f: (w: WatchHandle) => void) => {
    let n = 0
    for (const w of [...watches]) {
      if (matchesTarget(target, w)) {
        f(w)
        n++
      }
    }
    return n
  }

  return {
    set: (c) => {
      config = c
      next = random(c.seed ?? 0)
    },
    clear: () => {
      config = { rules: [] }
      next = random(0)
    },
    config: () => config,
    decide,
    closeWatches: (target) => each(target, (w) => w.close()),
    expireWatches: (target) => each(target, (w) => w.expire()),
    pauseWatches: (target) => {
      paused = [...paused, target]
    },
    resumeWatches: () => {
      paused = []
      for (const resume of [...resumers]) resume()
    },
    register: (watch) => {
      watches.add(watch)
      return () => watches.delete(watch)
    },
    awaitDelivery: (watch) =>
      Effect.suspend(function loop(): Effect.Effect<void> {
        if (!isPaused(watch)) return Effect.void
        return Effect.callback<void>((resume) => {
          const done = () => {
            resumers.delete(done)
            resume(Effect.void)
          }
          resumers.add(done)
          return Effect.sync(() => resumers.delete(done))
        }).pipe(Effect.andThen(Effect.suspend(loop)))
      })
  }
}
