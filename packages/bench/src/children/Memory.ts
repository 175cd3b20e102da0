/**
 * Memory child (run with `--expose-gc`): the heap after a full collection, before an Informer of
 * Widgets (whole, or their metadata alone) starts and after it has synced, and again once its watch has delivered a few events.
 * Until the watch delivers something, the stream machinery still holds the list it synced from
 * (the objects as decoded, before the transform), so the steady figure is the second one. The client
 * is built and has decoded a Widget before the first reading, so only the cache is in the difference.
 */
import { Informer, Kube, Resource } from "@kubefx/kube"
import { Effect } from "effect"
import * as Child from "../Child.ts"
import type * as Memory from "../Memory.ts"
import * as Raw from "../Raw.ts"
import * as Workload from "../Workload.ts"

const input = Child.input<Memory.Input>()
const edits = 3

const collect = () => {
  for (let i = 0; i < 4; i++) globalThis.gc?.()
  return process.memoryUsage().heapUsed
}

const program = Effect.gen(function*() {
  const kube = yield* Kube.Kube
  yield* kube.list(Workload.Widget, { limit: 1 })
  const raw = Raw.make(input.url, input.token, 1)
  const before = collect()
  const informer = input.cache === "metadata"
    ? yield* Informer.make(Resource.metadataOnly(Workload.Widget))
    : yield* Informer.make(Workload.Widget, input.cache === "kept" ? { transform: (widget) => widget } : {})
  yield* informer.awaitSynced
  const atSync = collect()
  for (let i = 0; i < edits; i++) {
    const name = Workload.widgetName(i)
    const edited = yield* Effect.promise(() =>
      raw.ok("PATCH", `${Workload.apiPath}/namespaces/${Workload.namespace}/widgets/${name}`, { spec: { message: `edit ${i}` } }, Raw.mergePatch)
    )
    yield* informer.awaitVersion(`${Workload.namespace}/${name}`, JSON.parse(edited.body).metadata.resourceVersion)
  }
  raw.close()
  const settled = collect()
  const size = informer.size()
  if (size !== input.objects) return yield* Effect.die(new Error(`cached ${size} of ${input.objects}`))
  return {
    cachedObjects: size,
    bytesPerObject: Math.round((settled - before) / size),
    bytesPerObjectAtSync: Math.round((atSync - before) / size)
  } satisfies Memory.Report
})

Child.runEffect(program, Kube.layer({ _tag: "File", path: input.kubeconfigPath }))
