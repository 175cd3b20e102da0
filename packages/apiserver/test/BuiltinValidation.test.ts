/**
 * 1.32's validation of the built-in kinds, as causes with 1.32's field paths and messages, run on
 * objects after their defaults (as Admission runs them), and over HTTP for the kinds served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as BuiltinDefaults from "../src/BuiltinDefaults.ts"
import * as Builtins from "../src/Builtins.ts"
import * as BuiltinValidation from "../src/BuiltinValidation.ts"
import * as Cron from "../src/Cron.ts"
import * as Testing from "../src/Testing.ts"
import { crontab, crontabCrd, installCrd } from "./fixtures.ts"
import { type KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

/** The `field: message` lines 1.32 prints for a write of `object` (defaulted first). */
const problems = (group: string, kind: string, object: Json, old?: Json): ReadonlyArray<string> => {
  const defaults = BuiltinDefaults.lookup(group, kind)
  // Defaults, then (a Service's addresses) what the registry allocates, as Admission settles a write.
  const allocate = Builtins.make().find((r) => r.type.group === group && r.type.kind === kind)?.allocate
  const admit = (o: Json, before: Json | undefined) => {
    const defaulted = defaults === undefined ? o : defaults(o, before)
    return allocate === undefined ? defaulted : allocate(defaulted, before)
  }
  const storedOld = old === undefined ? undefined : admit(old, undefined)
  return BuiltinValidation.lookup(group, kind)!(admit(object, storedOld), storedOld).map((c) => `${c.field}: ${c.message}`)
}

const container = { name: "app", image: "nginx:1.27" }
const podSpec = { containers: [container] }
const workload = (extra: Json = {}) => ({
  metadata: { name: "web", namespace: "default", uid: "u-1" },
  spec: { selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: podSpec }, ...extra }
})

describe("workloads", () => {
  it("accepts a plain Deployment and refuses one whose selector does not select its template", () => {
    expect(problems("apps", "Deployment", workload())).toEqual([])
    const mismatched = workload({ selector: { matchLabels: { app: "api" } } })
    expect(problems("apps", "Deployment", mismatched)).toEqual([
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'
    ])
    expect(problems("apps", "Deployment", { spec: { template: { spec: podSpec } } })).toEqual(["spec.selector: Required value"])
    expect(problems("apps", "Deployment", workload({ selector: {} }))).toEqual([
      "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
    ])
  })

  it("checks replicas, strategies and the selector on update", () => {
    expect(problems("apps", "Deployment", workload({ replicas: -1, strategy: { type: "Blue" } }))).toEqual([
      "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
      'spec.strategy.type: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"'
    ])
    expect(problems("apps", "Deployment", workload({ strategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }))).toEqual([
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0'
    ])
    const relabeled = workload({ selector: { matchLabels: { app: "web", v: "2" } } })
    relabeled.spec.template.metadata.labels = { app: "web", v: "2" } as never
    expect(problems("apps", "Deployment", relabeled, workload())).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
    ])
  })

  it("validates the template's containers and restart policy", () => {
    const bad = workload()
    bad.spec.template.spec = {
      containers: [{ name: "App", image: "" }, { name: "b", image: "x", ports: [{ containerPort: 70000, protocol: "HTTP" }] }, { name: "b", image: "y" }],
      restartPolicy: "OnFailure"
    } as never
    expect(problems("apps", "ReplicaSet", bad)).toEqual([
      "spec.template.spec.containers[0].name: Invalid value: \"App\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      "spec.template.spec.containers[0].image: Required value",
      "spec.template.spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
      'spec.template.spec.containers[1].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      'spec.template.spec.containers[2].name: Duplicate value: "b"',
      'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'
    ])
    const empty = workload()
    empty.spec.template.spec = { containers: [] } as never
    expect(problems("apps", "DaemonSet", empty)).toEqual(["spec.template.spec.containers: Required value"])
  })

  it("checks requests against limits, mounts against volumes", () => {
    const pod = {
      metadata: { name: "p" },
      spec: {
        containers: [{
          name: "a",
          image: "b",
          resources: { requests: { cpu: "2", memory: "-1" }, limits: { cpu: "1" } },
          volumeMounts: [{ name: "data", mountPath: "/data" }]
        }],
        volumes: [{ name: "cfg", configMap: { name: "c" }, secret: { secretName: "s" } }]
      }
    }
    expect(problems("", "Pod", pod)).toEqual([
      "spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type",
      'spec.containers[0].volumeMounts[0].name: Not found: "data"',
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
    ])
  })

  it("lets a Pod update change images but not the rest of its spec", () => {
    const pod = { metadata: { name: "p" }, spec: podSpec }
    expect(problems("", "Pod", { ...pod, spec: { containers: [{ ...container, image: "nginx:1.28" }] } }, pod)).toEqual([])
    expect(problems("", "Pod", { ...pod, spec: { ...podSpec, restartPolicy: "Never" } }, pod)).toEqual([
      "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    ])
  })

  it("freezes a StatefulSet's spec except the fields 1.32 lets change", () => {
    const sts = workload({ serviceName: "web" })
    expect(problems("apps", "StatefulSet", { ...sts, spec: { ...sts.spec, replicas: 3 } }, sts)).toEqual([])
    expect(problems("apps", "StatefulSet", { ...sts, spec: { ...sts.spec, serviceName: "other" } }, sts)).toEqual([
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    ])
  })

  it("leaves a StatefulSet's pod spec to pod creation, as 1.32 does, but for its restart policy and deadline", () => {
    const mounted = { ...podSpec, containers: [{ ...container, volumeMounts: [{ name: "data", mountPath: "/data" }] }] }
    const sts = workload({ serviceName: "web", volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "1Gi" } } } }] })
    const withPods = (spec: Record<string, unknown>) => ({ ...sts, spec: { ...sts.spec, template: { ...sts.spec.template, spec } } })
    expect(problems("apps", "StatefulSet", withPods(mounted))).toEqual([])
    expect(problems("apps", "Deployment", { ...withPods(mounted), spec: { ...withPods(mounted).spec, volumeClaimTemplates: undefined } })).toEqual([
      'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"'
    ])
    expect(problems("apps", "StatefulSet", withPods({ ...podSpec, restartPolicy: "Never", activeDeadlineSeconds: 5 }))).toEqual([
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
      "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"
    ])
  })

  it("defaults a ReplicationController's selector from its template, and requires one otherwise", () => {
    const rc = { metadata: { name: "rc" }, spec: { template: { metadata: { labels: { app: "a" } }, spec: podSpec } } }
    expect(problems("", "ReplicationController", rc)).toEqual([])
    expect(problems("", "ReplicationController", { metadata: { name: "rc" }, spec: { template: { spec: podSpec } } })).toEqual(["spec.selector: Required value"])
  })
})

describe("Jobs and CronJobs", () => {
  const job = (spec: Json = {}) => ({
    metadata: { name: "pi", uid: "u-2" },
    spec: { template: { spec: { ...podSpec, restartPolicy: "Never" } }, ...spec }
  })

  it("needs OnFailure or Never, and keeps its generated selector", () => {
    expect(problems("batch", "Job", job())).toEqual([])
    expect(problems("batch", "Job", { metadata: { name: "pi", uid: "u-2" }, spec: { template: { spec: podSpec } } })).toEqual([
      'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ])
    const weird = job()
    weird.spec.template.spec.restartPolicy = "Sometimes"
    // The pod spec's own check and the Job's both report it, as in 1.32.
    expect(problems("batch", "Job", weird)).toEqual([
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"'
    ])
    expect(problems("batch", "Job", job({ completionMode: "Indexed", completions: undefined, parallelism: 2 }))).toEqual([
      "spec.completions: Required value: when completion mode is Indexed"
    ])
  })

  it("refuses a changed template or completion count on update", () => {
    const changed = job({ completions: 3 })
    expect(problems("batch", "Job", changed, job())).toEqual(["spec.completions: Invalid value: 3: field is immutable"])
  })

  it("parses schedules and time zones as 1.32 does", () => {
    const cron = (spec: Json) => ({
      metadata: { name: "nightly" },
      spec: { jobTemplate: { spec: { template: { spec: { ...podSpec, restartPolicy: "OnFailure" } } } }, ...spec }
    })
    expect(problems("batch", "CronJob", cron({ schedule: "*/5 * * * *", timeZone: "Europe/Berlin" }))).toEqual([])
    expect(problems("batch", "CronJob", cron({ schedule: "@hourly" }))).toEqual([])
    expect(problems("batch", "CronJob", cron({}))).toEqual(["spec.schedule: Required value"])
    expect(problems("batch", "CronJob", cron({ schedule: "every day", timeZone: "Mars/Olympus" }))).toEqual([
      'spec.schedule: Invalid value: "every day": expected exactly 5 fields, found 2: [every day]',
      'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'
    ])
    expect(problems("batch", "CronJob", cron({ schedule: "TZ=UTC 0 * * * *" }))).toEqual([
      'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead'
    ])
    expect(Cron.parseError("61 * * * *")).toBe("end of range (61) above maximum (59): 61")
    expect(Cron.parseError("0 0 * JAN-MAR MON")).toBeUndefined()
    expect(Cron.parseError("0 0 * * 7")).toBe("end of range (7) above maximum (6): 7")
    expect(Cron.parseError("x * * * *")).toBe('failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax')
    expect(Cron.parseError("@fortnightly")).toBe("unrecognized descriptor: @fortnightly")
  })
})

describe("Services", () => {
  const svc = (spec: Json, name = "web") => ({ metadata: { name, namespace: "default" }, spec })

  it("checks names, ports, types and addresses", () => {
    expect(problems("", "Service", svc({ ports: [{ port: 80 }] }))).toEqual([])
    expect(problems("", "Service", svc({ ports: [{ port: 80 }] }, "1web"))[0]).toMatch(/^metadata.name: Invalid value: "1web": a DNS-1035 label must consist/)
    expect(problems("", "Service", svc({ type: "Internal", ports: [{ port: 80 }] }))).toEqual([
      'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'
    ])
    expect(problems("", "Service", svc({}))).toEqual(["spec.ports: Required value"])
    expect(problems("", "Service", svc({ ports: [{ port: 80 }, { port: 443 }] }))).toEqual([
      "spec.ports[0].name: Required value",
      "spec.ports[1].name: Required value"
    ])
    expect(problems("", "Service", svc({ ports: [{ port: 80, nodePort: 30080 }] }))).toEqual([
      "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
    ])
    expect(problems("", "Service", svc({ type: "NodePort", ports: [{ port: 80, nodePort: 80 }] }))).toEqual([
      "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"
    ])
    expect(problems("", "Service", svc({ clusterIP: "192.168.1.1", ports: [{ port: 80 }] }))).toEqual([
      'spec.clusterIPs: Invalid value: []string{"192.168.1.1"}: failed to allocate IP 192.168.1.1: provided IP (192.168.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12'
    ])
    expect(problems("", "Service", svc({ type: "ExternalName" }))).toEqual(["spec.externalName: Required value"])
    expect(problems("", "Service", svc({ clusterIP: "None", selector: { app: "web" } }))).toEqual([])
  })

  it("keeps the cluster IP once set", () => {
    const before = svc({ clusterIP: "10.96.10.10", ports: [{ port: 80 }] })
    expect(problems("", "Service", svc({ ports: [{ port: 81 }] }), before)).toEqual([])
    expect(problems("", "Service", svc({ clusterIP: "10.96.10.11", clusterIPs: ["10.96.10.11"], ports: [{ port: 80 }] }), before)).toEqual([
      'spec.clusterIPs[0]: Invalid value: []string{"10.96.10.11"}: may not change once set'
    ])
  })
})

describe("Secrets and ConfigMaps", () => {
  it("requires each type's keys and valid keys", () => {
    expect(problems("", "Secret", { metadata: { name: "s" }, type: "kubernetes.io/tls", data: { "tls.crt": "eA==" } })).toEqual(["data[tls.key]: Required value"])
    expect(problems("", "Secret", { metadata: { name: "s" }, type: "kubernetes.io/dockerconfigjson", stringData: {} })).toEqual(["data[.dockerconfigjson]: Required value"])
    expect(problems("", "Secret", { metadata: { name: "s" }, stringData: { "a b": "x" } })).toEqual([
      "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
    ])
    expect(problems("", "Secret", { metadata: { name: "s" }, type: "kubernetes.io/tls", stringData: { "tls.crt": "c", "tls.key": "k" } })).toEqual([])
  })

  it("refuses changes to immutable data and to a Secret's type", () => {
    const frozen = { metadata: { name: "s" }, immutable: true, data: { a: "YQ==" } }
    expect(problems("", "Secret", { ...frozen, stringData: { a: "b" } }, frozen)).toEqual(["data: Forbidden: field is immutable when `immutable` is set"])
    expect(problems("", "Secret", { ...frozen, immutable: false }, frozen)).toEqual(["immutable: Forbidden: field is immutable when `immutable` is set"])
    expect(problems("", "Secret", { metadata: { name: "s" }, type: "kubernetes.io/basic-auth", data: { username: "dQ==" } }, { metadata: { name: "s" } })).toEqual([
      'type: Invalid value: "kubernetes.io/basic-auth": field is immutable'
    ])
    const cm = { metadata: { name: "c" }, immutable: true, data: { a: "1" } }
    expect(problems("", "ConfigMap", { ...cm, data: { a: "2" } }, cm)).toEqual(["data: Forbidden: field is immutable when `immutable` is set"])
  })
})

describe("RBAC", () => {
  const ref = { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" }
  it("checks rules", () => {
    expect(problems("rbac.authorization.k8s.io", "Role", { rules: [{ resources: ["pods"] }, { verbs: ["get"], nonResourceURLs: ["/healthz"] }] })).toEqual([
      "rules[0].verbs: Required value: verbs must contain at least one value",
      "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
      'rules[1].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs'
    ])
    expect(problems("rbac.authorization.k8s.io", "ClusterRole", { rules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }] })).toEqual([])
  })

  it("checks roleRef and subjects, and never lets roleRef change", () => {
    expect(problems("rbac.authorization.k8s.io", "ClusterRoleBinding", { roleRef: { kind: "Role", name: "x" }, subjects: [{ kind: "ServiceAccount", name: "sa" }, { kind: "Robot", name: "r" }] })).toEqual([
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      "subjects[0].namespace: Required value",
      'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'
    ])
    const binding = { roleRef: ref, subjects: [{ kind: "User", name: "jane" }] }
    expect(problems("rbac.authorization.k8s.io", "RoleBinding", binding)).toEqual([])
    expect(problems("rbac.authorization.k8s.io", "RoleBinding", { ...binding, roleRef: { ...ref, name: "edit" } }, binding)).toEqual([
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef'
    ])
  })
})

describe("networking, storage, policy, scheduling and admission kinds", () => {
  it("checks Ingress paths, types and backends", () => {
    const ingress = (path: Json) => ({ spec: { rules: [{ host: "Example.com", http: { paths: [path] } }] } })
    expect(problems("networking.k8s.io", "Ingress", ingress({ path: "api", pathType: "Prefix", backend: { service: { name: "web" } } }))).toEqual([
      "spec.rules[0].host: Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path',
      "spec.rules[0].http.paths[0].backend: Required value: port name or number is required"
    ])
    expect(problems("networking.k8s.io", "Ingress", ingress({ path: "/", backend: { service: { name: "web", port: { number: 80 } } } })).at(-1)).toBe(
      "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"
    )
    expect(problems("networking.k8s.io", "Ingress", { spec: {} })).toEqual([
      "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"
    ])
  })

  it("checks claims and volumes, and freezes an unbound claim's spec", () => {
    expect(problems("", "PersistentVolumeClaim", { spec: {} })).toEqual([
      "spec.accessModes: Required value: at least 1 access mode is required",
      "spec.resources[storage]: Required value"
    ])
    const claim = { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } }
    expect(problems("", "PersistentVolumeClaim", claim)).toEqual([])
    const grown = { spec: { ...claim.spec, resources: { requests: { storage: "2Gi" } } } }
    expect(problems("", "PersistentVolumeClaim", grown, claim)).toEqual([
      "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
    ])
    expect(problems("", "PersistentVolumeClaim", { ...grown, status: { phase: "Bound" } }, { ...claim, status: { phase: "Bound" } })).toEqual([])
    expect(problems("", "PersistentVolume", { spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] } })).toEqual([
      "spec: Required value: must specify a volume type"
    ])
  })

  it("checks PDBs, HPAs and PriorityClasses", () => {
    expect(problems("policy", "PodDisruptionBudget", { spec: { minAvailable: "150%" } })).toEqual([
      'spec.minAvailable: Invalid value: "150%": must not be greater than 100%'
    ])
    expect(problems("policy", "PodDisruptionBudget", { spec: { minAvailable: 1, maxUnavailable: 1 } })[0]).toMatch(
      /^spec: Invalid value: policy.PodDisruptionBudgetSpec\{MinAvailable:\(\*intstr.IntOrString\)\(0x[0-9a-f]+\), .*\}: minAvailable and maxUnavailable cannot be both set$/
    )
    expect(problems("autoscaling", "HorizontalPodAutoscaler", { apiVersion: "autoscaling/v2", spec: { scaleTargetRef: { kind: "Deployment" }, minReplicas: 3, maxReplicas: 2 } })).toEqual([
      "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`",
      "spec.scaleTargetRef.name: Required value"
    ])
    const pc = { metadata: { name: "high" }, value: 1000 }
    expect(problems("scheduling.k8s.io", "PriorityClass", { ...pc, value: 2000 }, pc)).toEqual(["value: Forbidden: may not be changed in an update."])
  })

  it("checks webhook configurations and admission policies", () => {
    const hook = { name: "check.example.com", sideEffects: "None", admissionReviewVersions: ["v1"], clientConfig: { service: { name: "s", namespace: "n" } } }
    expect(problems("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", { webhooks: [hook] })).toEqual([])
    expect(problems("admissionregistration.k8s.io", "MutatingWebhookConfiguration", {
      webhooks: [{ name: "check" }, hook, { ...hook, clientConfig: { url: "http://x.example.com/" }, timeoutSeconds: 60 }]
    })).toEqual([
      'webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots',
      "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
      "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
      "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
      "webhooks[2].timeoutSeconds: Invalid value: 60: the timeout value must be between 1 and 30 seconds",
      `webhooks[2].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'webhooks[2].name: Duplicate value: "check.example.com"'
    ])
    expect(problems("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", { spec: { validationActions: ["Block"] } })).toEqual([
      "spec.policyName: Required value",
      'spec.validationActions[0]: Unsupported value: "Block": supported values: "Audit", "Deny", "Warn"'
    ])
    expect(problems("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", { spec: { matchConstraints: { resourceRules: [{ operations: ["CREATE"] }] }, validations: [{ expression: " " }] } })).toEqual([
      "spec.validations[0].expression: Required value"
    ])
  })

  it("checks EndpointSlices and limit ranges", () => {
    expect(problems("discovery.k8s.io", "EndpointSlice", { endpoints: [{ addresses: [] }] })).toEqual([
      "addressType: Required value",
      "endpoints[0].addresses: Required value: must contain at least 1 address"
    ])
    // kube refuses unspecified and link-local addresses; loopback ones stay, the way a Service reaches the host here.
    expect(problems("discovery.k8s.io", "EndpointSlice", {
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.0.0.1", "0.0.0.0", "169.254.1.1", "fd00::1", "127.0.0.1"] }]
    })).toEqual([
      'endpoints[0].addresses[1]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
      'endpoints[0].addresses[2]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'endpoints[0].addresses[3]: Invalid value: "fd00::1": must be a valid IPv4 address'
    ])
    expect(problems("", "Endpoints", {
      subsets: [{ addresses: [{ ip: "127.0.0.1" }, { ip: "::" }], notReadyAddresses: [{ ip: "fe80::1" }], ports: [{ port: 80, protocol: "TCP" }] }]
    })).toEqual([
      'subsets[0].addresses[1].ip: Invalid value: "::": may not be unspecified (::)',
      'subsets[0].notReadyAddresses[0].ip: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)'
    ])
    expect(problems("", "LimitRange", { spec: { limits: [{ type: "Container", min: { cpu: "2" }, max: { cpu: "1" } }] } })[0]).toBe(
      'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1'
    )
  })
})

describe("over HTTP", () => {
  let server: Testing.TestServer
  beforeAll(async () => {
    server = await Testing.start()
  })
  afterAll(() => server.close())

  it("answers 422 Invalid with 1.32's message for a Deployment whose selector does not match", async () => {
    const res = await server.request("POST", "/apis/apps/v1/namespaces/default/deployments", {
      body: { apiVersion: "apps/v1", kind: "Deployment", ...workload({ selector: { matchLabels: { app: "api" } } }), metadata: { name: "web" } }
    })
    expect(res.status).toBe(422)
    expect(res.json).toMatchObject({
      kind: "Status",
      reason: "Invalid",
      code: 422,
      message: 'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
      details: {
        name: "web",
        group: "apps",
        kind: "Deployment",
        causes: [{ reason: "FieldValueInvalid", field: "spec.template.metadata.labels", message: 'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`' }]
      }
    })
  })

  it("answers 422 for a TLS Secret without its key and for a Service whose cluster IP changes", async () => {
    const secret = await server.request("POST", "/api/v1/namespaces/default/secrets", {
      body: { apiVersion: "v1", kind: "Secret", metadata: { name: "tls" }, type: "kubernetes.io/tls", stringData: { "tls.crt": "c" } }
    })
    expect(secret.status).toBe(422)
    expect(secret.json.message).toBe('Secret "tls" is invalid: data[tls.key]: Required value')
    const created = await server.request("POST", "/api/v1/namespaces/default/services", {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "fixed" }, spec: { ports: [{ port: 80 }] } }
    })
    expect(created.status).toBe(201)
    const moved = await server.request("PATCH", "/api/v1/namespaces/default/services/fixed", {
      body: { spec: { clusterIP: "10.96.200.200", clusterIPs: ["10.96.200.200"] } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(moved.status).toBe(422)
    expect(moved.json.message).toBe('Service "fixed" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.200.200"}: may not change once set')
  })

  it("checks a built-in object's labels, annotations and finalizers; a finalizer without a path must be one of kube's own", async () => {
    const created = (finalizers: ReadonlyArray<string>, metadata: Json = {}) =>
      server.request("POST", "/api/v1/namespaces/default/configmaps", {
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "held", finalizers, ...metadata }, data: { a: "1" } }
      })
    const refused = await created(["cleanup", "example.com/cleanup"], { labels: { "a b": "c", app: "-web" }, annotations: { "x y": "1" } })
    expect(refused.status, refused.text).toBe(422)
    expect(refused.json.details.causes.map((c: { field: string; reason: string }) => `${c.field} ${c.reason}`)).toEqual([
      "metadata.labels FieldValueInvalid",
      "metadata.labels FieldValueInvalid",
      "metadata.annotations FieldValueInvalid",
      "metadata.finalizers[0] FieldValueInvalid"
    ])
    expect(refused.json.details.causes[3].message).toBe('Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified')
    // An owner reference without its uid is one cause, at the list, as kube words it.
    const unowned = await created([], { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner" }] })
    expect(unowned.status).toBe(422)
    expect(unowned.json.message).toBe('ConfigMap "held" is invalid: metadata.ownerReferences.uid: Invalid value: "": uid must not be empty')
    const large = await created([], { annotations: { big: "x".repeat(256 * 1024) } })
    expect(large.status).toBe(422)
    expect(large.json.message).toBe('ConfigMap "held" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes')
    // kube's own finalizers, and any with a path, are fine; a later update is checked the same way.
    expect((await created(["orphan", "example.com/cleanup"])).status).toBe(201)
    const added = await server.request("PATCH", "/api/v1/namespaces/default/configmaps/held", {
      body: { metadata: { finalizers: ["orphan", "example.com/cleanup", "mine"] } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(added.status).toBe(422)
    expect(added.json.message).toBe('ConfigMap "held" is invalid: metadata.finalizers[2]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified')
  })

  it("names RBAC's kinds and persistent volumes by path segment, other kinds by DNS subdomain", async () => {
    const role = (name: string) =>
      server.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", { body: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules: [] } })
    expect((await role("system:kubefx:viewer")).status).toBe(201)
    const slashed = await role("team/viewer")
    expect(slashed.status).toBe(422)
    expect(slashed.json.message).toBe(`ClusterRole.rbac.authorization.k8s.io "team/viewer" is invalid: metadata.name: Invalid value: "team/viewer": may not contain '/'`)
    const volume = await server.request("POST", "/api/v1/persistentvolumes", {
      body: { apiVersion: "v1", kind: "PersistentVolume", metadata: { name: "Disk_1" }, spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], hostPath: { path: "/tmp/d" } } }
    })
    expect(volume.status, volume.text).toBe(201)
    const configMap = await server.request("POST", "/api/v1/namespaces/default/configmaps", { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "system:x" } } })
    expect(configMap.status).toBe(422)
  })

  it("warns about a custom resource's finalizer that is not domain-qualified, once, when it is added", async () => {
    await installCrd(server, crontabCrd())
    const path = "/apis/stable.example.com/v1/namespaces/default/crontabs"
    const created = await server.request("POST", path, { body: crontab("held", {}, { finalizers: ["cleanup", "example.com/cleanup", "kubefx.dev"] }) })
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("warning")).toBe([
      '299 - "metadata.finalizers: \\"cleanup\\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"',
      '299 - "metadata.finalizers: \\"kubefx.dev\\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"'
    ].join(", "))
    const relabelled = await server.request("PATCH", `${path}/held`, {
      body: { metadata: { labels: { a: "b" } } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(relabelled.status).toBe(200)
    expect(relabelled.headers.get("warning")).toBeNull()
  })

  it("answers 422 for a Pod whose container has no image", async () => {
    const res = await server.request("POST", "/api/v1/namespaces/default/pods", {
      body: { apiVersion: "v1", kind: "Pod", metadata: { name: "noimage" }, spec: { containers: [{ name: "app" }] } }
    })
    expect(res.status).toBe(422)
    expect(res.json.message).toBe('Pod "noimage" is invalid: spec.containers[0].image: Required value')
  })
})
