/**
 * The deprecated `componentstatuses` (`kubectl get cs`): kube-apiserver probes its scheduler,
 * controller manager and etcd when asked. Here the server is all three, so each is computed healthy
 * at every read and never stored.
 */
import { KubeObject } from "@kubefx/schema/internal"

/** The warning every request of the kind gets, as kube-apiserver's. */
export const deprecationWarning = "v1 ComponentStatus is deprecated in v1.19+"

/**
 * The components' statuses as a read answers them.
 *
 * @example
 * import * as ComponentStatuses from "./ComponentStatuses.ts"
 * ComponentStatuses.all().map((s) => s.metadata.name) // ["scheduler", "controller-manager", "etcd-0"]
 */
export const all = (): ReadonlyArray<KubeObject.KubeObject> =>
  ["scheduler", "controller-manager", "etcd-0"].map((name) => ({
    apiVersion: "v1",
    kind: "ComponentStatus",
    metadata: { name, creationTimestamp: null },
    conditions: [{ type: "Healthy", status: "True", message: "ok" }]
  }) as unknown as KubeObject.KubeObject)
