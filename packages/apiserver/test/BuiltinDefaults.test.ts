/**
 * 1.32's defaults and create side effects on built-in kinds, over HTTP: what a user reads back
 * after applying an ordinary manifest.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as PodDefaults from "../src/PodDefaults.ts"
import * as Testing from "../src/Testing.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
})
afterAll(() => server.close())

const secrets = "/api/v1/namespaces/default/secrets"
const services = "/api/v1/namespaces/default/services"
const base64 = (text: string) => Buffer.from(text).toString("base64")
const apply = (path: string, body: unknown) =>
  server.request("PATCH", `${path}?fieldManager=test&force=true`, { body, headers: { "content-type": "application/apply-patch+yaml" } })

describe("Secret stringData", () => {
  it("is folded into data on create, update, merge patch and apply, and never stored", async () => {
    const created = await server.request("POST", secrets, {
      body: { apiVersion: "v1", kind: "Secret", metadata: { name: "creds" }, data: { user: base64("old") }, stringData: { user: "admin", pass: "s3cr3t" } }
    })
    expect(created.status).toBe(201)
    expect(created.json.data).toEqual({ user: base64("admin"), pass: base64("s3cr3t") })
    expect(created.json.type).toBe("Opaque")
    expect(created.json).not.toHaveProperty("stringData")

    const replaced = await server.request("PUT", `${secrets}/creds`, {
      body: { ...created.json, stringData: { pass: "changed" } }
    })
    expect(replaced.json.data.pass).toBe(base64("changed"))
    expect(replaced.json).not.toHaveProperty("stringData")

    const patched = await server.request("PATCH", `${secrets}/creds`, {
      body: { stringData: { token: "t0k3n" } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(patched.json.data).toEqual({ user: base64("admin"), pass: base64("changed"), token: base64("t0k3n") })

    const applied = await apply(`${secrets}/applied`, {
      apiVersion: "v1", kind: "Secret", metadata: { name: "applied" }, stringData: { key: "value" }
    })
    expect(applied.status).toBe(201)
    expect(applied.json.data).toEqual({ key: base64("value") })
    const read = await server.request("GET", `${secrets}/applied`)
    expect(read.json).not.toHaveProperty("stringData")

    const reapplied = await apply(`${secrets}/applied`, {
      apiVersion: "v1", kind: "Secret", metadata: { name: "applied" }, stringData: { key: "other" }
    })
    expect(reapplied.status).toBe(200)
    expect(reapplied.json.data).toEqual({ key: base64("other") })
    expect(reapplied.json).not.toHaveProperty("stringData")
  })
})

describe("Service", () => {
  it("gets type ClusterIP, a cluster IP and port defaults, and keeps the IP across an update that omits it", async () => {
    const created = await server.request("POST", services, {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "web" }, spec: { selector: { app: "web" }, ports: [{ port: 80 }] } }
    })
    expect(created.status).toBe(201)
    const spec = created.json.spec
    expect(spec).toMatchObject({
      type: "ClusterIP",
      sessionAffinity: "None",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      internalTrafficPolicy: "Cluster",
      ports: [{ port: 80, protocol: "TCP", targetPort: 80 }]
    })
    expect(spec.clusterIP).toMatch(/^10\.(9[6-9]|10\d|11[01])\.\d+\.\d+$/)
    expect(spec.clusterIP).not.toBe("10.96.0.1")
    expect(spec.clusterIPs).toEqual([spec.clusterIP])

    const { clusterIP: _, clusterIPs: __, ...withoutIP } = spec
    const updated = await server.request("PUT", `${services}/web`, {
      body: { ...created.json, spec: { ...withoutIP, selector: { app: "web2" } } }
    })
    expect(updated.status).toBe(200)
    expect(updated.json.spec.clusterIP).toBe(spec.clusterIP)
    expect(updated.json.spec.selector).toEqual({ app: "web2" })
  })

  it("gives NodePort Services node ports in range and leaves ExternalName Services without a cluster IP", async () => {
    const nodePort = await server.request("POST", services, {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "np" }, spec: { type: "NodePort", ports: [{ port: 443, targetPort: 8443 }] } }
    })
    expect(nodePort.json.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000)
    expect(nodePort.json.spec.ports[0].nodePort).toBeLessThanOrEqual(32767)
    expect(nodePort.json.spec.externalTrafficPolicy).toBe("Cluster")
    const external = await server.request("POST", services, {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "ext" }, spec: { type: "ExternalName", externalName: "db.example.com" } }
    })
    expect(external.json.spec).not.toHaveProperty("clusterIP")
  })
})

describe("Service node ports and Jobs", () => {
  it("keeps a NodePort Service's node port across an update that omits it", async () => {
    const created = await server.request("POST", services, {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "np2" }, spec: { type: "NodePort", ports: [{ name: "http", port: 80 }] } }
    })
    const nodePort = created.json.spec.ports[0].nodePort
    const { clusterIP: _, clusterIPs: __, ...spec } = created.json.spec
    const updated = await server.request("PUT", `${services}/np2`, {
      body: { ...created.json, spec: { ...spec, ports: [{ name: "http", port: 8080 }] } }
    })
    expect(updated.status).toBe(200)
    expect(updated.json.spec.ports[0]).toMatchObject({ port: 8080, targetPort: 8080, nodePort })
    expect(updated.json.spec.clusterIP).toBe(created.json.spec.clusterIP)
  })

  it("drops what a Service's old type needed when an update changes its type, as 1.32's registry does", async () => {
    const merge = { "content-type": "application/merge-patch+json" }
    const created = await server.request("POST", services, {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "retyped" }, spec: { type: "LoadBalancer", externalTrafficPolicy: "Local", ports: [{ name: "http", port: 80 }] } }
    })
    expect(created.json.spec).toMatchObject({ allocateLoadBalancerNodePorts: true, externalTrafficPolicy: "Local" })
    expect(created.json.spec.healthCheckNodePort).toBeGreaterThan(0)
    const balanced = await server.request("PATCH", `${services}/retyped/status`, { body: { status: { loadBalancer: { ingress: [{ ip: "172.18.255.1" }] } } }, headers: merge })
    expect(balanced.json.status.loadBalancer.ingress).toEqual([{ ip: "172.18.255.1" }])
    // kubectl patch svc retyped -p '{"spec":{"type":"ClusterIP"}}': no node port, health check port or policy left to refuse.
    const patched = await server.request("PATCH", `${services}/retyped`, { body: { spec: { type: "ClusterIP" } }, headers: merge })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.json.spec.ports[0]).not.toHaveProperty("nodePort")
    for (const field of ["healthCheckNodePort", "allocateLoadBalancerNodePorts", "externalTrafficPolicy"]) expect(patched.json.spec).not.toHaveProperty(field)
    expect(patched.json.spec.clusterIP).toBe(created.json.spec.clusterIP)
    expect(patched.json.status.loadBalancer).toEqual({})
    // A node port the write states itself is the user's: the change fails validation instead.
    const np = await server.request("POST", services, {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "retyped-np" }, spec: { type: "NodePort", ports: [{ name: "http", port: 80 }] } }
    })
    const refused = await server.request("PATCH", `${services}/retyped-np`, {
      body: { spec: { type: "ClusterIP", ports: [{ name: "http", port: 80, nodePort: np.json.spec.ports[0].nodePort + 1 }] } },
      headers: merge
    })
    expect(refused.status).toBe(422)
    // To an ExternalName, the addresses go too.
    const named = await server.request("PATCH", `${services}/retyped-np`, { body: { spec: { type: "ExternalName", externalName: "example.com" } }, headers: merge })
    expect(named.status, named.text).toBe(200)
    for (const field of ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"]) expect(named.json.spec).not.toHaveProperty(field)
  })

  it("gives a Job its generated selector and pod labels from its uid", async () => {
    const created = await server.request("POST", "/apis/batch/v1/namespaces/default/jobs", {
      body: {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "pi" },
        spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "pi", image: "perl:5.34" }] } } }
      }
    })
    expect(created.status).toBe(201)
    const uid = created.json.metadata.uid
    expect(created.json.spec.selector).toEqual({ matchLabels: { "batch.kubernetes.io/controller-uid": uid } })
    expect(created.json.spec.template.metadata.labels).toEqual({
      "batch.kubernetes.io/controller-uid": uid,
      "batch.kubernetes.io/job-name": "pi",
      "controller-uid": uid,
      "job-name": "pi"
    })
    expect(created.json.spec).toMatchObject({ parallelism: 1, completions: 1, backoffLimit: 6, manualSelector: false })
  })
})

describe("Namespace", () => {
  it("carries kubernetes.io/metadata.name, even after an update that drops it", async () => {
    const created = await server.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a", labels: { team: "a" } } }
    })
    expect(created.json.metadata.labels).toEqual({ team: "a", "kubernetes.io/metadata.name": "team-a" })
    const updated = await server.request("PUT", "/api/v1/namespaces/team-a", {
      body: { ...created.json, metadata: { ...created.json.metadata, labels: { team: "b" } } }
    })
    expect(updated.json.metadata.labels).toEqual({ team: "b", "kubernetes.io/metadata.name": "team-a" })
  })
})

describe("Pod and workloads", () => {
  it("gives a Pod its spec defaults and status.phase Pending", async () => {
    const created = await server.request("POST", "/api/v1/namespaces/default/pods", {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
        spec: {
          containers: [
            { name: "app", image: "nginx", ports: [{ containerPort: 80 }], readinessProbe: { httpGet: { path: "/", port: 80 } } },
            { name: "sidecar", image: "busybox:1.36", resources: { limits: { cpu: "1", memory: "1Gi" } } }
          ]
        }
      }
    })
    expect(created.status).toBe(201)
    expect(created.json.status).toEqual({ phase: "Pending", qosClass: "Burstable" })
    expect(created.json.spec).toMatchObject({
      restartPolicy: "Always",
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      terminationGracePeriodSeconds: 30,
      enableServiceLinks: true,
      serviceAccountName: "default",
      priority: 0,
      securityContext: {}
    })
    const [app, sidecar] = created.json.spec.containers
    expect(app).toMatchObject({
      imagePullPolicy: "Always",
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
      ports: [{ containerPort: 80, protocol: "TCP" }],
      readinessProbe: { httpGet: { path: "/", port: 80, scheme: "HTTP" }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 }
    })
    expect(sidecar.imagePullPolicy).toBe("IfNotPresent")
    expect(created.json.spec.tolerations.map((t: any) => t.key)).toEqual(["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"])
  })

  it("gives a Deployment its strategy, limits and template defaults", async () => {
    const created = await server.request("POST", "/apis/apps/v1/namespaces/default/deployments", {
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "d" },
        spec: {
          selector: { matchLabels: { app: "d" } },
          template: { metadata: { labels: { app: "d" } }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } }
        }
      }
    })
    expect(created.status).toBe(201)
    expect(created.json.spec).toMatchObject({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      template: { spec: { restartPolicy: "Always", containers: [{ name: "app", imagePullPolicy: "IfNotPresent" }] } }
    })
  })
})

describe("PodDefaults", () => {
  it("computes pull policies and QoS classes as 1.32 does", () => {
    expect(PodDefaults.imagePullPolicy("nginx")).toBe("Always")
    expect(PodDefaults.imagePullPolicy("nginx:latest")).toBe("Always")
    expect(PodDefaults.imagePullPolicy("registry:5000/app")).toBe("Always")
    expect(PodDefaults.imagePullPolicy("registry:5000/app:v1")).toBe("IfNotPresent")
    expect(PodDefaults.imagePullPolicy("app@sha256:abc")).toBe("IfNotPresent")
    const guaranteed = { containers: [{ resources: { limits: { cpu: "1", memory: "1Gi" } } }] }
    expect(PodDefaults.qosClass(guaranteed)).toBe("Guaranteed")
    expect(PodDefaults.qosClass({ containers: [{ resources: { requests: { cpu: "1" } } }] })).toBe("Burstable")
    expect(PodDefaults.qosClass({ containers: [{}] })).toBe("BestEffort")
  })
})
