/**
 * What kube's controllers take from a pod template's metadata for the pods they make, as
 * kube-controller-manager's `GetPodFromTemplate` does: its labels, annotations and finalizers. The
 * name, namespace and owner are the controller's to set; a name in the template is not used.
 */
import { KubeObject } from "@kubefx/schema/internal"

/**
 * The metadata a controller's pod takes from `template` (a pod template: `metadata` and `spec`).
 *
 * @example
 * import * as PodTemplates from "./PodTemplates.ts"
 * PodTemplates.podMetadata({ metadata: { name: "fixed", labels: { app: "web" } } }) // { labels: { app: "web" } }
 */
export const podMetadata = (template: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const { labels, annotations, finalizers } = KubeObject.record(template.metadata)
  return {
    ...(labels === undefined ? {} : { labels }),
    ...(annotations === undefined ? {} : { annotations }),
    ...(finalizers === undefined ? {} : { finalizers })
  }
}
