/**
 * Fleet child: the limit. The same 2N writes as every contestant (a server-side apply of each
 * Widget's ConfigMap, then a server-side apply of its Ready status) sent raw over HTTP at the same
 * concurrency, with no cache, no watch and no decoding. The Widgets are listed before the clock starts.
 */
import * as Child from "../Child.ts"
import type * as Fleet from "../Fleet.ts"
import * as Raw from "../Raw.ts"
import * as Workload from "../Workload.ts"

const input = Child.input<Fleet.Input>()
const stop = Child.stopRequested()
const raw = Raw.make(input.url, input.token, input.concurrency)
const collection = `${Workload.apiPath}/namespaces/${Workload.namespace}/widgets`

const widgets: ReadonlyArray<Workload.WidgetLike> = JSON.parse((await raw.ok("GET", collection)).body).items

const cpuAtStart = Child.cpuSeconds()
let cpuAtHalf = NaN
Child.started()
await Raw.forEach(widgets, input.concurrency, async (widget, index) => {
  if (index === Math.floor(widgets.length / 2)) cpuAtHalf = Child.cpuSeconds()
  const configMap = Workload.configMap(widget)
  await raw.ok(
    "PATCH",
    `/api/v1/namespaces/${Workload.namespace}/configmaps/${configMap.metadata.name}?fieldManager=${Workload.fieldManager}&force=true`,
    configMap,
    Raw.applyPatch
  )
  await raw.ok("PATCH", `${collection}/${widget.metadata?.name}/status?fieldManager=${Workload.fieldManager}&force=true`, {
    apiVersion: Workload.Widget.apiVersion,
    kind: Workload.Widget.kind,
    metadata: { name: widget.metadata?.name, namespace: Workload.namespace },
    status: Workload.readyStatus(widget, new Date())
  }, Raw.applyPatch)
})
await stop
raw.close()
const cpuAtEnd = Child.cpuSeconds()
Child.finish({ peakRssMb: Child.peakRssMb(), cpuSeconds: cpuAtEnd - cpuAtStart, secondHalfCpuSeconds: cpuAtEnd - cpuAtHalf } satisfies Fleet.Report)
