/**
 * Authentication and authorization APIs as kubectl uses them: `kubectl auth can-i`, `kubectl auth
 * whoami`, `kubectl create token` and the tokens it prints, TokenReview, and the create-only kinds
 * behind them, which are answered but never stored.
 */
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Identity from "../src/Identity.ts"
import * as ServiceAccountTokens from "../src/ServiceAccountTokens.ts"
import * as Store from "../src/Store.ts"
import * as Testing from "../src/Testing.ts"
import * as Kubectl from "./kubectl.ts"

let server: Testing.TestServer
let dataDir: string
const { kubectl, ok, file, killAll } = Kubectl.forServer(() => server)

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "kubefx-auth-"))
  server = await Testing.start({ dataDir })
  // Every namespace has its default ServiceAccount, as in a cluster.
  expect(await ok("get", "serviceaccount", "default", "-o", "name")).toBe("serviceaccount/default\n")
})
afterAll(async () => {
  killAll()
  await server.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Retries `check` every 50 ms for up to 5 s; then rethrows its failure. */
const eventually = async (check: () => Promise<unknown>) => {
  for (let i = 0; ; i++) {
    try {
      return await check()
    } catch (error) {
      if (i >= 100) throw error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** Raw HTTP with a chosen bearer token. */
const as = async (token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, json: text === "" ? undefined : JSON.parse(text) }
}

const whoami = (token: string) =>
  as(token, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "SelfSubjectReview"
  })

const tokenReview = (spec: Record<string, unknown>) =>
  server.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec }
  })

const serviceAccountUser = (namespace: string, name: string) => ({
  username: `system:serviceaccount:${namespace}:${name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"]
})

const signingKey = async () =>
  ServiceAccountTokens.signingKey((await Effect.runPromise(Identity.load({ hosts: ["127.0.0.1"], dataDir }))).serviceAccountKey)

describe("kubectl auth", () => {
  it("can-i answers yes for the dev user", async () => {
    const run = await kubectl("auth", "can-i", "create", "deployments")
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout.trim()).toBe("yes")
    expect(await ok("auth", "can-i", "delete", "nodes", "--all-namespaces")).toBe("yes\n")
  })

  it("can-i --list shows the wildcard rules", async () => {
    const out = await ok("auth", "can-i", "--list")
    expect(out).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m)
    expect(out).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m)
    expect(out).toMatch(/^\s+\[\*\]\s+\[\]\s+\[\*\]$/m)
    // From RBAC alone, as kube lists them: what system:authenticated holds is there too.
    expect(out).toMatch(/^selfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m)
    expect(out).toMatch(/^\s+\[\/version\]\s+\[\]\s+\[get\]$/m)
  })

  it("whoami prints the dev user, as a table and as JSON", async () => {
    const table = await ok("auth", "whoami")
    expect(table).toMatch(/^Username\s+kubefx-admin$/m)
    expect(table).toMatch(/^Groups\s+\[system:masters system:authenticated\]$/m)
    const review = JSON.parse(await ok("auth", "whoami", "-o", "json"))
    expect(review).toMatchObject({ kind: "SelfSubjectReview", apiVersion: "authentication.k8s.io/v1" })
    expect(review.status.userInfo).toEqual({ username: "kubefx-admin", groups: ["system:masters", "system:authenticated"] })
  })

  it("reconcile creates RBAC objects, then updates them through kubectl's protobuf client, managedFields and all", async () => {
    const role = (verbs: ReadonlyArray<string>) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "reconciled", namespace: "default" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs }]
    })
    expect(await ok("auth", "reconcile", "-f", file("reconciled-1.json", role(["get"])))).toMatch(/reconciled/)
    const updated = await kubectl("auth", "reconcile", "-f", file("reconciled-2.json", role(["get", "list"])))
    expect(updated.code, updated.stderr).toBe(0)
    expect(updated.stderr).toMatch(/reconciliation required update/)
    const stored = (await server.request("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/reconciled")).json
    // Reconcile only adds what is missing.
    expect(stored.rules.map((r: { verbs: Array<string> }) => r.verbs)).toEqual([["get"], ["list"]])
    expect(stored.metadata.managedFields.length).toBeGreaterThan(0)
  })

  it("lists the review kinds in api-resources and discovery, create-only", async () => {
    const out = await ok("api-resources", "--api-group=authorization.k8s.io", "-o", "wide")
    expect(out).toMatch(/^selfsubjectaccessreviews\s+authorization\.k8s\.io\/v1\s+false\s+SelfSubjectAccessReview\s+create\s*$/m)
    expect(out).toMatch(/^localsubjectaccessreviews\s+authorization\.k8s\.io\/v1\s+true\s+LocalSubjectAccessReview\s+create\s*$/m)
    expect(await ok("api-resources", "--api-group=authentication.k8s.io")).toMatch(/^tokenreviews\s+authentication\.k8s\.io\/v1\s+false\s+TokenReview$/m)
    const core = (await server.request("GET", "/api/v1")).json.resources
    expect(core.find((r: { name: string }) => r.name === "serviceaccounts/token")).toEqual({
      name: "serviceaccounts/token",
      singularName: "",
      namespaced: true,
      group: "authentication.k8s.io",
      version: "v1",
      kind: "TokenRequest",
      verbs: ["create"]
    })
  })
})

describe("kubectl create token", () => {
  it("prints a token that authenticates as the ServiceAccount", async () => {
    const token = (await ok("create", "token", "default")).trim()
    expect(token.split(".")).toHaveLength(3)
    const out = await ok("auth", "whoami", "--token", token)
    expect(out).toMatch(/^Username\s+system:serviceaccount:default:default$/m)
    expect(out).toMatch(/^Groups\s+\[system:serviceaccounts system:serviceaccounts:default system:authenticated\]$/m)
    const uid = JSON.parse(await ok("get", "serviceaccount", "default", "-o", "json")).metadata.uid
    const seen = await whoami(token)
    expect(seen.status).toBe(201)
    expect(seen.json.status.userInfo).toMatchObject({ ...serviceAccountUser("default", "default"), uid })
    // It may do what RBAC grants it, nothing else: see "RBAC" below.
    expect((await as(token, "GET", "/api/v1/namespaces/default/configmaps")).status).toBe(403)
  })

  it("issues the claims and lifetime 1.32 issues", async () => {
    const request = JSON.parse(await ok("create", "token", "default", "-o", "json"))
    expect(request.spec).toEqual({ audiences: [ServiceAccountTokens.issuer], expirationSeconds: 3600, boundObjectRef: null })
    const claims = JSON.parse(Buffer.from(request.status.token.split(".")[1], "base64url").toString())
    expect(claims).toMatchObject({
      iss: ServiceAccountTokens.issuer,
      sub: "system:serviceaccount:default:default",
      aud: [ServiceAccountTokens.issuer],
      "kubernetes.io": { namespace: "default", serviceaccount: { name: "default" } }
    })
    expect(claims.exp - claims.iat).toBe(3600)
    expect(claims.nbf).toBe(claims.iat)
    expect(Date.parse(request.status.expirationTimestamp) / 1000).toBe(claims.exp)
    const tenMinutes = JSON.parse(await ok("create", "token", "default", "--duration", "10m", "-o", "json"))
    expect(tenMinutes.spec.expirationSeconds).toBe(600)
  })

  it("refuses a missing ServiceAccount and a lifetime under ten minutes", async () => {
    const missing = await kubectl("create", "token", "nobody")
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain(`serviceaccounts "nobody" not found`)
    const short = await kubectl("create", "token", "default", "--duration", "5m")
    expect(short.stderr).toContain(
      `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes`
    )
    const raw = await server.request("POST", "/api/v1/namespaces/default/serviceaccounts/nobody/token", { body: { spec: {} } })
    expect(raw.status).toBe(404)
    expect((await server.request("GET", "/api/v1/namespaces/default/serviceaccounts/default/token")).status).toBe(405)
  })

  it("refuses an expired token with 401", async () => {
    const uid = JSON.parse(await ok("get", "serviceaccount", "default", "-o", "json")).metadata.uid
    const claims = (now: Date) =>
      ServiceAccountTokens.claims({
        namespace: "default",
        serviceAccount: { name: "default", uid },
        audiences: ServiceAccountTokens.serverAudiences,
        expirationSeconds: 600,
        now
      })
    const key = await signingKey()
    const fresh = ServiceAccountTokens.sign(key, claims(new Date()))
    const expired = ServiceAccountTokens.sign(key, claims(new Date(Date.now() - 2 * 3600 * 1000)))
    expect((await whoami(fresh)).status).toBe(201)
    const refused = await whoami(expired)
    expect(refused.status).toBe(401)
    expect(refused.json).toMatchObject({ kind: "Status", status: "Failure", reason: "Unauthorized", code: 401 })
    expect((await kubectl("auth", "whoami", "--token", expired)).stderr).toContain("Unauthorized")
    expect((await tokenReview({ token: expired })).json.status).toEqual({ user: {}, error: "service account token has expired" })
  })

  it("refuses a token once its ServiceAccount is deleted, even after it is re-created", async () => {
    await ok("create", "serviceaccount", "builder")
    const token = (await ok("create", "token", "builder")).trim()
    expect((await whoami(token)).json.status.userInfo.username).toBe("system:serviceaccount:default:builder")
    await ok("delete", "serviceaccount", "builder")
    expect((await whoami(token)).status).toBe(401)
    await ok("create", "serviceaccount", "builder")
    expect((await whoami(token)).status).toBe(401)
    expect((await tokenReview({ token })).json.status.error).toMatch(/^service account UID \(.+\) does not match claim \(.+\)$/)
    // A new token for the new ServiceAccount works.
    expect((await whoami((await ok("create", "token", "builder")).trim())).status).toBe(201)
  })

  it("binds a token to a Secret: deleting the Secret revokes it", async () => {
    await ok("create", "secret", "generic", "binding")
    const token = (await ok("create", "token", "default", "--bound-object-kind", "Secret", "--bound-object-name", "binding")).trim()
    expect((await whoami(token)).status).toBe(201)
    await ok("delete", "secret", "binding")
    expect((await whoami(token)).status).toBe(401)
  })

  it("a token for another audience does not authenticate here, but reviews for its audience", async () => {
    const token = (await ok("create", "token", "default", "--audience", "vault")).trim()
    expect((await whoami(token)).status).toBe(401)
    const review = await tokenReview({ token, audiences: ["vault"] })
    expect(review.json.status).toMatchObject({ authenticated: true, audiences: ["vault"], user: serviceAccountUser("default", "default") })
  })
})

describe("TokenReview", () => {
  it("authenticates a good token and reports a bad one", async () => {
    const token = (await ok("create", "token", "default")).trim()
    const good = await tokenReview({ token })
    expect(good.status).toBe(201)
    expect(good.json).toMatchObject({ kind: "TokenReview", apiVersion: "authentication.k8s.io/v1", spec: { token } })
    expect(good.json.status).toMatchObject({
      authenticated: true,
      user: serviceAccountUser("default", "default"),
      audiences: [ServiceAccountTokens.issuer]
    })
    expect(good.json.status.user.extra["authentication.kubernetes.io/credential-id"][0]).toMatch(/^JTI=/)
    const admin = await tokenReview({ token: server.token })
    expect(admin.json.status.user).toEqual({ username: "kubefx-admin", groups: ["system:masters", "system:authenticated"] })
    const bad = await tokenReview({ token: "not-a-token" })
    expect(bad.json.status).toEqual({ user: {}, error: "invalid bearer token" })
    const forged = `${token.slice(0, token.lastIndexOf(".") + 1)}${"A".repeat(86)}`
    expect((await tokenReview({ token: forged })).json.status.authenticated).toBeUndefined()
    expect((await whoami(forged)).status).toBe(401)
    const empty = await tokenReview({})
    expect(empty.status).toBe(400)
    expect(empty.json.message).toBe("token is required for TokenReview in authentication")
  })
})

describe("RBAC", () => {
  const rbac = "/apis/rbac.authorization.k8s.io/v1"
  const create = async (path: string, body: Record<string, unknown>) => {
    const created = await server.request("POST", path, { body })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
  }
  const robot = (name: string) => ({ kind: "ServiceAccount", name, namespace: "default" })
  const tokenOf = async (name: string) => {
    await ok("create", "serviceaccount", name)
    return (await ok("create", "token", name)).trim()
  }

  it("fills a long-lived token Secret for its ServiceAccount, and deletes one for an account that is not there", async () => {
    await ok("create", "serviceaccount", "build-robot")
    const secrets = "/api/v1/namespaces/default/secrets"
    const tokenSecret = (name: string, account: string) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, annotations: { "kubernetes.io/service-account.name": account } },
      type: "kubernetes.io/service-account-token"
    })
    expect((await server.request("POST", secrets, { body: tokenSecret("build-robot-secret", "build-robot") })).status).toBe(201)
    await Effect.runPromise(server.settled)
    const filled = (await server.request("GET", `${secrets}/build-robot-secret`)).json
    const account = (await server.request("GET", "/api/v1/namespaces/default/serviceaccounts/build-robot")).json
    expect(filled.metadata.annotations["kubernetes.io/service-account.uid"]).toBe(account.metadata.uid)
    expect(Object.keys(filled.data).sort()).toEqual(["ca.crt", "namespace", "token"])
    expect(Buffer.from(filled.data.namespace, "base64").toString()).toBe("default")
    const token = Buffer.from(filled.data.token, "base64").toString()
    expect((await whoami(token)).json.status.userInfo).toMatchObject(serviceAccountUser("default", "build-robot"))
    // The token lasts as long as its Secret.
    expect((await server.request("DELETE", `${secrets}/build-robot-secret`)).status).toBe(200)
    expect((await whoami(token)).status).toBe(401)
    expect((await server.request("POST", secrets, { body: tokenSecret("nobody-secret", "nobody") })).status).toBe(201)
    await Effect.runPromise(server.settled)
    expect((await server.request("GET", `${secrets}/nobody-secret`)).status).toBe(404)
  })

  it("denies a ServiceAccount what no binding grants, with kube-apiserver's 403", async () => {
    const token = await tokenOf("denied")
    const listed = await as(token, "GET", "/api/v1/namespaces/default/configmaps")
    expect(listed.status).toBe(403)
    expect(listed.json).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Forbidden",
      code: 403,
      details: { group: "", kind: "configmaps" },
      message: `configmaps is forbidden: User "system:serviceaccount:default:denied" cannot list resource "configmaps" in API group "" in the namespace "default"`
    })
    const named = await as(token, "GET", "/apis/apps/v1/namespaces/default/deployments/web")
    expect(named.json.message).toBe(
      `deployments.apps "web" is forbidden: User "system:serviceaccount:default:denied" cannot get resource "deployments" in API group "apps" in the namespace "default"`
    )
    expect((await as(token, "GET", "/api/v1/nodes")).json.message).toBe(
      `nodes is forbidden: User "system:serviceaccount:default:denied" cannot list resource "nodes" in API group "" at the cluster scope`
    )
    expect((await as(token, "GET", "/kubefx/faults")).json.message).toBe(`forbidden: User "system:serviceaccount:default:denied" cannot get path "/kubefx/faults"`)
    // Authorized before the lookup: what it may not reach, it cannot learn does not exist.
    const unknown = await as(token, "GET", "/apis/example.com/v1/namespaces/default/gizmos")
    expect([unknown.status, unknown.json.message]).toEqual([403,
      `gizmos.example.com is forbidden: User "system:serviceaccount:default:denied" cannot list resource "gizmos" in API group "example.com" in the namespace "default"`])
    expect((await server.request("GET", "/apis/example.com/v1/namespaces/default/gizmos")).status).toBe(404)
    // What every authenticated user may: discovery, version, OpenAPI, its own reviews.
    for (const path of ["/api", "/api/v1", "/apis", "/apis/apps/v1", "/version", "/openapi/v3"]) {
      expect((await as(token, "GET", path)).status, path).toBe(200)
    }
    expect((await whoami(token)).status).toBe(201)
    const kubeconfig = ["--token", token]
    expect((await kubectl("auth", "can-i", "list", "configmaps", ...kubeconfig)).stdout).toBe("no\n")
  })

  it("stores kube-apiserver's bootstrap roles: cluster-admin for system:masters, discovery and self-reviews for everyone", async () => {
    const roles = (await ok("get", "clusterroles", "-l", "kubernetes.io/bootstrapping=rbac-defaults", "-o", "name")).trim().split("\n")
    expect(roles).toEqual([
      "admin",
      "cluster-admin",
      "edit",
      "system:aggregate-to-admin",
      "system:aggregate-to-edit",
      "system:aggregate-to-view",
      "system:auth-delegator",
      "system:basic-user",
      "system:discovery",
      "system:public-info-viewer",
      "view"
    ].map((name) => `clusterrole.rbac.authorization.k8s.io/${name}`))
    // The one namespaced role aggregated API servers' charts bind (metrics-server's among them).
    const reader = JSON.parse(await ok("get", "role", "extension-apiserver-authentication-reader", "-n", "kube-system", "-o", "json"))
    expect(reader.rules).toEqual([{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["extension-apiserver-authentication"], verbs: ["get", "list", "watch"] }])
    const binding = JSON.parse(await ok("get", "clusterrolebinding", "cluster-admin", "-o", "json"))
    expect(binding.subjects).toEqual([{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:masters" }])
    // Bound to cluster-admin, as many a setup binds a ServiceAccount, it may do anything.
    const token = await tokenOf("root")
    expect((await as(token, "GET", "/api/v1/nodes")).status).toBe(403)
    await ok("create", "clusterrolebinding", "root", "--clusterrole=cluster-admin", "--serviceaccount=default:root")
    expect((await as(token, "GET", "/api/v1/nodes")).status).toBe(200)
    expect((await as(token, "DELETE", "/api/v1/namespaces/default/configmaps/nothing")).status).toBe(404)
  })

  it("a RoleBinding grants its Role's rules in its namespace only; a ClusterRoleBinding everywhere", async () => {
    const token = await tokenOf("reader")
    await create(`${rbac}/namespaces/default/roles`, {
      metadata: { name: "configmap-reader" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }]
    })
    await create(`${rbac}/namespaces/default/rolebindings`, {
      metadata: { name: "reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmap-reader" },
      subjects: [robot("reader")]
    })
    expect((await as(token, "GET", "/api/v1/namespaces/default/configmaps")).status).toBe(200)
    expect((await as(token, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "x" } })).status).toBe(403)
    await ok("create", "namespace", "elsewhere")
    expect((await as(token, "GET", "/api/v1/namespaces/elsewhere/configmaps")).status).toBe(403)
    expect((await as(token, "GET", "/api/v1/configmaps")).status).toBe(403)
    expect((await kubectl("auth", "can-i", "watch", "configmaps", "--token", token)).stdout).toBe("yes\n")
    expect((await kubectl("auth", "can-i", "--list", "--token", token)).stdout).toMatch(/^configmaps\s+\[\]\s+\[\]\s+\[get list watch\]$/m)

    await create(`${rbac}/clusterroles`, {
      metadata: { name: "namespace-lister" },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }, { apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }]
    })
    await create(`${rbac}/clusterrolebindings`, {
      metadata: { name: "namespace-lister" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "namespace-lister" },
      subjects: [{ kind: "Group", name: "system:serviceaccounts:default" }]
    })
    expect((await as(token, "GET", "/api/v1/namespaces")).status).toBe(200)
    expect((await as(token, "GET", "/api/v1/configmaps")).status).toBe(200)
    expect((await as(token, "GET", "/api/v1/namespaces/elsewhere/configmaps")).status).toBe(200)
    // A binding deleted takes its grant with it.
    expect((await server.request("DELETE", `${rbac}/clusterrolebindings/namespace-lister`)).status).toBe(200)
    expect((await as(token, "GET", "/api/v1/namespaces")).status).toBe(403)
  })

  it("view, edit and admin nest as in a cluster, and grow with a chart's aggregate-to labels", async () => {
    await ok("create", "namespace", "team")
    const rulesOf = async (role: string) => JSON.parse(await ok("get", "clusterrole", role, "-o", "json")).rules
    const grants = (rules: ReadonlyArray<{ apiGroups?: Array<string>; resources?: Array<string>; verbs: Array<string> }>, group: string, resource: string, verb: string) =>
      rules.some((rule) => rule.apiGroups?.includes(group) && rule.resources?.includes(resource) && rule.verbs.includes(verb))
    await eventually(async () => {
      const [view, edit, admin] = [await rulesOf("view"), await rulesOf("edit"), await rulesOf("admin")]
      expect([grants(view, "apps", "deployments", "list"), grants(view, "", "secrets", "get")]).toEqual([true, false])
      expect([grants(edit, "apps", "deployments", "list"), grants(edit, "", "secrets", "get"), grants(edit, "rbac.authorization.k8s.io", "roles", "create")])
        .toEqual([true, true, false])
      expect([grants(admin, "apps", "deployments", "list"), grants(admin, "", "secrets", "update"), grants(admin, "rbac.authorization.k8s.io", "roles", "create")])
        .toEqual([true, true, true])
    })
    await ok("create", "rolebinding", "dev", "--clusterrole=edit", "--user=jane", "-n", "team")
    await ok("create", "rolebinding", "auditor", "--clusterrole=view", "--user=ann", "-n", "team")
    const canI = async (...args: Array<string>) => (await kubectl("auth", "can-i", ...args)).stdout.trim()
    expect(await canI("create", "deployments.apps", "-n", "team", "--as", "jane")).toBe("yes")
    expect(await canI("get", "secrets", "-n", "team", "--as", "jane")).toBe("yes")
    expect(await canI("create", "roles.rbac.authorization.k8s.io", "-n", "team", "--as", "jane")).toBe("no")
    expect(await canI("create", "deployments.apps", "-n", "default", "--as", "jane")).toBe("no")
    expect(await canI("list", "pods", "-n", "team", "--as", "ann")).toBe("yes")
    expect(await canI("get", "secrets", "-n", "team", "--as", "ann")).toBe("no")
    // A chart's ClusterRole labelled for view reaches view, then edit and admin through them
    // (PodTemplates, which none of the three grant by themselves).
    await ok("create", "clusterrole", "podtemplates-view", "--verb=get,list,watch", "--resource=podtemplates")
    expect(await canI("list", "podtemplates", "-n", "team", "--as", "jane")).toBe("no")
    await ok("label", "clusterrole", "podtemplates-view", "rbac.authorization.k8s.io/aggregate-to-view=true")
    await eventually(async () => {
      expect(await canI("list", "podtemplates", "-n", "team", "--as", "ann")).toBe("yes")
      expect(await canI("list", "podtemplates", "-n", "team", "--as", "jane")).toBe("yes")
      expect(grants(await rulesOf("admin"), "", "podtemplates", "list")).toBe(true)
    })
  })

  it("an allowed access review names the binding that allowed it, as kube-apiserver's reason", async () => {
    const review = async (user: string, groups: ReadonlyArray<string>, resourceAttributes: Record<string, string>) => {
      const answer = await server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        body: { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: { user, groups, resourceAttributes } }
      })
      expect(answer.status).toBe(201)
      return answer.json.status
    }
    await ok("create", "namespace", "reasons")
    await ok("create", "role", "lister", "--verb=list", "--resource=configmaps", "-n", "reasons")
    await ok("create", "rolebinding", "lister", "--role=lister", "--serviceaccount=reasons:bot", "-n", "reasons")
    await ok("create", "clusterrole", "node-reader", "--verb=get", "--resource=nodes")
    await ok("create", "clusterrolebinding", "node-readers", "--clusterrole=node-reader", "--group=readers")
    expect(await review("system:serviceaccount:reasons:bot", [], { verb: "list", resource: "configmaps", namespace: "reasons" })).toEqual({
      allowed: true,
      reason: `RBAC: allowed by RoleBinding "lister/reasons" of Role "lister" to ServiceAccount "bot/reasons"`
    })
    expect(await review("kim", ["readers"], { verb: "get", resource: "nodes", name: "n1" })).toEqual({
      allowed: true,
      reason: `RBAC: allowed by ClusterRoleBinding "node-readers" of ClusterRole "node-reader" to Group "readers"`
    })
    expect(await review("kim", ["readers"], { verb: "delete", resource: "nodes", name: "n1" })).toEqual({ allowed: false })
    // The administrator is allowed by its group, not by a binding: no reason, as kube-apiserver.
    expect(await review("root", ["system:masters"], { verb: "delete", resource: "nodes" })).toEqual({ allowed: true })
  })

  it("reads resource names, subresources and ClusterRoles bound in a namespace as kube-apiserver does", async () => {
    const token = await tokenOf("narrow")
    await ok("create", "configmap", "mine")
    await ok("create", "configmap", "theirs")
    await create(`${rbac}/clusterroles`, {
      metadata: { name: "narrow" },
      rules: [
        { apiGroups: [""], resources: ["configmaps"], resourceNames: ["mine"], verbs: ["get", "patch"] },
        { apiGroups: ["apps"], resources: ["deployments/status", "*/scale"], verbs: ["get"] }
      ]
    })
    await create(`${rbac}/namespaces/default/rolebindings`, {
      metadata: { name: "narrow" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "narrow" },
      subjects: [robot("narrow")]
    })
    expect((await as(token, "GET", "/api/v1/namespaces/default/configmaps/mine")).status).toBe(200)
    expect((await as(token, "GET", "/api/v1/namespaces/default/configmaps/theirs")).status).toBe(403)
    expect((await as(token, "GET", "/api/v1/namespaces/default/configmaps")).status).toBe(403)
    await ok("create", "deployment", "web", "--image", "nginx")
    expect((await as(token, "GET", "/apis/apps/v1/namespaces/default/deployments/web/status")).status).toBe(200)
    expect((await as(token, "GET", "/apis/apps/v1/namespaces/default/deployments/web/scale")).status).toBe(200)
    const whole = await as(token, "GET", "/apis/apps/v1/namespaces/default/deployments/web")
    expect(whole.status).toBe(403)
    const status = await as(token, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web/status", {})
    expect(status.json.message).toContain(`cannot patch resource "deployments/status" in API group "apps" in the namespace "default"`)
    // Bound in default, the ClusterRole grants nothing in another namespace.
    await ok("create", "configmap", "mine", "-n", "elsewhere")
    expect((await as(token, "GET", "/api/v1/namespaces/elsewhere/configmaps/mine")).status).toBe(403)
  })
})

describe("ClusterRole aggregation", () => {
  it("an aggregationRule's ClusterRole holds the rules of the ClusterRoles it selects, as they come and go", async () => {
    const label = "rbac.example.com/aggregate-to-monitoring"
    await ok("apply", "-f", file("monitoring.json", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "monitoring" },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [label]: "true" } }] }
    }))
    await ok("create", "clusterrole", "monitoring-pods", "--verb=get,list", "--resource=pods")
    await ok("create", "clusterrole", "monitoring-nodes", "--verb=list", "--resource=nodes")
    await ok("label", "clusterrole", "monitoring-pods", "monitoring-nodes", `${label}=true`)
    const rulesOf = async () => JSON.parse(await ok("get", "clusterrole", "monitoring", "-o", "json")).rules
    await eventually(async () =>
      expect(await rulesOf()).toEqual([
        { apiGroups: [""], resources: ["nodes"], verbs: ["list"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }
      ]))
    await ok("create", "serviceaccount", "monitor")
    await ok("create", "clusterrolebinding", "monitor", "--clusterrole=monitoring", "--serviceaccount=default:monitor")
    const token = (await ok("create", "token", "monitor")).trim()
    expect((await as(token, "GET", "/api/v1/nodes")).status).toBe(200)
    // A label taken away takes its role's rules out of the aggregate.
    await ok("label", "clusterrole", "monitoring-nodes", `${label}-`)
    await eventually(async () => expect(await rulesOf()).toEqual([{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }]))
    expect((await as(token, "GET", "/api/v1/nodes")).status).toBe(403)
    expect((await as(token, "GET", "/api/v1/pods")).status).toBe(200)
  })
})

describe("RBAC escalation", () => {
  it("a role or binding written by a ServiceAccount grants no more than it holds, unless it may escalate or bind", async () => {
    await ok("create", "serviceaccount", "granter")
    await ok("create", "role", "granter", "--verb=get", "--resource=configmaps", "--verb=create,update,patch", "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io")
    await ok("create", "rolebinding", "granter", "--role=granter", "--serviceaccount=default:granter")
    const token = (await ok("create", "token", "granter")).trim()
    const role = (name: string, resources: ReadonlyArray<string>) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name },
      rules: [{ apiGroups: [""], resources, verbs: ["get"] }]
    })
    const roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
    expect((await as(token, "POST", roles, role("held", ["configmaps"]))).status).toBe(201)
    const refused = await as(token, "POST", roles, role("more", ["configmaps", "secrets"]))
    expect([refused.status, refused.json.reason]).toEqual([403, "Forbidden"])
    expect(refused.json.message).toBe(
      `roles.rbac.authorization.k8s.io "more" is forbidden: user "system:serviceaccount:default:granter" ` +
        `(groups=["system:serviceaccounts" "system:serviceaccounts:default" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n` +
        `{APIGroups:[""], Resources:["configmaps", "secrets"], Verbs:["get"]}`
    )
    // A binding to a role whose rules it does not hold: refused, until it may bind that role.
    await ok("create", "clusterrole", "secret-getter", "--verb=get", "--resource=secrets")
    const binding = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "secrets-for-all" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "secret-getter" },
      subjects: [{ kind: "Group", name: "system:serviceaccounts" }]
    }
    const bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
    expect((await as(token, "POST", bindings, binding)).status).toBe(403)
    await ok("create", "role", "binder", "--verb=bind", "--resource=clusterroles.rbac.authorization.k8s.io", "--resource-name=secret-getter")
    await ok("create", "rolebinding", "binder", "--role=binder", "--serviceaccount=default:granter")
    expect((await as(token, "POST", bindings, binding)).status).toBe(201)
    // Holding get on secrets now (through that binding), it may write the role it was refused.
    expect((await as(token, "POST", roles, role("more", ["configmaps", "secrets"]))).status).toBe(201)
  })
})

describe("impersonation", () => {
  it("kubectl --as acts as the user it names, when RBAC lets the requester impersonate it", async () => {
    await ok("create", "serviceaccount", "impersonated")
    await ok("create", "role", "secret-reader", "--verb=get,list", "--resource=secrets")
    await ok("create", "rolebinding", "impersonated", "--role=secret-reader", "--serviceaccount=default:impersonated")
    const as = ["--as", "system:serviceaccount:default:impersonated"]
    expect(await ok("auth", "can-i", "list", "secrets", ...as)).toBe("yes\n")
    expect((await kubectl("auth", "can-i", "list", "configmaps", ...as)).stdout).toBe("no\n")
    expect(await ok("get", "secrets", ...as)).toBe("")
    const denied = await kubectl("get", "configmaps", "--as", "jane", "--as-group", "developers")
    expect(denied.code).not.toBe(0)
    expect(denied.stderr).toContain(`configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default"`)
    // Who it became, groups included: a ServiceAccount's are implied, system:authenticated always.
    expect(JSON.parse(await ok("auth", "whoami", "-o", "json", ...as)).status.userInfo).toEqual({
      username: "system:serviceaccount:default:impersonated",
      groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    })
    expect(JSON.parse(await ok("auth", "whoami", "-o", "json", "--as", "jane", "--as-group", "developers")).status.userInfo).toEqual({
      username: "jane",
      groups: ["developers", "system:authenticated"]
    })
    // Impersonating takes the impersonate verb, which a ServiceAccount does not hold.
    const token = (await ok("create", "token", "impersonated")).trim()
    const refused = await fetch(`${server.url}/api/v1/namespaces/default/secrets`, {
      headers: { authorization: `Bearer ${token}`, "impersonate-user": "jane" }
    })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { message: string }).message).toBe(
      `users "jane" is forbidden: User "system:serviceaccount:default:impersonated" cannot impersonate resource "users" in API group "" at the cluster scope`
    )
    const groupsAlone = await server.request("GET", "/api/v1/namespaces/default/secrets", { headers: { "impersonate-group": "developers" } })
    expect(groupsAlone.status).toBe(400)
  })
})

describe("impersonating a uid and extras", () => {
  it("acts with the uid and extras named, when RBAC lets the requester impersonate each", async () => {
    expect(JSON.parse(await ok("auth", "whoami", "-o", "json", "--as", "jane", "--as-uid", "1234")).status.userInfo).toEqual({
      username: "jane",
      uid: "1234",
      groups: ["system:authenticated"]
    })
    const whoamiAs = (token: string | undefined, headers: Record<string, string>) =>
      fetch(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
        method: "POST",
        headers: { authorization: `Bearer ${token ?? server.token}`, "content-type": "application/json", ...headers },
        body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" })
      }).then(async (response) => ({ status: response.status, json: (await response.json()) as Record<string, any> }))
    // A key is percent-decoded and read in lower case; each value of a header is one value.
    const extras = await whoamiAs(undefined, { "impersonate-user": "jane", "Impersonate-Extra-Scopes": "read, write", "impersonate-extra-acme.com%2fteam": "blue" })
    expect(extras.json.status.userInfo).toEqual({
      username: "jane",
      groups: ["system:authenticated"],
      extra: { scopes: ["read", "write"], "acme.com/team": ["blue"] }
    })
    const withoutUser = await whoamiAs(undefined, { "impersonate-uid": "1234" })
    expect([withoutUser.status, withoutUser.json.message]).toEqual([400, "requested [{UID  1234  authentication.k8s.io/v1  }] without impersonating a user"])
    // A ServiceAccount that may impersonate users, but not uids or extras until RBAC says so.
    await ok("create", "serviceaccount", "proxy")
    await ok("create", "clusterrole", "impersonate-users", "--verb=impersonate", "--resource=users")
    await ok("create", "clusterrolebinding", "proxy", "--clusterrole=impersonate-users", "--serviceaccount=default:proxy")
    const token = (await ok("create", "token", "proxy")).trim()
    expect((await whoamiAs(token, { "impersonate-user": "jane" })).json.status.userInfo.username).toBe("jane")
    const uidRefused = await whoamiAs(token, { "impersonate-user": "jane", "impersonate-uid": "1234" })
    expect([uidRefused.status, uidRefused.json.message]).toEqual([403,
      `uids.authentication.k8s.io "1234" is forbidden: User "system:serviceaccount:default:proxy" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`])
    const extraRefused = await whoamiAs(token, { "impersonate-user": "jane", "impersonate-extra-scopes": "read" })
    expect([extraRefused.status, extraRefused.json.message]).toEqual([403,
      `userextras.authentication.k8s.io "read" is forbidden: User "system:serviceaccount:default:proxy" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`])
    await ok("apply", "-f", file("impersonate-more.json", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "impersonate-users" },
      rules: [
        { apiGroups: [""], resources: ["users"], verbs: ["impersonate"] },
        { apiGroups: ["authentication.k8s.io"], resources: ["uids"], resourceNames: ["1234"], verbs: ["impersonate"] },
        { apiGroups: ["authentication.k8s.io"], resources: ["userextras/scopes"], verbs: ["impersonate"] }
      ]
    }))
    expect((await whoamiAs(token, { "impersonate-user": "jane", "impersonate-uid": "1234", "impersonate-extra-scopes": "read" })).json.status.userInfo)
      .toEqual({ username: "jane", uid: "1234", groups: ["system:authenticated"], extra: { scopes: ["read"] } })
    expect((await whoamiAs(token, { "impersonate-user": "jane", "impersonate-uid": "5678" })).status).toBe(403)
  })
})

describe("create-only kinds", () => {
  const ssar = {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectAccessReview",
    spec: { resourceAttributes: { namespace: "default", verb: "get", resource: "pods" } }
  }

  it("answer a create with the request and a status, and store nothing", async () => {
    const before = server.store.revision()
    const created = await server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", { body: ssar })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ ...ssar, metadata: { creationTimestamp: null }, status: { allowed: true } })
    // A user no binding names may not.
    const sar = await server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: { ...ssar, kind: "SubjectAccessReview", spec: { ...ssar.spec, user: "someone-else" } }
    })
    expect(sar.json.status).toEqual({ allowed: false })
    expect(server.store.revision()).toBe(before)
    const listed = await server.request("GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
    expect(listed.status).toBe(405)
    expect(listed.json.reason).toBe("MethodNotAllowed")
    expect((await server.request("GET", "/apis/authentication.k8s.io/v1/tokenreviews")).status).toBe(405)
    expect((await server.request("DELETE", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x")).status).toBe(405)
  })

  it("kubectl create -f answers a SelfSubjectAccessReview", async () => {
    const out = JSON.parse(await ok("create", "-f", file("ssar.json", ssar), "-o", "json"))
    expect(out.status.allowed).toBe(true)
  })

  it("validate requests as 1.32 does", async () => {
    const neither = await server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      body: { ...ssar, spec: {} }
    })
    expect(neither.status).toBe(422)
    expect(neither.json.message).toBe(
      `SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`
    )
    const noSubject = await server.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: { ...ssar, kind: "SubjectAccessReview" }
    })
    expect(noSubject.json.message).toContain(`spec.user: Invalid value: "": at least one of user or group must be specified`)
    const local = await server.request("POST", "/apis/authorization.k8s.io/v1/namespaces/kube-system/localsubjectaccessreviews", {
      body: { ...ssar, kind: "LocalSubjectAccessReview", spec: { ...ssar.spec, user: "u" } }
    })
    expect(local.status).toBe(422)
    expect(local.json.message).toContain(`spec.resourceAttributes.namespace: Invalid value: "default": must match metadata.namespace`)
    const matching = await server.request("POST", "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews", {
      body: { ...ssar, kind: "LocalSubjectAccessReview", spec: { ...ssar.spec, user: "u" } }
    })
    expect(matching.json).toMatchObject({ metadata: { namespace: "default" }, status: { allowed: false } })
    const rules = await server.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
      body: { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: {} }
    })
    expect(rules.status).toBe(400)
  })
})

describe("service account tokens across a restart", () => {
  it("a token issued before a restart on the same data dir still authenticates", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kubefx-auth-restart-"))
    try {
      const first = await Testing.start({ dataDir: join(dir, "data") })
      let token: string
      try {
        expect((await first.request("POST", "/api/v1/namespaces/default/serviceaccounts", { body: { metadata: { name: "robot" } } })).status).toBe(201)
        token = (await first.request("POST", "/api/v1/namespaces/default/serviceaccounts/robot/token", { body: { spec: {} } })).json.status.token
      } finally {
        await first.close()
      }
      const second = await Testing.start({ dataDir: join(dir, "data") })
      try {
        const seen = await fetch(`${second.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: "{}"
        })
        expect(seen.status).toBe(201)
        expect(((await seen.json()) as any).status.userInfo.username).toBe("system:serviceaccount:default:robot")
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("ServiceAccountTokens.check", () => {
  const key = ServiceAccountTokens.signingKey(ServiceAccountTokens.generateKey())
  const store = Store.make()
  store.put("serviceaccounts", { metadata: { namespace: "ci", name: "robot", uid: "u1" } }, 0)
  const token = (offsetSeconds: number, audiences = ServiceAccountTokens.serverAudiences) =>
    ServiceAccountTokens.sign(key, ServiceAccountTokens.claims({
      namespace: "ci",
      serviceAccount: { name: "robot", uid: "u1" },
      audiences,
      expirationSeconds: 600,
      now: new Date(Date.now() + offsetSeconds * 1000)
    }))
  const check = (t: string) => ServiceAccountTokens.check(key, store, t, ServiceAccountTokens.serverAudiences)

  it("allows go-jose's minute of leeway around exp and nbf, and no more", () => {
    expect(check(token(-630))._tag).toBe("Valid")
    expect(check(token(-700))).toEqual({ _tag: "Invalid", error: "service account token has expired" })
    expect(check(token(30))._tag).toBe("Valid")
    expect(check(token(120))).toEqual({ _tag: "Invalid", error: "service account token is not valid yet" })
  })

  it("names the audiences that do not match, and ignores tokens that are not its own", () => {
    expect(check(token(0, ["vault"]))).toEqual({
      _tag: "Invalid",
      error: `token audiences ["vault"] is invalid for the target audiences ["${ServiceAccountTokens.issuer}"]`
    })
    const other = ServiceAccountTokens.signingKey(ServiceAccountTokens.generateKey())
    expect(ServiceAccountTokens.check(other, store, token(0), ServiceAccountTokens.serverAudiences)._tag).toBe("Invalid")
    expect(check("opaque-token")).toEqual({ _tag: "NotOurs" })
  })
})
