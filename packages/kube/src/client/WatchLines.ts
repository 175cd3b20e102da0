/**
 * A watch answer's lines read into watch events, a socket read's batch of lines at a time. Under
 * load the API server sends many events per read; reading them one Effect and one stream step each
 * cost an operator more CPU than parsing them. A batch's plain lines (objects that decode, bookmarks)
 * are read in one pass and go on as one chunk; a line that needs more (a warning, `onUndecodable`,
 * an ERROR) ends the chunk before it and is read on its own, so what it does happens after the
 * events before it have reached the consumer, as it would one line at a time.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */
import { Effect, Option, Stream } from "effect"
import type * as Kube from "./Kube.ts"
import * as KubeError from "./KubeError.ts"
import type * as ObjectMeta from "./ObjectMeta.ts"
import * as Resource from "./Resource.ts"
import type * as Written from "./Written.ts"

/**
 * The events of a watch answer's lines, in order: lines that are not watch events, and objects that
 * do not decode, are skipped with a warning (the latter told to `onUndecodable`); an ERROR event
 * fails the stream with its status.
 *
 * @example
 * import { Stream } from "effect"
 * import * as WatchLines from "./WatchLines.ts"
 * import * as Builtins from "./Builtins.ts"
 * import * as Written from "./Written.ts"
 * const events = WatchLines.events(Builtins.ConfigMap, Stream.make('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}'), undefined, Written.make())
 */
export const events = <A extends ObjectMeta.KubeObject, E>(
  resource: Resource.Resource<A>,
  lines: Stream.Stream<string, E>,
  onUndecodable: Kube.Undecodable | undefined,
  written: Written.Written
): Stream.Stream<Kube.WatchEvent<A>, E | KubeError.KubeError> =>
  lines.pipe(
    Stream.mapArray((batch) => [batch] as const),
    Stream.flatMap((batch) => Stream.paginate(0, (from: number) => page(resource, batch, from, onUndecodable, written)))
  )

const initialEventsEnd = "k8s.io/initial-events-end"

// What a line is without running anything: its event, nothing to deliver (null), an object still to
// decode, or undefined for a line that takes `watchEvent`'s path.
type Read<A> = Kube.WatchEvent<A> | null | { readonly decode: unknown; readonly type: "ADDED" | "MODIFIED" | "DELETED" }

const read = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, line: string, written: Written.Written): Read<A> | undefined => {
  const echo = ownEcho(resource, line, written)
  if (echo !== undefined) return echo
  const event = decodeRawEvent(line)
  if (Option.isNone(event)) return undefined
  const { type, object } = event.value
  switch (type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED": {
      const known = type === "DELETED" ? undefined : written.lookup(resource, object)
      return known !== undefined ? { type, object: known } : { decode: object, type }
    }
    case "BOOKMARK": {
      const metadata = (object as { metadata?: { resourceVersion?: string; annotations?: Record<string, string> } } | null)?.metadata
      const version = metadata?.resourceVersion
      if (version === undefined) return null
      // A streaming list's end: the objects sent before it are the collection at this version.
      return metadata?.annotations?.[initialEventsEnd] === "true" ? { type, resourceVersion: version, initialEventsEnd: true } : { type, resourceVersion: version }
    }
  }
  return undefined
}

// The lines of `batch` from `from` on, up to the first one that needs more than reading (which is
// read alone when it comes first), and where to go on.
const page = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  batch: ReadonlyArray<string>,
  from: number,
  onUndecodable: Kube.Undecodable | undefined,
  written: Written.Written
): Effect.Effect<readonly [ReadonlyArray<Kube.WatchEvent<A>>, Option.Option<number>], KubeError.KubeError> =>
  Effect.suspend(() => {
    const events: Array<Kube.WatchEvent<A>> = []
    const alone = (index: number) =>
      events.length > 0
        ? Effect.succeed([events, Option.some(index)] as const)
        : Effect.map(watchEvent(resource, batch[index]!, onUndecodable, written), (event) =>
          [Option.toArray(event), index + 1 < batch.length ? Option.some(index + 1) : Option.none()] as const)
    const loop = (index: number): Effect.Effect<readonly [ReadonlyArray<Kube.WatchEvent<A>>, Option.Option<number>], KubeError.KubeError> => {
      for (let i = index; i < batch.length; i++) {
        const line = read(resource, batch[i]!, written)
        if (line === null) continue
        if (line === undefined) return alone(i)
        if (!("decode" in line)) {
          events.push(line)
          continue
        }
        const now = Resource.decodeNow(resource, line.decode)
        if (now !== undefined) {
          events.push({ type: line.type, object: now })
          continue
        }
        return Effect.flatMap(Effect.option(Resource.decode(resource, line.decode)), (decoded) => {
          if (Option.isNone(decoded)) return alone(i)
          events.push({ type: line.type, object: decoded.value })
          return loop(i + 1)
        })
      }
      return Effect.succeed([events, Option.none()] as const)
    }
    return loop(from)
  })

// The API server writes an object's watch line as `{"type":"ADDED","object":` and its JSON, then `}`
// (kube-apiserver and the embedded server alike): a line whose JSON is the very text of one of this
// client's write answers is that answer's object, already decoded, and is not parsed.
const echoPrefixes = [["ADDED", `{"type":"ADDED","object":`], ["MODIFIED", `{"type":"MODIFIED","object":`]] as const

const ownEcho = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  line: string,
  written: Written.Written
): Kube.WatchEvent<A> | undefined => {
  if (!line.endsWith("}")) return undefined
  for (const [type, prefix] of echoPrefixes) {
    if (!line.startsWith(prefix)) continue
    const object = written.takeText(resource, line.slice(prefix.length, -1))
    return object === undefined ? undefined : { type, object }
  }
  return undefined
}

// A watch line is `{"type": "...", "object": ...}`: read without a Schema, it runs for every event.
const decodeRawEvent = (line: string): Option.Option<{ readonly type: string; readonly object: unknown }> => {
  try {
    const parsed = JSON.parse(line) as { readonly type?: unknown; readonly object?: unknown } | null
    return typeof parsed === "object" && parsed !== null && typeof parsed.type === "string" && "object" in parsed
      ? Option.some({ type: parsed.type, object: parsed.object })
      : Option.none()
  } catch {
    return Option.none()
  }
}

// One line with everything it may do: a line that is not a watch event is skipped and logged, so one
// bad line does not end the watch.
const watchEvent = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  line: string,
  onUndecodable: Kube.Undecodable | undefined,
  written: Written.Written
): Effect.Effect<Option.Option<Kube.WatchEvent<A>>, KubeError.KubeError> => {
  const known = read(resource, line, written)
  if (known === null) return Effect.succeed(Option.none())
  if (known !== undefined) {
    if (!("decode" in known)) return Effect.succeed(Option.some(known))
    const { decode: object, type } = known
    return Resource.decode(resource, object).pipe(
      Effect.map((decoded) => Option.some({ type, object: decoded })),
      Effect.catchTag("DecodeError", (error) =>
        Effect.logWarning(`skipping a ${resource.kind} that does not decode: ${error.message}`).pipe(
          Effect.andThen(onUndecodable?.(object, error, type) ?? Effect.void),
          Effect.as(Option.none())
        ))
    )
  }
  const event = decodeRawEvent(line)
  if (Option.isNone(event)) {
    return Effect.as(Effect.logWarning(`skipping an unreadable watch line for ${resource.kind}: ${line.slice(0, 200)}`), Option.none())
  }
  const { object, type } = event.value
  if (type === "ERROR") return Effect.fail(KubeError.fromStatus(Number((object as { code?: unknown } | null)?.code ?? 500), object))
  return Effect.as(Effect.logWarning(`skipping a watch event of unknown type ${type}`), Option.none())
}
