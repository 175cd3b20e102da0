/**
 * The workload simulator's StatefulSet controller against the server: Pods `<name>-<ordinal>` with
 * their claims, made in order (or in parallel), updated highest ordinal first above the partition,
 * scaled down highest first, revisions kept as ControllerRevisions, events as 1.32's controller
 * records them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"

let simulated: Testing.TestServer
// Pods there never turn ready: what a rollout does before its pods run.
let stalled: Testing.TestServer
beforeAll(async () => {
  simulated = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "150 millis" })] })
  stalled = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "1 hour" })] })
})
afterAll(async () => {
  await simulated?.close()
  await stalled?.close()
})

const sets = (namespace = "default") => `/apis/apps/v1/namespaces/${namespace}/statefulsets`
const merge = { "content-type": "application/merge-patch+json" }

const statefulSet = (name: string, replicas: number, spec: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name },
  spec: {
    serviceName: name,
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "db", image: "postgres:17", volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql" }] }] }
    },
    volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } }],
    ...spec
  }
})

const podsOf = async (server: Testing.TestServer, name: string, namespace = "default") =>
  ((await server.request("GET", `/api/v1/namespaces/${namespace}/pods?labelSelector=app%3D${name}`)).json.items as Array<any>)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
const ready = (pod: any) => pod.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True") === true
const revisionOf = (pod: any) => pod.metadata.labels["controller-revision-hash"]

/** Polls the set until `check` holds, checking `invariant` on its pods at every look. */
const until = async (
  server: Testing.TestServer,
  name: string,
  check: (set: any, pods: Array<any>) => boolean,
  invariant: (pods: Array<any>) => void = () => {},
  namespace = "default"
) => {
  let last: unknown
  for (let i = 0; i < 300; i++) {
    const set = (await server.request("GET", `${sets(namespace)}/${name}`)).json
    const pods = await podsOf(server, name, namespace)
    invariant(pods)
    last = { status: set.status, pods: pods.map((p) => [p.metadata.name, revisionOf(p), ready(p)]) }
    if (check(set, pods)) return { set, pods }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out on ${name}: ${JSON.stringify(last)}`)
}

const events = async (server: Testing.TestServer, name: string, namespace = "default") =>
  ((await server.request("GET", `/api/v1/namespaces/${namespace}/events`)).json.items as Array<any>)
    .filter((e) => e.involvedObject.kind === "StatefulSet" && e.involvedObject.name === name)

const revisions = async (server: Testing.TestServer, name: string) =>
  ((await server.request("GET", "/apis/apps/v1/namespaces/default/controllerrevisions")).json.items as Array<any>)
    .filter((r) => r.metadata.ownerReferences?.[0]?.name === name)
    .sort((a, b) => a.revision - b.revision)

describe("StatefulSetSimulation", () => {
  it("makes a StatefulSet's Pods one at a time in order, each with its claims and identity", async () => {
    const created = await simulated.request("POST", sets(), { body: statefulSet("db", 3) })
    // 1.32 does not validate the pod spec of a StatefulSet: its mount names a claim template.
    expect(created.status).toBe(201)
    // Ordered: a pod is made only once every pod before it runs.
    const inOrder = (pods: Array<any>) => {
      const byIndex = new Map(pods.map((p) => [Number(p.metadata.labels["apps.kubernetes.io/pod-index"]), p]))
      for (const at of byIndex.keys()) if (at > 0) expect(ready(byIndex.get(at - 1))).toBe(true)
    }
    const { set, pods } = await until(simulated, "db", (s) => s.status?.readyReplicas === 3, inOrder)
    const [revision] = await revisions(simulated, "db")
    expect(revision).toMatchObject({ revision: 1, metadata: { labels: { app: "db" }, ownerReferences: [{ kind: "StatefulSet", name: "db", controller: true }] } })
    expect(revision.data.spec.template).toMatchObject({ $patch: "replace", spec: { containers: [{ image: "postgres:17" }] } })
    expect(set.status).toEqual({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      currentRevision: revision.metadata.name,
      updateRevision: revision.metadata.name,
      collisionCount: 0
    })
    expect(pods.map((p) => p.metadata.name)).toEqual(["db-0", "db-1", "db-2"])
    pods.forEach((pod, at) => {
      expect(pod.metadata.labels).toEqual({
        app: "db",
        "controller-revision-hash": revision.metadata.name,
        "statefulset.kubernetes.io/pod-name": `db-${at}`,
        "apps.kubernetes.io/pod-index": String(at)
      })
      expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ apiVersion: "apps/v1", kind: "StatefulSet", name: "db", controller: true, blockOwnerDeletion: true })])
      expect(pod.spec).toMatchObject({ hostname: `db-${at}`, subdomain: "db" })
      expect(pod.spec.volumes).toContainEqual({ name: "data", persistentVolumeClaim: { claimName: `data-db-${at}` } })
    })
    const claims = (await simulated.request("GET", "/api/v1/namespaces/default/persistentvolumeclaims")).json.items.filter((c: any) => c.metadata.name.startsWith("data-db-"))
    expect(claims.map((c: any) => c.metadata.name).sort()).toEqual(["data-db-0", "data-db-1", "data-db-2"])
    for (const claim of claims) {
      expect(claim.metadata.labels).toEqual({ app: "db" })
      // Retained by default: owned by nothing.
      expect(claim.metadata.ownerReferences).toBeUndefined()
    }
    const recorded = (await events(simulated, "db")).map((e) => [e.type, e.reason, e.message, e.source.component])
    expect(recorded).toContainEqual(["Normal", "SuccessfulCreate", "create Claim data-db-0 Pod db-0 in StatefulSet db success", "statefulset-controller"])
    expect(recorded).toContainEqual(["Normal", "SuccessfulCreate", "create Pod db-2 in StatefulSet db successful", "statefulset-controller"])
  })

  it("makes every pod at once with Parallel, and only the first with OrderedReady, while none runs", async () => {
    await stalled.request("POST", sets(), { body: statefulSet("ordered", 3) })
    await stalled.request("POST", sets(), { body: statefulSet("parallel", 3, { podManagementPolicy: "Parallel" }) })
    const parallel = await until(stalled, "parallel", (_, pods) => pods.length === 3)
    expect(parallel.set.status).toMatchObject({ replicas: 3, updatedReplicas: 3 })
    expect(parallel.set.status).not.toHaveProperty("readyReplicas")
    const ordered = await until(stalled, "ordered", (s) => s.status?.replicas === 1)
    expect(ordered.pods.map((p) => p.metadata.name)).toEqual(["ordered-0"])
  })

  it("updates pods highest ordinal first, one at a time, keeps the old revision, and takes it back on rollback", async () => {
    await simulated.request("POST", sets(), { body: statefulSet("rolled", 3) })
    const first = await until(simulated, "rolled", (s) => s.status?.readyReplicas === 3)
    const old = first.set.status.currentRevision
    const image = (name: string) => ({ spec: { template: { spec: { containers: [{ name: "db", image: name, volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql" }] }] } } } })
    expect((await simulated.request("PATCH", `${sets()}/rolled`, { body: image("postgres:18"), headers: merge })).status).toBe(200)
    // Updated pods are always the highest ordinals: db-2 first, db-0 last.
    const suffixUpdated = (pods: Array<any>) => {
      const updated = pods.map((p) => revisionOf(p) !== old)
      expect(updated.indexOf(true) === -1 || updated.slice(updated.indexOf(true)).every(Boolean)).toBe(true)
    }
    const rolled = await until(simulated, "rolled", (s) => s.status?.observedGeneration === 2 && s.status.currentRevision !== old && s.status.readyReplicas === 3, suffixUpdated)
    const next = rolled.set.status.updateRevision
    expect(rolled.set.status).toMatchObject({ currentRevision: next, currentReplicas: 3, updatedReplicas: 3 })
    expect(rolled.pods.map(revisionOf)).toEqual([next, next, next])
    expect(rolled.pods.map((p) => p.spec.containers[0].image)).toEqual(["postgres:18", "postgres:18", "postgres:18"])
    expect((await revisions(simulated, "rolled")).map((r) => [r.metadata.name, r.revision])).toEqual([[old, 1], [next, 2]])
    const deletions = (await events(simulated, "rolled")).filter((e) => e.reason === "SuccessfulDelete").map((e) => e.message)
    expect(deletions).toEqual(["delete Pod rolled-2 in StatefulSet rolled successful", "delete Pod rolled-1 in StatefulSet rolled successful", "delete Pod rolled-0 in StatefulSet rolled successful"])

    // Back to the first template: its revision comes back as the newest, under its own name.
    await simulated.request("PATCH", `${sets()}/rolled`, { body: image("postgres:17"), headers: merge })
    const back = await until(simulated, "rolled", (s) => s.status?.observedGeneration === 3 && s.status.currentRevision === old && s.status.readyReplicas === 3)
    expect(back.pods.map(revisionOf)).toEqual([old, old, old])
    expect((await revisions(simulated, "rolled")).map((r) => [r.metadata.name, r.revision])).toEqual([[next, 2], [old, 3]])
  })

  it("updates only the pods at or above the partition, and none with OnDelete until one is deleted", async () => {
    await simulated.request("POST", sets(), { body: statefulSet("parted", 3, { updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } } }) })
    const first = await until(simulated, "parted", (s) => s.status?.readyReplicas === 3)
    const old = first.set.status.currentRevision
    const image = { spec: { template: { spec: { containers: [{ name: "db", image: "postgres:18" }] } } } }
    await simulated.request("PATCH", `${sets()}/parted`, { body: image, headers: merge })
    const parted = await until(simulated, "parted", (s) => s.status?.updatedReplicas === 1 && s.status.readyReplicas === 3)
    expect(parted.pods.map(revisionOf)).toEqual([old, old, parted.set.status.updateRevision])
    expect(parted.set.status).toMatchObject({ currentRevision: old, currentReplicas: 2 })

    await simulated.request("POST", sets(), { body: statefulSet("manual", 2, { updateStrategy: { type: "OnDelete" } }) })
    const before = await until(simulated, "manual", (s) => s.status?.readyReplicas === 2)
    await simulated.request("PATCH", `${sets()}/manual`, { body: image, headers: merge })
    const observed = await until(simulated, "manual", (s) => s.status?.observedGeneration === 2)
    expect(observed.pods.map(revisionOf)).toEqual([before.set.status.currentRevision, before.set.status.currentRevision])
    expect((await simulated.request("DELETE", "/api/v1/namespaces/default/pods/manual-1")).status).toBe(200)
    const replaced = await until(simulated, "manual", (s, pods) => s.status?.updatedReplicas === 1 && pods.length === 2 && pods.every(ready))
    expect(replaced.pods.map((p) => p.spec.containers[0].image)).toEqual(["postgres:17", "postgres:18"])
  })

  it("scales down highest ordinal first; claims go with their pod or their set as the retention policy says", async () => {
    const policy = { persistentVolumeClaimRetentionPolicy: { whenScaled: "Delete", whenDeleted: "Delete" } }
    await simulated.request("POST", sets(), { body: statefulSet("shrunk", 3, policy) })
    await until(simulated, "shrunk", (s) => s.status?.readyReplicas === 3)
    const claim = (name: string) => simulated.request("GET", `/api/v1/namespaces/default/persistentvolumeclaims/${name}`)
    expect((await claim("data-shrunk-0")).json.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: "StatefulSet", name: "shrunk", controller: true })])
    await simulated.request("PATCH", `${sets()}/shrunk`, { body: { spec: { replicas: 1 } }, headers: merge })
    const shrunk = await until(simulated, "shrunk", (s, pods) => s.status?.replicas === 1 && pods.length === 1)
    expect(shrunk.pods.map((p) => p.metadata.name)).toEqual(["shrunk-0"])
    const deletions = (await events(simulated, "shrunk")).filter((e) => e.reason === "SuccessfulDelete").map((e) => e.message)
    expect(deletions).toEqual(["delete Pod shrunk-2 in StatefulSet shrunk successful", "delete Pod shrunk-1 in StatefulSet shrunk successful"])
    const gone = async (name: string) => {
      for (let i = 0; i < 200 && (await claim(name)).status !== 404; i++) await new Promise((r) => setTimeout(r, 25))
      return (await claim(name)).status
    }
    expect(await gone("data-shrunk-2")).toBe(404)
    expect(await gone("data-shrunk-1")).toBe(404)
    expect((await claim("data-shrunk-0")).status).toBe(200)
    // Deleting the set collects its pods, its revisions and (whenDeleted: Delete) its claims.
    await simulated.request("DELETE", `${sets()}/shrunk`)
    expect(await gone("data-shrunk-0")).toBe(404)
  })

  it("waits for a pod held by a finalizer to go before making its ordinal again", async () => {
    await simulated.request("POST", sets(), { body: statefulSet("held", 1) })
    const first = (await until(simulated, "held", (s) => s.status?.readyReplicas === 1)).pods[0]
    const pod = "/api/v1/namespaces/default/pods/held-0"
    await simulated.request("PATCH", pod, { body: { metadata: { finalizers: ["example.com/hold"] } }, headers: merge })
    expect((await simulated.request("DELETE", pod)).status).toBe(200)
    await new Promise((r) => setTimeout(r, 400))
    const terminating = (await simulated.request("GET", pod)).json
    expect(terminating.metadata.uid).toBe(first.metadata.uid)
    expect(terminating.metadata.deletionTimestamp).toBeDefined()
    expect((await events(simulated, "held")).filter((e) => e.type === "Warning")).toEqual([])
    await simulated.request("PATCH", pod, { body: { metadata: { finalizers: null } }, headers: merge })
    const again = await until(simulated, "held", (s, pods) => pods.length === 1 && pods[0].metadata.uid !== first.metadata.uid && s.status?.readyReplicas === 1)
    expect(again.pods[0].metadata.name).toBe("held-0")
  })

  it("records a refused pod as a FailedCreate event and makes it once the namespace lets it in", async () => {
    const labels = (level: string | null) => ({ body: { metadata: { labels: { "pod-security.kubernetes.io/enforce": level } } }, headers: merge })
    await simulated.request("POST", "/api/v1/namespaces", { body: { metadata: { name: "guarded" } } })
    await simulated.request("PATCH", "/api/v1/namespaces/guarded", labels("baseline"))
    const root = statefulSet("root", 2)
    root.spec.template.spec.containers[0] = { ...root.spec.template.spec.containers[0]!, securityContext: { privileged: true } } as any
    expect((await simulated.request("POST", sets("guarded"), { body: root })).status).toBe(201)
    let failed: Array<any> = []
    for (let i = 0; i < 200 && failed.length === 0; i++) {
      failed = (await events(simulated, "root", "guarded")).filter((e) => e.reason === "FailedCreate")
      if (failed.length === 0) await new Promise((r) => setTimeout(r, 25))
    }
    expect(failed[0]).toMatchObject({ type: "Warning", source: { component: "statefulset-controller" } })
    expect(failed[0].message).toMatch(
      /^create Pod root-0 in StatefulSet root failed error: pods "root-0" is forbidden: violates PodSecurity "baseline:latest": privileged \(container "db" must not set securityContext.privileged=true\)$/
    )
    expect((await podsOf(simulated, "root", "guarded"))).toEqual([])
    await simulated.request("PATCH", "/api/v1/namespaces/guarded", labels(null))
    const admitted = await until(simulated, "root", (s) => s.status?.readyReplicas === 2, () => {}, "guarded")
    expect(admitted.pods.map((p) => p.metadata.name)).toEqual(["root-0", "root-1"])
  })
})
