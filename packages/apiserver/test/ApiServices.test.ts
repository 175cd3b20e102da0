/**
 * APIServices as a 1.32 cluster keeps them: a local one per group version served here (a CRD's as
 * its CRD comes and goes), kube-aggregator's validation, and a remote one's availability checked
 * step by step (its Service, port, endpoints, then a discovery request), its group in discovery,
 * its requests answered 503 while it is unavailable and sent on to it once it is.
 */
import { createServer, type Server } from "node:https"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ApiServiceValidation from "../src/ApiServiceValidation.ts"
import * as Certificate from "../src/Certificate.ts"
import * as Testing from "../src/Testing.ts"
import { crontabCrd, group, installCrd, poll } from "./fixtures.ts"

const podMetrics = { name: "pods", singularName: "", namespaced: true, kind: "PodMetrics", verbs: ["get", "list"] }
const certificate = Certificate.selfSigned(["127.0.0.1", "metrics.monitoring.svc"])
let backend: Server
let backendPort: number
let server: Testing.TestServer
beforeAll(async () => {
  // An extension API server's discovery, on the loopback.
  backend = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (req.url?.startsWith("/apis/metrics.example.com/v1beta1/echo")) {
        res.writeHead(201, { "content-type": "application/json", "x-served-by": "backend" })
        return res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }))
      }
      res.writeHead(req.url === "/apis/metrics.example.com/v1beta1" ? 200 : 404, { "content-type": "application/json" })
      res.end(JSON.stringify({ kind: "APIResourceList", apiVersion: "v1", groupVersion: "metrics.example.com/v1beta1", resources: [podMetrics] }))
    })
  })
  await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve))
  backendPort = (backend.address() as AddressInfo).port
  server = await Testing.start()
})
afterAll(async () => {
  await server?.close()
  backend.closeAllConnections()
  await new Promise((resolve) => backend.close(resolve))
})

const apiServices = "/apis/apiregistration.k8s.io/v1/apiservices"
const available = (apiService: any) => apiService?.status?.conditions?.find((c: any) => c.type === "Available")
const until = (path: string, check: (body: any) => boolean) => poll(server, path, check)
// The group version in aggregated discovery, as kubectl asks for it.
const aggregatedVersion = async (group: string) => {
  const list = await server.request("GET", "/apis", { headers: { accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" } })
  return list.json.items.find((g: any) => g.metadata.name === group)?.versions[0]
}

describe("local APIServices", () => {
  it("are there for every group version served here, and for a CRD's while it is served", async () => {
    const core = await until(`${apiServices}/v1.`, (a) => available(a)?.status === "True")
    // The core group is the empty one, which Go leaves out.
    expect(core.spec).toEqual({ version: "v1", groupPriorityMinimum: 18000, versionPriority: 1 })
    expect(core.metadata.labels).toEqual({ "kube-aggregator.kubernetes.io/automanaged": "onstart" })
    expect(available(core)).toMatchObject({ reason: "Local", message: "Local APIServices are always available" })
    expect((await server.request("GET", `${apiServices}/v1.apps`)).json.spec).toMatchObject({ groupPriorityMinimum: 17800, versionPriority: 15 })
    await installCrd(server, crontabCrd())
    const crd = await until(`${apiServices}/v1.${group}`, (a) => a?.spec !== undefined)
    expect(crd.spec).toEqual({ group, version: "v1", groupPriorityMinimum: 1000, versionPriority: 100 })
    expect(crd.metadata.labels).toEqual({ "kube-aggregator.kubernetes.io/automanaged": "true" })
    await server.request("DELETE", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.${group}`)
    await until(`${apiServices}/v1.${group}`, (a) => a?.code === 404)
  })
})

describe("APIService validation", () => {
  const apiService = (spec: Record<string, unknown>, name = "v1beta1.metrics.example.com") => ({ metadata: { name }, spec })
  const problems = (object: any) => ApiServiceValidation.validate(object).map((c) => `${c.field}: ${c.message}`)
  it("wants the name <version>.<group>, priorities in range, and a Service or nothing to reach", () => {
    const valid = { group: "metrics.example.com", version: "v1beta1", groupPriorityMinimum: 100, versionPriority: 100, service: { namespace: "monitoring", name: "metrics", port: 443 } }
    expect(problems(apiService(valid))).toEqual([])
    expect(problems(apiService(valid, "metrics"))).toEqual(['metadata.name: Invalid value: "metrics": must be `spec.version+"."+spec.group`: "v1beta1.metrics.example.com"'])
    expect(problems(apiService({ ...valid, groupPriorityMinimum: 0, versionPriority: 2000 }))).toEqual([
      "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
      "spec.versionPriority: Invalid value: 2000: must be positive and less than 1000"
    ])
    const { service: _, ...local } = valid
    expect(problems(apiService({ ...local, caBundle: Buffer.from("pem").toString("base64") }))).toEqual([
      'spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle'
    ])
    expect(problems(apiService({ ...valid, service: { port: 70000 } }))).toEqual([
      "spec.service.namespace: Required value",
      "spec.service.name: Required value",
      "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive"
    ])
  })
})

describe("a remote APIService", () => {
  it("is unavailable until its Service, port, endpoints and discovery answer, as kube-aggregator checks them; then its requests go to it", async () => {
    expect((await server.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "monitoring" } } })).status).toBe(201)
    const created = await server.request("POST", apiServices, {
      body: {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: "v1beta1.metrics.example.com" },
        spec: {
          group: "metrics.example.com",
          version: "v1beta1",
          groupPriorityMinimum: 100,
          versionPriority: 100,
          service: { namespace: "monitoring", name: "metrics" },
          caBundle: Buffer.from(certificate.cert).toString("base64")
        }
      }
    })
    expect(created.status, created.text).toBe(201)
    expect(created.json.spec.service.port).toBe(443)
    const path = `${apiServices}/v1beta1.metrics.example.com`
    const reason = (expected: string) => until(path, (a) => available(a)?.reason === expected)
    expect(available(await reason("ServiceNotFound"))).toMatchObject({ status: "False", message: 'service/metrics in "monitoring" is not present' })
    // kubectl get apiservices: its Service, and its availability with the reason.
    const table = await server.request("GET", path, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } })
    expect(table.json.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Service", "Available", "Age"])
    expect(table.json.rows[0].cells.slice(0, 3)).toEqual(["v1beta1.metrics.example.com", "monitoring/metrics", "False (ServiceNotFound)"])

    // Listed in discovery; its requests are 503 while it is unavailable.
    const groups = (await server.request("GET", "/apis")).json.groups
    expect(groups.find((g: any) => g.name === "metrics.example.com")).toEqual({
      name: "metrics.example.com",
      versions: [{ groupVersion: "metrics.example.com/v1beta1", version: "v1beta1" }],
      preferredVersion: { groupVersion: "metrics.example.com/v1beta1", version: "v1beta1" }
    })
    const refused = await server.request("GET", "/apis/metrics.example.com/v1beta1/namespaces/default/pods")
    expect([refused.status, refused.text]).toEqual([503, "service unavailable\n"])
    // Its server never answered: listed stale, with no resources (kubectl: "stale GroupVersion discovery").
    expect(await aggregatedVersion("metrics.example.com")).toEqual({ version: "v1beta1", freshness: "Stale" })

    const service = await server.request("POST", "/api/v1/namespaces/monitoring/services", {
      body: { metadata: { name: "metrics" }, spec: { ports: [{ name: "https", port: 8443, targetPort: 8443 }] } }
    })
    expect(service.status).toBe(201)
    expect(available(await reason("ServicePortError")).message).toBe('service/metrics in "monitoring" is not listening on port 443')
    await server.request("PATCH", "/api/v1/namespaces/monitoring/services/metrics", {
      body: { spec: { ports: [{ name: "https", port: 443, targetPort: 8443 }] } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(available(await reason("EndpointsNotFound")).message).toBe('cannot find endpoints for service/metrics in "monitoring"')
    const endpoints = (ip: string, port: number) => ({ metadata: { name: "metrics" }, subsets: [{ addresses: [{ ip }], ports: [{ name: "https", port }] }] })
    await server.request("POST", "/api/v1/namespaces/monitoring/endpoints", { body: endpoints("10.244.1.7", 8443) })
    // A pod's address has nothing listening: the cluster IP refuses the discovery request.
    const clusterIP = service.json.spec.clusterIP
    expect(available(await reason("FailedDiscoveryCheck")).message).toBe(
      `failing or missing response from https://${clusterIP}:443/apis/metrics.example.com/v1beta1: ` +
        `Get "https://${clusterIP}:443/apis/metrics.example.com/v1beta1": dial tcp ${clusterIP}:443: connect: connection refused`
    )
    // Served on the loopback, the discovery request reaches it: available.
    const current = (await server.request("GET", "/api/v1/namespaces/monitoring/endpoints/metrics")).json
    await server.request("PUT", "/api/v1/namespaces/monitoring/endpoints/metrics", { body: { ...current, ...endpoints("127.0.0.1", backendPort) } })
    expect(available(await reason("Passed"))).toMatchObject({ status: "True", message: "all checks passed" })
    // What its discovery listed is aggregated discovery's, current.
    expect(await aggregatedVersion("metrics.example.com")).toEqual({
      version: "v1beta1",
      resources: [{ resource: "pods", responseKind: { group: "", version: "", kind: "PodMetrics" }, scope: "Namespaced", singularResource: "", verbs: ["get", "list"] }],
      freshness: "Current"
    })
    // Available, its requests are sent on as the caller, without the caller's credentials.
    const resources = await server.request("GET", "/apis/metrics.example.com/v1beta1")
    expect([resources.status, resources.json.groupVersion]).toEqual([200, "metrics.example.com/v1beta1"])
    const echoed = await server.request("POST", "/apis/metrics.example.com/v1beta1/echo?dryRun=All", { body: { hello: "world" } })
    expect(echoed.status).toBe(201)
    expect(echoed.headers.get("x-served-by")).toBe("backend")
    expect(echoed.json).toMatchObject({ method: "POST", url: "/apis/metrics.example.com/v1beta1/echo?dryRun=All", body: JSON.stringify({ hello: "world" }) })
    expect(echoed.json.headers).not.toHaveProperty("authorization")
    expect(echoed.json.headers["x-remote-user"]).toBeTruthy()
    expect(echoed.json.headers["x-remote-group"]).toContain("system:masters")

    // Its endpoints gone, the last listing is kept, stale.
    await server.request("PUT", "/api/v1/namespaces/monitoring/endpoints/metrics", {
      body: { ...(await server.request("GET", "/api/v1/namespaces/monitoring/endpoints/metrics")).json, ...endpoints("10.244.1.7", 8443) }
    })
    await reason("FailedDiscoveryCheck")
    expect(await aggregatedVersion("metrics.example.com")).toMatchObject({ version: "v1beta1", resources: [{ resource: "pods" }], freshness: "Stale" })
  })
})
