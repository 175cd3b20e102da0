/**
 * Fleet child: the same operator on `@dot-i/k8s-operator`, written the way its README shows: an
 * `Operator` subclass whose `init` watches Widgets; each added or modified Widget that is not yet
 * done gets its ConfigMap applied (server-side apply through the library's `k8sApi`) and its status
 * patched with the library's `patchResourceStatus`. The library handles events one at a time.
 */
import DotI, { ResourceEventType } from "@dot-i/k8s-operator"
import * as Child from "../Child.ts"
import type * as Fleet from "../Fleet.ts"
import * as Workload from "../Workload.ts"

const input = Child.input<Fleet.Input>()
const stop = Child.stopRequested()
// The library loads the default kubeconfig.
process.env.KUBECONFIG = input.kubeconfigPath

class WidgetOperator extends DotI.default {
  protected async init() {
    await this.watchResource(Workload.Widget.group, Workload.Widget.version, "widgets", async (event) => {
      if (event.type === ResourceEventType.Deleted) return
      const widget = event.object as Workload.WidgetLike
      if (Workload.isReady(widget)) return
      const configMap = Workload.configMap(widget)
      try {
        await this.k8sApi.patchNamespacedConfigMap(
          configMap.metadata.name,
          configMap.metadata.namespace,
          configMap,
          undefined,
          undefined,
          Workload.fieldManager,
          undefined,
          true,
          { headers: { "Content-Type": "application/apply-patch+yaml" } }
        )
        await this.patchResourceStatus(event.meta, Workload.readyStatus(widget, new Date()))
      } catch (error) {
        console.error(`reconcile of ${event.meta.name} failed: ${error}`)
      }
    })
  }
}

const operator = new WidgetOperator()
const cpuAtStart = Child.cpuSeconds()
Child.started()
await operator.start()
await stop
operator.stop()
Child.finish({ peakRssMb: Child.peakRssMb(), cpuSeconds: Child.cpuSeconds() - cpuAtStart } satisfies Fleet.Report)
