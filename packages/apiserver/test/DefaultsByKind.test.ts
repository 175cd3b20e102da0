/**
 * 1.32's defaults of each built-in kind, value by value, as BuiltinDefaults applies them to a
 * write (and, on update, with the stored object).
 */
import { describe, expect, it } from "vitest"
import * as BuiltinDefaults from "../src/BuiltinDefaults.ts"
import * as ServiceDefaults from "../src/ServiceDefaults.ts"
import { type KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
const defaults = (group: string, kind: string, object: Json, old?: Json): any => BuiltinDefaults.lookup(group, kind)!(object, old)

const podSpec = { containers: [{ name: "app", image: "nginx:1.27" }] }
const template = { metadata: { labels: { app: "web" } }, spec: podSpec }
const templateDefaults = {
  restartPolicy: "Always",
  dnsPolicy: "ClusterFirst",
  schedulerName: "default-scheduler",
  terminationGracePeriodSeconds: 30,
  securityContext: {},
  containers: [{
    name: "app",
    image: "nginx:1.27",
    imagePullPolicy: "IfNotPresent",
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    resources: {}
  }]
}

describe("pods", () => {
  it("gives a Pod the admission plugins' fields, requests from limits and a QoS class", () => {
    const pod = defaults("", "Pod", {
      metadata: { name: "p" },
      spec: {
        containers: [{ name: "a", image: "busybox", resources: { limits: { cpu: "1", memory: "1Gi" } } }],
        tolerations: [{ key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" }],
        volumes: [{ name: "scratch" }, { name: "host", hostPath: { path: "/var/log" } }, { name: "cfg", configMap: { name: "c" } }]
      }
    })
    expect(pod.status).toEqual({ phase: "Pending", qosClass: "Guaranteed" })
    expect(pod.spec.containers[0].resources).toEqual({ limits: { cpu: "1", memory: "1Gi" }, requests: { cpu: "1", memory: "1Gi" } })
    expect(pod.spec.containers[0].imagePullPolicy).toBe("Always")
    expect(pod.spec.tolerations).toEqual([
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute" },
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }
    ])
    expect(pod.spec.volumes).toEqual([
      { name: "scratch", emptyDir: {} },
      { name: "host", hostPath: { path: "/var/log", type: "" } },
      { name: "cfg", configMap: { name: "c", defaultMode: 420 } }
    ])
    expect(pod.spec).toMatchObject({ serviceAccountName: "default", serviceAccount: "default", enableServiceLinks: true })
  })

  it("defaults probes, hooks and field references, and leaves priority to admission", () => {
    const pod = defaults("", "Pod", {
      metadata: { name: "p" },
      spec: {
        priorityClassName: "system-node-critical",
        containers: [{
          name: "a",
          image: "x:1",
          livenessProbe: { httpGet: { port: 8080 } },
          lifecycle: { preStop: { httpGet: { port: 80, path: "/stop" } } },
          env: [{ name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }]
        }]
      }
    })
    const c = pod.spec.containers[0]
    expect(c.livenessProbe).toEqual({ httpGet: { port: 8080, path: "/", scheme: "HTTP" }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 })
    expect(c.lifecycle.preStop.httpGet).toEqual({ port: 80, path: "/stop", scheme: "HTTP" })
    expect(c.env[0].valueFrom.fieldRef).toEqual({ apiVersion: "v1", fieldPath: "spec.nodeName" })
    // The Priority admission plugin reads the class; defaults set neither priority nor policy.
    expect(pod.spec.priority).toBeUndefined()
    expect(pod.spec.preemptionPolicy).toBeUndefined()
  })
})

describe("workloads", () => {
  it("defaults Deployments, StatefulSets, DaemonSets and ReplicaSets", () => {
    expect(defaults("apps", "Deployment", { spec: { template } }).spec).toEqual({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      template: { ...template, spec: templateDefaults }
    })
    expect(defaults("apps", "Deployment", { spec: { strategy: { type: "Recreate" }, template } }).spec.strategy).toEqual({ type: "Recreate" })
    const sts = defaults("apps", "StatefulSet", {
      spec: { template, persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete" }, volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } }] }
    }).spec
    expect(sts).toMatchObject({
      replicas: 1,
      podManagementPolicy: "OrderedReady",
      revisionHistoryLimit: 10,
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete", whenScaled: "Retain" }
    })
    expect(sts.volumeClaimTemplates).toEqual([{
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], volumeMode: "Filesystem" },
      status: { phase: "Pending" }
    }])
    expect(defaults("apps", "DaemonSet", { spec: { template } }).spec).toMatchObject({
      revisionHistoryLimit: 10,
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }
    })
    expect(defaults("apps", "ReplicaSet", { spec: { template } }).spec.replicas).toBe(1)
  })

  it("generates a Job's selector and pod labels from its uid, and copies its template labels", () => {
    const job = defaults("batch", "Job", { metadata: { name: "pi", uid: "1234" }, spec: { template } })
    expect(job.metadata.labels).toEqual({ app: "web" })
    expect(job.spec).toMatchObject({
      parallelism: 1,
      completions: 1,
      backoffLimit: 6,
      completionMode: "NonIndexed",
      suspend: false,
      manualSelector: false,
      podReplacementPolicy: "TerminatingOrFailed",
      selector: { matchLabels: { "batch.kubernetes.io/controller-uid": "1234" } }
    })
    expect(job.spec.template.metadata.labels).toEqual({
      app: "web",
      "batch.kubernetes.io/controller-uid": "1234",
      "batch.kubernetes.io/job-name": "pi",
      "controller-uid": "1234",
      "job-name": "pi"
    })
    expect(defaults("batch", "Job", { metadata: { uid: "1" }, spec: { parallelism: 3, template } }).spec).not.toHaveProperty("completions")
  })

  it("defaults CronJobs and leaves Job defaults out of their job template", () => {
    const cron = defaults("batch", "CronJob", { spec: { schedule: "@daily", jobTemplate: { spec: { template } } } }).spec
    expect(cron).toMatchObject({ concurrencyPolicy: "Allow", suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 })
    expect(cron.jobTemplate.spec).toEqual({ template: { ...template, spec: templateDefaults } })
  })
})

describe("Services", () => {
  const svc = (spec: Json) => ({ metadata: { name: "web", namespace: "shop" }, spec })
  // A write's defaults, then what the registry allocates once admission is past.
  const stored = (object: Json, old?: Json): any => ServiceDefaults.allocated(defaults("", "Service", object, old), old)

  it("allocates addresses and node ports, and keeps them across updates that omit them", () => {
    const created = stored(svc({ type: "NodePort", ports: [{ name: "http", port: 80 }] }))
    expect(created.spec.clusterIP).toBe(ServiceDefaults.clusterIP("shop/web"))
    expect(ServiceDefaults.inServiceRange(created.spec.clusterIP)).toBe(true)
    expect(created.spec).toMatchObject({ clusterIPs: [created.spec.clusterIP], ipFamilies: ["IPv4"], ipFamilyPolicy: "SingleStack", externalTrafficPolicy: "Cluster", internalTrafficPolicy: "Cluster" })
    const port = created.spec.ports[0]
    expect(port).toMatchObject({ protocol: "TCP", targetPort: 80 })
    expect(port.nodePort).toBeGreaterThanOrEqual(30000)
    expect(port.nodePort).toBeLessThanOrEqual(32767)
    const updated = stored(svc({ type: "NodePort", ports: [{ name: "http", port: 8080 }] }), created)
    expect(updated.spec.clusterIP).toBe(created.spec.clusterIP)
    expect(updated.spec.ports[0].nodePort).toBe(port.nodePort)
  })

  it("handles headless, ExternalName, LoadBalancer and ClientIP affinity as 1.32 does", () => {
    expect(stored(svc({ clusterIP: "None" })).spec).toMatchObject({ clusterIPs: ["None"], ipFamilyPolicy: "RequireDualStack" })
    expect(stored(svc({ clusterIP: "None", selector: { app: "web" } })).spec.ipFamilyPolicy).toBe("SingleStack")
    expect(stored(svc({ type: "ExternalName", externalName: "db.example.com" })).spec).toEqual({
      type: "ExternalName",
      externalName: "db.example.com",
      sessionAffinity: "None"
    })
    const lb = stored(svc({ type: "LoadBalancer", externalTrafficPolicy: "Local", ports: [{ port: 443 }] }))
    expect(lb.spec.allocateLoadBalancerNodePorts).toBe(true)
    expect(lb.spec.healthCheckNodePort).toBeGreaterThanOrEqual(30000)
    expect(stored(svc({ sessionAffinity: "ClientIP" })).spec.sessionAffinityConfig).toEqual({ clientIP: { timeoutSeconds: 10800 } })
  })
})

describe("other kinds", () => {
  it("defaults claims, volumes, network policies and endpoint slices", () => {
    expect(defaults("", "PersistentVolumeClaim", { spec: {} })).toEqual({ spec: { volumeMode: "Filesystem" }, status: { phase: "Pending" } })
    expect(defaults("", "PersistentVolume", { spec: {} })).toEqual({ spec: { persistentVolumeReclaimPolicy: "Retain", volumeMode: "Filesystem" }, status: { phase: "Pending" } })
    expect(defaults("networking.k8s.io", "NetworkPolicy", { spec: { egress: [{ ports: [{ port: 53 }] }] } }).spec).toEqual({
      policyTypes: ["Ingress", "Egress"],
      egress: [{ ports: [{ port: 53, protocol: "TCP" }] }]
    })
    expect(defaults("networking.k8s.io", "NetworkPolicy", { spec: { egress: [] } }).spec.policyTypes).toEqual(["Ingress"])
    expect(defaults("discovery.k8s.io", "EndpointSlice", { ports: [{ port: 80 }] }).ports).toEqual([{ name: "", protocol: "TCP", port: 80 }])
  })

  it("defaults bindings, HPAs, priority classes and limit ranges", () => {
    expect(defaults("rbac.authorization.k8s.io", "RoleBinding", { roleRef: { kind: "Role", name: "r" }, subjects: [{ kind: "Group", name: "g" }, { kind: "ServiceAccount", name: "sa" }] })).toEqual({
      roleRef: { kind: "Role", name: "r", apiGroup: "rbac.authorization.k8s.io" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "g" }, { kind: "ServiceAccount", name: "sa" }]
    })
    const hpa = defaults("autoscaling", "HorizontalPodAutoscaler", { apiVersion: "autoscaling/v2", spec: { maxReplicas: 3, behavior: {} } })
    expect(hpa.spec).toEqual({
      minReplicas: 1,
      maxReplicas: 3,
      metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }],
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Pods", value: 4, periodSeconds: 15 }, { type: "Percent", value: 100, periodSeconds: 15 }] },
        scaleDown: { selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] }
      }
    })
    expect(defaults("autoscaling", "HorizontalPodAutoscaler", { apiVersion: "autoscaling/v1", spec: { maxReplicas: 3 } }).spec).toEqual({ minReplicas: 1, maxReplicas: 3 })
    expect(defaults("scheduling.k8s.io", "PriorityClass", { value: 10 }).preemptionPolicy).toBe("PreemptLowerPriority")
    expect(defaults("", "LimitRange", { spec: { limits: [{ type: "Container", max: { cpu: "2" }, min: { memory: "64Mi" } }] } }).spec.limits[0]).toEqual({
      type: "Container",
      max: { cpu: "2" },
      min: { memory: "64Mi" },
      default: { cpu: "2" },
      defaultRequest: { cpu: "2", memory: "64Mi" }
    })
  })

  it("defaults webhooks and admission policies", () => {
    const hooks = defaults("admissionregistration.k8s.io", "MutatingWebhookConfiguration", {
      webhooks: [{ name: "m.example.com", clientConfig: { service: { name: "s", namespace: "n" } }, rules: [{ operations: ["CREATE"] }] }]
    })
    expect(hooks.webhooks[0]).toEqual({
      name: "m.example.com",
      failurePolicy: "Fail",
      matchPolicy: "Equivalent",
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: "Never",
      clientConfig: { service: { name: "s", namespace: "n", port: 443 } },
      rules: [{ operations: ["CREATE"], scope: "*" }]
    })
    expect(defaults("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", { spec: { matchConstraints: { resourceRules: [{}] } } }).spec).toEqual({
      failurePolicy: "Fail",
      matchConstraints: { matchPolicy: "Equivalent", namespaceSelector: {}, objectSelector: {}, resourceRules: [{ scope: "*" }] }
    })
  })
})
