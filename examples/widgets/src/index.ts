/**
 * Widgets: the smallest useful operator. Each Widget (`spec: { replicas, message }`) owns a ConfigMap
 * applied with server-side apply; its status records the ConfigMap's name, `Ready` and
 * `observedGeneration`. Deleting a Widget garbage-collects the ConfigMap; editing the ConfigMap by hand
 * is reverted on the next reconcile, which its change triggers.
 */
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Resource } from "@kubefx/kube"
import { Effect, Schema } from "effect"

export const Widget = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Widget",
  plural: "widgets",
  shortNames: ["wd"],
  spec: Schema.Struct({
    replicas: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    message: Schema.String
  }),
  status: Schema.Struct({
    ...Conditions.statusFields,
    configMapName: Schema.optionalKey(Schema.String)
  }),
  printerColumns: [
    { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
    { name: "ConfigMap", type: "string", jsonPath: ".status.configMapName" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" }
  ]
})
export type Widget = typeof Widget.schema.Type

/** The ConfigMap a Widget owns. */
export const configMapName = (widget: Widget): string => `${widget.metadata.name}-config`

/**
 * Applies the Widget's ConfigMap and states its name in status. Both are server-side applies, so
 * running this twice changes nothing; the status goes out with Ready in the run's one status write,
 * and not at all when it already holds.
 */
export const reconcile = Effect.fnUntraced(function*(widget: Widget, ctx: Controller.Context<Widget>) {
  const name = configMapName(widget)
  yield* ctx.applyOwned(Builtins.ConfigMap, {
    metadata: { name, labels: { "app.kubernetes.io/managed-by": "kubefx-widgets" } },
    data: { message: widget.spec.message, replicas: String(widget.spec.replicas) }
  })
  yield* ctx.applyStatus({ status: { configMapName: name } })
  return Outcome.done
})

/** The widgets controller: run it alone, in an operator or in the test kit. */
export const definition = Controller.define({
  name: "widgets",
  for: Widget,
  owns: [Builtins.ConfigMap],
  // The owned cache holds only the ConfigMaps this label marks (the reconcile states it too), not
  // every ConfigMap of the cluster.
  ownedLabels: { "app.kubernetes.io/managed-by": "kubefx-widgets" },
  concurrency: 4,
  reconcile
})

/** The custom resources this example serves, for CRD installation. */
export const resources = [Widget]

/** Where its sample objects are. */
export const samples = new URL("../samples/", import.meta.url)
