/**
 * The workload simulator: Deployments roll out through ReplicaSets and Pods (StatefulSets in
 * StatefulSetSimulation.test); Jobs run for that long and complete or fail;
 * Pods are scheduled, then run with every container ready (a crashing one restarted in a
 * CrashLoopBackOff loop); LoadBalancer Services get addresses of a pool; the kubelet renews its
 * node's Lease;
 * without it nothing touches their status.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { createNamespace, deployment, outcomeByLabel, poll } from "./fixtures.ts"

let simulated: Testing.TestServer
let plain: Testing.TestServer
beforeAll(async () => {
  simulated = await Testing.start({
    controllers: [WorkloadSimulator.make({
      delay: "300 millis",
      jobOutcome: outcomeByLabel,
      crashing: (pod) => (pod.metadata as { readonly labels?: Record<string, string> } | undefined)?.labels?.crash === "yes",
      loadBalancerAddresses: "172.18.255.200/30"
    })]
  })
  plain = await Testing.start()
})
afterAll(async () => {
  await simulated?.close()
  await plain?.close()
})

const until = poll

const condition = (body: any, type: string) => body.status?.conditions?.find((c: any) => c.type === type)

describe("WorkloadSimulator", () => {
  const deployments = "/apis/apps/v1/namespaces/default/deployments"
  const replicaSetsOf = async (name: string) =>
    (await simulated.request("GET", `/apis/apps/v1/namespaces/default/replicasets`)).json.items
      .filter((rs: any) => rs.metadata.ownerReferences?.[0]?.name === name)
      .sort((a: any, b: any) => Number(a.metadata.annotations["deployment.kubernetes.io/revision"]) - Number(b.metadata.annotations["deployment.kubernetes.io/revision"]))
  const eventsAbout = async (kind: string, name: string) =>
    (await simulated.request("GET", "/api/v1/namespaces/default/events")).json.items.filter((e: any) => e.involvedObject.kind === kind && e.involvedObject.name === name)
  const podsOf = async (replicaSet: string) =>
    (await simulated.request("GET", "/api/v1/namespaces/default/pods")).json.items.filter((p: any) => p.metadata.ownerReferences?.[0]?.name === replicaSet)

  it("rolls a Deployment out through a ReplicaSet whose pods run, as 1.32's controllers report it", async () => {
    expect((await simulated.request("POST", deployments, { body: deployment("web", 3) })).status).toBe(201)
    const started = await until(simulated, `${deployments}/web`, (d) => d.status?.updatedReplicas === 3)
    expect(started.status).toMatchObject({ observedGeneration: 1, replicas: 3 })
    expect(started.status).not.toHaveProperty("availableReplicas")
    expect(condition(started, "Available")).toMatchObject({ status: "False", reason: "MinimumReplicasUnavailable", message: "Deployment does not have minimum availability." })
    const [rs] = await replicaSetsOf("web")
    const hash = rs.metadata.labels["pod-template-hash"]
    expect(rs.metadata.name).toBe(`web-${hash}`)
    expect(rs.metadata.annotations).toMatchObject({ "deployment.kubernetes.io/revision": "1", "deployment.kubernetes.io/desired-replicas": "3" })
    expect(rs.spec.selector.matchLabels).toEqual({ app: "web", "pod-template-hash": hash })
    expect(rs.metadata.ownerReferences[0]).toMatchObject({ kind: "Deployment", name: "web", controller: true })
    const pods = await podsOf(rs.metadata.name)
    expect(pods).toHaveLength(3)
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(new RegExp(`^web-${hash}-[a-z0-9]{5}$`))
      expect(pod.metadata.labels).toEqual({ app: "web", "pod-template-hash": hash })
    }

    const ready = await until(simulated, `${deployments}/web`, (d) => d.status?.availableReplicas === 3)
    expect(ready.status).toMatchObject({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3 })
    expect(ready.status).not.toHaveProperty("unavailableReplicas")
    expect(ready.metadata.annotations["deployment.kubernetes.io/revision"]).toBe("1")
    expect(condition(ready, "Available")).toMatchObject({ status: "True", reason: "MinimumReplicasAvailable" })
    expect(condition(ready, "Progressing")).toMatchObject({ status: "True", reason: "NewReplicaSetAvailable", message: `ReplicaSet "web-${hash}" has successfully progressed.` })
    // Written as kube's components write: the controller manager, and a pod's status its kubelet.
    expect(ready.metadata.managedFields.some((f: any) => f.manager === "kube-controller-manager" && f.subresource === "status")).toBe(true)
    const managers = (object: any) => object.metadata.managedFields.map((f: any) => `${f.manager}${f.subresource === undefined ? "" : `/${f.subresource}`}`).sort()
    expect(managers((await simulated.request("GET", `/api/v1/namespaces/default/pods/${pods[0].metadata.name}`)).json)).toEqual([
      "kube-controller-manager",
      "kubelet/status"
    ])
    expect((await simulated.request("GET", `/apis/apps/v1/namespaces/default/replicasets/${rs.metadata.name}`)).json.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3, fullyLabeledReplicas: 3 })
    // The controllers' events, as `kubectl describe` shows them.
    expect((await eventsAbout("Deployment", "web")).map((e: any) => [e.reason, e.message, e.source.component])).toEqual([
      ["ScalingReplicaSet", `Scaled up replica set web-${hash} from 0 to 3`, "deployment-controller"]
    ])
    const created = (await eventsAbout("ReplicaSet", rs.metadata.name)).map((e: any) => `${e.reason} ${e.message}`).sort()
    expect(created).toEqual(pods.map((p: any) => `SuccessfulCreate Created pod: ${p.metadata.name}`).sort())
  })

  it("rolls a new template out through a new ReplicaSet, keeps the old one as history, and rolls back to it", async () => {
    await simulated.request("POST", deployments, { body: deployment("rolled", 2) })
    await until(simulated, `${deployments}/rolled`, (d) => d.status?.availableReplicas === 2)
    // Scaling keeps the ReplicaSet.
    const merge = { "content-type": "application/merge-patch+json" }
    await simulated.request("PATCH", `${deployments}/rolled`, { body: { spec: { replicas: 4 } }, headers: merge })
    await until(simulated, `${deployments}/rolled`, (d) => d.status?.observedGeneration === 2 && d.status?.availableReplicas === 4)
    expect(await replicaSetsOf("rolled")).toHaveLength(1)
    // Scaled, the ReplicaSet is told the replicas wanted (and the most with the surge of 25%).
    expect((await replicaSetsOf("rolled"))[0].metadata.annotations).toMatchObject({
      "deployment.kubernetes.io/desired-replicas": "4",
      "deployment.kubernetes.io/max-replicas": "5"
    })
    // A new image is a new ReplicaSet, revision 2, with the Deployment's change cause (what
    // `kubectl rollout history` shows); the old one ends with no pods, kept.
    const image = (name: string) => ({ spec: { template: { spec: { containers: [{ name: "web", image: name }] } } } })
    await simulated.request("PATCH", `${deployments}/rolled`, { body: { metadata: { annotations: { "kubernetes.io/change-cause": "to 1.27" } }, ...image("nginx:1.27") }, headers: merge })
    const rolled = await until(simulated, `${deployments}/rolled`, (d) =>
      d.status?.observedGeneration === 3 && d.status?.updatedReplicas === 4 && d.status?.availableReplicas === 4 && d.status?.replicas === 4)
    expect(rolled.metadata.annotations["deployment.kubernetes.io/revision"]).toBe("2")
    const [first, second] = await replicaSetsOf("rolled")
    expect(first.spec.replicas).toBe(0)
    expect(second.spec.template.spec.containers[0].image).toBe("nginx:1.27")
    expect([first.metadata.annotations["kubernetes.io/change-cause"], second.metadata.annotations["kubernetes.io/change-cause"]]).toEqual([undefined, "to 1.27"])
    // The old pods terminate for the simulator's delay (their grace period is longer), then go.
    for (let i = 0; i < 100 && (await podsOf(first.metadata.name)).length > 0; i++) await new Promise((r) => setTimeout(r, 25))
    expect(await podsOf(first.metadata.name)).toHaveLength(0)
    expect(await podsOf(second.metadata.name)).toHaveLength(4)
    // Paused, a new template rolls nothing out until resumed.
    await simulated.request("PATCH", `${deployments}/rolled`, { body: { spec: { paused: true, ...image("nginx:1.28").spec } }, headers: merge })
    const paused = await until(simulated, `${deployments}/rolled`, (d) => condition(d, "Progressing")?.reason === "DeploymentPaused")
    expect(condition(paused, "Progressing")).toMatchObject({ status: "Unknown", message: "Deployment is paused" })
    expect(paused.status).toMatchObject({ availableReplicas: 4 })
    expect(paused.status).not.toHaveProperty("updatedReplicas")
    expect(await replicaSetsOf("rolled")).toHaveLength(2)
    // The first template again, resumed: its ReplicaSet comes back as revision 3, no new one is made.
    await simulated.request("PATCH", `${deployments}/rolled`, { body: { spec: { paused: false, ...image("nginx").spec } }, headers: merge })
    await until(simulated, `${deployments}/rolled`, (d) => d.metadata.annotations?.["deployment.kubernetes.io/revision"] === "3" && d.status?.availableReplicas === 4 && d.status?.replicas === 4)
    const back = await replicaSetsOf("rolled")
    expect(back.map((r: any) => [r.metadata.name, r.metadata.annotations["deployment.kubernetes.io/revision"], r.spec.replicas])).toEqual([
      [second.metadata.name, "2", 0],
      [first.metadata.name, "3", 4]
    ])
  })

  it("times a rollout out once it stops progressing for progressDeadlineSeconds, and takes it up again when it progresses", async () => {
    const stuck = deployment("stuck", 1)
    const body = { ...stuck, spec: { ...stuck.spec, progressDeadlineSeconds: 1, template: { ...stuck.spec.template, spec: { ...stuck.spec.template.spec, nodeSelector: { zone: "nowhere" } } } } }
    await simulated.request("POST", deployments, { body })
    const progressing = await until(simulated, `${deployments}/stuck`, (d) => condition(d, "Progressing")?.reason === "ReplicaSetUpdated")
    const timedOut = await until(simulated, `${deployments}/stuck`, (d) => condition(d, "Progressing")?.reason === "ProgressDeadlineExceeded")
    const rs = (await replicaSetsOf("stuck"))[0]
    expect(condition(timedOut, "Progressing")).toMatchObject({ status: "False", message: `ReplicaSet "${rs.metadata.name}" has timed out progressing.` })
    expect(Date.parse(condition(timedOut, "Progressing").lastUpdateTime) - Date.parse(condition(progressing, "Progressing").lastUpdateTime)).toBeGreaterThanOrEqual(1000)
    // The pods fit once a node has the zone: the rollout progresses and completes.
    await simulated.request("PATCH", "/api/v1/nodes/kubefx-node", { body: { metadata: { labels: { zone: "nowhere" } } }, headers: { "content-type": "application/merge-patch+json" } })
    const done = await until(simulated, `${deployments}/stuck`, (d) => condition(d, "Progressing")?.reason === "NewReplicaSetAvailable")
    expect(condition(done, "Progressing").status).toBe("True")
  })

  it("keeps a selecting Service's Endpoints and EndpointSlice with the addresses of its ready Pods", async () => {
    const served = deployment("served", 2)
    served.spec.template.spec.containers[0] = { name: "web", image: "nginx", ports: [{ name: "http", containerPort: 8080 }] } as any
    await simulated.request("POST", deployments, { body: served })
    const service = await simulated.request("POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name: "served" }, spec: { selector: { app: "served" }, ports: [{ name: "web", port: 80, targetPort: "http" }] } }
    })
    expect(service.status).toBe(201)
    const endpoints = await until(simulated, "/api/v1/namespaces/default/endpoints/served", (e) => e.subsets?.[0]?.addresses?.length === 2)
    expect(endpoints.subsets[0].ports).toEqual([{ name: "web", port: 8080, protocol: "TCP" }])
    const pods = (await simulated.request("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dserved")).json.items
    expect(endpoints.subsets[0].addresses.map((a: any) => a.ip).sort()).toEqual(pods.map((p: any) => p.status.podIP).sort())
    expect(endpoints.subsets[0].addresses[0].targetRef).toMatchObject({ kind: "Pod", namespace: "default" })
    const [slice] = (await simulated.request("GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dserved")).json.items
    expect(slice.metadata.name).toMatch(/^served-[a-z0-9]{5}$/)
    expect(slice.metadata.labels["endpointslice.kubernetes.io/managed-by"]).toBe("endpointslice-controller.k8s.io")
    expect(slice.metadata.ownerReferences[0]).toMatchObject({ kind: "Service", name: "served", controller: true })
    expect(slice.endpoints.map((e: any) => e.conditions)).toEqual([{ ready: true, serving: true, terminating: false }, { ready: true, serving: true, terminating: false }])
    expect(slice.ports).toEqual([{ name: "web", port: 8080, protocol: "TCP" }])
    // No Pod left, no address; the Service gone, its Endpoints go.
    await simulated.request("PATCH", `${deployments}/served`, { body: { spec: { replicas: 0 } }, headers: { "content-type": "application/merge-patch+json" } })
    const emptied = await until(simulated, "/api/v1/namespaces/default/endpoints/served", (e) => e.subsets === undefined)
    expect(emptied.metadata.name).toBe("served")
    expect((await simulated.request("DELETE", "/api/v1/namespaces/default/services/served")).status).toBe(200)
    let status = 200
    for (let i = 0; i < 100 && status !== 404; i++) {
      status = (await simulated.request("GET", "/api/v1/namespaces/default/endpoints/served")).status
      if (status !== 404) await new Promise((r) => setTimeout(r, 25))
    }
    expect(status).toBe(404)
  })

  it("never rolls out a workload whose pods the namespace's Pod Security level refuses, until it lets them in", async () => {
    const labels = (level: string | null) => ({
      body: { metadata: { labels: { "pod-security.kubernetes.io/enforce": level } } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect((await simulated.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "locked" } } })).status).toBe(201)
    expect((await simulated.request("PATCH", "/api/v1/namespaces/locked", labels("baseline"))).status).toBe(200)
    const path = "/apis/apps/v1/namespaces/locked/deployments"
    const privileged = deployment("root", 2)
    privileged.spec.template.spec.containers[0] = { name: "web", image: "nginx", securityContext: { privileged: true } } as any
    const created = await simulated.request("POST", path, { body: privileged })
    expect(created.status).toBe(201)
    expect(created.headers.get("warning")).toContain("would violate PodSecurity")
    const stuck = await until(simulated, `${path}/root`, (d) => condition(d, "ReplicaFailure") !== undefined)
    expect(condition(stuck, "ReplicaFailure")).toMatchObject({ status: "True", reason: "FailedCreate" })
    expect(condition(stuck, "ReplicaFailure").message).toMatch(
      /^pods "root-[a-z0-9]+-[a-z0-9]{5}" is forbidden: violates PodSecurity "baseline:latest": privileged \(container "web" must not set securityContext.privileged=true\)$/
    )
    expect(condition(stuck, "Available")).toMatchObject({ status: "False", reason: "MinimumReplicasUnavailable" })
    expect(stuck.status).not.toHaveProperty("readyReplicas")
    // A compliant workload beside it rolls out as usual.
    await simulated.request("POST", path, { body: deployment("plain", 1) })
    expect(condition(await until(simulated, `${path}/plain`, (d) => d.status?.availableReplicas === 1), "ReplicaFailure")).toBeUndefined()
    // Lifting the level lets the pods in: the rollout completes and the failure condition goes.
    expect((await simulated.request("PATCH", "/api/v1/namespaces/locked", labels(null))).status).toBe(200)
    const ready = await until(simulated, `${path}/root`, (d) => d.status?.availableReplicas === 2)
    expect(condition(ready, "ReplicaFailure")).toBeUndefined()
    expect(condition(ready, "Available")?.status).toBe("True")
  })

  it("never rolls out a workload whose ServiceAccount is missing, until it is created", async () => {
    const path = "/apis/apps/v1/namespaces/default/deployments"
    const builder = deployment("builder", 1)
    ;(builder.spec.template.spec as Record<string, unknown>).serviceAccountName = "builder"
    expect((await simulated.request("POST", path, { body: builder })).status).toBe(201)
    const stuck = await until(simulated, `${path}/builder`, (d) => condition(d, "ReplicaFailure") !== undefined)
    expect(condition(stuck, "ReplicaFailure").message).toMatch(
      /^pods "builder-[a-z0-9]+-" is forbidden: error looking up service account default\/builder: serviceaccount "builder" not found$/
    )
    // Refused before kube names the pod: the message names its prefix, as the ReplicaSet's event does.
    const [rs] = await replicaSetsOf("builder")
    const failed = (await eventsAbout("ReplicaSet", rs.metadata.name)).filter((e: any) => e.reason === "FailedCreate")
    expect(failed[0]).toMatchObject({ type: "Warning", source: { component: "replicaset-controller" } })
    expect(failed[0].message).toBe(`Error creating: pods "${rs.metadata.name}-" is forbidden: error looking up service account default/builder: serviceaccount "builder" not found`)
    // A DaemonSet of the same account is refused its pod too, and tried again with the Deployment.
    const daemonSets = "/apis/apps/v1/namespaces/default/daemonsets"
    const agent = { ...deployment("agent", 1), kind: "DaemonSet", spec: { ...deployment("agent", 1).spec, replicas: undefined } }
    ;(agent.spec.template.spec as Record<string, unknown>).serviceAccountName = "builder"
    expect((await simulated.request("POST", daemonSets, { body: agent })).status).toBe(201)
    await until(simulated, "/api/v1/namespaces/default/events", (list) => list.items.some((e: any) => e.involvedObject.name === "agent" && e.reason === "FailedCreate"))
    const account = await simulated.request("POST", "/api/v1/namespaces/default/serviceaccounts", { body: { metadata: { name: "builder" } } })
    expect(account.status).toBe(201)
    const ready = await until(simulated, `${path}/builder`, (d) => d.status?.availableReplicas === 1)
    expect(condition(ready, "ReplicaFailure")).toBeUndefined()
    await until(simulated, `${daemonSets}/agent`, (d) => d.status?.numberAvailable === 1)
    expect((await simulated.request("DELETE", `${daemonSets}/agent`)).status).toBe(200)
  })

  const jobs = "/apis/batch/v1/namespaces/default/jobs"
  const job = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, labels },
    spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "work", image: "busybox" }] } }, ...spec }
  })

  it("starts a Job's pods at once, then completes it as 1.32's Job controller does", async () => {
    expect((await simulated.request("POST", jobs, { body: job("backup", { completions: 3, parallelism: 2 }) })).status).toBe(201)
    const running = await until(simulated, `${jobs}/backup`, (j) => j.status?.startTime !== undefined)
    expect(running.status).toEqual({ startTime: running.status.startTime, active: 2, ready: 0, terminating: 0, uncountedTerminatedPods: {} })
    const done = await until(simulated, `${jobs}/backup`, (j) => condition(j, "Complete") !== undefined)
    const reached = { status: "True", reason: "CompletionsReached", message: "Reached expected number of succeeded pods" }
    expect(done.status.conditions.map((c: any) => c.type)).toEqual(["SuccessCriteriaMet", "Complete"])
    expect(condition(done, "Complete")).toMatchObject(reached)
    expect(condition(done, "SuccessCriteriaMet")).toMatchObject(reached)
    expect(done.status).toMatchObject({ startTime: running.status.startTime, succeeded: 3, ready: 0, terminating: 0 })
    expect(done.status).not.toHaveProperty("active")
    expect(done.status.completionTime).toBe(condition(done, "Complete").lastTransitionTime)
    // An Indexed Job names its completed indexes.
    await simulated.request("POST", jobs, { body: job("indexed", { completions: 4, parallelism: 4, completionMode: "Indexed" }) })
    expect((await until(simulated, `${jobs}/indexed`, (j) => condition(j, "Complete") !== undefined)).status.completedIndexes).toBe("0-3")
  })

  it("fails a Job at its backoff limit when jobOutcome says so", async () => {
    await simulated.request("POST", jobs, { body: job("broken", { backoffLimit: 2 }, { outcome: "fail" }) })
    const failed = await until(simulated, `${jobs}/broken`, (j) => condition(j, "Failed") !== undefined)
    const exceeded = { status: "True", reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" }
    expect(failed.status.conditions.map((c: any) => c.type)).toEqual(["FailureTarget", "Failed"])
    expect(condition(failed, "Failed")).toMatchObject(exceeded)
    expect(failed.status).toMatchObject({ failed: 3, ready: 0, terminating: 0 })
    expect(failed.status).not.toHaveProperty("completionTime")
    expect(failed.status).not.toHaveProperty("succeeded")
  })

  it("keeps a suspended Job's pods from starting until it is resumed", async () => {
    await simulated.request("POST", jobs, { body: job("paused", { suspend: true }) })
    const paused = await until(simulated, `${jobs}/paused`, (j) => condition(j, "Suspended") !== undefined)
    expect(condition(paused, "Suspended")).toMatchObject({ status: "True", reason: "JobSuspended", message: "Job suspended" })
    expect(paused.status).not.toHaveProperty("startTime")
    await new Promise((r) => setTimeout(r, 400))
    expect(condition((await simulated.request("GET", `${jobs}/paused`)).json, "Complete")).toBeUndefined()
    const resumed = await simulated.request("PATCH", `${jobs}/paused`, {
      body: { spec: { suspend: false } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(resumed.status).toBe(200)
    const done = await until(simulated, `${jobs}/paused`, (j) => condition(j, "Complete") !== undefined)
    expect(condition(done, "Suspended")).toMatchObject({ status: "False", reason: "JobResumed", message: "Job resumed" })
    expect(done.status.startTime).toBeDefined()
  })

  it("deletes a finished Job ttlSecondsAfterFinished after it ended", async () => {
    await simulated.request("POST", jobs, { body: job("once", { ttlSecondsAfterFinished: 0 }) })
    let status = 0
    for (let i = 0; i < 200 && status !== 404; i++) {
      status = (await simulated.request("GET", `${jobs}/once`)).status
      if (status !== 404) await new Promise((r) => setTimeout(r, 25))
    }
    expect(status).toBe(404)
  })

  it("starts no pod of a Job whose ServiceAccount is missing, until it is created", async () => {
    const orphan = job("orphan")
    ;(orphan.spec.template.spec as Record<string, unknown>).serviceAccountName = "runner"
    await simulated.request("POST", jobs, { body: orphan })
    const stuck = await until(simulated, `${jobs}/orphan`, (j) => j.status?.startTime !== undefined)
    expect(stuck.status).not.toHaveProperty("active")
    await new Promise((r) => setTimeout(r, 400))
    expect(condition((await simulated.request("GET", `${jobs}/orphan`)).json, "Complete")).toBeUndefined()
    expect((await simulated.request("POST", "/api/v1/namespaces/default/serviceaccounts", { body: { metadata: { name: "runner" } } })).status).toBe(201)
    expect((await until(simulated, `${jobs}/orphan`, (j) => j.status?.active === 1)).status.startTime).toBe(stuck.status.startTime)
    await until(simulated, `${jobs}/orphan`, (j) => condition(j, "Complete") !== undefined)
  })

  it("starts the pods of a Job a quota refused once the quota lets them in", async () => {
    await createNamespace(simulated, "quoted")
    const quotas = "/api/v1/namespaces/quoted/resourcequotas"
    const quota = { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "cpu" }, spec: { hard: { "requests.cpu": "1" } } }
    expect((await simulated.request("POST", quotas, { body: quota })).status).toBe(201)
    await until(simulated, `${quotas}/cpu`, (q) => q.status?.hard !== undefined)
    const quotedJobs = "/apis/batch/v1/namespaces/quoted/jobs"
    expect((await simulated.request("POST", quotedJobs, { body: job("counted") })).status).toBe(201)
    await until(simulated, "/api/v1/namespaces/quoted/events", (list) => list.items.some((e: any) => e.involvedObject.name === "counted" && e.reason === "FailedCreate"))
    expect((await simulated.request("DELETE", `${quotas}/cpu`)).status).toBe(200)
    await until(simulated, `${quotedJobs}/counted`, (j) => condition(j, "Complete") !== undefined)
  })

  it("holds a Pod whose Secret volume or environment is missing, as a kubelet does, and runs it once they exist", async () => {
    const pods = "/api/v1/namespaces/default/pods"
    const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "app", image: "nginx" }], ...spec } })
    const mounting = pod("mounting", { volumes: [{ name: "cert", secret: { secretName: "serving-cert" } }, { name: "maybe", configMap: { name: "absent", optional: true } }] })
    expect((await simulated.request("POST", pods, { body: mounting })).status).toBe(201)
    const held = await until(simulated, `${pods}/mounting`, (p) => p.status?.containerStatuses !== undefined)
    expect(held.status.phase).toBe("Pending")
    expect(held.status.containerStatuses[0].state).toEqual({ waiting: { reason: "ContainerCreating" } })
    expect(held.status.podIP).toBeUndefined()
    expect(condition(held, "Ready")).toMatchObject({ status: "False", reason: "ContainersNotReady", message: "containers with unready status: [app]" })
    const mountEvents = await until(simulated, "/api/v1/namespaces/default/events", (list) => list.items.some((e: any) => e.involvedObject.name === "mounting" && e.reason === "FailedMount"))
    expect(mountEvents.items.find((e: any) => e.involvedObject.name === "mounting" && e.reason === "FailedMount")).toMatchObject({
      type: "Warning",
      message: 'MountVolume.SetUp failed for volume "cert" : secret "serving-cert" not found',
      source: { component: "kubelet" }
    })
    // A container whose environment reads a key the Secret does not have waits, its sandbox up.
    const secrets = "/api/v1/namespaces/default/secrets"
    expect((await simulated.request("POST", secrets, { body: { apiVersion: "v1", kind: "Secret", metadata: { name: "db" }, stringData: { user: "app" } } })).status).toBe(201)
    const configured = pod("configured", {})
    ;(configured.spec.containers[0] as Record<string, unknown>).env = [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "password" } } }]
    expect((await simulated.request("POST", pods, { body: configured })).status).toBe(201)
    const waiting = await until(simulated, `${pods}/configured`, (p) => p.status?.containerStatuses !== undefined)
    expect(waiting.status.containerStatuses[0].state).toEqual({
      waiting: { reason: "CreateContainerConfigError", message: "couldn't find key password in Secret default/db" }
    })
    expect(waiting.status.podIP).toMatch(/^10\.244\./)
    // Made or completed, what they wait for lets them run.
    expect((await simulated.request("POST", secrets, { body: { apiVersion: "v1", kind: "Secret", metadata: { name: "serving-cert" }, stringData: { "tls.crt": "x" } } })).status).toBe(201)
    expect((await simulated.request("PATCH", `${secrets}/db`, { body: { stringData: { password: "s3cret" } }, headers: { "content-type": "application/merge-patch+json" } })).status).toBe(200)
    for (const name of ["mounting", "configured"]) {
      const running = await until(simulated, `${pods}/${name}`, (p) => p.status?.phase === "Running")
      expect(running.status.containerStatuses[0].ready).toBe(true)
      expect((await simulated.request("DELETE", `${pods}/${name}?gracePeriodSeconds=0`)).status).toBe(200)
    }
  })

  it("cannot pull an image of a registry under .invalid: ErrImagePull, then ImagePullBackOff, until the image is changed", async () => {
    const pods = "/api/v1/namespaces/default/pods"
    const body = { apiVersion: "v1", kind: "Pod", metadata: { name: "unpullable" }, spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }] } }
    expect((await simulated.request("POST", pods, { body })).status).toBe(201)
    const reference = "registry.invalid/app:1"
    const failed = await until(simulated, `${pods}/unpullable`, (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === "ErrImagePull")
    expect(failed.status.containerStatuses[0].state.waiting.message).toBe(
      `rpc error: code = Unknown desc = failed to pull and unpack image "${reference}": failed to resolve reference "${reference}": ` +
        'failed to do request: Head "https://registry.invalid/v2/app/manifests/1": dial tcp: lookup registry.invalid: no such host'
    )
    expect(failed.status.phase).toBe("Pending")
    const backingOff = await until(simulated, `${pods}/unpullable`, (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === "ImagePullBackOff")
    expect(backingOff.status.containerStatuses[0].state.waiting.message).toBe(`Back-off pulling image "${reference}"`)
    const events = (await simulated.request("GET", "/api/v1/namespaces/default/events")).json.items
      .filter((e: any) => e.involvedObject.name === "unpullable" && e.source.component === "kubelet")
      .map((e: any) => [e.type, e.reason, e.message.replace(/": rpc error.*$/, '": ...'), e.involvedObject.fieldPath])
    expect(events).toEqual(expect.arrayContaining([
      ["Normal", "Pulling", `Pulling image "${reference}"`, "spec.containers{app}"],
      ["Warning", "Failed", `Failed to pull image "${reference}": ...`, "spec.containers{app}"],
      ["Warning", "Failed", "Error: ErrImagePull", "spec.containers{app}"],
      ["Normal", "BackOff", `Back-off pulling image "${reference}"`, "spec.containers{app}"],
      ["Warning", "Failed", "Error: ImagePullBackOff", "spec.containers{app}"]
    ]))
    // A pod's image may be changed: the new one is pulled and runs.
    const patched = await simulated.request("PATCH", `${pods}/unpullable`, {
      body: { spec: { containers: [{ name: "app", image: "nginx" }] } },
      headers: { "content-type": "application/strategic-merge-patch+json" }
    })
    expect(patched.status).toBe(200)
    await until(simulated, `${pods}/unpullable`, (p) => p.status?.phase === "Running")
    expect((await simulated.request("DELETE", `${pods}/unpullable?gracePeriodSeconds=0`)).status).toBe(200)
  })

  it("schedules a Pod at once, then runs it with every container ready, as a kubelet reports it", async () => {
    const pods = "/api/v1/namespaces/default/pods"
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "runner" },
      spec: {
        initContainers: [{ name: "setup", image: "busybox" }],
        containers: [{ name: "web", image: "nginx" }, { name: "side", image: "ghcr.io/acme/agent:1.2" }]
      }
    }
    expect((await simulated.request("POST", pods, { body: pod })).status).toBe(201)
    const placed = await until(simulated, `${pods}/runner`, (p) => condition(p, "PodScheduled") !== undefined)
    expect(placed.status.phase).toBe("Pending")
    expect(placed.status).not.toHaveProperty("containerStatuses")
    const running = await until(simulated, `${pods}/runner`, (p) => p.status?.phase === "Running")
    expect(running.status.conditions.map((c: any) => [c.type, c.status])).toEqual([
      ["PodReadyToStartContainers", "True"],
      ["Initialized", "True"],
      ["Ready", "True"],
      ["ContainersReady", "True"],
      ["PodScheduled", "True"]
    ])
    expect(condition(running, "PodScheduled").lastTransitionTime).toBe(condition(placed, "PodScheduled").lastTransitionTime)
    expect(running.status.podIP).toMatch(/^10\.244\.\d+\.\d+$/)
    expect(running.status.podIPs).toEqual([{ ip: running.status.podIP }])
    expect(running.status.qosClass).toBe("BestEffort")
    expect(running.status.containerStatuses.map((c: any) => [c.name, c.image, c.ready, c.started, Object.keys(c.state)])).toEqual([
      ["web", "docker.io/library/nginx:latest", true, true, ["running"]],
      ["side", "ghcr.io/acme/agent:1.2", true, true, ["running"]]
    ])
    expect(running.status.containerStatuses[0].imageID).toMatch(/^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/)
    expect(running.status.initContainerStatuses[0]).toMatchObject({ name: "setup", ready: true, started: false, state: { terminated: { exitCode: 0, reason: "Completed" } } })
    // An ephemeral container kubectl debug adds starts, never ready.
    const debugged = await simulated.request("PATCH", `${pods}/runner/ephemeralcontainers`, {
      body: { spec: { ephemeralContainers: [{ name: "debugger", image: "busybox" }] } },
      headers: { "content-type": "application/strategic-merge-patch+json" }
    })
    expect(debugged.status, debugged.text).toBe(200)
    const started = await until(simulated, `${pods}/runner`, (p) => p.status?.ephemeralContainerStatuses !== undefined)
    expect(started.status.ephemeralContainerStatuses).toEqual([expect.objectContaining({ name: "debugger", ready: false, started: true, state: { running: expect.anything() } })])
    // kubectl reads it as a cluster's: ready and running.
    expect((await simulated.request("GET", `${pods}/runner`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } })).json.rows[0].cells.slice(1, 3)).toEqual(["2/2", "Running"])
  })

  it("restarts a crashing pod's containers in a CrashLoopBackOff loop, as a kubelet reports it", async () => {
    const pods = "/api/v1/namespaces/default/pods"
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "crashy", labels: { crash: "yes" } }, spec: { containers: [{ name: "app", image: "nginx" }] } }
    expect((await simulated.request("POST", pods, { body: pod })).status).toBe(201)
    // Seen while backing off: waiting, the failed run as its last state, the pod not ready.
    const backingOff = await until(simulated, `${pods}/crashy`, (p) => p.status?.containerStatuses?.[0]?.state?.waiting !== undefined)
    const status = backingOff.status.containerStatuses[0]
    expect(status).toMatchObject({ ready: false, started: false, restartCount: 1, lastState: { terminated: { exitCode: 1, reason: "Error" } } })
    expect(status.state.waiting).toEqual({
      reason: "CrashLoopBackOff",
      message: `back-off 10s restarting failed container=app pod=crashy_default(${backingOff.metadata.uid})`
    })
    expect(backingOff.status.phase).toBe("Running")
    expect(condition(backingOff, "Ready")).toMatchObject({ status: "False", reason: "ContainersNotReady", message: "containers with unready status: [app]" })
    // Then running and ready again, a new container, until it crashes again.
    const restarted = await until(simulated, `${pods}/crashy`, (p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined && p.status.containerStatuses[0].restartCount === 1)
    expect(restarted.status.containerStatuses[0].containerID).not.toBe(status.lastState.terminated.containerID)
    expect(condition(restarted, "Ready")?.status).toBe("True")
    await until(simulated, `${pods}/crashy`, (p) => p.status?.containerStatuses?.[0]?.restartCount >= 2)
    // One Event a crash, the same one counted again (as the kubelet's recorder aggregates them).
    const backOffs = (await eventsAbout("Pod", "crashy")).filter((e: any) => e.reason === "BackOff")
    expect(backOffs.reduce((n: number, e: any) => n + (e.count ?? 1), 0)).toBeGreaterThanOrEqual(2)
    expect(backOffs[0]).toMatchObject({ type: "Warning", message: `Back-off restarting failed container app in pod crashy_default(${backingOff.metadata.uid})` })
    await simulated.request("DELETE", `${pods}/crashy`)
  })

  it("gives LoadBalancer Services addresses of its pool, as a cloud's service controller, and cleans them up", async () => {
    const services = "/api/v1/namespaces/default/services"
    const balanced = (name: string, extra: Record<string, unknown> = {}) => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }], selector: { app: name }, ...extra }
    })
    const ingressOf = (body: any) => body.status?.loadBalancer?.ingress?.[0]?.ip
    for (const name of ["lb-a", "lb-b", "lb-c"]) expect((await simulated.request("POST", services, { body: balanced(name) })).status).toBe(201)
    expect((await simulated.request("POST", services, { body: balanced("lb-other", { loadBalancerClass: "example.com/other" }) })).status).toBe(201)
    // A /30 holds two hosts: .201 and .202, in the order the Services came; the third waits.
    const a = await until(simulated, `${services}/lb-a`, (body) => ingressOf(body) !== undefined)
    const b = await until(simulated, `${services}/lb-b`, (body) => ingressOf(body) !== undefined)
    expect(a.status.loadBalancer.ingress).toEqual([{ ip: "172.18.255.201", ipMode: "VIP" }])
    expect(ingressOf(b)).toBe("172.18.255.202")
    expect(a.metadata.finalizers).toEqual(["service.kubernetes.io/load-balancer-cleanup"])
    const c = await until(simulated, `${services}/lb-c`, () => true)
    expect(ingressOf(c)).toBeUndefined()
    expect((await eventsAbout("Service", "lb-c")).map((e: any) => [e.type, e.reason])).toContainEqual(["Warning", "SyncLoadBalancerFailed"])
    // Another class's Service is another controller's.
    const other = (await simulated.request("GET", `${services}/lb-other`)).json
    expect(other.metadata.finalizers).toBeUndefined()
    expect(ingressOf(other)).toBeUndefined()
    expect((await eventsAbout("Service", "lb-a")).map((e: any) => [e.type, e.reason, e.message])).toEqual([
      ["Normal", "EnsuringLoadBalancer", "Ensuring load balancer"],
      ["Normal", "EnsuredLoadBalancer", "Ensured load balancer"]
    ])
    // Deleted, its load balancer is cleaned up and the Service goes; its address is free again.
    await simulated.request("DELETE", `${services}/lb-a`)
    await until(simulated, services, (list) => !list.items.some((s: any) => s.metadata.name === "lb-a"))
    expect((await eventsAbout("Service", "lb-a")).map((e: any) => e.reason)).toEqual(
      expect.arrayContaining(["DeletingLoadBalancer", "DeletedLoadBalancer"])
    )
    expect(ingressOf(await until(simulated, `${services}/lb-c`, (body) => ingressOf(body) !== undefined))).toBe("172.18.255.201")
    // No longer a load balancer: its address and finalizer go.
    const retyped = await simulated.request("PATCH", `${services}/lb-b`, {
      body: { spec: { type: "ClusterIP" } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(retyped.status, retyped.text).toBe(200)
    const clusterIp = await until(simulated, `${services}/lb-b`, (body) => body.metadata.finalizers === undefined)
    expect(clusterIp.status.loadBalancer).toEqual({})
    expect((await eventsAbout("Service", "lb-b")).map((e: any) => [e.reason, e.message])).toContainEqual(["Type", "LoadBalancer -> ClusterIP"])
    for (const name of ["lb-b", "lb-c", "lb-other"]) await simulated.request("DELETE", `${services}/${name}`)
    // A pool that is not an IPv4 CIDR is refused when the simulator is made.
    for (const pool of ["172.18.300.0/24", "172.18.255.0/33", "fd00::/64"]) {
      expect(() => WorkloadSimulator.make({ loadBalancerAddresses: pool })).toThrow(`loadBalancerAddresses takes an IPv4 pool such as 172.18.255.200/29, not ${pool}`)
    }
  })

  it("records its node's start as a kubelet and the node lifecycle controller do, as kubectl describe node finds them", async () => {
    const events = (await simulated.request("GET", "/api/v1/namespaces/default/events")).json.items
      .filter((e: any) => e.involvedObject.kind === "Node" && e.involvedObject.name === "kubefx-node")
      .map((e: any) => [e.source.component, e.reason, e.message])
    expect(events).toEqual(expect.arrayContaining([
      ["kubelet", "Starting", "Starting kubelet."],
      ["kubelet", "NodeHasSufficientMemory", "Node kubefx-node status is now: NodeHasSufficientMemory"],
      ["kubelet", "NodeReady", "Node kubefx-node status is now: NodeReady"],
      ["node-controller", "RegisteredNode", "Node kubefx-node event: Registered Node kubefx-node in Controller"]
    ]))
    // And the machine's ids, as kubectl describe node shows them.
    const info = (await simulated.request("GET", "/api/v1/nodes/kubefx-node")).json.status.nodeInfo
    expect(info.machineID).toMatch(/^[0-9a-f]{32}$/)
    expect([info.systemUUID, info.bootID]).toEqual([expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)])
  })

  it("has its kubelet hold its node's Lease in kube-node-lease and renew it every ten seconds", async () => {
    const path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/kubefx-node"
    const node = (await simulated.request("GET", "/api/v1/nodes/kubefx-node")).json
    const lease = await until(simulated, path, (l) => l.spec?.renewTime !== undefined)
    expect(lease.spec).toMatchObject({ holderIdentity: "kubefx-node", leaseDurationSeconds: 40 })
    expect(lease.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    expect(lease.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: "kubefx-node", uid: node.metadata.uid }])
    // Renewed within ten seconds (and a little).
    const renewed = await (async () => {
      for (let i = 0; i < 60; i++) {
        const current = (await simulated.request("GET", path)).json
        if (current.spec.renewTime !== lease.spec.renewTime) return current
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      throw new Error("the node's Lease was not renewed within 12 s")
    })()
    expect(Date.parse(renewed.spec.renewTime) - Date.parse(lease.spec.renewTime)).toBeGreaterThan(0)
  }, 20_000)

  it("is off by default: a Deployment's status stays empty", async () => {
    const path = "/apis/apps/v1/namespaces/default/deployments"
    await plain.request("POST", path, { body: deployment("idle", 1) })
    // Longer than the simulator would take to observe it (it does so at once).
    await new Promise((r) => setTimeout(r, 400))
    expect((await plain.request("GET", `${path}/idle`)).json.status ?? {}).toEqual({})
  })
})
