/**
 * kubectl's generator commands send protobuf for built-in kinds. Each command runs twice: with
 * `--dry-run=client -o json` (the JSON kubectl would send), and for real through a recording proxy
 * in front of the server, so the test holds the exact protobuf bytes kubectl sent. The decoded bytes
 * must equal that JSON, and the server must have created the object.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Protobuf from "../src/Protobuf.ts"
import * as Testing from "../src/Testing.ts"
import * as Kubectl from "./kubectl.ts"

interface Recorded {
  readonly method: string
  readonly url: string
  readonly contentType: string
  readonly body: Buffer
}

let server: Testing.TestServer
let proxy: Server
let proxyKubeconfig: string
const recorded: Array<Recorded> = []

const direct = Kubectl.forServer(() => server)
const viaProxy = Kubectl.forServer(() => ({ ...server, kubeconfigPath: proxyKubeconfig }))

// Forwards every request to the server (with its token) and keeps the request bodies.
const startProxy = () =>
  new Promise<Server>((resolve) => {
    const s = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", async () => {
        const body = Buffer.concat(chunks)
        recorded.push({ method: req.method ?? "", url: req.url ?? "", contentType: req.headers["content-type"] ?? "", body })
        const headers: Record<string, string> = { authorization: `Bearer ${server.token}` }
        for (const name of ["content-type", "accept"]) {
          const value = req.headers[name]
          if (typeof value === "string") headers[name] = value
        }
        const reply = await fetch(`${server.url}${req.url}`, {
          method: req.method ?? "GET",
          headers,
          ...(body.length > 0 ? { body } : {})
        })
        const text = Buffer.from(await reply.arrayBuffer())
        res.writeHead(reply.status, { "content-type": reply.headers.get("content-type") ?? "application/json" })
        res.end(text)
      })
    })
    s.listen(0, "127.0.0.1", () => resolve(s))
  })

beforeAll(async () => {
  server = await Testing.start()
  proxy = await startProxy()
  const port = (proxy.address() as AddressInfo).port
  proxyKubeconfig = direct.file("proxy-kubeconfig.yaml", [
    "apiVersion: v1",
    "kind: Config",
    "clusters: [{name: proxy, cluster: {server: \"http://127.0.0.1:" + port + "\"}}]",
    "users: [{name: proxy, user: {token: unused}}]",
    "contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]",
    "current-context: proxy",
    ""
  ].join("\n"))
})
afterAll(async () => {
  direct.killAll()
  viaProxy.killAll()
  await new Promise((resolve) => proxy.close(resolve))
  await server.close()
})

/** The generator commands, by the object each creates (kind/name for `kubectl get`). */
const generators: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
  ["deployment/web", ["deployment", "web", "--image=nginx", "--replicas=2", "--port=80"], []],
  ["deployment/multi", ["deployment", "multi", "--image=nginx", "--image=busybox"], []],
  ["service/web", ["service", "clusterip", "web", "--tcp=80:8080"], []],
  ["service/headless", ["service", "clusterip", "headless", "--clusterip=None"], []],
  ["service/np", ["service", "nodeport", "np", "--tcp=80:http", "--node-port=30080"], []],
  ["service/lb", ["service", "loadbalancer", "lb", "--tcp=5678:8080"], []],
  ["service/ex", ["service", "externalname", "ex", "--external-name=example.com", "--tcp=80"], []],
  ["job/j1", ["job", "j1", "--image=busybox"], ["--", "echo", "hi"]],
  ["cronjob/c1", ["cronjob", "c1", "--image=busybox", "--schedule=*/5 * * * *", "--restart=OnFailure"], ["--", "date"]],
  ["job/from-cron", ["job", "from-cron", "--from=cronjob/c1"], []],
  ["role/r1", ["role", "r1", "--verb=get,list", "--resource=pods,deployments.apps", "--resource-name=a"], []],
  ["clusterrole/cr1", ["clusterrole", "cr1", "--verb=get", "--non-resource-url=/healthz"], []],
  ["clusterrole/cr2", ["clusterrole", "cr2", "--aggregation-rule=rbac.example.com/aggregate-to-monitoring=true"], []],
  ["rolebinding/rb1", ["rolebinding", "rb1", "--role=r1", "--user=alice", "--group=devs", "--serviceaccount=default:sa1"], []],
  ["clusterrolebinding/crb1", ["clusterrolebinding", "crb1", "--clusterrole=cr1", "--user=bob"], []],
  ["ingress/ing1", ["ingress", "ing1", "--class=nginx", "--rule=foo.com/bar*=svc1:8080,tls=my-cert", "--rule=/path=svc2:http", "--annotation=a=b", "--default-backend=defsvc:80"], []],
  ["poddisruptionbudget/pdb1", ["poddisruptionbudget", "pdb1", "--selector=app=web", "--min-available=50%"], []],
  ["poddisruptionbudget/pdb2", ["poddisruptionbudget", "pdb2", "--selector=app=web", "--max-unavailable=1"], []],
  ["priorityclass/pc1", ["priorityclass", "pc1", "--value=1000", "--description=high", "--preemption-policy=Never"], []],
  ["priorityclass/pc2", ["priorityclass", "pc2", "--value=0", "--global-default=true"], []],
  ["resourcequota/q1", ["quota", "q1", "--hard=cpu=1,memory=1G,pods=2,requests.storage=10Gi,limits.memory=1500m", "--scopes=BestEffort,NotTerminating"], []],
  ["namespace/gen", ["namespace", "gen"], []],
  ["configmap/cm", ["configmap", "cm", "--from-literal=a=1"], []],
  ["secret/s", ["secret", "generic", "s", "--from-literal=password=x", "--type=Opaque"], []]
]

// Runs kubectl through the recording proxy: it must succeed having sent one protobuf POST, decoded here.
const sentProtobuf = async (...args: Array<string>) => {
  recorded.length = 0
  const run = await viaProxy.kubectl(...args)
  expect(run.code, run.stderr).toBe(0)
  const posts = recorded.filter((r) => r.method === "POST" && r.contentType === Protobuf.mediaType)
  expect(posts).toHaveLength(1)
  return { run, decoded: Protobuf.decodeObject(posts[0]!.body) }
}

describe("kubectl create generators (protobuf bodies)", () => {
  it.each(generators)("%s: the decoded body equals the JSON kubectl would send, and is created", async (target, args, tail) => {
    const dryRun = await direct.kubectl("create", ...args, "--dry-run=client", "-o", "json", ...tail)
    expect(dryRun.code, dryRun.stderr).toBe(0)
    const expected = JSON.parse(dryRun.stdout)
    const { run: created, decoded } = await sentProtobuf("create", ...args, ...tail)
    expect(created.stderr).toBe("")
    expect(decoded).toEqual({ _tag: "Success", object: expected })
    const live = await direct.kubectl("get", target, "-o", "json")
    expect(live.code, live.stderr).toBe(0)
    expect(JSON.parse(live.stdout).metadata.name).toBe(target.split("/")[1])
  })

  it("kubectl autoscale: the decoded autoscaling/v1 body equals the JSON kubectl would send, and is created", async () => {
    const args = ["autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=60"]
    const dryRun = await direct.kubectl(...args, "--dry-run=client", "-o", "json")
    expect(dryRun.code, dryRun.stderr).toBe(0)
    expect((await sentProtobuf(...args)).decoded).toEqual({ _tag: "Success", object: JSON.parse(dryRun.stdout) })
    const v1 = JSON.parse(await direct.ok("get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o", "json"))
    expect(v1.spec).toEqual({ scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, minReplicas: 2, maxReplicas: 5, targetCPUUtilizationPercentage: 60 })
    const v2 = JSON.parse(await direct.ok("get", "hpa", "web", "-o", "json"))
    expect(v2.spec.metrics).toEqual([{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } }])
  })

  it("kubectl debug node/<name>: its protobuf Pod is decoded whole and created", async () => {
    expect((await server.request("POST", "/api/v1/nodes", { body: { metadata: { name: "node-1" } } })).status).toBe(201)
    // (Away from the quota an earlier generator set on default.)
    expect((await server.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "debugging" } } })).status).toBe(201)
    const { decoded: pod } = await sentProtobuf("debug", "node/node-1", "-n", "debugging", "--image=busybox", "--profile=general", "--", "true")
    expect(pod._tag).toBe("Success")
    const spec = (pod as { readonly object: any }).object.spec
    expect(spec).toMatchObject({ nodeName: "node-1", hostPID: true, hostIPC: true, hostNetwork: true, restartPolicy: "Never", tolerations: [{ operator: "Exists" }] })
    expect(spec.volumes).toEqual([{ name: "host-root", hostPath: { path: "/" } }])
    const name = (pod as { readonly object: any }).object.metadata.name
    expect(JSON.parse(await direct.ok("get", "pod", name, "-n", "debugging", "-o", "json")).spec.containers[0]).toMatchObject({ name: "debugger", image: "busybox", command: ["true"] })
  })

  it("kubectl debug --copy-to: a stored Pod of every common field comes back whole as protobuf", async () => {
    expect((await server.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "copying" } } })).status).toBe(201)
    const probe = { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 5, failureThreshold: 3 }
    const spec = {
      containers: [{
        name: "app",
        image: "nginx",
        ports: [{ name: "http", containerPort: 8080 }],
        envFrom: [{ configMapRef: { name: "settings", optional: true } }, { prefix: "DB_", secretRef: { name: "db", optional: true } }],
        livenessProbe: probe,
        readinessProbe: { ...probe, initialDelaySeconds: 2 },
        startupProbe: { exec: { command: ["true"] } },
        lifecycle: { preStop: { sleep: { seconds: 3 } } },
        resizePolicy: [{ resourceName: "cpu", restartPolicy: "NotRequired" }],
        securityContext: { capabilities: { drop: ["ALL"] }, seLinuxOptions: { level: "s0:c123,c456" } }
      }],
      initContainers: [{ name: "sidecar", image: "envoy", restartPolicy: "Always" }],
      volumes: [
        { name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
        { name: "bundle", projected: { sources: [{ configMap: { name: "settings", optional: true } }, { serviceAccountToken: { path: "token", expirationSeconds: 3600 } }] } }
      ],
      affinity: {
        nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] } }] },
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: "copied" } }, topologyKey: "kubernetes.io/hostname" }] }
      },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: { app: "copied" } } }],
      hostAliases: [{ ip: "10.0.0.9", hostnames: ["db.local"] }],
      dnsConfig: { nameservers: ["1.1.1.1"], options: [{ name: "ndots", value: "2" }] },
      readinessGates: [{ conditionType: "example.com/ready" }],
      securityContext: { supplementalGroups: [1000, 2000], sysctls: [{ name: "net.ipv4.ip_local_port_range", value: "1024 65535" }] },
      shareProcessNamespace: true,
      os: { name: "linux" },
      schedulingGates: [{ name: "example.com/hold" }]
    }
    const original = await server.request("POST", "/api/v1/namespaces/copying/pods", { body: { apiVersion: "v1", kind: "Pod", metadata: { name: "copied", labels: { app: "copied" } }, spec } })
    expect(original.status, original.text).toBe(201)
    const { decoded } = await sentProtobuf(
      "debug", "copied", "-n", "copying", "--copy-to=copy", "--image=busybox", "--container=debugger", "--profile=general",
      "--keep-liveness", "--keep-readiness", "--keep-startup", "--", "sleep", "1"
    )
    expect(decoded._tag).toBe("Success")
    const sent = (decoded as { readonly object: any }).object.spec
    const stored = original.json.spec
    for (const field of ["volumes", "initContainers", "affinity", "topologySpreadConstraints", "hostAliases", "dnsConfig", "readinessGates", "securityContext", "os", "schedulingGates"]) {
      expect(sent[field], field).toEqual(stored[field])
    }
    expect(sent.containers[0]).toEqual(stored.containers[0])
    expect(JSON.parse(await direct.ok("get", "pod", "copy", "-n", "copying", "-o", "json")).spec.containers.map((c: any) => c.name)).toEqual(["app", "debugger"])
  })

  it("keeps what the generators set once stored: target ports, selectors and quantities", async () => {
    const service = JSON.parse(await direct.ok("get", "service", "np", "-o", "json"))
    expect(service.spec.ports).toEqual([expect.objectContaining({ name: "80-http", port: 80, targetPort: "http", nodePort: 30080, protocol: "TCP" })])
    expect(service.spec.selector).toEqual({ app: "np" })
    const web = JSON.parse(await direct.ok("get", "service", "web", "-o", "json"))
    expect(web.spec.ports[0].targetPort).toBe(8080)
    const quota = JSON.parse(await direct.ok("get", "quota", "q1", "-o", "json"))
    expect(quota.spec.hard).toEqual({ cpu: "1", memory: "1G", pods: "2", "requests.storage": "10Gi", "limits.memory": "1500m" })
    const pdb = JSON.parse(await direct.ok("get", "pdb", "pdb1", "-o", "json"))
    expect(pdb.spec.minAvailable).toBe("50%")
    const rules = JSON.parse(await direct.ok("get", "ingress", "ing1", "-o", "json")).spec.rules
    expect(rules[1].http.paths[0].backend.service.port).toEqual({ name: "http" })
  })
})

// A small protobuf writer for the unit tests.
const varint = (n: bigint): Array<number> => {
  const out: Array<number> = []
  let v = BigInt.asUintN(64, n)
  for (;;) {
    if (v < 128n) return [...out, Number(v)]
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
}
type Part = Array<number>
const bytesField = (n: number, value: string | Part): Part => {
  const b = typeof value === "string" ? [...Buffer.from(value)] : value
  return [...varint(BigInt((n << 3) | 2)), ...varint(BigInt(b.length)), ...b]
}
const intField = (n: number, value: number): Part => [...varint(BigInt(n << 3)), ...varint(BigInt(value))]
const msg = (...parts: Array<Part>): Part => parts.flat()
const envelope = (apiVersion: string, kind: string, raw: Part) =>
  new Uint8Array([0x6b, 0x38, 0x73, 0x00, ...bytesField(1, msg(bytesField(1, apiVersion), bytesField(2, kind))), ...bytesField(2, raw)])
const decoded = (apiVersion: string, kind: string, raw: Part) => {
  const result = Protobuf.decodeObject(envelope(apiVersion, kind, raw))
  if (result._tag === "Failure") throw new Error(result.message)
  return result.object
}
// An empty metav1.Time, as Go writes a zero creationTimestamp.
const meta = (name: string) => bytesField(1, msg(bytesField(1, name), bytesField(8, [])))

describe("Protobuf messages", () => {
  it("DeleteOptions in any group version, and an Eviction's", () => {
    const options = msg(intField(1, 5), bytesField(2, msg(bytesField(1, "u-1"))), bytesField(4, "Foreground"), bytesField(5, "All"))
    const expected = { gracePeriodSeconds: 5, preconditions: { uid: "u-1" }, propagationPolicy: "Foreground", dryRun: ["All"] }
    expect(decoded("v1", "DeleteOptions", options)).toEqual({ apiVersion: "v1", kind: "DeleteOptions", ...expected })
    expect(decoded("apps/v1", "DeleteOptions", options)).toEqual({ apiVersion: "apps/v1", kind: "DeleteOptions", ...expected })
    expect(decoded("policy/v1", "Eviction", msg(meta("web-1"), bytesField(2, options)))).toEqual({
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: "web-1", creationTimestamp: null },
      deleteOptions: expected
    })
  })

  it("IntOrString: type 0 is the integer, type 1 the string", () => {
    const port = (target: Part) => msg(bytesField(1, ""), bytesField(2, "TCP"), intField(3, 80), bytesField(4, target), intField(5, 0))
    const service = (target: Part) => decoded("v1", "Service", msg(meta("s"), bytesField(2, msg(bytesField(1, port(target))))))
    expect((service(msg(intField(1, 0), intField(2, 8080), bytesField(3, ""))) as any).spec.ports).toEqual([
      { protocol: "TCP", port: 80, targetPort: 8080 }
    ])
    expect((service(msg(intField(1, 1), intField(2, 0), bytesField(3, "http"))) as any).spec.ports[0].targetPort).toBe("http")
  })

  it("Quantity is its canonical string; a PDB's pointer IntOrString is kept even when zero", () => {
    const quota = decoded("v1", "ResourceQuota", msg(meta("q"), bytesField(2, msg(
      bytesField(1, msg(bytesField(1, "cpu"), bytesField(2, msg(bytesField(1, "500m"))))),
      bytesField(2, "BestEffort")
    ))))
    expect(quota).toEqual({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "q", creationTimestamp: null },
      spec: { hard: { cpu: "500m" }, scopes: ["BestEffort"] }
    })
    const pdb = decoded("policy/v1", "PodDisruptionBudget", msg(meta("p"), bytesField(2, bytesField(3, msg(intField(1, 0), intField(2, 0), bytesField(3, ""))))))
    expect((pdb as any).spec).toEqual({ maxUnavailable: 0 })
  })

  it("drops zero values tagged omitempty and keeps the others, as Go's JSON does", () => {
    const container = msg(bytesField(1, "c"), bytesField(2, ""), bytesField(6, msg(bytesField(1, ""), intField(2, 0), intField(3, 0), bytesField(4, ""), bytesField(5, ""))), bytesField(8, []))
    const deployment = decoded("apps/v1", "Deployment", msg(meta("d"), bytesField(2, msg(
      intField(1, 0),
      bytesField(3, msg(bytesField(1, msg()), bytesField(2, bytesField(2, container)))),
      bytesField(4, msg()),
      intField(5, 0),
      intField(7, 0)
    )), bytesField(3, msg())))
    expect(deployment).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", creationTimestamp: null },
      // replicas is a pointer (0 is kept); selector has no omitempty (null when absent).
      spec: { replicas: 0, selector: null, template: { metadata: {}, spec: { containers: [{ name: "c", ports: [{ containerPort: 0 }], resources: {} }] } }, strategy: {} },
      status: {}
    })
  })

  it("times, inline structs and lists without omitempty", () => {
    const role = decoded("rbac.authorization.k8s.io/v1", "ClusterRole", msg(
      bytesField(1, msg(bytesField(1, "agg"), bytesField(8, msg(intField(1, 1700000000))))),
      bytesField(3, msg(bytesField(1, msg(bytesField(1, msg(bytesField(1, "k"), bytesField(2, "v")))))))
    ))
    expect(role).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "agg", creationTimestamp: "2023-11-14T22:13:20Z" },
      rules: null,
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { k: "v" } }] }
    })
    const path = msg(bytesField(1, "/"), bytesField(2, bytesField(4, msg(bytesField(1, "svc"), bytesField(2, msg(bytesField(1, ""), intField(2, 80)))))))
    const ingress = decoded("networking.k8s.io/v1", "Ingress", msg(meta("i"), bytesField(2, bytesField(3, msg(bytesField(1, "a.example"), bytesField(2, bytesField(1, bytesField(1, path))))))))
    expect((ingress as any).spec.rules).toEqual([
      { host: "a.example", http: { paths: [{ path: "/", pathType: null, backend: { service: { name: "svc", port: { number: 80 } } } }] } }
    ])
  })

  it("refuses a field it does not know rather than dropping it", () => {
    const result = Protobuf.decodeObject(envelope("apps/v1", "Deployment", msg(meta("d"), bytesField(2, bytesField(99, "x")))))
    expect(result).toEqual({ _tag: "Failure", message: "malformed protobuf body: field 99 of spec is not supported" })
  })
})
