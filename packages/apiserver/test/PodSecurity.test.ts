import { describe, expect, it } from "vitest"
import * as PodSecurity from "../src/PodSecurity.ts"

const latest = (level: PodSecurity.Level): PodSecurity.LevelVersion => ({ level, version: "latest" })
const at = (level: PodSecurity.Level, minor: number): PodSecurity.LevelVersion => ({ level, version: minor })

const described = (lv: PodSecurity.LevelVersion, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
  PodSecurity.describe(PodSecurity.check(lv, metadata, spec))

// A pod that meets the restricted level: every later test takes one thing away from it.
const restrictedPod = (): Record<string, any> => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  containers: [{
    name: "app",
    image: "app:1",
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } }
  }]
})

describe("PodSecurity.check", () => {
  it("reports what `kubectl run` in a restricted namespace is refused for, in kube-apiserver's order", () => {
    expect(described(latest("restricted"), { containers: [{ name: "web", image: "nginx" }] })).toBe(
      `allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), ` +
        `unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), ` +
        `runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), ` +
        `seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
    )
    expect(described(latest("baseline"), { containers: [{ name: "web", image: "nginx" }] })).toBe("")
    expect(PodSecurity.check(latest("restricted"), {}, restrictedPod())).toEqual([])
  })

  it("checks every baseline control, baseline checks before restricted ones, each by id", () => {
    const spec = {
      hostNetwork: true,
      hostPID: true,
      securityContext: { seLinuxOptions: { user: "root" }, sysctls: [{ name: "kernel.msgmax", value: "1" }], windowsOptions: { hostProcess: true } },
      volumes: [{ name: "host", hostPath: { path: "/" } }, { name: "cache", emptyDir: {} }],
      containers: [{
        name: "a",
        ports: [{ containerPort: 80, hostPort: 8080 }],
        securityContext: {
          privileged: true,
          procMount: "Unmasked",
          capabilities: { add: ["SYS_TIME", "NET_ADMIN", "CHOWN"] },
          appArmorProfile: { type: "Unconfined" },
          seccompProfile: { type: "Unconfined" }
        }
      }]
    }
    expect(PodSecurity.check(latest("baseline"), {}, spec).map((v) => v.reason)).toEqual([
      "forbidden AppArmor profile",
      "non-default capabilities",
      "host namespaces",
      "hostPath volumes",
      "hostPort",
      "privileged",
      "procMount",
      "seLinuxOptions",
      "seccompProfile",
      "forbidden sysctls",
      "hostProcess"
    ])
    expect(described(latest("baseline"), spec)).toBe([
      `forbidden AppArmor profile (container "a" must not set AppArmor profile type to "Unconfined")`,
      `non-default capabilities (container "a" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add)`,
      `host namespaces (hostNetwork=true, hostPID=true)`,
      `hostPath volumes (volume "host")`,
      `hostPort (container "a" uses hostPort 8080)`,
      `privileged (container "a" must not set securityContext.privileged=true)`,
      `procMount (container "a" must not set securityContext.procMount to "Unmasked")`,
      `seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: user may not be set)`,
      `seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")`,
      `forbidden sysctls (kernel.msgmax)`,
      `hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)`
    ].join(", "))
    // Restricted adds its own checks after baseline's and replaces baseline's hostPath, capabilities
    // and seccomp ones with its own.
    expect(PodSecurity.check(latest("restricted"), {}, spec).map((v) => v.reason)).toEqual([
      "forbidden AppArmor profile",
      "host namespaces",
      "hostPort",
      "privileged",
      "procMount",
      "seLinuxOptions",
      "forbidden sysctls",
      "hostProcess",
      "allowPrivilegeEscalation != false",
      "unrestricted capabilities",
      "restricted volume types",
      "runAsNonRoot != true",
      "seccompProfile"
    ])
  })

  it("names the pod and containers that set a value, plural where there are several", () => {
    const spec = {
      securityContext: { seLinuxOptions: { type: "foo", user: "bar", role: "baz" } },
      containers: ["container_t", "container_init_t", "container_kvm_t", "container_engine_t", "bar"].map((type, i) => ({
        name: String.fromCharCode(97 + i),
        securityContext: { seLinuxOptions: { type } }
      })).concat([{ name: "f", securityContext: { seLinuxOptions: { type: "", user: "bar" } as any } }])
    }
    expect(PodSecurity.check(latest("baseline"), {}, spec)).toEqual([{
      reason: "seLinuxOptions",
      detail: `pod and containers "e", "f" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set`
    }])
    // container_engine_t is allowed from 1.31 on.
    expect(described(at("baseline", 30), { containers: [{ name: "d", securityContext: { seLinuxOptions: { type: "container_engine_t" } } }] }))
      .toBe(`seLinuxOptions (container "d" set forbidden securityContext.seLinuxOptions: type "container_engine_t")`)
    const ports = { containers: [{ name: "b", ports: [{ hostPort: 30 }, { hostPort: 10 }] }, { name: "c", ports: [{ hostPort: 20 }, { hostPort: 0 }] }] }
    expect(described(latest("baseline"), ports)).toBe(`hostPort (containers "b", "c" use hostPorts 10, 20, 30)`)
  })

  it("reads an unset pointer and a null alike, and a false or 0 as set", () => {
    const pod = restrictedPod()
    pod.containers[0].securityContext.allowPrivilegeEscalation = null
    expect(described(latest("restricted"), pod)).toBe(
      `allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`
    )
    const explicit = restrictedPod()
    explicit.containers[0].securityContext.runAsNonRoot = false
    explicit.containers[0].securityContext.runAsUser = 0
    expect(described(latest("restricted"), explicit)).toBe(
      `runAsNonRoot != true (container "app" must not set securityContext.runAsNonRoot=false), ` +
        `runAsUser=0 (container "app" must not set runAsUser=0)`
    )
    // A container's own setting stands in for the pod's.
    const perContainer = restrictedPod()
    delete perContainer.securityContext
    perContainer.containers[0].securityContext = {
      ...perContainer.containers[0].securityContext,
      runAsNonRoot: true,
      seccompProfile: { type: "Localhost", localhostProfile: "p.json" }
    }
    expect(described(latest("restricted"), perContainer)).toBe("")
  })

  it("checks init and ephemeral containers, and limits volumes to the restricted kinds", () => {
    const pod = restrictedPod()
    pod.initContainers = [{ name: "init", securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE", "NET_RAW"] } } }]
    pod.volumes = [
      { name: "config", configMap: { name: "c" } },
      { name: "nfs", nfs: { server: "s", path: "/" } },
      { name: "disk", gcePersistentDisk: { pdName: "d" } },
      { name: "other", image: { reference: "x" } }
    ]
    expect(described(latest("restricted"), pod)).toBe(
      `unrestricted capabilities (container "init" must not include "NET_RAW" in securityContext.capabilities.add), ` +
        `restricted volume types (volumes "nfs", "disk", "other" use restricted volume types "gcePersistentDisk", "nfs", "unknown")`
    )
  })

  it("runs each check as the policy version asks", () => {
    const root = restrictedPod()
    root.securityContext.runAsUser = 0
    expect(described(at("restricted", 22), root)).toBe("")
    expect(described(at("restricted", 23), root)).toBe(`runAsUser=0 (pod must not set runAsUser=0)`)
    // Before 1.22 restricted checks added capabilities as baseline does, and drops were not required.
    const raw = restrictedPod()
    raw.containers[0].securityContext.capabilities = { add: ["NET_RAW"] }
    expect(described(at("restricted", 21), raw)).toBe(
      `non-default capabilities (container "app" must not include "NET_RAW" in securityContext.capabilities.add)`
    )
    // Before 1.19 seccomp was set by annotations.
    const annotated = { ...restrictedPod(), securityContext: { runAsNonRoot: true } }
    expect(described(at("restricted", 18), annotated, {
      annotations: { "seccomp.security.alpha.kubernetes.io/pod": "unconfined", "container.seccomp.security.alpha.kubernetes.io/app": "runtime/default" }
    })).toBe(`seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")`)
    // Sysctls allowed grew over time; a version past the newest is checked as the newest.
    const sysctls = { securityContext: { sysctls: [{ name: "net.ipv4.tcp_rmem" }, { name: "net.ipv4.tcp_keepalive_time" }] } }
    expect(described(at("baseline", 28), sysctls)).toBe("forbidden sysctls (net.ipv4.tcp_rmem, net.ipv4.tcp_keepalive_time)")
    expect(described(at("baseline", 31), sysctls)).toBe("forbidden sysctls (net.ipv4.tcp_rmem)")
    expect(described(at("baseline", 40), sysctls)).toBe("")
    // From 1.25 a Windows pod skips the Linux-only controls.
    const windows = { os: { name: "windows" }, securityContext: { runAsNonRoot: true }, containers: [{ name: "win" }] }
    expect(described(at("restricted", 25), windows)).toBe("")
    expect(described(at("restricted", 24), windows)).toContain("allowPrivilegeEscalation != false")
  })

  it("lists forbidden AppArmor annotations after profile types", () => {
    const spec = { containers: [{ name: "a", securityContext: { appArmorProfile: { type: "Unconfined" } } }] }
    expect(PodSecurity.check(latest("baseline"), {
      annotations: {
        "container.apparmor.security.beta.kubernetes.io/b": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/a": "localhost/ok"
      }
    }, spec)).toEqual([{
      reason: "forbidden AppArmor profiles",
      detail: `container "a" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/b="unconfined""`
    }])
  })
})

describe("PodSecurity.policyOf", () => {
  it("reads each mode's level and version, defaulting to privileged:latest", () => {
    const { causes, policy } = PodSecurity.policyOf({
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/enforce-version": "v1.25",
      "pod-security.kubernetes.io/audit": "restricted"
    })
    expect(causes).toEqual([])
    expect(PodSecurity.format(policy.enforce)).toBe("baseline:v1.25")
    expect(PodSecurity.format(policy.audit)).toBe("restricted:latest")
    // Warn follows a stricter enforce level, and its version, unless it has a label of its own.
    expect(PodSecurity.format(policy.warn)).toBe("baseline:v1.25")
    const own = PodSecurity.policyOf({ "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "baseline" })
    expect(PodSecurity.format(own.policy.warn)).toBe("baseline:latest")
    expect(PodSecurity.policyOf(undefined).policy).toEqual(PodSecurity.defaultPolicy)
  })

  it("names each label that does not parse, and fails closed for enforce, open for warn", () => {
    const { causes, policy } = PodSecurity.policyOf({
      "pod-security.kubernetes.io/enforce": "strict",
      "pod-security.kubernetes.io/warn": "loud",
      "pod-security.kubernetes.io/audit-version": "1.25"
    })
    expect(causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`,
      `metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.25": must be "latest" or "v1.x"`,
      `metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "loud": must be one of privileged, baseline, restricted`
    ])
    expect(policy.enforce.level).toBe("restricted")
    expect(policy.warn.level).toBe("privileged")
    expect(PodSecurity.policyOf({ "pod-security.kubernetes.io/enforce-version": "v1.05" }).causes).toHaveLength(1)
  })
})
