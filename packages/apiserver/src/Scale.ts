/**
 * The `/scale` subresource: an `autoscaling/v1` Scale view of an object's replica count (at the
 * resource's spec and status replica paths) and label selector.
 */
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

/**
 * A label selector object (`matchLabels`, `matchExpressions`) in its string form.
 *
 * @example
 * import * as Scale from "./Scale.ts"
 * Scale.selectorString({ matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["a"] }] })
 * // "app=web,tier in (a)"
 */
export const selectorString = (selector: unknown): string => {
  if (!KubeObject.isObject(selector)) return ""
  const parts: Array<string> = []
  if (KubeObject.isObject(selector.matchLabels)) {
    for (const k of Object.keys(selector.matchLabels).sort()) parts.push(`${k}=${String(selector.matchLabels[k])}`)
  }
  if (Array.isArray(selector.matchExpressions)) {
    for (const e of selector.matchExpressions) {
      if (!KubeObject.isObject(e)) continue
      const values = Array.isArray(e.values) ? [...e.values].map(String).sort().join(",") : ""
      switch (e.operator) {
        case "In":
          parts.push(`${e.key} in (${values})`)
          break
        case "NotIn":
          parts.push(`${e.key} notin (${values})`)
          break
        case "Exists":
          parts.push(String(e.key))
          break
        case "DoesNotExist":
          parts.push(`!${e.key}`)
      }
    }
  }
  return parts.join(",")
}

/**
 * The Scale of an object (served form) of a resource with the scale subresource.
 *
 * @example
 * import * as Scale from "./Scale.ts"
 * import * as Builtins from "./Builtins.ts"
 * const deployments = Builtins.make().find((r) => r.type.plural === "deployments")!
 * Scale.toScale(deployments, { metadata: { name: "web" }, spec: { replicas: 3 } }).spec // { replicas: 3 }
 */
export const toScale = (resource: Registry.Resource, object: KubeObject.KubeObject): KubeObject.KubeObject => {
  const scale = resource.type.subresources.scale!
  const m = KubeObject.meta(object)
  const replicas = KubeObject.getPath(object, scale.specReplicasPath)
  const statusReplicas = KubeObject.getPath(object, scale.statusReplicasPath)
  const selector = scale.labelSelectorPath !== undefined
    ? KubeObject.getPath(object, scale.labelSelectorPath)
    : selectorString(KubeObject.getPath(object, ".spec.selector"))
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: {
      name: m.name,
      ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp
    },
    spec: { replicas: typeof replicas === "number" ? replicas : 0 },
    status: {
      replicas: typeof statusReplicas === "number" ? statusReplicas : 0,
      ...(typeof selector === "string" && selector !== "" ? { selector } : {})
    }
  }
}

/**
 * The object with the replica count of `scale` written at the resource's spec replicas path, and
 * its resourceVersion when the Scale carries one (a precondition for the update).
 *
 * @example
 * import * as Scale from "./Scale.ts"
 * import * as Builtins from "./Builtins.ts"
 * const deployments = Builtins.make().find((r) => r.type.plural === "deployments")!
 * Scale.fromScale(deployments, { metadata: { name: "web" }, spec: { replicas: 1 } }, { spec: { replicas: 5 } }).spec
 * // { replicas: 5 }
 */
export const fromScale = (
  resource: Registry.Resource,
  object: KubeObject.KubeObject,
  scale: KubeObject.KubeObject
): KubeObject.KubeObject => {
  const paths = resource.type.subresources.scale!
  const replicas = KubeObject.getPath(scale, ".spec.replicas")
  const updated = KubeObject.setPath(object, paths.specReplicasPath, typeof replicas === "number" ? replicas : 0)
  const rv = KubeObject.meta(scale).resourceVersion
  return KubeObject.withMeta(updated, { resourceVersion: rv === "" ? undefined : rv })
}

const scaleKind: Status.Target = { group: "autoscaling", plural: "scales", kind: "Scale" }

/**
 * A written Scale of a built-in kind, checked as kube checks it before the object sees it: negative
 * replicas are the Scale's 422, not the Deployment's.
 *
 * @example
 * import * as Scale from "./Scale.ts"
 * declare const deployments: import("./Registry.ts").Resource
 * Scale.validate(deployments, "web", { spec: { replicas: -2 } })?.message
 * // 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0'
 */
export const validate = (resource: Registry.Resource, name: string, scale: KubeObject.KubeObject): Status.ApiError | undefined => {
  const replicas = KubeObject.getPath(scale, ".spec.replicas")
  if (resource.type.custom || typeof replicas !== "number" || replicas >= 0) return undefined
  return Status.invalid(scaleKind, name, [Status.fieldInvalid("spec.replicas", replicas, "must be greater than or equal to 0")])
}
