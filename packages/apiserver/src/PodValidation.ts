/**
 * 1.32's validation of a pod spec wherever one appears (a Pod, every workload's template): its
 * containers (names, images, ports, resources, mounts), volumes and policies, and what an update
 * of a Pod may change.
 */
import * as FieldErrors from "./FieldErrors.ts"
import * as PodDefaults from "./PodDefaults.ts"
import type * as Status from "./Status.ts"
import { KubeObject, NameRules, QuantityMath } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const volumes = (spec: Json, path: string): Causes => {
  const seen = new Set<string>()
  return KubeObject.records(spec.volumes).flatMap((v, i) => {
    const at = `${path}.volumes[${i}]`
    const name = KubeObject.text(v.name)
    const causes: Array<Status.StatusCause> = []
    if (name === "") causes.push(FieldErrors.required(`${at}.name`))
    else if (seen.has(name)) causes.push(FieldErrors.duplicate(`${at}.name`, name))
    else causes.push(...NameRules.dns1123Label(name).map((m) => FieldErrors.invalid(`${at}.name`, FieldErrors.quote(name), m)))
    seen.add(name)
    const given = PodDefaults.volumeSources.filter((s) => KubeObject.isObject(v[s]))
    if (given.length === 0) causes.push(FieldErrors.required(at, "must specify a volume type"))
    for (const extra of given.slice(1)) causes.push(FieldErrors.forbidden(`${at}.${extra}`, "may not specify more than 1 volume type"))
    return causes
  })
}

const resources = (container: Json, path: string): Causes => {
  const r = KubeObject.record(container.resources)
  const limits = KubeObject.record(r.limits)
  const requests = KubeObject.record(r.requests)
  const negative = (kind: string, values: Json) =>
    Object.entries(values).flatMap(([name, q]) =>
      (QuantityMath.sign(q) ?? 0) < 0
        ? [FieldErrors.invalid(`${path}.resources.${kind}[${name}]`, FieldErrors.quote(QuantityMath.format(q)), "must be greater than or equal to 0")]
        : []
    )
  const aboveLimit = Object.entries(requests).flatMap(([name, q]) =>
    limits[name] !== undefined && (QuantityMath.compare(q, limits[name]) ?? 0) > 0
      ? [FieldErrors.invalid(
        `${path}.resources.requests`,
        FieldErrors.quote(QuantityMath.format(q)),
        `must be less than or equal to ${name} limit of ${QuantityMath.format(limits[name])}`
      )]
      : []
  )
  return [...negative("limits", limits), ...negative("requests", requests), ...aboveLimit]
}

const ports = (container: Json, path: string): Causes => {
  const names = new Set<string>()
  return KubeObject.records(container.ports).flatMap((p, i) => {
    const at = `${path}.ports[${i}]`
    const causes: Array<Status.StatusCause> = []
    const name = KubeObject.text(p.name)
    if (name !== "") {
      causes.push(...NameRules.portName(name).map((m) => FieldErrors.invalid(`${at}.name`, FieldErrors.quote(name), m)))
      if (names.has(name)) causes.push(FieldErrors.duplicate(`${at}.name`, name))
      names.add(name)
    }
    if (p.containerPort === undefined || p.containerPort === 0) causes.push(FieldErrors.required(`${at}.containerPort`))
    else causes.push(...NameRules.portNumber(Number(p.containerPort)).map((m) => FieldErrors.invalid(`${at}.containerPort`, FieldErrors.scalar(p.containerPort), m)))
    if (p.hostPort !== undefined && p.hostPort !== 0) {
      causes.push(...NameRules.portNumber(Number(p.hostPort)).map((m) => FieldErrors.invalid(`${at}.hostPort`, FieldErrors.scalar(p.hostPort), m)))
    }
    if (p.protocol !== undefined && !["SCTP", "TCP", "UDP"].includes(KubeObject.text(p.protocol))) {
      causes.push(FieldErrors.notSupported(`${at}.protocol`, p.protocol, ["SCTP", "TCP", "UDP"]))
    }
    return causes
  })
}

const container = (c: Json, at: string, seen: Set<string>, volumeNames: ReadonlySet<string>): Causes => {
  const causes: Array<Status.StatusCause> = []
  const name = KubeObject.text(c.name)
  if (name === "") causes.push(FieldErrors.required(`${at}.name`))
  else {
    causes.push(...NameRules.dns1123Label(name).map((m) => FieldErrors.invalid(`${at}.name`, FieldErrors.quote(name), m)))
    if (seen.has(name)) causes.push(FieldErrors.duplicate(`${at}.name`, name))
  }
  seen.add(name)
  if (KubeObject.text(c.image).trim() === "") causes.push(FieldErrors.required(`${at}.image`))
  if (c.imagePullPolicy !== undefined && !["Always", "IfNotPresent", "Never"].includes(KubeObject.text(c.imagePullPolicy))) {
    causes.push(FieldErrors.notSupported(`${at}.imagePullPolicy`, c.imagePullPolicy, ["Always", "IfNotPresent", "Never"]))
  }
  KubeObject.records(c.volumeMounts).forEach((m, i) => {
    const mount = `${at}.volumeMounts[${i}]`
    if (KubeObject.text(m.name) === "") causes.push(FieldErrors.required(`${mount}.name`))
    else if (!volumeNames.has(KubeObject.text(m.name))) causes.push(FieldErrors.notFound(`${mount}.name`, m.name))
    if (KubeObject.text(m.mountPath) === "") causes.push(FieldErrors.required(`${mount}.mountPath`))
  })
  return [...causes, ...ports(c, at), ...resources(c, at)]
}

/**
 * The causes 1.32 gives for a pod spec at `path` (e.g. "spec", "spec.template.spec").
 *
 * @example
 * import * as PodValidation from "./PodValidation.ts"
 * PodValidation.validateSpec({ containers: [] }, "spec")[0].message // "Required value"
 */
export const validateSpec = (spec: Json, path: string): Causes => {
  const volumeNames = new Set(KubeObject.records(spec.volumes).map((v) => KubeObject.text(v.name)))
  const seen = new Set<string>()
  const causes: Array<Status.StatusCause> = [...volumes(spec, path)]
  const containers = KubeObject.records(spec.containers)
  if (containers.length === 0) causes.push(FieldErrors.required(`${path}.containers`))
  containers.forEach((c, i) => causes.push(...container(c, `${path}.containers[${i}]`, seen, volumeNames)))
  KubeObject.records(spec.initContainers).forEach((c, i) => causes.push(...container(c, `${path}.initContainers[${i}]`, seen, volumeNames)))
  const restart = spec.restartPolicy
  if (restart !== undefined && !["Always", "OnFailure", "Never"].includes(KubeObject.text(restart))) {
    causes.push(KubeObject.text(restart) === "" ? FieldErrors.required(`${path}.restartPolicy`) : FieldErrors.notSupported(`${path}.restartPolicy`, restart, ["Always", "OnFailure", "Never"]))
  }
  const dns = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
  if (spec.dnsPolicy !== undefined && !dns.includes(KubeObject.text(spec.dnsPolicy))) causes.push(FieldErrors.notSupported(`${path}.dnsPolicy`, spec.dnsPolicy, dns))
  return causes
}

/**
 * A workload template's restart policy: controllers restart pods themselves, so only `Always`.
 *
 * @example
 * import * as PodValidation from "./PodValidation.ts"
 * PodValidation.alwaysRestart({ restartPolicy: "Never" }, "spec.template.spec")[0].message
 * // 'Unsupported value: "Never": supported values: "Always"'
 */
export const alwaysRestart = (spec: Json, path: string): Causes =>
  spec.restartPolicy === undefined || spec.restartPolicy === "Always"
    ? []
    : [FieldErrors.notSupported(`${path}.restartPolicy`, spec.restartPolicy, ["Always"])]

const mutableOnUpdate = (spec: Json, old: Json): Json => {
  const images = (now: unknown, before: unknown) =>
    KubeObject.records(now).map((c, i) => ({ ...c, image: KubeObject.records(before)[i]?.image }))
  return {
    ...spec,
    containers: images(spec.containers, old.containers),
    initContainers: images(spec.initContainers, old.initContainers),
    activeDeadlineSeconds: old.activeDeadlineSeconds,
    terminationGracePeriodSeconds: old.terminationGracePeriodSeconds,
    // Tolerations may only be added to.
    tolerations: KubeObject.records(spec.tolerations).slice(0, KubeObject.records(old.tolerations).length)
  }
}

/**
 * What an update of a Pod may change in its spec: images, activeDeadlineSeconds, added
 * tolerations, the grace period; anything else is forbidden.
 *
 * @example
 * import * as PodValidation from "./PodValidation.ts"
 * PodValidation.validateUpdate({ containers: [{ name: "a", image: "b" }], restartPolicy: "Never" }, { containers: [{ name: "a", image: "c" }], restartPolicy: "Always" }).length // 1
 */
export const validateUpdate = (spec: Json, old: Json): Causes =>
  // spec.nodeName among the rest: only the pods/binding subresource sets it.
  KubeObject.equals(mutableOnUpdate(spec, old), mutableOnUpdate(old, old))
    ? []
    : [FieldErrors.forbidden(
      "spec",
      "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    )]

// Go's zero value: kubectl debug sends `resources: {}`, which is not setting them.
const isZero = (value: unknown): boolean =>
  value === undefined || value === null || value === "" || value === 0 || value === false ||
  (Array.isArray(value) ? value.length === 0 : KubeObject.isObject(value) && Object.values(value).every(isZero))

// What an ephemeral container may not set: it runs once, for debugging, beside the pod's own.
const notForEphemeral = ["ports", "lifecycle", "livenessProbe", "readinessProbe", "startupProbe", "resources", "resizePolicy", "restartPolicy"] as const

/**
 * What a write of a Pod's `ephemeralcontainers` subresource may do (1.32's
 * ValidatePodEphemeralContainersUpdate): add ephemeral containers, named apart from every other
 * container, setting none of what only the pod's own containers may (ports, probes, lifecycle,
 * resources), aimed at a container that exists; never change or remove one.
 *
 * @example
 * import * as PodValidation from "./PodValidation.ts"
 * const old = { containers: [{ name: "web", image: "nginx" }] }
 * PodValidation.validateEphemeralUpdate({ ...old, ephemeralContainers: [{ name: "debug", image: "busybox", ports: [{ containerPort: 80 }] }] }, old)[0].message
 * // "Forbidden: cannot be set for an Ephemeral Container"
 */
export const validateEphemeralUpdate = (spec: Json, old: Json): Causes => {
  const causes: Array<Status.StatusCause> = []
  const volumeNames = new Set(KubeObject.records(spec.volumes).map((v) => KubeObject.text(v.name)))
  // The pod's own containers are targets; ephemeral ones are named apart from them and each other.
  const targets: ReadonlySet<string> = new Set([...KubeObject.records(spec.containers), ...KubeObject.records(spec.initContainers)].map((c) => KubeObject.text(c.name)))
  const seen = new Set(targets)
  KubeObject.records(spec.ephemeralContainers).forEach((c, i) => {
    const at = `spec.ephemeralContainers[${i}]`
    causes.push(...container({ ...c, ports: undefined, resources: undefined }, at, seen, volumeNames))
    for (const field of notForEphemeral) {
      if (!isZero(c[field])) causes.push(FieldErrors.forbidden(`${at}.${field}`, "cannot be set for an Ephemeral Container"))
    }
    const target = KubeObject.text(c.targetContainerName)
    if (target !== "" && !targets.has(target)) causes.push(FieldErrors.notFound(`${at}.targetContainerName`, target))
  })
  const now = new Map(KubeObject.records(spec.ephemeralContainers).map((c) => [KubeObject.text(c.name), c]))
  for (const before of KubeObject.records(old.ephemeralContainers)) {
    const name = KubeObject.text(before.name)
    const after = now.get(name)
    if (after === undefined) causes.push(FieldErrors.forbidden("spec.ephemeralContainers", `existing ephemeral containers "${name}" may not be removed\n`))
    else if (!KubeObject.equals(after, before)) causes.push(FieldErrors.forbidden("spec.ephemeralContainers", `existing ephemeral containers "${name}" may not be changed\n`))
  }
  return causes
}
