/**
 * Admission webhooks as kube-apiserver 1.32 calls them, against a local HTTPS webhook server:
 * allow, deny, mutate (mutating before validating), failurePolicy both ways, timeouts, answers that
 * are not AdmissionReviews, namespace and object selectors, rules on operations and subresources,
 * dry runs, and each call's time in /metrics, which the request's SLI latency leaves out.
 */
import { createServer, type Server } from "node:https"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Certificate from "../src/Certificate.ts"
import * as Testing from "../src/Testing.ts"
import { configMap, createNamespace, crontab, installCrd, metricValue as metric } from "./fixtures.ts"

interface Review {
  readonly request: {
    readonly uid: string
    readonly operation: string
    readonly name: string
    readonly namespace?: string
    readonly subResource?: string
    readonly dryRun: boolean
    readonly kind: { readonly group: string; readonly version: string; readonly kind: string }
    readonly resource: { readonly group: string; readonly version: string; readonly resource: string }
    readonly userInfo: { readonly username: string }
    readonly object: { readonly metadata: { readonly name: string; readonly labels?: Record<string, string> }; readonly data?: Record<string, string> } | null
    readonly oldObject: { readonly data?: Record<string, string> } | null
  }
}

// Also for the Service the service-reference tests route to it through.
const certificate = Certificate.selfSigned(["127.0.0.1", "hooks.wh-service.svc"])
const caBundle = Buffer.from(certificate.cert).toString("base64")
const received: Array<{ readonly path: string; readonly review: Review }> = []

const respond = (review: Review, response: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  response: { uid: review.request.uid, ...response }
})

const patch = (operations: ReadonlyArray<unknown>) => ({ patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(operations)).toString("base64") })

/** The webhook server's behaviours, by path. */
const handlers: Record<string, (review: Review) => unknown> = {
  "/allow": (review) => respond(review, { allowed: true, warnings: ["checked by allow"] }),
  "/late": (review) => respond(review, { allowed: true }),
  "/deny": (review) => respond(review, { allowed: false, warnings: ["red is for stop signs"], status: { code: 403, reason: "Forbidden", message: "colour red is not allowed" } }),
  "/deny-bare": (review) => respond(review, { allowed: false }),
  "/no-red": (review) =>
    respond(review, review.request.object?.data?.colour === "red"
      ? { allowed: false, status: { message: `${review.request.object.metadata.name} is red` } }
      : { allowed: true }),
  "/label": (review) => respond(review, { allowed: true, ...patch([{ op: "add", path: "/metadata/labels", value: { mutated: "yes" } }]) }),
  "/colour": (review) => respond(review, { allowed: true, ...patch([{ op: "add", path: "/data/colour", value: "red" }]) }),
  "/garbage": () => "this is not JSON",
  "/wrong-uid": (review) => ({ ...respond(review, { allowed: true }), response: { uid: "nope", allowed: true } }),
  "/validating-patch": (review) => respond(review, { allowed: true, ...patch([]) }),
  "/own": (review) => respond(review, { allowed: true, ...patch([{ op: "replace", path: "/metadata/labels/owner", value: "webhook" }]) }),
  "/remove-absent": (review) => respond(review, { allowed: true, ...patch([{ op: "remove", path: "/data/absent" }]) }),
  "/cap-scale": (review) => respond(review, { allowed: true, ...patch([{ op: "replace", path: "/spec/replicas", value: 4 }]) })
}

let webhooks: Server
let webhookUrl: string
let server: Testing.TestServer

beforeAll(async () => {
  webhooks = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0]!
      if (path === "/slow") return // never answers: the caller's timeout decides
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Review
      received.push({ path, review })
      const answer = handlers[path]?.(review)
      const send = () => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(typeof answer === "string" ? answer : JSON.stringify(answer))
      }
      if (path === "/late") setTimeout(send, 300)
      else send()
    })
  })
  await new Promise<void>((resolve) => webhooks.listen(0, "127.0.0.1", resolve))
  webhookUrl = `https://127.0.0.1:${(webhooks.address() as AddressInfo).port}`
  server = await Testing.start()
  await installCrd(server)
  for (const ns of ["allow", "deny", "mutate", "fail", "ignore", "slow", "garbage", "selectors", "rules", "dry", "scale", "service", "generated", "metrics", "jsonpatch"]) await createNamespace(server, `wh-${ns}`)
})
afterAll(async () => {
  await server.close()
  webhooks.closeAllConnections()
  await new Promise((resolve) => webhooks.close(resolve))
})

interface HookOptions {
  readonly path?: string
  readonly url?: string
  readonly namespace: string
  readonly resources?: ReadonlyArray<string>
  readonly operations?: ReadonlyArray<string>
  readonly apiGroups?: ReadonlyArray<string>
  readonly failurePolicy?: "Fail" | "Ignore"
  readonly timeoutSeconds?: number
  readonly sideEffects?: string
  readonly objectSelector?: unknown
}

const webhook = (name: string, o: HookOptions) => ({
  name,
  clientConfig: { url: o.url ?? `${webhookUrl}${o.path ?? "/allow"}`, caBundle },
  rules: [{ operations: o.operations ?? ["CREATE", "UPDATE"], apiGroups: o.apiGroups ?? [""], apiVersions: ["v1"], resources: o.resources ?? ["configmaps"] }],
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": o.namespace } },
  ...(o.objectSelector === undefined ? {} : { objectSelector: o.objectSelector }),
  ...(o.failurePolicy === undefined ? {} : { failurePolicy: o.failurePolicy }),
  ...(o.timeoutSeconds === undefined ? {} : { timeoutSeconds: o.timeoutSeconds }),
  sideEffects: o.sideEffects ?? "None",
  admissionReviewVersions: ["v1"]
})

const configure = async (kind: "Validating" | "Mutating", name: string, hooks: ReadonlyArray<unknown>) => {
  const plural = kind === "Validating" ? "validatingwebhookconfigurations" : "mutatingwebhookconfigurations"
  const reply = await server.request("POST", `/apis/admissionregistration.k8s.io/v1/${plural}`, {
    body: { apiVersion: "admissionregistration.k8s.io/v1", kind: `${kind}WebhookConfiguration`, metadata: { name }, webhooks: hooks }
  })
  expect(reply.status, reply.text).toBe(201)
}

const cms = (ns: string) => `/api/v1/namespaces/wh-${ns}/configmaps`
const reviewsOf = (path: string, name: string) => received.filter((r) => r.path === path && r.review.request.name === name)

describe("validating webhooks", () => {
  it("an allowing webhook is sent an AdmissionReview v1 of the request and its warnings reach the client", async () => {
    await configure("Validating", "allow", [webhook("allow.example.com", { path: "/allow", namespace: "wh-allow" })])
    const created = await server.request("POST", cms("allow"), { body: configMap("a", { k: "1" }) })
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("warning")).toContain("checked by allow")
    const updated = await server.request("PUT", `${cms("allow")}/a`, { body: { ...created.json, data: { k: "2" } } })
    expect(updated.status).toBe(200)
    const [create, update] = reviewsOf("/allow", "a").map((r) => r.review.request)
    expect(create).toMatchObject({
      operation: "CREATE",
      namespace: "wh-allow",
      kind: { group: "", version: "v1", kind: "ConfigMap" },
      resource: { group: "", version: "v1", resource: "configmaps" },
      userInfo: { username: "kubefx-admin" },
      dryRun: false,
      object: { data: { k: "1" } },
      oldObject: null
    })
    expect(update).toMatchObject({ operation: "UPDATE", object: { data: { k: "2" } }, oldObject: { data: { k: "1" } } })
    // Who wrote, as the server knows it (here an impersonated user): a webhook may decide by it.
    const byJane = await server.request("POST", cms("allow"), {
      body: configMap("by-jane", { k: "1" }),
      headers: { "impersonate-user": "jane", "impersonate-group": "system:masters" }
    })
    expect(byJane.status, byJane.text).toBe(201)
    expect(reviewsOf("/allow", "by-jane")[0]?.review.request.userInfo).toEqual({ username: "jane", groups: ["system:masters", "system:authenticated"] })
  })

  it("a denial is the webhook's status, its message prefixed with the webhook's name, with every answer's warnings", async () => {
    await configure("Validating", "deny", [
      webhook("deny.example.com", { path: "/deny", namespace: "wh-deny", objectSelector: { matchLabels: { bare: "no" } } }),
      webhook("allow-too.example.com", { path: "/allow", namespace: "wh-deny", objectSelector: { matchLabels: { bare: "no" } } }),
      webhook("deny-bare.example.com", { path: "/deny-bare", namespace: "wh-deny", objectSelector: { matchLabels: { bare: "yes" } } })
    ])
    const denied = await server.request("POST", cms("deny"), { body: configMap("red", {}, { labels: { bare: "no" } }) })
    expect(denied.status, denied.text).toBe(403)
    expect(denied.json).toMatchObject({ kind: "Status", code: 403, reason: "Forbidden", message: 'admission webhook "deny.example.com" denied the request: colour red is not allowed' })
    expect(denied.headers.get("warning")).toBe('299 - "red is for stop signs", 299 - "checked by allow"')
    const bare = await server.request("POST", cms("deny"), { body: configMap("bare", {}, { labels: { bare: "yes" } }) })
    expect(bare.status).toBe(400)
    expect(bare.json.message).toBe('admission webhook "deny-bare.example.com" denied the request without explanation')
    expect((await server.request("GET", `${cms("deny")}/red`)).status).toBe(404)
  })
})

describe("mutating webhooks", () => {
  it("patches apply in order, the object is stored as mutated, and validating webhooks see the mutation", async () => {
    await configure("Mutating", "mutate-1-label", [webhook("label.example.com", { path: "/label", namespace: "wh-mutate" })])
    await configure("Mutating", "mutate-2-colour", [webhook("colour.example.com", { path: "/colour", namespace: "wh-mutate", objectSelector: { matchLabels: { paint: "yes" } } })])
    await configure("Validating", "no-red", [webhook("no-red.example.com", { path: "/no-red", namespace: "wh-mutate" })])
    const plain = await server.request("POST", cms("mutate"), { body: configMap("plain", { size: "1" }) })
    expect(plain.status, plain.text).toBe(201)
    expect(plain.json.metadata.labels).toEqual({ mutated: "yes" })
    expect((await server.request("GET", `${cms("mutate")}/plain`)).json.metadata.labels).toEqual({ mutated: "yes" })
    // The colour webhook runs after the label webhook (configurations by name) and sees its patch.
    // (With data: an empty map is not stored, so a webhook's patch into it would find no /data.)
    const painted = await server.request("POST", cms("mutate"), { body: configMap("painted", { size: "1" }, { labels: { paint: "yes" } }) })
    expect(painted.status).toBe(400)
    expect(painted.json.message).toBe('admission webhook "no-red.example.com" denied the request: painted is red')
    expect(reviewsOf("/colour", "painted")[0]?.review.request.object?.metadata.labels).toEqual({ mutated: "yes" })
  })
})

describe("a mutating webhook's JSON patch", () => {
  it("is applied by kube's library: replace adds an absent member, and a failed operation is a 500 in the library's words", async () => {
    await configure("Mutating", "json-patch-owner", [
      webhook("own.example.com", { path: "/own", namespace: "wh-jsonpatch", objectSelector: { matchLabels: { patch: "own" } } }),
      webhook("remove-absent.example.com", { path: "/remove-absent", namespace: "wh-jsonpatch", objectSelector: { matchLabels: { patch: "remove" } } })
    ])
    const owned = await server.request("POST", cms("jsonpatch"), { body: configMap("owned", { size: "1" }, { labels: { patch: "own" } }) })
    expect(owned.status, owned.text).toBe(201)
    expect(owned.json.metadata.labels).toEqual({ patch: "own", owner: "webhook" })
    const removed = await server.request("POST", cms("jsonpatch"), { body: configMap("removed", { size: "1" }, { labels: { patch: "remove" } }) })
    expect(removed.status).toBe(500)
    expect(removed.json.message).toBe(
      "Internal error occurred: error in remove for path: '/data/absent': Unable to remove nonexistent key: absent: missing value"
    )
  })
})

describe("what mutating webhooks are sent", () => {
  it("a built-in object as kube decodes it, with its API defaults; a Service without the addresses allocated after admission", async () => {
    await configure("Mutating", "mutate-defaults", [
      webhook("defaults.example.com", { path: "/allow", namespace: "wh-mutate", resources: ["pods", "services"], objectSelector: { matchLabels: { seen: "defaults" } } })
    ])
    const pod = await server.request("POST", "/api/v1/namespaces/wh-mutate/pods", {
      body: { metadata: { name: "defaulted", labels: { seen: "defaults" } }, spec: { containers: [{ name: "app", image: "busybox" }] } }
    })
    expect(pod.status, pod.text).toBe(201)
    const sent = reviewsOf("/allow", "defaulted")[0]!.review.request.object as unknown as { spec: Record<string, any> }
    expect(sent.spec).toMatchObject({ restartPolicy: "Always", dnsPolicy: "ClusterFirst", terminationGracePeriodSeconds: 30 })
    expect(sent.spec.containers[0]).toMatchObject({ imagePullPolicy: "Always", terminationMessagePath: "/dev/termination-log" })
    const service = await server.request("POST", "/api/v1/namespaces/wh-mutate/services", {
      body: { metadata: { name: "addressed", labels: { seen: "defaults" } }, spec: { ports: [{ port: 80 }] } }
    })
    expect(service.status, service.text).toBe(201)
    expect(service.json.spec.clusterIP).toMatch(/^10\./)
    const sentService = reviewsOf("/allow", "addressed")[0]!.review.request.object as unknown as { spec: Record<string, unknown> }
    expect(sentService.spec).not.toHaveProperty("clusterIP")
  })
})

describe("a creation by generateName", () => {
  it("reaches mutating webhooks before kube names it, and validating ones named, as kube calls them", async () => {
    await configure("Mutating", "generated-mutating", [webhook("named-later.example.com", { path: "/label", namespace: "wh-generated" })])
    await configure("Validating", "generated-validating", [webhook("named.example.com", { path: "/no-red", namespace: "wh-generated" })])
    const created = await server.request("POST", cms("generated"), { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "gen-" } } })
    expect(created.status, created.text).toBe(201)
    const name = created.json.metadata.name as string
    expect(name).toMatch(/^gen-[a-z0-9]{5}$/)
    expect(created.json.metadata.labels).toEqual({ mutated: "yes" })
    const mutating = received.filter((r) => r.path === "/label" && r.review.request.namespace === "wh-generated")
    expect(mutating).toHaveLength(1)
    expect(mutating[0]!.review.request.name).toBe("")
    expect(mutating[0]!.review.request.object?.metadata).toMatchObject({ generateName: "gen-" })
    expect(mutating[0]!.review.request.object?.metadata).not.toHaveProperty("name")
    expect(reviewsOf("/no-red", name)[0]!.review.request.object?.metadata).toMatchObject({ name, generateName: "gen-", labels: { mutated: "yes" } })
  })
})

describe("webhooks that fail", () => {
  it("failurePolicy Fail: a webhook that is down fails the request with 1.32's 500", async () => {
    const down = "https://127.0.0.1:1/down"
    await configure("Validating", "fail", [webhook("down.example.com", { url: down, namespace: "wh-fail" })])
    const reply = await server.request("POST", cms("fail"), { body: configMap("a") })
    expect(reply.status).toBe(500)
    expect(reply.json).toMatchObject({
      reason: "InternalError",
      message: `Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "${down}?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused`
    })
  })

  it("failurePolicy Ignore: the same webhook is skipped and the write goes through", async () => {
    await configure("Validating", "ignore", [webhook("down-ignored.example.com", { url: "https://127.0.0.1:1/down", namespace: "wh-ignore", failurePolicy: "Ignore" })])
    expect((await server.request("POST", cms("ignore"), { body: configMap("a") })).status).toBe(201)
  })

  it("a webhook slower than timeoutSeconds fails the request at the timeout", async () => {
    await configure("Validating", "slow", [webhook("slow.example.com", { path: "/slow", namespace: "wh-slow", timeoutSeconds: 1 })])
    const reply = await server.request("POST", cms("slow"), { body: configMap("a") })
    expect(reply.status).toBe(500)
    expect(reply.json.message).toBe(`Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "${webhookUrl}/slow?timeout=1s": context deadline exceeded`)
  })

  it("an answer that is not JSON, or names another request, or patches from a validating webhook, fails the request", async () => {
    await configure("Validating", "garbage", [
      webhook("garbage.example.com", { path: "/garbage", namespace: "wh-garbage", objectSelector: { matchLabels: { answer: "garbage" } } }),
      webhook("wrong-uid.example.com", { path: "/wrong-uid", namespace: "wh-garbage", objectSelector: { matchLabels: { answer: "uid" } } }),
      webhook("patching.example.com", { path: "/validating-patch", namespace: "wh-garbage", objectSelector: { matchLabels: { answer: "patch" } } })
    ])
    const answer = async (kind: string) =>
      (await server.request("POST", cms("garbage"), { body: configMap(kind, {}, { labels: { answer: kind } }) })).json.message as string
    expect(await answer("garbage")).toMatch(/^Internal error occurred: failed calling webhook "garbage\.example\.com": failed to call webhook: /)
    expect(await answer("uid")).toMatch(/^Internal error occurred: failed calling webhook "wrong-uid\.example\.com": received invalid webhook response: expected response\.uid="[0-9a-f-]+", got "nope"$/)
    expect(await answer("patch")).toBe('Internal error occurred: failed calling webhook "patching.example.com": received invalid webhook response: validating webhook may not return response.patch')
  })
})

describe("webhooks behind a Service", () => {
  const serviceHook = (name: string, service: string, path?: string) => ({
    ...webhook(name, { namespace: "wh-service", objectSelector: { matchLabels: { via: name } } }),
    clientConfig: { service: { name: service, namespace: "wh-service", ...(path === undefined ? {} : { path }), port: 443 }, caBundle }
  })
  const create = (via: string) => server.request("POST", cms("service"), { body: configMap(via, {}, { labels: { via } }) })
  const url = (service: string, path: string) => `https://${service}.wh-service.svc:443${path}?timeout=10s`

  it("is not found, or refused at its cluster IP while no endpoint serves it, as a cluster answers", async () => {
    // A Service without a path is called at its root.
    await configure("Validating", "service-missing", [serviceHook("missing.example.com", "nowhere"), serviceHook("unserved.example.com", "unserved", "/allow")])
    const missing = await create("missing.example.com")
    expect(missing.status).toBe(500)
    expect(missing.json.message).toBe(`Internal error occurred: failed calling webhook "missing.example.com": failed to call webhook: Post "${url("nowhere", "/")}": service "nowhere" not found`)
    const service = await server.request("POST", "/api/v1/namespaces/wh-service/services", {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "unserved" }, spec: { selector: { app: "hooks" }, ports: [{ port: 443, targetPort: 9443 }] } }
    })
    expect(service.status).toBe(201)
    const unserved = await create("unserved.example.com")
    expect(unserved.status).toBe(500)
    expect(unserved.json.message).toBe(
      `Internal error occurred: failed calling webhook "unserved.example.com": failed to call webhook: Post "${url("unserved", "/allow")}": dial tcp ${service.json.spec.clusterIP}:443: connect: connection refused`
    )
  })

  it("is called at the endpoint its EndpointSlice names, verified by the Service's DNS name", async () => {
    const port = Number(new URL(webhookUrl).port)
    expect((await server.request("POST", "/api/v1/namespaces/wh-service/services", {
      body: { apiVersion: "v1", kind: "Service", metadata: { name: "hooks" }, spec: { ports: [{ name: "https", port: 443, targetPort: port }] } }
    })).status).toBe(201)
    expect((await server.request("POST", "/apis/discovery.k8s.io/v1/namespaces/wh-service/endpointslices", {
      body: {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: { name: "hooks-local", labels: { "kubernetes.io/service-name": "hooks" } },
        addressType: "IPv4",
        ports: [{ name: "https", port, protocol: "TCP" }],
        endpoints: [{ addresses: ["127.0.0.1"], conditions: { ready: true } }]
      }
    })).status).toBe(201)
    await configure("Validating", "service-served", [serviceHook("served.example.com", "hooks", "/deny")])
    const denied = await create("served.example.com")
    expect(denied.status, denied.text).toBe(403)
    expect(denied.json.message).toBe('admission webhook "served.example.com" denied the request: colour red is not allowed')
    expect(reviewsOf("/deny", "served.example.com")).toHaveLength(1)
  })
})

describe("which requests reach a webhook", () => {
  it("namespaceSelector and objectSelector: only matching objects are sent", async () => {
    await configure("Validating", "selectors", [webhook("selected.example.com", { path: "/deny", namespace: "wh-selectors", objectSelector: { matchExpressions: [{ key: "checked", operator: "In", values: ["yes"] }] } })])
    expect((await server.request("POST", cms("selectors"), { body: configMap("unchecked") })).status).toBe(201)
    expect((await server.request("POST", cms("selectors"), { body: configMap("checked", {}, { labels: { checked: "yes" } }) })).status).toBe(403)
    // Another namespace is not selected at all.
    expect((await server.request("POST", cms("rules"), { body: configMap("checked", {}, { labels: { checked: "yes" } }) })).status).toBe(201)
  })

  it("rules: operations, resources and subresources", async () => {
    await configure("Validating", "rules", [
      webhook("create-only.example.com", { path: "/deny", namespace: "wh-rules", operations: ["CREATE"], resources: ["secrets"] }),
      webhook("crontab-status.example.com", { path: "/deny", namespace: "wh-rules", operations: ["UPDATE"], apiGroups: ["stable.example.com"], resources: ["crontabs/status"] })
    ])
    expect((await server.request("POST", cms("rules"), { body: configMap("not-a-secret") })).status).toBe(201)
    const secret = await server.request("POST", "/api/v1/namespaces/wh-rules/secrets", { body: { apiVersion: "v1", kind: "Secret", metadata: { name: "s" } } })
    expect(secret.json.message).toBe('admission webhook "create-only.example.com" denied the request: colour red is not allowed')
    const crontabs = "/apis/stable.example.com/v1/namespaces/wh-rules/crontabs"
    const created = await server.request("POST", crontabs, { body: crontab("c") })
    expect(created.status).toBe(201)
    const updated = await server.request("PUT", `${crontabs}/c`, { body: { ...created.json, spec: { ...created.json.spec, color: "blue" } } })
    expect(updated.status).toBe(200)
    const status = await server.request("PUT", `${crontabs}/c/status`, { body: { ...updated.json, status: { phase: "Ready" } } })
    expect(status.status).toBe(403)
    expect(received.find((r) => r.review.request.name === "c")?.review.request).toMatchObject({
      subResource: "status",
      kind: { group: "stable.example.com", version: "v1", kind: "CronTab" },
      resource: { group: "stable.example.com", version: "v1", resource: "crontabs" }
    })
  })

  it("a scale write reaches the webhooks of deployments/scale as a Scale, whose patch sets the replicas; those of deployments do not see it", async () => {
    await configure("Mutating", "cap-scale", [
      webhook("cap.example.com", { path: "/cap-scale", namespace: "wh-scale", apiGroups: ["apps"], resources: ["deployments/scale"], operations: ["UPDATE"] })
    ])
    await configure("Validating", "deployments-only", [
      webhook("whole.example.com", { path: "/allow", namespace: "wh-scale", apiGroups: ["apps"], resources: ["deployments"], operations: ["UPDATE"] })
    ])
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: { replicas: 1, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } } }
    }
    const path = "/apis/apps/v1/namespaces/wh-scale/deployments/web"
    expect((await server.request("POST", "/apis/apps/v1/namespaces/wh-scale/deployments", { body: deployment })).status).toBe(201)
    const scaled = await server.request("PATCH", `${path}/scale`, {
      body: { spec: { replicas: 9 } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(scaled.status, scaled.text).toBe(200)
    expect(scaled.json).toMatchObject({ kind: "Scale", spec: { replicas: 4 } })
    expect((await server.request("GET", path)).json.spec.replicas).toBe(4)
    const [review] = reviewsOf("/cap-scale", "web").map((r) => r.review.request)
    expect(review).toMatchObject({
      subResource: "scale",
      kind: { group: "autoscaling", version: "v1", kind: "Scale" },
      resource: { group: "apps", version: "v1", resource: "deployments" },
      object: { metadata: { name: "web" } }
    })
    expect((review!.object as unknown as { spec: unknown }).spec).toEqual({ replicas: 9 })
    expect(reviewsOf("/allow", "web").filter((r) => r.review.request.namespace === "wh-scale")).toEqual([])
  })

  it("deletes reach webhooks of DELETE, with the object as oldObject", async () => {
    await configure("Validating", "rules-delete", [webhook("no-delete.example.com", { path: "/deny", namespace: "wh-rules", operations: ["DELETE"], objectSelector: { matchLabels: { keep: "yes" } } })])
    await server.request("POST", cms("rules"), { body: configMap("kept", { k: "v" }, { labels: { keep: "yes" } }) })
    const refused = await server.request("DELETE", `${cms("rules")}/kept`)
    expect(refused.status).toBe(403)
    expect(reviewsOf("/deny", "kept")[0]?.review.request).toMatchObject({ operation: "DELETE", object: null, oldObject: { data: { k: "v" } } })
    expect((await server.request("GET", `${cms("rules")}/kept`)).status).toBe(200)
  })

  it("a dry run reaches webhooks (v1 webhooks declare no side effects), told so, and stores nothing", async () => {
    await configure("Validating", "dry", [webhook("pure.example.com", { path: "/allow", namespace: "wh-dry", sideEffects: "NoneOnDryRun" })])
    const dry = await server.request("POST", `${cms("dry")}?dryRun=All`, { body: configMap("dry") })
    expect(dry.status).toBe(201)
    expect(reviewsOf("/allow", "dry")[0]?.review.request.dryRun).toBe(true)
    expect((await server.request("GET", `${cms("dry")}/dry`)).status).toBe(404)
  })
})

describe("webhook metrics", () => {
  it("each call is timed by webhook, type, operation and rejection; the request's SLI latency leaves the webhooks' time out", async () => {
    await configure("Mutating", "metrics-late", [webhook("late.example.com", { path: "/late", namespace: "wh-metrics" })])
    await configure("Validating", "metrics-deny", [
      webhook("deny-metered.example.com", { path: "/deny", namespace: "wh-metrics", objectSelector: { matchLabels: { denied: "yes" } } })
    ])
    const text = async () => (await server.request("GET", "/metrics")).text
    const before = await text()
    const posts = { verb: "POST", resource: "configmaps" }
    const spentBefore = metric(before, "apiserver_request_duration_seconds_sum", posts) - metric(before, "apiserver_request_sli_duration_seconds_sum", posts)
    expect((await server.request("POST", cms("metrics"), { body: configMap("a") })).status).toBe(201)
    expect((await server.request("POST", cms("metrics"), { body: configMap("b", {}, { labels: { denied: "yes" } }) })).status).toBe(403)
    const after = await text()
    const late = { name: "late.example.com", type: "admit", operation: "CREATE", rejected: "false" }
    expect(metric(after, "apiserver_admission_webhook_admission_duration_seconds_count", late)).toBe(2)
    expect(metric(after, "apiserver_admission_webhook_admission_duration_seconds_sum", late)).toBeGreaterThanOrEqual(0.6)
    const denied = { name: "deny-metered.example.com", type: "validating", operation: "CREATE" }
    expect(metric(after, "apiserver_admission_webhook_admission_duration_seconds_count", { ...denied, rejected: "true" })).toBe(1)
    expect(metric(after, "apiserver_admission_webhook_admission_duration_seconds_count", { ...denied, rejected: "false" })).toBe(0)
    // Both requests waited 300 ms for the late webhook: their latency has it, their SLI latency not.
    const spent = metric(after, "apiserver_request_duration_seconds_sum", posts) - metric(after, "apiserver_request_sli_duration_seconds_sum", posts)
    expect(spent - spentBefore).toBeGreaterThanOrEqual(0.6)
    expect(metric(after, "apiserver_request_sli_duration_seconds_count", posts) - metric(before, "apiserver_request_sli_duration_seconds_count", posts)).toBe(2)
  })
})
