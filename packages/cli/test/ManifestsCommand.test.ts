/**
 * `kubefx manifests` run as users run it: the YAML stream of what a cluster needs for an operator,
 * applied with the real kubectl to the embedded API server, first as a server-side dry run, then for
 * real; and every bad input as one line.
 */
import { Certificate, Testing } from "@kubefx/apiserver"
import { execFile } from "node:child_process"
import { X509Certificate } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { documents, kubefx } from "./run.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start()
})
afterAll(async () => {
  await server.close()
})

const kubectl = (...args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile("kubectl", ["--kubeconfig", server.kubeconfigPath, "--cache-dir", join(server.dir, "cache"), ...args], { timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
  })

describe("kubefx manifests", () => {
  it("prints the CRDs, Namespace, ServiceAccount, least-privilege RBAC, a hardened Deployment and a metrics Service", async () => {
    const result = await kubefx("manifests", "fixtures/operator.ts", "--image", "ghcr.io/acme/buckets:1.0.0", "--replicas", "2")
    expect(result.code).toBe(0)
    const objects = documents(result.stdout) as Array<any>
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      "CustomResourceDefinition/buckets.storage.kubefx.dev",
      "Namespace/buckets-operator",
      "ServiceAccount/buckets-operator",
      "ClusterRole/buckets-operator",
      "Role/buckets-operator",
      "ClusterRoleBinding/buckets-operator",
      "RoleBinding/buckets-operator-role",
      "Deployment/buckets-operator",
      "Service/buckets-operator-metrics"
    ])
    expect(objects[1].metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("restricted")
    const role = objects[3]
    expect(role.rules).toContainEqual({ apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: ["buckets-operator-leader"], verbs: ["get", "update"] })
    expect(role.rules).toContainEqual({ apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] })
    // The rule naming kube-system is granted there alone, by a Role bound to the ServiceAccount.
    expect(role.rules.some((rule: { resourceNames?: Array<string> }) => rule.resourceNames?.includes("extension-apiserver-authentication"))).toBe(false)
    expect(objects[4].metadata.namespace).toBe("kube-system")
    expect(objects[4].rules).toEqual([{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["extension-apiserver-authentication"], verbs: ["get"] }])
    expect(objects[5].subjects).toEqual([{ kind: "ServiceAccount", name: "buckets-operator", namespace: "buckets-operator" }])
    expect(objects[6]).toMatchObject({
      metadata: { namespace: "kube-system" },
      roleRef: { kind: "Role", name: "buckets-operator" },
      subjects: [{ kind: "ServiceAccount", name: "buckets-operator", namespace: "buckets-operator" }]
    })
    const deployment = objects[7]
    expect(deployment.spec.replicas).toBe(2)
    const pod = deployment.spec.template.spec
    expect(pod.serviceAccountName).toBe("buckets-operator")
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } })
    const [container] = pod.containers
    expect(container.image).toBe("ghcr.io/acme/buckets:1.0.0")
    expect(container.env).toContainEqual({ name: "KUBEFX_HTTP_HOST", value: "0.0.0.0" })
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" })
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http" })
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] }
    })
    expect(container.resources.limits).toEqual({ cpu: "500m", memory: "256Mi" })
    // V8's heap sized to that limit, not the 1 MB young generation Node picks for a 256Mi pod.
    const nodeOptions = container.env.find((e: { name: string }) => e.name === "NODE_OPTIONS")
    expect(nodeOptions).toEqual({ name: "NODE_OPTIONS", value: "--max-old-space-size=144 --max-semi-space-size=16" })
    // Node takes them from the environment (only some V8 flags are allowed there): 144 MB old, 3 x 16 MB young.
    const limit = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ["-e", "process.stdout.write(String(require('v8').getHeapStatistics().heap_size_limit / 1048576))"], {
        env: { ...process.env, NODE_OPTIONS: nodeOptions.value }
      }, (error, stdout) => error === null ? resolve(stdout) : reject(error)))
    expect(Number(limit)).toBe(144 + 3 * 16)
    expect(objects[8].spec.ports).toEqual([{ name: "http-metrics", port: 8080, targetPort: "http", protocol: "TCP" }])
  })

  it("applies to the API server: a server-side dry run, then for real", async () => {
    const result = await kubefx("manifests", "fixtures/operator.ts", "--image", "ghcr.io/acme/buckets:1.0.0")
    const file = join(server.dir, "manifests.yaml")
    writeFileSync(file, result.stdout)
    // As on a cluster, a server-side dry run cannot create objects in a namespace it only pretends
    // to create; with the namespace there, every object passes admission without being stored.
    const beforeNamespace = await kubectl("apply", "--dry-run=server", "-f", file)
    expect(beforeNamespace.stderr).toContain('namespaces "buckets-operator" not found')
    expect((await kubectl("create", "namespace", "buckets-operator", "--save-config")).code).toBe(0)
    const dryRun = await kubectl("apply", "--dry-run=server", "-f", file)
    expect(dryRun.stderr).toBe("")
    expect(dryRun.code).toBe(0)
    expect(dryRun.stdout).toContain("deployment.apps/buckets-operator created (server dry run)")
    expect((await kubectl("get", "deployment", "buckets-operator", "-n", "buckets-operator")).code).toBe(1)
    // The namespace now enforces the restricted level (and warns by it): the operator's pod meets it.
    const applied = await kubectl("apply", "-f", file)
    expect(applied.stderr).toBe("")
    expect(applied.code).toBe(0)
    expect(applied.stdout.trim().split("\n")).toHaveLength(9)
    const deployment = JSON.parse((await kubectl("get", "deployment", "buckets-operator", "-n", "buckets-operator", "-o", "json")).stdout)
    expect(deployment.spec.template.spec.containers[0].ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }])
  })

  it("with webhooks: a serving certificate Secret for the webhook Service's names, mounted where the server reads it, and configurations trusting it", async () => {
    const result = await kubefx("manifests", "fixtures/webhooks.ts", "--image", "ghcr.io/acme/gadgets:1.0.0")
    expect(result.code, result.stderr).toBe(0)
    const objects = documents(result.stdout) as Array<any>
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).slice(-5)).toEqual([
      "Service/gadgets-operator-metrics",
      "Secret/gadgets-operator-webhook-tls",
      "Service/gadgets-operator-webhook",
      "MutatingWebhookConfiguration/gadgets-operator",
      "ValidatingWebhookConfiguration/gadgets-operator"
    ])
    const secret = objects.find((o) => o.kind === "Secret")
    const cert = new X509Certificate(Buffer.from(secret.data["tls.crt"], "base64"))
    expect(cert.subjectAltName).toContain("DNS:gadgets-operator-webhook.gadgets-operator.svc")
    const validating = objects.find((o) => o.kind === "ValidatingWebhookConfiguration")
    expect(validating.webhooks[0]).toMatchObject({
      name: "vgadget.hooks.kubefx.dev",
      failurePolicy: "Fail",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      clientConfig: { service: { name: "gadgets-operator-webhook", namespace: "gadgets-operator", port: 443, path: "/validate-gadgets" }, caBundle: secret.data["tls.crt"] },
      rules: [{ operations: ["CREATE", "UPDATE"], apiGroups: ["hooks.kubefx.dev"], apiVersions: ["v1"], resources: ["gadgets"], scope: "Namespaced" }]
    })
    const pod = objects.find((o) => o.kind === "Deployment").spec.template.spec
    expect(pod.volumes).toEqual([{ name: "webhook-tls", secret: { secretName: "gadgets-operator-webhook-tls" } }])
    expect(pod.containers[0].volumeMounts).toEqual([{ name: "webhook-tls", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true }])
    expect(pod.containers[0].ports).toContainEqual({ name: "webhook", containerPort: 9443, protocol: "TCP" })
    expect(pod.containers[0].env).toContainEqual({ name: "KUBEFX_WEBHOOK_HOST", value: "0.0.0.0" })
    const service = objects.find((o) => o.kind === "Service" && o.metadata.name === "gadgets-operator-webhook")
    expect(service.spec.ports).toEqual([{ name: "https-webhook", port: 443, targetPort: "webhook", protocol: "TCP" }])
    // The API server accepts every object as a 1.32 cluster would.
    const file = join(server.dir, "webhook-manifests.yaml")
    writeFileSync(file, result.stdout)
    expect((await kubectl("create", "namespace", "gadgets-operator", "--save-config")).code).toBe(0)
    const dryRun = await kubectl("apply", "--dry-run=server", "-f", file)
    expect(dryRun.stderr).toBe("")
    expect(dryRun.stdout).toContain("validatingwebhookconfiguration.admissionregistration.k8s.io/gadgets-operator created (server dry run)")
  })

  it("--webhook-cert-dir keeps the serving certificate, so manifests made again are the same; one that will not serve is refused", async () => {
    const dir = join(server.dir, "webhook-certs")
    const manifests = (...more: Array<string>) =>
      kubefx("manifests", "fixtures/webhooks.ts", "--image", "ghcr.io/acme/gadgets:1.0.0", "--webhook-cert-dir", dir, ...more)
    const first = await manifests()
    expect(first.code, first.stderr).toBe(0)
    expect(statSync(join(dir, "tls.key")).mode & 0o777).toBe(0o600)
    const kept = readFileSync(join(dir, "tls.crt"), "utf8")
    const secretOf = (stdout: string) => (documents(stdout) as Array<any>).find((o) => o.kind === "Secret")
    expect(Buffer.from(secretOf(first.stdout).data["tls.crt"], "base64").toString()).toBe(kept)
    const again = await manifests()
    expect(again.stdout).toBe(first.stdout)
    // Made for another namespace, the certificate does not name that namespace's Service.
    const elsewhere = await manifests("--namespace", "gadgets-prod")
    expect([elsewhere.code, elsewhere.stdout, elsewhere.stderr]).toEqual([1, "",
      `kubefx manifests: --webhook-cert-dir ${dir}: the certificate does not name gadgets-operator-webhook.gadgets-prod.svc, ` +
      "gadgets-operator-webhook.gadgets-prod.svc.cluster.local, the webhook Service's names; remove tls.crt and tls.key to make a new certificate\n"])
    // A key that is not the certificate's, and half a pair, are refused too.
    const other = join(server.dir, "webhook-certs-other")
    mkdirSync(other)
    writeFileSync(join(other, "tls.crt"), kept)
    const half = await kubefx("manifests", "fixtures/webhooks.ts", "--image", "acme/op:1", "--webhook-cert-dir", other)
    expect(half.stderr).toBe(`kubefx manifests: --webhook-cert-dir ${other}: has tls.crt but no tls.key; keep both, or remove it to make a new pair\n`)
    writeFileSync(join(other, "tls.key"), Certificate.selfSigned(["gadgets-operator-webhook.gadgets-operator.svc"]).key)
    const mismatched = await kubefx("manifests", "fixtures/webhooks.ts", "--image", "acme/op:1", "--webhook-cert-dir", other)
    expect(mismatched.stderr).toBe(`kubefx manifests: --webhook-cert-dir ${other}: tls.key is not the key of tls.crt; remove tls.crt and tls.key to make a new certificate\n`)
    // One that expires within 30 days is refused, to be renewed before it stops serving.
    const expiring = join(server.dir, "webhook-certs-expiring")
    mkdirSync(expiring)
    const soon = Certificate.selfSigned(["gadgets-operator-webhook.gadgets-operator.svc", "gadgets-operator-webhook.gadgets-operator.svc.cluster.local"], { days: 10 })
    writeFileSync(join(expiring, "tls.crt"), soon.cert)
    writeFileSync(join(expiring, "tls.key"), soon.key)
    const old = await kubefx("manifests", "fixtures/webhooks.ts", "--image", "acme/op:1", "--webhook-cert-dir", expiring)
    expect([old.code, old.stderr]).toEqual([1, expect.stringMatching(
      new RegExp(`^kubefx manifests: --webhook-cert-dir ${expiring}: the certificate expires 20\\d\\d-\\d\\d-\\d\\dT[\\d:.]+Z, in under 30 days; remove tls.crt and tls.key to make a new certificate\n$`)
    )])
    // An operator without webhooks needs no certificate: the directory is left alone.
    const plain = join(server.dir, "no-webhooks")
    expect((await kubefx("manifests", "fixtures/operator.ts", "--image", "acme/op:1", "--webhook-cert-dir", plain)).code).toBe(0)
    expect(existsSync(plain)).toBe(false)
  })

  it("a sharded operator: three replicas by default, Leases for its members and sharder, and patch on the primaries it labels", async () => {
    const result = await kubefx("manifests", "fixtures/sharded.ts", "--image", "ghcr.io/acme/buckets:1.0.0")
    expect(result.code).toBe(0)
    const objects = documents(result.stdout) as Array<any>
    const deployment = objects.find((o) => o.kind === "Deployment")
    expect(deployment.spec.replicas).toBe(3)
    const role = objects.find((o) => o.kind === "ClusterRole")
    expect(role.rules).toContainEqual({ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "create", "update", "delete"] })
    expect(role.rules).toContainEqual({ apiGroups: ["storage.kubefx.dev"], resources: ["buckets"], verbs: ["get", "list", "watch", "patch"] })
    const scaled = await kubefx("manifests", "fixtures/sharded.ts", "--image", "ghcr.io/acme/buckets:1.0.0", "--replicas", "5")
    expect((documents(scaled.stdout) as Array<any>).find((o) => o.kind === "Deployment").spec.replicas).toBe(5)
  })

  it("names an operator given as bare controllers with --name, and says what is missing otherwise", async () => {
    const bare = await kubefx("manifests", "fixtures/controllers.ts", "--image", "acme/op:1")
    expect([bare.code, bare.stdout, bare.stderr]).toEqual([1, "",
      "kubefx manifests: the modules export controllers but no operator: export one made with Operator.make, or name it with --name\n"])
    const named = await kubefx("manifests", "fixtures/controllers.ts", "--image", "acme/op:1", "--name", "audit-operator")
    expect(named.code).toBe(0)
    expect((documents(named.stdout) as Array<any>).find((o) => o.kind === "Deployment").metadata.name).toBe("audit-operator")
  })

  it("refuses a missing --image, a module without an operator, and a missing module, in one line each", async () => {
    const noImage = await kubefx("manifests", "fixtures/operator.ts")
    expect([noImage.code, noImage.stdout, noImage.stderr]).toEqual([1, "",
      "kubefx manifests: --image is required: the operator's container image, e.g. --image ghcr.io/acme/my-operator:0.1.0\n"])
    const nothing = await kubefx("manifests", "fixtures/resources.ts", "--image", "acme/op:1")
    expect([nothing.code, nothing.stderr]).toEqual([1, "kubefx manifests: the modules export no operator (Operator.make) or controller (Controller.define)\n"])
    const missing = await kubefx("manifests", "fixtures/nope.ts", "--image", "acme/op:1")
    expect([missing.code, missing.stderr]).toEqual([1, "kubefx manifests: fixtures/nope.ts does not exist\n"])
  })
})
