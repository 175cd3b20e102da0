/**
 * Fleet child: what a TypeScript team writes without kubefx. A `@kubernetes/client-node`
 * `makeInformer` with a handler per event, as the client's documentation shows it: every add or
 * update of a Widget that is not yet done applies its ConfigMap and then its Ready status (both with
 * server-side apply, as kubefx does). Handlers run as events arrive, with no queue and no limit;
 * one that fails is tried again a second later (the docs show none, but without it a fleet never
 * converges once the server refuses a burst).
 */
import * as k8s from "@kubernetes/client-node"
import * as Child from "../Child.ts"
import type * as Fleet from "../Fleet.ts"
import * as Workload from "../Workload.ts"

const input = Child.input<Fleet.Input>()
const stop = Child.stopRequested()

const kc = new k8s.KubeConfig()
kc.loadFromFile(input.kubeconfigPath)
const core = kc.makeApiClient(k8s.CoreV1Api)
const custom = kc.makeApiClient(k8s.CustomObjectsApi)
const apply = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply)
const { group, version } = Workload.Widget

let failures = 0

const reconcile = async (widget: k8s.KubernetesObject & Workload.WidgetLike): Promise<void> => {
  if (Workload.isReady(widget)) return
  try {
    const configMap = Workload.configMap(widget)
    await core.patchNamespacedConfigMap({
      name: configMap.metadata.name,
      namespace: configMap.metadata.namespace,
      body: configMap,
      fieldManager: Workload.fieldManager,
      force: true
    }, apply)
    await custom.patchNamespacedCustomObjectStatus({
      group,
      version,
      namespace: widget.metadata?.namespace ?? Workload.namespace,
      plural: "widgets",
      name: widget.metadata?.name ?? "",
      body: {
        apiVersion: Workload.Widget.apiVersion,
        kind: Workload.Widget.kind,
        metadata: { name: widget.metadata?.name, namespace: widget.metadata?.namespace },
        status: Workload.readyStatus(widget, new Date())
      },
      fieldManager: Workload.fieldManager,
      force: true
    }, apply)
  } catch (error) {
    // Without a retry a failed handler would leave its Widget undone until its next change; a
    // hand-written loop has to add one, so this one tries again a second later with the cached copy.
    if (failures++ === 0) console.error(`first failed reconcile (${widget.metadata?.name}): ${error} ${(error as Error).cause ?? ""}`)
    setTimeout(() => {
      const latest = informer.get(widget.metadata?.name ?? "", widget.metadata?.namespace)
      if (latest !== undefined) void reconcile(latest)
    }, 1000)
  }
}

const cpuAtStart = Child.cpuSeconds()
Child.started()
const informer = k8s.makeInformer<k8s.KubernetesObject & Workload.WidgetLike>(
  kc,
  `${Workload.apiPath}/widgets`,
  () => custom.listClusterCustomObject({ group, version, plural: "widgets" })
)
informer.on("add", (widget) => void reconcile(widget))
informer.on("update", (widget) => void reconcile(widget))
informer.on("error", (error) => {
  console.error(`informer error: ${error}`)
  setTimeout(() => void informer.start(), 5000)
})
await informer.start()
await stop
Child.finish({ peakRssMb: Child.peakRssMb(), cpuSeconds: Child.cpuSeconds() - cpuAtStart, failures } satisfies Fleet.Report)
