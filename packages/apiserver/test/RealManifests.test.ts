/**
 * What users apply, as they apply it: the built-in kinds of a 1.32 cluster listed by
 * `kubectl api-resources`, a whole operator release bundle applied and deleted with one command
 * each, and `kubectl get` printing 1.32's columns.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as Kubectl from "./kubectl.ts"

const { file, kubectl, ok } = Kubectl.withServer({ namespace: null })

const bundle = readFileSync(join(import.meta.dirname, "manifests", "operator-release.yaml"), "utf8")
const everyKind = join(import.meta.dirname, "manifests", "every-kind.yaml")

// NAME, SHORTNAMES, APIVERSION, NAMESPACED, KIND as 1.32's `kubectl api-resources` prints them.
const expectedResources = [
  "endpoints ep v1 true Endpoints",
  "limitranges limits v1 true LimitRange",
  "nodes no v1 false Node",
  "persistentvolumeclaims pvc v1 true PersistentVolumeClaim",
  "persistentvolumes pv v1 false PersistentVolume",
  "podtemplates - v1 true PodTemplate",
  "replicationcontrollers rc v1 true ReplicationController",
  "resourcequotas quota v1 true ResourceQuota",
  "mutatingwebhookconfigurations - admissionregistration.k8s.io/v1 false MutatingWebhookConfiguration",
  "validatingadmissionpolicies - admissionregistration.k8s.io/v1 false ValidatingAdmissionPolicy",
  "validatingadmissionpolicybindings - admissionregistration.k8s.io/v1 false ValidatingAdmissionPolicyBinding",
  "validatingwebhookconfigurations - admissionregistration.k8s.io/v1 false ValidatingWebhookConfiguration",
  "controllerrevisions - apps/v1 true ControllerRevision",
  "daemonsets ds apps/v1 true DaemonSet",
  "replicasets rs apps/v1 true ReplicaSet",
  "horizontalpodautoscalers hpa autoscaling/v2 true HorizontalPodAutoscaler",
  "cronjobs cj batch/v1 true CronJob",
  "jobs - batch/v1 true Job",
  "endpointslices - discovery.k8s.io/v1 true EndpointSlice",
  "ingressclasses - networking.k8s.io/v1 false IngressClass",
  "ingresses ing networking.k8s.io/v1 true Ingress",
  "networkpolicies netpol networking.k8s.io/v1 true NetworkPolicy",
  "runtimeclasses - node.k8s.io/v1 false RuntimeClass",
  "poddisruptionbudgets pdb policy/v1 true PodDisruptionBudget",
  "clusterrolebindings - rbac.authorization.k8s.io/v1 false ClusterRoleBinding",
  "clusterroles - rbac.authorization.k8s.io/v1 false ClusterRole",
  "rolebindings - rbac.authorization.k8s.io/v1 true RoleBinding",
  "roles - rbac.authorization.k8s.io/v1 true Role",
  "priorityclasses pc scheduling.k8s.io/v1 false PriorityClass",
  "storageclasses sc storage.k8s.io/v1 false StorageClass"
]

const rows = (table: string) => table.trim().split("\n").map((line) => line.trim().split(/\s{2,}/))

describe("kubectl api-resources", () => {
  it("lists the built-in kinds of a 1.32 cluster with their short names, scope and verbs", async () => {
    const listed = rows(await ok("api-resources", "--no-headers")).map((r) => (r.length === 5 ? r : [r[0], "-", ...r.slice(1)]).join(" "))
    for (const expected of expectedResources) expect(listed, expected).toContain(expected)
    const wide = (await ok("api-resources", "-o", "wide", "--no-headers")).split("\n")
    expect(wide.find((line) => line.startsWith("jobs "))).toMatch(/create,delete,deletecollection,get,list,patch,update,watch\s+all$/)
    expect(wide.find((line) => line.startsWith("roles "))).toMatch(/create,delete,deletecollection,get,list,patch,update,watch\s*$/)
  })
})

describe("an operator release bundle", () => {
  it("applies in one kubectl apply -f, defaults and prints as 1.32, and deletes with kubectl delete -f", async () => {
    const path = file("release.yaml", bundle)
    const applied = await kubectl("apply", "-f", path)
    expect(applied.stderr).toBe("")
    expect(applied.code).toBe(0)
    for (const line of [
      "customresourcedefinition.apiextensions.k8s.io/backups.ops.example.com created",
      "namespace/backup-system created",
      "serviceaccount/backup-operator created",
      "clusterrole.rbac.authorization.k8s.io/backup-operator-manager created",
      "clusterrolebinding.rbac.authorization.k8s.io/backup-operator-manager created",
      "role.rbac.authorization.k8s.io/backup-operator-leader-election created",
      "rolebinding.rbac.authorization.k8s.io/backup-operator-leader-election created",
      "secret/backup-operator-credentials created",
      "configmap/backup-operator-config created",
      "deployment.apps/backup-operator created",
      "service/backup-operator-webhook created",
      "service/backup-operator-metrics created",
      "validatingwebhookconfiguration.admissionregistration.k8s.io/backup-operator-validating created",
      "mutatingwebhookconfiguration.admissionregistration.k8s.io/backup-operator-mutating created",
      "poddisruptionbudget.policy/backup-operator created",
      "networkpolicy.networking.k8s.io/backup-operator-metrics created",
      "job.batch/backup-operator-migrate created"
    ]) expect(applied.stdout).toContain(line)

    const ns = ["-n", "backup-system"]
    const json = async (...args: ReadonlyArray<string>) => JSON.parse(await ok("get", ...args, "-o", "json"))
    const secret = await json(...ns, "secret", "backup-operator-credentials")
    expect(Buffer.from(secret.data.token, "base64").toString()).toBe("s3cr3t")
    expect(secret).not.toHaveProperty("stringData")
    const webhookService = await json(...ns, "service", "backup-operator-webhook")
    expect(webhookService.spec).toMatchObject({ type: "ClusterIP", ports: [{ port: 443, targetPort: "webhook", protocol: "TCP" }] })
    const deployment = await json(...ns, "deployment", "backup-operator")
    expect(deployment.spec.strategy.type).toBe("RollingUpdate")
    expect(deployment.spec.template.spec.containers[0].imagePullPolicy).toBe("IfNotPresent")
    const job = await json(...ns, "job", "backup-operator-migrate")
    expect(job.spec.selector.matchLabels["batch.kubernetes.io/controller-uid"]).toBe(job.metadata.uid)
    expect(job.spec.backoffLimit).toBe(6)
    const webhook = await json("validatingwebhookconfiguration", "backup-operator-validating")
    expect(webhook.webhooks[0]).toMatchObject({ failurePolicy: "Fail", timeoutSeconds: 10, clientConfig: { service: { port: 443 } } })
    const namespace = await json("namespace", "backup-system")
    expect(namespace.metadata.labels["kubernetes.io/metadata.name"]).toBe("backup-system")

    // Applying the same bundle again: kubectl finds nothing to patch, except where it does on 1.32 too:
    // the Secret (stringData is never stored), the PDB (its selector's patch strategy is replace, so
    // its patch is never empty), and objects whose atomic lists the server defaulted (webhook rules'
    // scope, NetworkPolicy ports' protocol), which kubectl sends whole again.
    const patchedAgain = new Set([
      "secret/backup-operator-credentials",
      "validatingwebhookconfiguration.admissionregistration.k8s.io/backup-operator-validating",
      "mutatingwebhookconfiguration.admissionregistration.k8s.io/backup-operator-mutating",
      "poddisruptionbudget.policy/backup-operator",
      "networkpolicy.networking.k8s.io/backup-operator-metrics"
    ])
    const again = (await ok("apply", "-f", path)).trim().split("\n")
    expect(again.length).toBe(17)
    for (const line of again) {
      const [name, result] = line.split(" ")
      expect(result, name).toBe(patchedAgain.has(name!) ? "configured" : "unchanged")
    }
    // A patch that changes nothing writes nothing: the Deployment's generation is still 1.
    expect((await json("-n", "backup-system", "deployment", "backup-operator")).metadata.generation).toBe(1)

    const header = async (...args: ReadonlyArray<string>) => rows(await ok("get", ...args))[0]
    expect(await header(...ns, "deployment")).toEqual(["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"])
    expect(rows(await ok("get", ...ns, "deployment"))[1]!.slice(0, 4)).toEqual(["backup-operator", "0/2", "0", "0"])
    expect(await header(...ns, "deployment", "-o", "wide")).toEqual(["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"])
    expect(await header(...ns, "service")).toEqual(["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"])
    const serviceRow = rows(await ok("get", ...ns, "service", "backup-operator-webhook"))[1]!
    expect(serviceRow.slice(0, 5)).toEqual(["backup-operator-webhook", "ClusterIP", webhookService.spec.clusterIP, "<none>", "443/TCP"])
    expect(await header(...ns, "secret")).toEqual(["NAME", "TYPE", "DATA", "AGE"])
    expect(rows(await ok("get", ...ns, "secret"))[1]!.slice(0, 3)).toEqual(["backup-operator-credentials", "Opaque", "2"])
    expect(await header(...ns, "configmap")).toEqual(["NAME", "DATA", "AGE"])
    expect(await header(...ns, "job")).toEqual(["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"])
    expect(await header(...ns, "rolebinding")).toEqual(["NAME", "ROLE", "AGE"])
    expect(rows(await ok("get", ...ns, "rolebinding"))[1]!.slice(0, 2)).toEqual(["backup-operator-leader-election", "Role/backup-operator-leader-election"])
    expect(await header("clusterrole", "backup-operator-manager")).toEqual(["NAME", "CREATED AT"])
    expect(await header(...ns, "pdb")).toEqual(["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"])
    expect(await header(...ns, "netpol")).toEqual(["NAME", "POD-SELECTOR", "AGE"])
    expect(await header("validatingwebhookconfiguration")).toEqual(["NAME", "WEBHOOKS", "AGE"])
    expect(await header("namespace", "backup-system")).toEqual(["NAME", "STATUS", "AGE"])
    expect(await header("crd", "backups.ops.example.com")).toEqual(["NAME", "CREATED AT"])
    expect(rows(await ok("get", "crd", "backups.ops.example.com"))[1]![1]).toBe(
      (await json("crd", "backups.ops.example.com")).metadata.creationTimestamp
    )

    // As on a cluster, a deleted namespace keeps its content for a moment, so every namespaced object
    // listed after the Namespace is deleted by kubectl itself, without a NotFound.
    const deleted = await kubectl("delete", "-f", path, "--timeout=60s")
    expect(deleted.stderr).toBe("")
    expect(deleted.code).toBe(0)
    for (const line of [
      "namespace \"backup-system\" deleted",
      "customresourcedefinition.apiextensions.k8s.io \"backups.ops.example.com\" deleted",
      "serviceaccount \"backup-operator\" deleted",
      "deployment.apps \"backup-operator\" deleted",
      "service \"backup-operator-metrics\" deleted",
      "secret \"backup-operator-credentials\" deleted",
      "job.batch \"backup-operator-migrate\" deleted"
    ]) expect(deleted.stdout).toContain(line)
    for (const kind of [
      "clusterrole/backup-operator-manager",
      "clusterrolebinding/backup-operator-manager",
      "validatingwebhookconfiguration/backup-operator-validating",
      "mutatingwebhookconfiguration/backup-operator-mutating",
      "namespace/backup-system",
      "crd/backups.ops.example.com"
    ]) {
      const gone = await kubectl("get", kind)
      expect(gone.code, kind).toBe(1)
      expect(gone.stderr).toContain("NotFound")
    }
  })
})

// The columns 1.32's printers give each kind (`kubectl get -f`, one table per kind).
const expectedHeaders: Readonly<Record<string, string>> = {
  namespace: "STATUS AGE",
  serviceaccount: "SECRETS AGE",
  configmap: "DATA AGE",
  secret: "TYPE DATA AGE",
  service: "TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE",
  pod: "READY STATUS RESTARTS AGE",
  podtemplate: "CONTAINERS IMAGES POD LABELS",
  replicationcontroller: "DESIRED CURRENT READY AGE",
  persistentvolume: "CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE",
  persistentvolumeclaim: "STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE",
  endpoints: "ENDPOINTS AGE",
  "endpointslice.discovery.k8s.io": "ADDRESSTYPE PORTS ENDPOINTS AGE",
  node: "STATUS ROLES AGE VERSION",
  resourcequota: "REQUEST LIMIT AGE",
  limitrange: "CREATED AT",
  "deployment.apps": "READY UP-TO-DATE AVAILABLE AGE",
  "statefulset.apps": "READY AGE",
  "daemonset.apps": "DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE",
  "replicaset.apps": "DESIRED CURRENT READY AGE",
  "controllerrevision.apps": "CONTROLLER REVISION AGE",
  "job.batch": "STATUS COMPLETIONS DURATION AGE",
  "cronjob.batch": "SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE",
  "role.rbac.authorization.k8s.io": "CREATED AT",
  "rolebinding.rbac.authorization.k8s.io": "ROLE AGE",
  "clusterrole.rbac.authorization.k8s.io": "CREATED AT",
  "clusterrolebinding.rbac.authorization.k8s.io": "ROLE AGE",
  "ingressclass.networking.k8s.io": "CONTROLLER PARAMETERS AGE",
  "ingress.networking.k8s.io": "CLASS HOSTS ADDRESS PORTS AGE",
  "networkpolicy.networking.k8s.io": "POD-SELECTOR AGE",
  "poddisruptionbudget.policy": "MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE",
  "horizontalpodautoscaler.autoscaling": "REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE",
  "priorityclass.scheduling.k8s.io": "VALUE GLOBAL-DEFAULT AGE",
  "storageclass.storage.k8s.io": "PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE",
  "runtimeclass.node.k8s.io": "HANDLER AGE",
  "lease.coordination.k8s.io": "HOLDER AGE",
  "validatingwebhookconfiguration.admissionregistration.k8s.io": "WEBHOOKS AGE",
  "mutatingwebhookconfiguration.admissionregistration.k8s.io": "WEBHOOKS AGE",
  "validatingadmissionpolicy.admissionregistration.k8s.io": "VALIDATIONS PARAMKIND AGE",
  "validatingadmissionpolicybinding.admissionregistration.k8s.io": "POLICYNAME PARAMREF AGE"
}

// What 1.32's kubectl patches again on an unchanged re-apply: a Secret's stringData is never stored,
// a PDB's selector has the replace patch strategy, and the others have atomic lists the server
// defaulted into (ports' protocol, webhook and policy rules' scope, claim templates' volumeMode).
const patchedOnReapply = new Set([
  "secret/app-secret",
  "endpoints/external",
  "endpointslice.discovery.k8s.io/external-abc",
  "statefulset.apps/db",
  "poddisruptionbudget.policy/app",
  "validatingwebhookconfiguration.admissionregistration.k8s.io/app-validate",
  "mutatingwebhookconfiguration.admissionregistration.k8s.io/app-mutate",
  "validatingadmissionpolicy.admissionregistration.k8s.io/replica-limit"
])

describe("a typical manifest of every served built-in kind", () => {
  it("applies client-side and server-side, re-applies, prints its 1.32 columns and deletes", async () => {
    const created = (await ok("apply", "-f", everyKind)).trim().split("\n")
    expect(created).toHaveLength(40)
    for (const line of created) expect(line).toMatch(/^\S+ created$/)

    for (const line of (await ok("apply", "-f", everyKind)).trim().split("\n")) {
      const [name, result] = line.split(" ")
      expect(result, name).toBe(patchedOnReapply.has(name!) ? "configured" : "unchanged")
    }
    for (const line of (await ok("apply", "--server-side", "--force-conflicts", "-f", everyKind)).trim().split("\n")) {
      expect(line).toMatch(/^\S+ serverside-applied$/)
    }
    // The second server-side apply (now the fields' only applier) writes nothing, but where 1.32 writes
    // too: structured-merge-diff compares before defaulting, so a configuration whose atomic lists the
    // server defaults into (or a Secret's stringData) differs, and the new managedFields time is a write
    // whenever the second has turned.
    const rewritten = new Set(["Secret", "Endpoints", "EndpointSlice", "StatefulSet", "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy"])
    const versions = async () =>
      Object.fromEntries(JSON.parse(await ok("get", "-f", everyKind, "-o", "json")).items
        .filter((o: any) => !rewritten.has(o.kind))
        .map((o: any) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]))
    const before = await versions()
    expect(Object.keys(before)).toHaveLength(33)
    await new Promise((resolve) => setTimeout(resolve, 1100)) // a new second: a changed apply would write
    await ok("apply", "--server-side", "-f", everyKind)
    expect(await versions()).toEqual(before)

    // One table per kind, headed NAME (but the Event's, which 1.32 prints without it) and its columns.
    const tables = (await ok("get", "-f", everyKind)).trim().split("\n").reduce<Array<Array<string>>>((acc, line) => {
      if (line.startsWith("NAME ") || line.startsWith("LAST SEEN ")) acc.push([line])
      else acc[acc.length - 1]!.push(line)
      return acc
    }, [])
    const printed = Object.fromEntries(tables.filter(([header]) => header!.startsWith("NAME ")).map(([header, row]) => [
      row!.split(/\s+/)[0]!.split("/")[0]!,
      header!.trim().split(/\s{2,}/).slice(1).join(" ")
    ]))
    expect(printed).toEqual(expectedHeaders)
    expect(tables.at(-1)![0]!.trim().split(/\s{2,}/)).toEqual(["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])

    const deleted = await kubectl("delete", "-f", everyKind)
    expect(deleted.stderr).toBe("")
    expect(deleted.stdout.trim().split("\n")).toHaveLength(40)
  })

  it("applies priority-and-fairness objects as an operator's install does: defaults, kubectl's columns, and whether the level exists", async () => {
    const flowSchema = {
      apiVersion: "flowcontrol.apiserver.k8s.io/v1",
      kind: "FlowSchema",
      metadata: { name: "reports" },
      spec: {
        distinguisherMethod: { type: "ByUser" },
        priorityLevelConfiguration: { name: "reports" },
        rules: [{
          resourceRules: [{ apiGroups: ["reports.example.com"], resources: ["*"], verbs: ["*"], clusterScope: true, namespaces: ["*"] }],
          subjects: [{ kind: "Group", group: { name: "system:authenticated" } }]
        }]
      }
    }
    const level = {
      apiVersion: "flowcontrol.apiserver.k8s.io/v1",
      kind: "PriorityLevelConfiguration",
      metadata: { name: "reports" },
      spec: { type: "Limited", limited: { nominalConcurrencyShares: 10, limitResponse: { type: "Queue", queuing: { queues: 16 } } } }
    }
    await ok("apply", "--server-side", "-f", file("apf-schema.json", flowSchema))
    const schemas = async () => (await ok("get", "flowschemas", "reports")).trim().split("\n")
    const missing = async (expected: string) => {
      for (let i = 0; i < 50 && !(await schemas())[1]!.trim().endsWith(expected); i++) await new Promise((r) => setTimeout(r, 50))
      return (await schemas())
    }
    // The level it names does not exist yet: dangling.
    const dangling = await missing("True")
    expect(dangling[0]!.trim().split(/\s{2,}/)).toEqual(["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"])
    expect(dangling[1]).toMatch(/^reports\s+reports\s+1000\s+ByUser\s+\S+\s+True$/)
    await ok("apply", "--server-side", "-f", file("apf-level.json", level))
    expect((await missing("False"))[1]).toMatch(/False$/)
    const stored = JSON.parse(await ok("get", "prioritylevelconfiguration", "reports", "-o", "json")).spec.limited
    expect(stored).toEqual({
      nominalConcurrencyShares: 10,
      lendablePercent: 0,
      limitResponse: { type: "Queue", queuing: { queues: 16, handSize: 8, queueLengthLimit: 50 } }
    })
    expect((await ok("get", "prioritylevelconfigurations", "reports")).split("\n")[1]).toMatch(/^reports\s+Limited\s+10\s+16\s+8\s+50\s+\S+$/)
  })

  it("refuses through kubectl what 1.32 refuses: a wrong type, an unknown field, an invalid value", async () => {
    const job = (spec: unknown) =>
      file("job.json", { apiVersion: "batch/v1", kind: "Job", metadata: { name: "bad", namespace: "default" }, spec })
    const containers = [{ name: "app", image: "busybox:1.36" }]

    const wrongType = await kubectl("apply", "-f", job({ backoffLimit: "six", template: { spec: { restartPolicy: "Never", containers } } }))
    expect(wrongType.code).toBe(1)
    expect(wrongType.stderr).toContain('Job in version "v1" cannot be handled as a Job')
    expect(wrongType.stderr).toContain("cannot unmarshal string into Go struct field JobSpec.spec.backoffLimit of type int32")

    const unknown = await kubectl("apply", "-f", job({ retries: 3, template: { spec: { restartPolicy: "Never", containers } } }))
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('unknown field "spec.retries"')

    const always = await kubectl("apply", "-f", job({ template: { spec: { containers } } }))
    expect(always.code).toBe(1)
    expect(always.stderr).toContain('The Job "bad" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"')
    expect((await kubectl("get", "job", "bad", "-n", "default")).code).toBe(1)
  })
})
