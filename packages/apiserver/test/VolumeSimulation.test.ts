/**
 * Storage as kind has it: a default StorageClass `standard` (WaitForFirstConsumer, local-path), the
 * DefaultStorageClass admission plugin filling a claim's class, volumes provisioned and bound for a
 * claim's first pod (or at once for an Immediate class), pods kept Unschedulable by missing or
 * unbound claims, another provisioner's claims left waiting, volumes made by hand bound to the
 * claims they fit, claims grown where their class allows it, a ReadWriteOncePod claim held by one
 * pod at a time, volumes reclaimed with their claim, and
 * claims and volumes protected while in use. Without the simulator, claims stay Pending as on a
 * cluster with no provisioner.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { createNamespace, poll } from "./fixtures.ts"

let simulated: Testing.TestServer
let plain: Testing.TestServer
beforeAll(async () => {
  simulated = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "200 millis" })] })
  plain = await Testing.start()
})
afterAll(async () => {
  await simulated?.close()
  await plain?.close()
})

const claim = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name },
  spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "2Gi" } }, ...spec }
})

const podWith = (name: string, claimName: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: {
    containers: [{ name: "db", image: "postgres:16", volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql/data" }] }],
    volumes: [{ name: "data", persistentVolumeClaim: { claimName } }]
  }
})

const classes = "/apis/storage.k8s.io/v1/storageclasses"

describe("VolumeSimulation", () => {
  it("has kind's default StorageClass, and a claim without a class gets it from admission", async () => {
    const stored = await poll(simulated, `${classes}/standard`, () => true)
    const standard = { apiVersion: stored.apiVersion, kind: stored.kind, metadata: { name: "standard", annotations: stored.metadata.annotations }, provisioner: stored.provisioner, reclaimPolicy: stored.reclaimPolicy, volumeBindingMode: stored.volumeBindingMode }
    expect(stored).toMatchObject({
      provisioner: "rancher.io/local-path",
      reclaimPolicy: "Delete",
      volumeBindingMode: "WaitForFirstConsumer",
      metadata: { annotations: { "storageclass.kubernetes.io/is-default-class": "true" } }
    })
    await createNamespace(simulated, "storage-admission")
    const claims = "/api/v1/namespaces/storage-admission/persistentvolumeclaims"
    expect((await simulated.request("POST", claims, { body: claim("defaulted") })).json.spec.storageClassName).toBe("standard")
    // An empty class asks for none, and keeps it.
    expect((await simulated.request("POST", claims, { body: claim("classless", { storageClassName: "" }) })).json.spec.storageClassName).toBe("")
    // (Gone again: it would take the first volume of no class another test makes.)
    expect((await simulated.request("DELETE", `${claims}/classless`)).status).toBe(200)
    // With several defaults, the newest wins.
    await simulated.request("POST", classes, {
      body: { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "zz-newer", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } }, provisioner: "example.com/other" }
    })
    await new Promise((resolve) => setTimeout(resolve, 1100))
    await simulated.request("POST", classes, {
      body: { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "aa-newest", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } }, provisioner: "example.com/other" }
    })
    expect((await simulated.request("POST", claims, { body: claim("newest") })).json.spec.storageClassName).toBe("aa-newest")
    for (const name of ["zz-newer", "aa-newest"]) expect((await simulated.request("DELETE", `${classes}/${name}`)).status).toBe(200)
    // Made while there is no default, a claim gets the default once there is one (kube's retroactive
    // assignment); a class once set stays.
    expect((await simulated.request("DELETE", `${classes}/standard`)).status).toBe(200)
    expect((await simulated.request("POST", claims, { body: claim("before-default") })).json.spec.storageClassName).toBeUndefined()
    expect((await simulated.request("POST", classes, { body: standard })).status).toBe(201)
    await poll(simulated, `${claims}/before-default`, (c) => c.spec.storageClassName === "standard")
    const changed = await simulated.request("PATCH", `${claims}/before-default`, {
      body: { spec: { storageClassName: "other" } },
      headers: { "content-type": "application/merge-patch+json" }
    })
    expect(changed.status).toBe(422)
    // Without the simulator there is no default class, and the claim keeps no class.
    await createNamespace(plain, "storage-admission")
    const unset = await plain.request("POST", claims, { body: claim("unset") })
    expect(unset.status).toBe(201)
    expect(unset.json.spec.storageClassName).toBeUndefined()
    expect(unset.json.status.phase).toBe("Pending")
  })

  it("provisions a WaitForFirstConsumer claim for its first pod's node, binds both, runs the pod, and deletes the volume with its claim", async () => {
    await createNamespace(simulated, "storage-wffc")
    const claims = "/api/v1/namespaces/storage-wffc/persistentvolumeclaims"
    const pods = "/api/v1/namespaces/storage-wffc/pods"
    expect((await simulated.request("POST", claims, { body: claim("data") })).status).toBe(201)
    // No consumer yet: it waits, and says so.
    await poll(simulated, "/api/v1/namespaces/storage-wffc/events", (list) =>
      list.items.some((e: any) => e.involvedObject.name === "data" && e.reason === "WaitForFirstConsumer"))
    expect((await simulated.request("GET", `${claims}/data`)).json.status.phase).toBe("Pending")

    expect((await simulated.request("POST", pods, { body: podWith("db", "data") })).status).toBe(201)
    const bound = await poll(simulated, `${claims}/data`, (c) => c.status?.phase === "Bound")
    const volumeName = `pvc-${bound.metadata.uid}`
    expect(bound.spec.volumeName).toBe(volumeName)
    expect(bound.status).toMatchObject({ accessModes: ["ReadWriteOnce"], capacity: { storage: "2Gi" } })
    expect(bound.metadata.annotations).toMatchObject({
      "volume.kubernetes.io/selected-node": "kubefx-node",
      "pv.kubernetes.io/bind-completed": "yes",
      "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path"
    })
    const volume = (await simulated.request("GET", `/api/v1/persistentvolumes/${volumeName}`)).json
    expect(volume).toMatchObject({
      spec: {
        capacity: { storage: "2Gi" },
        claimRef: { kind: "PersistentVolumeClaim", namespace: "storage-wffc", name: "data", uid: bound.metadata.uid },
        persistentVolumeReclaimPolicy: "Delete",
        storageClassName: "standard",
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["kubefx-node"] }] }] } }
      },
      status: { phase: "Bound" }
    })
    const running = await poll(simulated, `${pods}/db`, (p) => p.status?.phase === "Running")
    expect(running.spec.nodeName).toBe("kubefx-node")
    const events = (await simulated.request("GET", "/api/v1/namespaces/storage-wffc/events")).json.items
    expect(events.some((e: any) => e.involvedObject.name === "data" && e.reason === "ProvisioningSucceeded" && e.message === `Successfully provisioned volume ${volumeName}`)).toBe(true)

    // kubectl's columns read the binding.
    const table = (await simulated.request("GET", claims, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } })).json
    expect(table.rows[0].cells.slice(0, 3)).toEqual(["data", "Bound", volumeName])

    expect((await simulated.request("DELETE", `${pods}/db?gracePeriodSeconds=0`)).status).toBe(200)
    expect((await simulated.request("DELETE", `${claims}/data`)).status).toBe(200)
    await poll(simulated, "/api/v1/persistentvolumes", (list) => !list.items.some((pv: any) => pv.metadata.name === volumeName))
  })

  it("keeps a pod Unschedulable while its claim is missing or unbound Immediate, binds an Immediate claim at once, and leaves another provisioner's claim waiting", async () => {
    await createNamespace(simulated, "storage-immediate")
    const claims = "/api/v1/namespaces/storage-immediate/persistentvolumeclaims"
    const pods = "/api/v1/namespaces/storage-immediate/pods"
    const scheduled = (pod: any) => pod.status?.conditions?.find((c: any) => c.type === "PodScheduled")

    // The pod first, its claim later: unschedulable until the claim is there and bound.
    expect((await simulated.request("POST", pods, { body: podWith("early", "later") })).status).toBe(201)
    const waiting = await poll(simulated, `${pods}/early`, (p) => scheduled(p)?.status === "False")
    expect(scheduled(waiting)).toMatchObject({
      reason: "Unschedulable",
      message: '0/1 nodes are available: persistentvolumeclaim "later" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'
    })

    // A class of another provisioner, bound at once: nothing here provisions it.
    await simulated.request("POST", classes, {
      body: { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "ebs" }, provisioner: "ebs.csi.aws.com", volumeBindingMode: "Immediate" }
    })
    expect((await simulated.request("POST", claims, { body: claim("later", { storageClassName: "ebs" }) })).status).toBe(201)
    const unbound = await poll(simulated, `${pods}/early`, (p) => scheduled(p)?.message?.includes("unbound immediate") === true)
    expect(scheduled(unbound).message).toBe(
      "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    await poll(simulated, "/api/v1/namespaces/storage-immediate/events", (list) =>
      list.items.some((e: any) => e.involvedObject.name === "later" && e.reason === "ExternalProvisioning" && e.message.includes("'ebs.csi.aws.com'")))
    expect((await simulated.request("GET", `${claims}/later`)).json.status.phase).toBe("Pending")

    // An Immediate class of the simulated provisioner is bound with no pod at all, its volume kept.
    await simulated.request("POST", classes, {
      body: { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "local-now" }, provisioner: "rancher.io/local-path", volumeBindingMode: "Immediate", reclaimPolicy: "Retain" }
    })
    expect((await simulated.request("POST", claims, { body: claim("now", { storageClassName: "local-now" }) })).status).toBe(201)
    const now = await poll(simulated, `${claims}/now`, (c) => c.status?.phase === "Bound")
    const volume = (await simulated.request("GET", `/api/v1/persistentvolumes/${now.spec.volumeName}`)).json
    expect(volume.spec.nodeAffinity).toBeUndefined()
    expect(volume.spec.persistentVolumeReclaimPolicy).toBe("Retain")
    expect((await simulated.request("DELETE", `${claims}/now`)).status).toBe(200)
    await poll(simulated, `/api/v1/persistentvolumes/${now.spec.volumeName}`, (pv) => pv.status?.phase === "Released")

    // A pod on a claim bound at once is scheduled without waiting for anything.
    expect((await simulated.request("POST", claims, { body: claim("ready", { storageClassName: "local-now" }) })).status).toBe(201)
    await poll(simulated, `${claims}/ready`, (c) => c.status?.phase === "Bound")
    expect((await simulated.request("POST", pods, { body: podWith("late", "ready") })).status).toBe(201)
    await poll(simulated, `${pods}/late`, (p) => p.status?.phase === "Running")
    for (const name of ["ebs", "local-now"]) await simulated.request("DELETE", `${classes}/${name}`)
  })

  it("protects a claim in use: deleted under a scheduled pod it stays Terminating until the pod is gone; volumes likewise while bound", async () => {
    await createNamespace(simulated, "storage-protection")
    const claims = "/api/v1/namespaces/storage-protection/persistentvolumeclaims"
    const pods = "/api/v1/namespaces/storage-protection/pods"
    const made = await simulated.request("POST", claims, { body: claim("held") })
    expect(made.json.metadata.finalizers).toEqual(["kubernetes.io/pvc-protection"])
    expect((await simulated.request("POST", pods, { body: podWith("holder", "held") })).status).toBe(201)
    const bound = await poll(simulated, `${claims}/held`, (c) => c.status?.phase === "Bound")
    await poll(simulated, `${pods}/holder`, (p) => p.status?.phase === "Running")
    const volume = `/api/v1/persistentvolumes/${bound.spec.volumeName}`
    expect((await simulated.request("GET", volume)).json.metadata.finalizers).toEqual(["kubernetes.io/pv-protection"])

    expect((await simulated.request("DELETE", `${claims}/held`)).status).toBe(200)
    // Still there, and still protected, a while later: its pod runs.
    await new Promise((resolve) => setTimeout(resolve, 500))
    await simulated.request("GET", "/readyz")
    const terminating = (await simulated.request("GET", `${claims}/held`)).json
    expect(terminating.metadata.deletionTimestamp).toBeDefined()
    expect(terminating.metadata.finalizers).toEqual(["kubernetes.io/pvc-protection"])
    // A bound volume deleted by hand waits for its claim too.
    expect((await simulated.request("DELETE", volume)).status).toBe(200)
    expect((await simulated.request("GET", volume)).json.metadata.deletionTimestamp).toBeDefined()

    // The pod gone: the claim goes, its volume is unbound and goes as well.
    expect((await simulated.request("DELETE", `${pods}/holder?gracePeriodSeconds=0`)).status).toBe(200)
    await poll(simulated, claims, (list) => !list.items.some((c: any) => c.metadata.name === "held"))
    await poll(simulated, "/api/v1/persistentvolumes", (list) => !list.items.some((pv: any) => pv.metadata.name === bound.spec.volumeName))

    // Without the simulator nothing is scheduled, so a claim's deletion goes through at once.
    await createNamespace(plain, "storage-protection")
    expect((await plain.request("POST", claims, { body: claim("idle") })).json.metadata.finalizers).toEqual(["kubernetes.io/pvc-protection"])
    expect((await plain.request("POST", pods, { body: podWith("unscheduled", "idle") })).status).toBe(201)
    expect((await plain.request("DELETE", `${claims}/idle`)).status).toBe(200)
    await poll(plain, claims, (list) => !list.items.some((c: any) => c.metadata.name === "idle"))
  })

  it("makes a generic ephemeral volume's claim for its pod, bound with it and gone with it; one made by someone else keeps the pod out", async () => {
    await createNamespace(simulated, "storage-ephemeral")
    const claims = "/api/v1/namespaces/storage-ephemeral/persistentvolumeclaims"
    const pods = "/api/v1/namespaces/storage-ephemeral/pods"
    const scratchPod = (name: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: {
        containers: [{ name: "work", image: "busybox", volumeMounts: [{ name: "scratch", mountPath: "/scratch" }] }],
        volumes: [{
          name: "scratch",
          ephemeral: {
            volumeClaimTemplate: {
              metadata: { labels: { kind: "scratch" } },
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } }
            }
          }
        }]
      }
    })
    const pod = (await simulated.request("POST", pods, { body: scratchPod("worker") })).json
    await poll(simulated, `${pods}/worker`, (p) => p.status?.phase === "Running")
    const made = (await simulated.request("GET", `${claims}/worker-scratch`)).json
    expect(made.metadata.labels).toEqual({ kind: "scratch" })
    expect(made.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Pod", name: "worker", uid: pod.metadata.uid, controller: true, blockOwnerDeletion: true }])
    expect(made.spec.storageClassName).toBe("standard")
    expect(made.status.phase).toBe("Bound")
    expect((await simulated.request("DELETE", `${pods}/worker?gracePeriodSeconds=0`)).status).toBe(200)
    await poll(simulated, claims, (list) => !list.items.some((c: any) => c.metadata.name === "worker-scratch"))
    await poll(simulated, "/api/v1/persistentvolumes", (list) => !list.items.some((pv: any) => pv.metadata.name === made.spec.volumeName))

    expect((await simulated.request("POST", claims, { body: claim("squatter-scratch") })).status).toBe(201)
    expect((await simulated.request("POST", pods, { body: scratchPod("squatter") })).status).toBe(201)
    const refused = await poll(simulated, `${pods}/squatter`, (p) => p.status?.conditions?.some((c: any) => c.type === "PodScheduled" && c.status === "False") === true)
    expect(refused.status.conditions.find((c: any) => c.type === "PodScheduled").message).toContain(
      "PVC storage-ephemeral/squatter-scratch was not created for pod storage-ephemeral/squatter (pod is not owner)"
    )
  })

  it("binds claims to volumes made by hand: the smallest that fits, one a claim names, one made out for a claim; released, not deleted, after", async () => {
    await createNamespace(simulated, "storage-static")
    const claims = "/api/v1/namespaces/storage-static/persistentvolumeclaims"
    const volumes = "/api/v1/persistentvolumes"
    const volume = (name: string, storage: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name, labels },
      spec: { capacity: { storage }, accessModes: ["ReadWriteOnce"], hostPath: { path: `/data/${name}` }, storageClassName: "manual", ...extra }
    })
    for (const [name, size, labels] of [["static-big", "20Gi", { tier: "fast" }], ["static-small", "10Gi", { tier: "fast" }], ["static-slow", "10Gi", { tier: "slow" }]] as const) {
      expect((await simulated.request("POST", volumes, { body: volume(name, size, {}, labels) })).status).toBe(201)
      await poll(simulated, `${volumes}/${name}`, (pv) => pv.status?.phase === "Available")
    }
    // A class no StorageClass has, as tutorials write it: the smallest volume of that class that fits the request and the selector.
    expect((await simulated.request("POST", claims, { body: claim("fast", { storageClassName: "manual", selector: { matchLabels: { tier: "fast" } } }) })).status).toBe(201)
    const fast = await poll(simulated, `${claims}/fast`, (c) => c.status?.phase === "Bound")
    expect(fast.spec.volumeName).toBe("static-small")
    expect(fast.status.capacity).toEqual({ storage: "10Gi" })
    expect(fast.metadata.annotations).toMatchObject({ "pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes" })
    const small = (await simulated.request("GET", `${volumes}/static-small`)).json
    expect(small.status.phase).toBe("Bound")
    expect(small.spec.claimRef).toMatchObject({ namespace: "storage-static", name: "fast", uid: fast.metadata.uid })

    // Nothing fits: it waits, and binds once a volume that fits is made.
    expect((await simulated.request("POST", claims, { body: claim("huge", { storageClassName: "", resources: { requests: { storage: "100Gi" } } }) })).status).toBe(201)
    await poll(simulated, "/api/v1/namespaces/storage-static/events", (list) =>
      list.items.some((e: any) => e.involvedObject.name === "huge" && e.reason === "FailedBinding" &&
        e.message === "no persistent volumes available for this claim and no storage class is set"))
    expect((await simulated.request("POST", volumes, { body: volume("static-huge", "200Gi", { storageClassName: "" }) })).status).toBe(201)
    expect((await poll(simulated, `${claims}/huge`, (c) => c.status?.phase === "Bound")).spec.volumeName).toBe("static-huge")

    // Restored as backup tools restore: a volume made out for a claim that names it.
    expect((await simulated.request("POST", volumes, {
      body: volume("restored-data", "5Gi", { claimRef: { namespace: "storage-static", name: "restored" } })
    })).status).toBe(201)
    expect((await simulated.request("POST", claims, { body: claim("restored", { storageClassName: "manual", volumeName: "restored-data" }) })).status).toBe(201)
    const restored = await poll(simulated, `${claims}/restored`, (c) => c.status?.phase === "Bound")
    expect(restored.metadata.annotations["pv.kubernetes.io/bind-completed"]).toBe("yes")
    expect(restored.metadata.annotations["pv.kubernetes.io/bound-by-controller"]).toBeUndefined()

    // A claim naming a volume another claim holds waits, and says why.
    expect((await simulated.request("POST", claims, { body: claim("late", { storageClassName: "manual", volumeName: "static-small" }) })).status).toBe(201)
    await poll(simulated, "/api/v1/namespaces/storage-static/events", (list) =>
      list.items.some((e: any) => e.involvedObject.name === "late" && e.message === 'volume "static-small" already bound to a different claim.'))
    expect((await simulated.request("GET", `${claims}/late`)).json.status.phase).toBe("Pending")

    // Made by hand, they are Retain: released with their claim, kept.
    expect((await simulated.request("DELETE", `${claims}/fast`)).status).toBe(200)
    await poll(simulated, `${volumes}/static-small`, (pv) => pv.status?.phase === "Released")
  })

  it("grows a bound claim of a class that allows expansion, and refuses one of kind's class", async () => {
    await createNamespace(simulated, "storage-resize")
    const claims = "/api/v1/namespaces/storage-resize/persistentvolumeclaims"
    const grow = (name: string, storage: string) =>
      simulated.request("PATCH", `${claims}/${name}`, {
        body: { spec: { resources: { requests: { storage } } } },
        headers: { "content-type": "application/merge-patch+json" }
      })
    await simulated.request("POST", classes, {
      body: { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name: "expandable" }, provisioner: "rancher.io/local-path", volumeBindingMode: "Immediate", allowVolumeExpansion: true }
    })
    expect((await simulated.request("POST", claims, { body: claim("grows", { storageClassName: "expandable" }) })).status).toBe(201)
    const bound = await poll(simulated, `${claims}/grows`, (c) => c.status?.phase === "Bound")
    expect((await grow("grows", "8Gi")).status).toBe(200)
    const grown = await poll(simulated, `${claims}/grows`, (c) => c.status?.capacity?.storage === "8Gi")
    expect(grown.spec.resources.requests.storage).toBe("8Gi")
    expect((await simulated.request("GET", `/api/v1/persistentvolumes/${bound.spec.volumeName}`)).json.spec.capacity.storage).toBe("8Gi")
    const events = (await simulated.request("GET", "/api/v1/namespaces/storage-resize/events")).json.items.filter((e: any) => e.involvedObject.name === "grows")
    expect(events.map((e: any) => e.reason)).toEqual(expect.arrayContaining(["Resizing", "VolumeResizeSuccessful"]))
    // Smaller is refused by validation, as ever.
    expect((await grow("grows", "4Gi")).status).toBe(422)

    // kind's class does not allow it.
    expect((await simulated.request("POST", claims, { body: claim("fixed") })).status).toBe(201)
    await simulated.request("POST", "/api/v1/namespaces/storage-resize/pods", { body: podWith("user", "fixed") })
    await poll(simulated, `${claims}/fixed`, (c) => c.status?.phase === "Bound")
    const refused = await grow("fixed", "4Gi")
    expect(refused.status).toBe(403)
    expect(refused.json.message).toBe(
      'persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize'
    )
    // Nor may a claim not bound grow: its spec is immutable (validation answers before admission).
    expect((await simulated.request("POST", claims, { body: claim("waiting", { storageClassName: "expandable-later" }) })).status).toBe(201)
    const early = await grow("waiting", "4Gi")
    expect(early.status).toBe(422)
    expect(early.json.message).toContain("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims")
    await simulated.request("DELETE", `${classes}/expandable`)
  })

  it("keeps a second pod off a ReadWriteOncePod claim while the first runs, and schedules it once that one is gone", async () => {
    await createNamespace(simulated, "storage-rwop")
    const claims = "/api/v1/namespaces/storage-rwop/persistentvolumeclaims"
    const pods = "/api/v1/namespaces/storage-rwop/pods"
    expect((await simulated.request("POST", claims, { body: claim("single", { accessModes: ["ReadWriteOncePod"] }) })).status).toBe(201)
    expect((await simulated.request("POST", pods, { body: podWith("first", "single") })).status).toBe(201)
    await poll(simulated, `${pods}/first`, (p) => p.status?.phase === "Running")
    expect((await simulated.request("POST", pods, { body: podWith("second", "single") })).status).toBe(201)
    const waiting = await poll(simulated, `${pods}/second`, (p) => p.status?.conditions?.some((c: any) => c.type === "PodScheduled" && c.status === "False") === true)
    expect(waiting.status.conditions.find((c: any) => c.type === "PodScheduled").message).toBe(
      "0/1 nodes are available: 1 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    expect((await simulated.request("DELETE", `${pods}/first?gracePeriodSeconds=0`)).status).toBe(200)
    await poll(simulated, `${pods}/second`, (p) => p.status?.phase === "Running")
  })

  it("runs a StatefulSet whose volumeClaimTemplates make claims of the default class", async () => {
    await createNamespace(simulated, "storage-sts")
    const body = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "db" },
      spec: {
        replicas: 2,
        serviceName: "db",
        selector: { matchLabels: { app: "db" } },
        template: {
          metadata: { labels: { app: "db" } },
          spec: { containers: [{ name: "db", image: "postgres:16", volumeMounts: [{ name: "data", mountPath: "/data" }] }] }
        },
        volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } }]
      }
    }
    expect((await simulated.request("POST", "/apis/apps/v1/namespaces/storage-sts/statefulsets", { body })).status).toBe(201)
    await poll(simulated, "/apis/apps/v1/namespaces/storage-sts/statefulsets/db", (s) => s.status?.readyReplicas === 2)
    const claims = (await simulated.request("GET", "/api/v1/namespaces/storage-sts/persistentvolumeclaims")).json.items
    expect(claims.map((c: any) => [c.metadata.name, c.spec.storageClassName, c.status.phase]).sort()).toEqual([
      ["data-db-0", "standard", "Bound"],
      ["data-db-1", "standard", "Bound"]
    ])
  })
})
