/**
 * The Pod Security Standards as Kubernetes 1.32 checks them: the levels (privileged, baseline,
 * restricted), the policy versions (`v1.0` to `v1.32`, and `latest`), a namespace's policy read
 * from its `pod-security.kubernetes.io/*` labels, and every check with the reason and detail it
 * reports, in the order kube-apiserver's PodSecurity admission reports them (baseline checks
 * first, then restricted ones, each by check id). A check that changed over time is run as the
 * policy version asks; a version newer than 1.32 is checked as 1.32.
 *
 * Objects are the JSON of a Pod's metadata and spec (or a template's), read as their Go types
 * read them: an absent field and a null are the same unset pointer.
 */
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

export type Level = "privileged" | "baseline" | "restricted"

/** A level at a policy version: the minor of `v1.<minor>`, or "latest". */
export interface LevelVersion {
  readonly level: Level
  readonly version: number | "latest"
}

/** What a namespace enforces (refuses), audits and warns about. */
export interface Policy {
  readonly enforce: LevelVersion
  readonly audit: LevelVersion
  readonly warn: LevelVersion
}

/** Why a check refused a pod: `reason` always, `detail` (what and where) when the check has one. */
export interface Violation {
  readonly reason: string
  readonly detail: string
}

const labelPrefix = "pod-security.kubernetes.io/"

/** The labels a namespace's policy is read from, per mode. */
export const labels = {
  enforce: `${labelPrefix}enforce`,
  enforceVersion: `${labelPrefix}enforce-version`,
  audit: `${labelPrefix}audit`,
  auditVersion: `${labelPrefix}audit-version`,
  warn: `${labelPrefix}warn`,
  warnVersion: `${labelPrefix}warn-version`
} as const

const privileged: LevelVersion = { level: "privileged", version: "latest" }

/** kube-apiserver's default policy, with no admission configuration: privileged in every mode. */
export const defaultPolicy: Policy = { enforce: privileged, audit: privileged, warn: privileged }

/** The newest policy version this server knows; later versions are checked as this one. */
export const newestVersion = 32

/**
 * "restricted:latest", "baseline:v1.25": a level and version as messages name them.
 *
 * @example
 * import * as PodSecurity from "./PodSecurity.ts"
 * PodSecurity.format({ level: "restricted", version: 25 }) // "restricted:v1.25"
 */
export const format = (lv: LevelVersion): string =>
  `${lv.level}:${lv.version === "latest" ? "latest" : `v1.${lv.version}`}`

const strictness: Record<Level, number> = { privileged: 0, baseline: 1, restricted: 2 }

/**
 * Whether `a` is stricter than `b` (positive), as strict (0) or laxer (negative).
 *
 * @example
 * import * as PodSecurity from "./PodSecurity.ts"
 * PodSecurity.compareLevels("restricted", "baseline") > 0 // true
 */
export const compareLevels = (a: Level, b: Level): number => Math.sign(strictness[a] - strictness[b])

/** Whether two level-versions check the same: both privileged, or the same level and version. */
export const equivalent = (a: LevelVersion, b: LevelVersion): boolean =>
  (a.level === "privileged" && b.level === "privileged") || (a.level === b.level && a.version === b.version)

const isLevel = (value: string): value is Level => value === "privileged" || value === "baseline" || value === "restricted"

const parseVersion = (value: string): number | "latest" | undefined => {
  if (value === "latest") return "latest"
  const match = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(value)
  if (match === null) return undefined
  const minor = Number(match[1])
  return Number.isSafeInteger(minor) ? minor : undefined
}

/**
 * A namespace's policy from its labels, over the defaults, and a cause per label that does not
 * parse. A bad enforce level or version reads as restricted or latest (the policy fails closed); a
 * bad audit or warn level as privileged. Warn follows an explicit enforce level that is stricter,
 * unless warn has a label of its own.
 *
 * @example
 * import * as PodSecurity from "./PodSecurity.ts"
 * const { policy } = PodSecurity.policyOf({ "pod-security.kubernetes.io/enforce": "baseline" })
 * PodSecurity.format(policy.warn) // "baseline:latest"
 */
export const policyOf = (
  namespaceLabels: Readonly<Record<string, string>> | undefined,
  defaults: Policy = defaultPolicy
): { readonly policy: Policy; readonly causes: ReadonlyArray<Status.StatusCause> } => {
  const causes: Array<Status.StatusCause> = []
  if (namespaceLabels === undefined) return { policy: defaults, causes }
  const level = (label: string, fallback: Level, onError: Level): { readonly value: Level; readonly given: boolean } => {
    const value = namespaceLabels[label]
    if (value === undefined) return { value: fallback, given: false }
    if (isLevel(value)) return { value, given: true }
    causes.push(Status.fieldInvalid(`metadata.labels[${label}]`, value, "must be one of privileged, baseline, restricted"))
    return { value: onError, given: false }
  }
  const version = (label: string, fallback: number | "latest"): { readonly value: number | "latest"; readonly given: boolean } => {
    const value = namespaceLabels[label]
    if (value === undefined) return { value: fallback, given: false }
    const parsed = parseVersion(value)
    if (parsed !== undefined) return { value: parsed, given: true }
    causes.push(Status.fieldInvalid(`metadata.labels[${label}]`, value, `must be "latest" or "v1.x"`))
    return { value: "latest", given: true }
  }
  const enforceLevel = level(labels.enforce, defaults.enforce.level, "restricted")
  const enforce: LevelVersion = { level: enforceLevel.value, version: version(labels.enforceVersion, defaults.enforce.version).value }
  const audit: LevelVersion = {
    level: level(labels.audit, defaults.audit.level, "privileged").value,
    version: version(labels.auditVersion, defaults.audit.version).value
  }
  const warnLevel = level(labels.warn, defaults.warn.level, "privileged")
  const warnVersion = version(labels.warnVersion, defaults.warn.version)
  const hasWarnLevel = labels.warn in namespaceLabels
  let warn: LevelVersion = { level: warnLevel.value, version: warnVersion.value }
  if (!hasWarnLevel && enforceLevel.given && compareLevels(enforce.level, warn.level) > 0) {
    warn = { level: enforce.level, version: warnVersion.given ? warn.version : enforce.version }
  }
  return { policy: { enforce, audit, warn }, causes }
}

// ---------------------------------------------------------------------------------------------
// Reading a pod spec as Go reads it

type Obj = Readonly<Record<string, unknown>>

// A set pointer to a struct: undefined for an absent field and a null alike.
const obj = (value: unknown): Obj | undefined => (KubeObject.isObject(value) ? value : undefined)
const { records, text: str } = KubeObject
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** A container's name and security context, init containers first, then containers, then ephemeral ones. */
const containers = (spec: Obj): ReadonlyArray<Obj> =>
  [...records(spec.initContainers), ...records(spec.containers), ...records(spec.ephemeralContainers)]

const nameOf = (container: Obj): string => str(container.name)
const securityContext = (holder: Obj | undefined): Obj | undefined => obj(holder?.securityContext)
const isWindows = (spec: Obj): boolean => str(obj(spec.os)?.name) === "windows"

const pluralize = (singular: string, plural: string, count: number): string => (count === 1 ? singular : plural)
const joinQuote = (items: ReadonlyArray<string>): string => (items.length === 0 ? "" : `"${items.join(`", "`)}"`)
const sortedSet = (items: Iterable<string>): Array<string> => [...new Set(items)].sort()
const containersNamed = (names: ReadonlyArray<string>): string =>
  `${pluralize("container", "containers", names.length)} ${joinQuote(names)}`
// Go's %q for the strings these messages quote.
const quoted = (value: string): string => JSON.stringify(value)

type CheckPod = (metadata: Obj, spec: Obj) => Violation | undefined

// The pod, then the containers, that set a field to a value the check refuses.
const setters = (spec: Obj, bad: (context: Obj) => boolean): Array<string> => {
  const out: Array<string> = []
  const pod = securityContext(spec)
  if (pod !== undefined && bad(pod)) out.push("pod")
  const named = containers(spec).filter((c) => {
    const sc = securityContext(c)
    return sc !== undefined && bad(sc)
  }).map(nameOf)
  if (named.length > 0) out.push(containersNamed(named))
  return out
}

// ---------------------------------------------------------------------------------------------
// The checks, each at the versions it changed

const allowPrivilegeEscalation: CheckPod = (_, spec) => {
  const bad = containers(spec).filter((c) => securityContext(c)?.allowPrivilegeEscalation !== false).map(nameOf)
  return bad.length === 0 ? undefined : {
    reason: "allowPrivilegeEscalation != false",
    detail: `${containersNamed(bad)} must set securityContext.allowPrivilegeEscalation=false`
  }
}

const profileTypes = new Set(["RuntimeDefault", "Localhost"])

const appArmorPrefix = "container.apparmor.security.beta.kubernetes.io/"

const appArmorProfile: CheckPod = (metadata, spec) => {
  const badValues: Array<string> = []
  const badType = (sc: Obj) => {
    const profile = obj(sc.appArmorProfile)
    if (profile === undefined || profileTypes.has(str(profile.type))) return false
    badValues.push(str(profile.type))
    return true
  }
  const badSetters = setters(spec, badType)
  const annotations = Object.entries(obj(metadata.annotations) ?? {})
    .filter(([key, value]) => {
      if (!key.startsWith(appArmorPrefix)) return false
      const profile = str(value)
      return !(profile === "" || profile === "runtime/default" || profile.startsWith("localhost/"))
    })
    .map(([key, value]) => `${key}=${quoted(str(value))}`)
    .sort()
  const values = [...sortedSet(badValues), ...annotations]
  if (annotations.length > 0) badSetters.push(pluralize("annotation", "annotations", annotations.length))
  return badSetters.length === 0 ? undefined : {
    reason: pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", values.length),
    detail: `${badSetters.join(" and ")} must not set AppArmor profile type to ${joinQuote(values)}`
  }
}

const defaultCapabilities = new Set([
  "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
  "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"
])

const capabilitiesOf = (container: Obj): Obj | undefined => obj(securityContext(container)?.capabilities)

const capabilitiesBaseline: CheckPod = (_, spec) => {
  const added: Array<string> = []
  const bad = containers(spec).filter((c) => {
    const extra = list(capabilitiesOf(c)?.add).map(str).filter((capability) => !defaultCapabilities.has(capability))
    added.push(...extra)
    return extra.length > 0
  }).map(nameOf)
  return bad.length === 0 ? undefined : {
    reason: "non-default capabilities",
    detail: `${containersNamed(bad)} must not include ${joinQuote(sortedSet(added))} in securityContext.capabilities.add`
  }
}

const capabilitiesRestricted: CheckPod = (_, spec) => {
  const missingDropAll: Array<string> = []
  const addingForbidden: Array<string> = []
  const forbidden: Array<string> = []
  for (const container of containers(spec)) {
    const capabilities = capabilitiesOf(container)
    if (capabilities === undefined) {
      missingDropAll.push(nameOf(container))
      continue
    }
    if (!list(capabilities.drop).some((capability) => capability === "ALL")) missingDropAll.push(nameOf(container))
    const extra = list(capabilities.add).map(str).filter((capability) => capability !== "NET_BIND_SERVICE")
    forbidden.push(...extra)
    if (extra.length > 0) addingForbidden.push(nameOf(container))
  }
  const details = [
    ...(missingDropAll.length === 0 ? [] : [`${containersNamed(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`]),
    ...(addingForbidden.length === 0 ? [] : [
      `${containersNamed(addingForbidden)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`
    ])
  ]
  return details.length === 0 ? undefined : { reason: "unrestricted capabilities", detail: details.join("; ") }
}

const hostNamespaces: CheckPod = (_, spec) => {
  const shared = (["hostNetwork", "hostPID", "hostIPC"] as const).filter((field) => spec[field] === true)
  return shared.length === 0 ? undefined : { reason: "host namespaces", detail: shared.map((field) => `${field}=true`).join(", ") }
}

const volumes = (spec: Obj): ReadonlyArray<Obj> => records(spec.volumes)

const hostPathVolumes: CheckPod = (_, spec) => {
  const named = volumes(spec).filter((volume) => obj(volume.hostPath) !== undefined).map((volume) => str(volume.name))
  return named.length === 0 ? undefined : {
    reason: "hostPath volumes",
    detail: `${pluralize("volume", "volumes", named.length)} ${joinQuote(named)}`
  }
}

const hostPorts: CheckPod = (_, spec) => {
  const ports: Array<string> = []
  const bad = containers(spec).filter((c) => {
    const used = records(c.ports).map((port) => port.hostPort).filter((hostPort) => typeof hostPort === "number" && hostPort !== 0)
    ports.push(...used.map(String))
    return used.length > 0
  }).map(nameOf)
  const distinct = sortedSet(ports)
  return bad.length === 0 ? undefined : {
    reason: "hostPort",
    detail: `${containersNamed(bad)} ${pluralize("uses", "use", bad.length)} ${pluralize("hostPort", "hostPorts", distinct.length)} ${distinct.join(", ")}`
  }
}

const privilegedContainers: CheckPod = (_, spec) => {
  const bad = containers(spec).filter((c) => securityContext(c)?.privileged === true).map(nameOf)
  return bad.length === 0 ? undefined : {
    reason: "privileged",
    detail: `${containersNamed(bad)} must not set securityContext.privileged=true`
  }
}

const procMount: CheckPod = (_, spec) => {
  const types: Array<string> = []
  const bad = containers(spec).filter((c) => {
    const value = securityContext(c)?.procMount
    if (value === undefined || value === null || value === "Default") return false
    types.push(str(value))
    return true
  }).map(nameOf)
  return bad.length === 0 ? undefined : {
    reason: "procMount",
    detail: `${containersNamed(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`
  }
}

const allowedVolumeSources = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"]

// In the order Go tells a volume's type.
const restrictedVolumeSources = [
  "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd", "flexVolume",
  "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk",
  "portworxVolume", "scaleIO", "storageos"
]

const restrictedVolumes: CheckPod = (_, spec) => {
  const bad: Array<string> = []
  const types: Array<string> = []
  for (const volume of volumes(spec)) {
    if (allowedVolumeSources.some((source) => obj(volume[source]) !== undefined)) continue
    bad.push(str(volume.name))
    types.push(restrictedVolumeSources.find((source) => obj(volume[source]) !== undefined) ?? "unknown")
  }
  const distinct = sortedSet(types)
  return bad.length === 0 ? undefined : {
    reason: "restricted volume types",
    detail: `${pluralize("volume", "volumes", bad.length)} ${joinQuote(bad)} ${pluralize("uses", "use", bad.length)} ${
      pluralize("restricted volume type", "restricted volume types", distinct.length)
    } ${joinQuote(distinct)}`
  }
}

const runAsNonRoot: CheckPod = (_, spec) => {
  const podValue = securityContext(spec)?.runAsNonRoot
  const badSetters: Array<string> = podValue === false ? ["pod"] : []
  const podNonRoot = podValue === true
  const explicit: Array<string> = []
  const implicit: Array<string> = []
  for (const container of containers(spec)) {
    const value = securityContext(container)?.runAsNonRoot
    if (value === true || value === false) {
      if (value === false) explicit.push(nameOf(container))
    } else if (!podNonRoot) implicit.push(nameOf(container))
  }
  if (explicit.length > 0) badSetters.push(containersNamed(explicit))
  if (badSetters.length > 0) {
    return { reason: "runAsNonRoot != true", detail: `${badSetters.join(" and ")} must not set securityContext.runAsNonRoot=false` }
  }
  return implicit.length === 0 ? undefined : {
    reason: "runAsNonRoot != true",
    detail: `pod or ${containersNamed(implicit)} must set securityContext.runAsNonRoot=true`
  }
}

const runAsUser: CheckPod = (_, spec) => {
  const badSetters = setters(spec, (sc) => sc.runAsUser === 0)
  return badSetters.length === 0 ? undefined : { reason: "runAsUser=0", detail: `${badSetters.join(" and ")} must not set runAsUser=0` }
}

const seLinuxTypes = ["", "container_t", "container_init_t", "container_kvm_t"]

const seLinuxOptions = (allowedTypes: ReadonlySet<string>): CheckPod => (_, spec) => {
  const types: Array<string> = []
  let setUser = false
  let setRole = false
  const badSetters = setters(spec, (sc) => {
    const options = obj(sc.seLinuxOptions)
    if (options === undefined) return false
    let valid = true
    if (!allowedTypes.has(str(options.type))) {
      valid = false
      types.push(str(options.type))
    }
    if (str(options.user) !== "") {
      valid = false
      setUser = true
    }
    if (str(options.role) !== "") {
      valid = false
      setRole = true
    }
    return !valid
  })
  if (badSetters.length === 0) return undefined
  const distinct = sortedSet(types)
  const data = [
    ...(distinct.length === 0 ? [] : [`${pluralize("type", "types", distinct.length)} ${joinQuote(distinct)}`]),
    ...(setUser ? ["user may not be set"] : []),
    ...(setRole ? ["role may not be set"] : [])
  ]
  return {
    reason: "seLinuxOptions",
    detail: `${badSetters.join(" and ")} set forbidden securityContext.seLinuxOptions: ${data.join("; ")}`
  }
}

const seccompPodAnnotation = "seccomp.security.alpha.kubernetes.io/pod"
const seccompContainerAnnotation = "container.seccomp.security.alpha.kubernetes.io/"

// Before 1.19 seccomp was set by annotations.
const seccompAnnotations: CheckPod = (metadata, spec) => {
  const annotations = obj(metadata.annotations) ?? {}
  const valid = (value: string) => value === "runtime/default" || value === "docker/default" || value.startsWith("localhost/")
  const forbidden: Array<string> = []
  const checkAnnotation = (key: string) => {
    const value = annotations[key]
    if (typeof value === "string" && !valid(value)) forbidden.push(`${key}=${quoted(value)}`)
  }
  checkAnnotation(seccompPodAnnotation)
  for (const container of containers(spec)) checkAnnotation(seccompContainerAnnotation + nameOf(container))
  const distinct = sortedSet(forbidden)
  return distinct.length === 0 ? undefined : {
    reason: "seccompProfile",
    detail: `forbidden ${pluralize("annotation", "annotations", distinct.length)} ${distinct.join(", ")}`
  }
}

const seccompType = (sc: Obj): { readonly set: boolean; readonly type: string } => {
  const profile = obj(sc.seccompProfile)
  return profile === undefined ? { set: false, type: "" } : { set: true, type: str(profile.type) }
}

const seccompBaseline: CheckPod = (_, spec) => {
  const badValues: Array<string> = []
  const badSetters = setters(spec, (sc) => {
    const { set, type } = seccompType(sc)
    if (!set || profileTypes.has(type)) return false
    badValues.push(type)
    return true
  })
  return badSetters.length === 0 ? undefined : {
    reason: "seccompProfile",
    detail: `${badSetters.join(" and ")} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}`
  }
}

const seccompRestricted: CheckPod = (metadata, spec) => {
  const baseline = seccompBaseline(metadata, spec)
  if (baseline !== undefined) return baseline
  const podContext = securityContext(spec)
  const podSet = podContext !== undefined && seccompType(podContext).set
  const implicit = containers(spec).filter((c) => {
    const sc = securityContext(c)
    return !podSet && (sc === undefined || !seccompType(sc).set)
  }).map(nameOf)
  return implicit.length === 0 ? undefined : {
    reason: "seccompProfile",
    detail: `pod or ${containersNamed(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`
  }
}

const sysctlsSince: ReadonlyArray<readonly [number, ReadonlyArray<string>]> = [
  [0, ["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"]],
  [27, ["net.ipv4.ip_local_reserved_ports"]],
  [29, ["net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"]],
  [32, ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"]]
]

const sysctls = (since: number): CheckPod => {
  const allowed = new Set(sysctlsSince.filter(([minor]) => minor <= since).flatMap(([, names]) => names))
  return (_, spec) => {
    const forbidden = records(securityContext(spec)?.sysctls).map((sysctl) => str(sysctl.name)).filter((name) => !allowed.has(name))
    return forbidden.length === 0 ? undefined : { reason: "forbidden sysctls", detail: forbidden.join(", ") }
  }
}

const windowsHostProcess: CheckPod = (_, spec) => {
  const badSetters = setters(spec, (sc) => obj(sc.windowsOptions)?.hostProcess === true)
  return badSetters.length === 0 ? undefined : {
    reason: "hostProcess",
    detail: `${badSetters.join(" and ")} must not set securityContext.windowsOptions.hostProcess=true`
  }
}

// From 1.25 a pod whose spec.os is windows is exempt from the Linux-only restricted checks.
const exceptWindows = (check: CheckPod): CheckPod => (metadata, spec) => (isWindows(spec) ? undefined : check(metadata, spec))

interface Versioned {
  /** The first policy version (minor of v1.x) this form of the check applies to. */
  readonly since: number
  readonly check: CheckPod
  /** Baseline checks this restricted one replaces at its versions. */
  readonly overrides?: ReadonlyArray<string>
}

interface Check {
  readonly id: string
  readonly level: "baseline" | "restricted"
  /** Oldest first. */
  readonly versions: ReadonlyArray<Versioned>
}

const checks: ReadonlyArray<Check> = [
  {
    id: "allowPrivilegeEscalation",
    level: "restricted",
    versions: [{ since: 8, check: allowPrivilegeEscalation }, { since: 25, check: exceptWindows(allowPrivilegeEscalation) }]
  },
  { id: "appArmorProfile", level: "baseline", versions: [{ since: 0, check: appArmorProfile }] },
  { id: "capabilities_baseline", level: "baseline", versions: [{ since: 0, check: capabilitiesBaseline }] },
  {
    id: "capabilities_restricted",
    level: "restricted",
    versions: [
      { since: 22, check: capabilitiesRestricted, overrides: ["capabilities_baseline"] },
      { since: 25, check: exceptWindows(capabilitiesRestricted), overrides: ["capabilities_baseline"] }
    ]
  },
  { id: "hostNamespaces", level: "baseline", versions: [{ since: 0, check: hostNamespaces }] },
  { id: "hostPathVolumes", level: "baseline", versions: [{ since: 0, check: hostPathVolumes }] },
  { id: "hostPorts", level: "baseline", versions: [{ since: 0, check: hostPorts }] },
  { id: "privileged", level: "baseline", versions: [{ since: 0, check: privilegedContainers }] },
  { id: "procMount", level: "baseline", versions: [{ since: 0, check: procMount }] },
  { id: "restrictedVolumes", level: "restricted", versions: [{ since: 0, check: restrictedVolumes, overrides: ["hostPathVolumes"] }] },
  { id: "runAsNonRoot", level: "restricted", versions: [{ since: 0, check: runAsNonRoot }] },
  { id: "runAsUser", level: "restricted", versions: [{ since: 23, check: runAsUser }] },
  {
    id: "seLinuxOptions",
    level: "baseline",
    versions: [
      { since: 0, check: seLinuxOptions(new Set(seLinuxTypes)) },
      { since: 31, check: seLinuxOptions(new Set([...seLinuxTypes, "container_engine_t"])) }
    ]
  },
  { id: "seccompProfile_baseline", level: "baseline", versions: [{ since: 0, check: seccompAnnotations }, { since: 19, check: seccompBaseline }] },
  {
    id: "seccompProfile_restricted",
    level: "restricted",
    versions: [
      { since: 19, check: seccompRestricted, overrides: ["seccompProfile_baseline"] },
      { since: 25, check: exceptWindows(seccompRestricted), overrides: ["seccompProfile_baseline"] }
    ]
  },
  {
    id: "sysctls",
    level: "baseline",
    versions: [0, 27, 29, 32].map((since) => ({ since, check: sysctls(since) }))
  },
  { id: "windowsHostProcess", level: "baseline", versions: [{ since: 0, check: windowsHostProcess }] }
]

// Baseline checks first, then restricted ones, each sorted by id (Go's byte order): the order of
// the reasons in kube-apiserver's messages.
const ordered = [
  ...checks.filter((c) => c.level === "baseline").sort((a, b) => (a.id < b.id ? -1 : 1)),
  ...checks.filter((c) => c.level === "restricted").sort((a, b) => (a.id < b.id ? -1 : 1))
]

const atVersion = (check: Check, minor: number): Versioned | undefined =>
  check.versions.findLast((versioned) => versioned.since <= minor)

const plans = new Map<string, ReadonlyArray<CheckPod>>()

const plan = (level: "baseline" | "restricted", minor: number): ReadonlyArray<CheckPod> => {
  const key = `${level}:${minor}`
  const known = plans.get(key)
  if (known !== undefined) return known
  const active = ordered.flatMap((check) => {
    if (check.level === "restricted" && level === "baseline") return []
    const versioned = atVersion(check, minor)
    return versioned === undefined ? [] : [{ id: check.id, versioned }]
  })
  const overridden = new Set(active.flatMap(({ versioned }) => versioned.overrides ?? []))
  const planned = active.filter(({ id }) => !overridden.has(id)).map(({ versioned }) => versioned.check)
  plans.set(key, planned)
  return planned
}

/**
 * What a pod's metadata and spec violate at a level and version: nothing for privileged.
 *
 * @example
 * import * as PodSecurity from "./PodSecurity.ts"
 * const violations = PodSecurity.check({ level: "baseline", version: "latest" }, {}, {
 *   hostNetwork: true, containers: [{ name: "app", securityContext: { privileged: true } }]
 * })
 * PodSecurity.describe(violations)
 * // 'host namespaces (hostNetwork=true), privileged (container "app" must not set securityContext.privileged=true)'
 */
export const check = (lv: LevelVersion, metadata: Obj, spec: Obj): ReadonlyArray<Violation> => {
  if (lv.level === "privileged") return []
  const minor = lv.version === "latest" ? newestVersion : Math.min(lv.version, newestVersion)
  const violations: Array<Violation> = []
  for (const run of plan(lv.level, minor)) {
    const violation = run(metadata, spec)
    if (violation !== undefined) violations.push(violation)
  }
  return violations
}

/**
 * The violations as a message lists them: each reason, with its detail in parentheses.
 *
 * @example
 * import * as PodSecurity from "./PodSecurity.ts"
 * PodSecurity.describe([{ reason: "host namespaces", detail: "hostPID=true" }]) // "host namespaces (hostPID=true)"
 */
export const describe = (violations: ReadonlyArray<Violation>): string =>
  violations.map(({ detail, reason }) => (detail === "" ? reason : `${reason} (${detail})`)).join(", ")

/**
 * The reasons alone, as the warnings about existing pods list them.
 *
 * @example
 * import * as PodSecurity from "./PodSecurity.ts"
 * PodSecurity.reasons([{ reason: "host namespaces", detail: "hostPID=true" }, { reason: "hostPort", detail: "8080" }])
 * // "host namespaces, hostPort"
 */
export const reasons = (violations: ReadonlyArray<Violation>): string => violations.map((v) => v.reason).join(", ")
