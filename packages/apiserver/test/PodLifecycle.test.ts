/**
 * A Pod's binding and graceful deletion, as kube-apiserver 1.32 serves them, and the workload
 * simulator's scheduler and kubelet on top: a Pod on a node is `Terminating` for its grace period
 * until its kubelet deletes it, one on no node goes at once (watchers still see its deletion time
 * first); the scheduler binds what fits a node and says why not for the rest.
 */
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Builtins from "../src/Builtins.ts"
import * as Selectors from "../src/Selectors.ts"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { poll, watchEvents } from "./fixtures.ts"

let plain: Testing.TestServer
let simulated: Testing.TestServer
beforeAll(async () => {
  plain = await Testing.start()
  simulated = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "400 millis" })] })
})
afterAll(async () => {
  await plain?.close()
  await simulated?.close()
})

const pods = "/api/v1/namespaces/default/pods"
const pod = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels },
  spec: { containers: [{ name: "web", image: "nginx" }], ...spec }
})
const seconds = (later: string, earlier: string) => (Date.parse(later) - Date.parse(earlier)) / 1000

describe("graceful deletion", () => {
  it("deletes a Pod on no node at once, its deletion time seen first, and answers with the Pod", async () => {
    expect((await plain.request("POST", pods, { body: pod("unbound") })).status).toBe(201)
    const events = await watchEvents(plain, `${pods}?watch=true&fieldSelector=metadata.name%3Dunbound&resourceVersion=0`, 3, 5000, async () => {
      const deleted = await plain.request("DELETE", `${pods}/unbound`)
      expect([deleted.status, deleted.json.kind, deleted.json.metadata.deletionGracePeriodSeconds]).toEqual([200, "Pod", 0])
    })
    expect(events.map((e) => [e.type, e.object.metadata.deletionGracePeriodSeconds])).toEqual([["ADDED", undefined], ["MODIFIED", 0], ["DELETED", 0]])
    expect((await plain.request("GET", `${pods}/unbound`)).status).toBe(404)
  })

  it("marks a Pod on a node for its grace period, which a later delete may only shorten, and deletes it at once with none", async () => {
    expect((await plain.request("POST", pods, { body: pod("bound", { nodeName: "node-1", terminationGracePeriodSeconds: 45 }) })).status).toBe(201)
    const first = await plain.request("DELETE", `${pods}/bound`)
    expect(first.status).toBe(200)
    const marked = first.json
    expect(marked.metadata.deletionGracePeriodSeconds).toBe(45)
    expect(seconds(marked.metadata.deletionTimestamp, new Date().toISOString())).toBeGreaterThan(40)
    expect((await plain.request("GET", `${pods}/bound`)).json.metadata.deletionTimestamp).toBe(marked.metadata.deletionTimestamp)
    // kubectl get pods: Terminating.
    const table = await plain.request("GET", `${pods}/bound`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } })
    expect(table.json.rows[0].cells[2]).toBe("Terminating")
    // A longer grace period changes nothing; a shorter one moves the deletion time as much earlier.
    const longer = await plain.request("DELETE", `${pods}/bound`, { body: { gracePeriodSeconds: 60 } })
    expect(longer.json.metadata).toMatchObject({ deletionGracePeriodSeconds: 45, deletionTimestamp: marked.metadata.deletionTimestamp })
    const shorter = await plain.request("DELETE", `${pods}/bound?gracePeriodSeconds=10`)
    expect(shorter.json.metadata.deletionGracePeriodSeconds).toBe(10)
    expect(seconds(marked.metadata.deletionTimestamp, shorter.json.metadata.deletionTimestamp)).toBe(35)
    // --grace-period=0 --force: gone.
    const forced = await plain.request("DELETE", `${pods}/bound`, { body: { gracePeriodSeconds: 0 } })
    expect([forced.status, forced.json.kind]).toEqual([200, "Pod"])
    expect((await plain.request("GET", `${pods}/bound`)).status).toBe(404)
  })

  it("deletes an ended Pod at once, and refuses a grace period that is not a number", async () => {
    await plain.request("POST", pods, { body: pod("ended", { nodeName: "node-1" }) })
    const current = (await plain.request("GET", `${pods}/ended`)).json
    await plain.request("PUT", `${pods}/ended/status`, { body: { ...current, status: { ...current.status, phase: "Succeeded" } } })
    expect((await plain.request("DELETE", `${pods}/ended?gracePeriodSeconds=soon`)).status).toBe(400)
    expect((await plain.request("DELETE", `${pods}/ended`)).json.metadata.deletionGracePeriodSeconds).toBe(0)
    expect((await plain.request("GET", `${pods}/ended`)).status).toBe(404)
  })
})

describe("pods/log", () => {
  it("checks its options before looking for the Pod, as kube's PodLogOptions validation does", async () => {
    const answer = async (query: string) => {
      const reply = await plain.request("GET", `${pods}/absent/log?${query}`)
      return [reply.status, reply.json.message]
    }
    expect(await answer("tailLines=-5")).toEqual([
      422,
      'PodLogOptions "absent" is invalid: tailLines: Invalid value: -5: must be greater than or equal to 0'
    ])
    expect(await answer("limitBytes=0&sinceSeconds=0")).toEqual([
      422,
      'PodLogOptions "absent" is invalid: [limitBytes: Invalid value: 0: must be greater than 0, sinceSeconds: Invalid value: 0: must be greater than 0]'
    ])
    expect((await answer("sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z"))[0]).toBe(422)
    expect(await answer("tailLines=ten")).toEqual([400, 'strconv.ParseInt: parsing "ten": invalid syntax'])
    expect((await answer("tailLines=5&limitBytes=10&sinceSeconds=60"))[0]).toBe(404)
  })
  it("is empty for a Pod on no node, waits for a container not started, and dials a kubelet that is not there", async () => {
    await plain.request("POST", pods, { body: pod("quiet") })
    expect((await plain.request("GET", `${pods}/quiet/log`)).text).toBe("")
    await plain.request("POST", "/api/v1/nodes", { body: { metadata: { name: "node-up" }, status: { conditions: [{ type: "Ready", status: "True" }] } } })
    await plain.request("POST", pods, { body: pod("starting", { nodeName: "node-up" }) })
    const waiting = await plain.request("GET", `${pods}/starting/log`)
    expect([waiting.status, waiting.json.message]).toEqual([400, 'container "web" in pod "starting" is waiting to start: ContainerCreating'])
    await plain.request("POST", pods, { body: pod("unreachable", { nodeName: "node-gone" }) })
    const dialed = await plain.request("GET", `${pods}/unreachable/log`)
    expect([dialed.status, dialed.json.message]).toEqual([
      500,
      'Get "https://node-gone:10250/containerLogs/default/unreachable/web": dial tcp node-gone:10250: connect: connection refused'
    ])
  })
})

describe("pods/binding", () => {
  it("binds a Pod to a node once: its node name, PodScheduled and the binding's annotations", async () => {
    await plain.request("POST", pods, { body: pod("to-bind") })
    const binding = (name: string, node = "node-2") => ({ apiVersion: "v1", kind: "Binding", metadata: { name, annotations: { scheduler: "custom" } }, target: { kind: "Node", name: node } })
    const bound = await plain.request("POST", `${pods}/to-bind/binding`, { body: binding("to-bind") })
    expect([bound.status, bound.json]).toEqual([201, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 }])
    const stored = (await plain.request("GET", `${pods}/to-bind`)).json
    expect(stored.spec.nodeName).toBe("node-2")
    expect(stored.metadata.annotations).toEqual({ scheduler: "custom" })
    expect(stored.status.conditions).toContainEqual(expect.objectContaining({ type: "PodScheduled", status: "True" }))
    const again = await plain.request("POST", `${pods}/to-bind/binding`, { body: binding("to-bind", "node-3") })
    expect([again.status, again.json.message]).toEqual([409, 'Operation cannot be fulfilled on pods/binding "to-bind": pod to-bind is already assigned to node "node-2"'])
    expect((await plain.request("POST", `${pods}/to-bind/binding`, { body: binding("other") })).json.message).toBe("name in URL does not match name in Binding object")
    // The legacy bindings collection binds the Pod its Binding names; it lists nothing.
    await plain.request("POST", pods, { body: pod("legacy-bound") })
    const legacy = await plain.request("POST", "/api/v1/namespaces/default/bindings", { body: binding("legacy-bound", "node-9") })
    expect([legacy.status, legacy.json.status]).toEqual([201, "Success"])
    expect((await plain.request("GET", `${pods}/legacy-bound`)).json.spec.nodeName).toBe("node-9")
    expect((await plain.request("GET", "/api/v1/namespaces/default/bindings")).status).toBe(405)
    // spec.nodeName is not for updates.
    const update = await plain.request("PUT", `${pods}/to-bind`, { body: { ...stored, spec: { ...stored.spec, nodeName: "node-3" } } })
    expect(update.status).toBe(422)
  })
})

describe("the simulator's scheduler and kubelet", () => {
  const eventsOf = async (name: string) =>
    ((await simulated.request("GET", "/api/v1/namespaces/default/events")).json.items as Array<any>)
      .filter((e) => e.involvedObject.name === name)
      .map((e) => [e.source.component, e.reason, e.message])

  it("answers a log of a previous run only for a container that has run before", async () => {
    await simulated.request("POST", pods, { body: pod("first-run") })
    await poll(simulated, `${pods}/first-run`, (p) => p.status?.phase === "Running")
    expect((await simulated.request("GET", `${pods}/first-run/log`)).status).toBe(200)
    const previous = await simulated.request("GET", `${pods}/first-run/log?previous=true`)
    expect([previous.status, previous.json.message]).toEqual([400, 'previous terminated container "web" in pod "first-run" not found'])
  })

  it("selects by the fields kube derives: booleans and counts as Go writes them, an Event's source, a Pod's spec.host", async () => {
    await simulated.request("POST", pods, { body: pod("selected") })
    await poll(simulated, `${pods}/selected`, (p) => p.status?.phase === "Running")
    const names = async (path: string) => ((await simulated.request("GET", path)).json.items as Array<any>).map((o) => o.metadata.name)
    expect(await names(`${pods}?fieldSelector=spec.hostNetwork%3Dfalse`)).toContain("selected")
    expect(await names(`${pods}?fieldSelector=spec.host%3Dkubefx-node`)).toContain("selected")
    expect(await names("/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse")).toEqual(["kubefx-node"])
    const scheduled = (await simulated.request("GET", "/api/v1/namespaces/default/events?fieldSelector=source%3Ddefault-scheduler")).json.items as Array<any>
    expect(scheduled.some((e) => e.involvedObject.name === "selected" && e.reason === "Scheduled")).toBe(true)
    const job = { apiVersion: "batch/v1", kind: "Job", metadata: { name: "done" }, status: { succeeded: 1 } }
    const jobs = Builtins.make().find((r) => r.type.plural === "jobs")!
    const successful = (value: string) =>
      Selectors.matchesFields(Result.getOrThrow(Selectors.parseFieldSelector(`status.successful=${value}`, jobs.type.selectableFields)), job, jobs.fieldValues)
    expect([successful("1"), successful("0")]).toEqual([true, false])
  })

  it("binds a Pod to the node, runs it, and on deletion keeps it Terminating until its kubelet stops it", async () => {
    await simulated.request("POST", "/api/v1/namespaces/default/services", {
      body: { metadata: { name: "web" }, spec: { selector: { app: "web" }, ports: [{ port: 80 }] } }
    })
    await simulated.request("POST", pods, { body: pod("web-1", {}, { app: "web" }) })
    const running = await poll(simulated, `${pods}/web-1`, (p) => p.status?.phase === "Running")
    expect(running.spec.nodeName).toBe("kubefx-node")
    expect(await eventsOf("web-1")).toContainEqual(["default-scheduler", "Scheduled", "Successfully assigned default/web-1 to kubefx-node"])
    // Its kubelet pulls the image (nginx is :latest, pulled always), creates and starts the container.
    const started = (await eventsOf("web-1")).filter(([component]) => component === "kubelet").map(([, reason, message]) => [reason, message.replace(/\d+ bytes/, "N bytes")])
    expect(started).toHaveLength(4)
    expect(started).toEqual(expect.arrayContaining([
      ["Pulling", 'Pulling image "nginx"'],
      ["Pulled", 'Successfully pulled image "nginx" in 1.002s (1.002s including waiting). Image size: N bytes.'],
      ["Created", "Created container: web"],
      ["Started", "Started container web"]
    ]))
    // As a node's kubelet records them: its host, and the container each is about.
    const kubeletEvents = (await simulated.request("GET", "/api/v1/namespaces/default/events")).json.items
      .filter((e: any) => e.involvedObject.name === "web-1" && e.source.component === "kubelet")
    for (const event of kubeletEvents) {
      expect([event.source.host, event.reportingInstance, event.involvedObject.fieldPath]).toEqual(["kubefx-node", "kubefx-node", "spec.containers{web}"])
      expect(event.metadata.managedFields.map((f: any) => f.manager)).toEqual(["kubelet"])
    }
    await poll(simulated, "/api/v1/namespaces/default/endpoints/web", (e) => e.subsets?.[0]?.addresses?.[0]?.nodeName === "kubefx-node")

    const events = await watchEvents(simulated, `${pods}?watch=true&fieldSelector=metadata.name%3Dweb-1&resourceVersion=${running.metadata.resourceVersion}`, 4, 5000, async () => {
      const deleted = await simulated.request("DELETE", `${pods}/web-1`)
      expect(deleted.json.metadata.deletionGracePeriodSeconds).toBe(30)
      // Terminating: out of the Endpoints, in the EndpointSlice as terminating.
      await poll(simulated, "/api/v1/namespaces/default/endpoints/web", (e) => e.subsets === undefined)
      const slices = await poll(simulated, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb", (l) =>
        l.items[0]?.endpoints?.[0]?.conditions?.terminating === true)
      expect(slices.items[0].endpoints[0].conditions).toEqual({ ready: false, serving: true, terminating: true })
    })
    expect(events.map((e) => [e.type, e.object.status.phase, e.object.metadata.deletionGracePeriodSeconds])).toEqual([
      ["MODIFIED", "Running", 30],
      ["MODIFIED", "Succeeded", 30],
      ["MODIFIED", "Succeeded", 0],
      ["DELETED", "Succeeded", 0]
    ])
    expect(await eventsOf("web-1")).toContainEqual(["kubelet", "Killing", "Stopping container web"])
  })

  it("keeps a Pod off a node where its required anti-affinity finds a match, until that pod is gone", async () => {
    const term = { labelSelector: { matchLabels: { app: "db" } }, topologyKey: "kubernetes.io/hostname" }
    const replica = (name: string) => pod(name, { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } }, { app: "db" })
    await simulated.request("POST", pods, { body: replica("db-0") })
    await poll(simulated, `${pods}/db-0`, (p) => p.status?.phase === "Running")
    await simulated.request("POST", pods, { body: replica("db-1") })
    const waiting = await poll(simulated, `${pods}/db-1`, (p) => p.status?.conditions?.some((c: any) => c.reason === "Unschedulable"))
    expect(waiting.status.conditions[0].message).toBe(
      "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    // A pod that wants to be beside db-0 goes to its node.
    const beside = pod("db-client", { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } })
    await simulated.request("POST", pods, { body: beside })
    expect((await poll(simulated, `${pods}/db-client`, (p) => p.spec?.nodeName !== undefined)).spec.nodeName).toBe("kubefx-node")
    await simulated.request("DELETE", `${pods}/db-0`)
    const moved = await poll(simulated, `${pods}/db-1`, (p) => p.status?.phase === "Running")
    expect(moved.spec.nodeName).toBe("kubefx-node")
  })

  it("fails and deletes a Pod whose node is gone, as the pod garbage collector does", async () => {
    const ready = [{ type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" }]
    await simulated.request("POST", "/api/v1/nodes", { body: { metadata: { name: "temporary", labels: { pool: "temporary" } }, status: { conditions: ready } } })
    await simulated.request("POST", pods, { body: pod("stranded", { nodeSelector: { pool: "temporary" } }) })
    const running = await poll(simulated, `${pods}/stranded`, (p) => p.status?.phase === "Running")
    expect(running.spec.nodeName).toBe("temporary")
    const events = await watchEvents(simulated, `${pods}?watch=true&fieldSelector=metadata.name%3Dstranded&resourceVersion=${running.metadata.resourceVersion}`, 3, 5000, () =>
      simulated.request("DELETE", "/api/v1/nodes/temporary"))
    expect(events.map((e) => [e.type, e.object.status.phase, e.object.metadata.deletionGracePeriodSeconds])).toEqual([
      ["MODIFIED", "Failed", undefined],
      ["MODIFIED", "Failed", 0],
      ["DELETED", "Failed", 0]
    ])
    expect(events[0]!.object.status.conditions).toContainEqual(expect.objectContaining({ type: "DisruptionTarget", status: "True", reason: "DeletionByPodGC", message: "PodGC: node no longer exists" }))
  })

  it("answers a running Pod's log from its kubelet, following it until the Pod is gone", async () => {
    await simulated.request("POST", pods, { body: pod("talker") })
    await poll(simulated, `${pods}/talker`, (p) => p.status?.phase === "Running")
    const log = await simulated.request("GET", `${pods}/talker/log`)
    expect([log.status, log.text]).toEqual([200, ""])
    // Followed, the stream stays open while the container runs, and ends when the Pod is gone.
    const followed = fetch(`${simulated.url}${pods}/talker/log?follow=true`, { headers: { authorization: `Bearer ${simulated.token}` } })
      .then(async (r) => ({ status: r.status, text: await r.text(), at: Date.now() }))
    await new Promise((r) => setTimeout(r, 300))
    const deletedAt = Date.now()
    await simulated.request("DELETE", `${pods}/talker`)
    const ended = await followed
    expect([ended.status, ended.text]).toEqual([200, ""])
    expect(ended.at).toBeGreaterThanOrEqual(deletedAt)
  })

  it("gives a Pod on the host's network the node's address", async () => {
    await simulated.request("POST", pods, { body: pod("on-host", { hostNetwork: true }) })
    const running = await poll(simulated, `${pods}/on-host`, (p) => p.status?.phase === "Running")
    expect([running.status.podIP, running.status.podIPs]).toEqual([running.status.hostIP, [{ ip: running.status.hostIP }]])
  })

  it("leaves a Pod no node fits Unschedulable, saying why, and binds it once a node fits", async () => {
    await simulated.request("POST", pods, { body: pod("picky", { nodeSelector: { disk: "ssd" } }) })
    const waiting = await poll(simulated, `${pods}/picky`, (p) => p.status?.conditions?.some((c: any) => c.reason === "Unschedulable"))
    const message = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    expect(waiting.status.conditions).toEqual([expect.objectContaining({ type: "PodScheduled", status: "False", reason: "Unschedulable", message })])
    expect(waiting.status.phase).toBe("Pending")
    expect(await eventsOf("picky")).toContainEqual(["default-scheduler", "FailedScheduling", message])
    // A node that is not ready is tainted so, and has no kubelet.
    // (A node is registered with its status, as a kubelet registers it.)
    const broken = await simulated.request("POST", "/api/v1/nodes", {
      body: { metadata: { name: "broken", labels: { disk: "ssd" } }, status: { conditions: [{ type: "Ready", status: "False", reason: "KubeletNotReady", message: "down" }] } }
    })
    expect(broken.json.status.conditions[0].status).toBe("False")
    await poll(simulated, `${pods}/picky`, (p) => p.status?.conditions?.[0]?.message?.includes("untolerated taint {node.kubernetes.io/not-ready: }"))
    // The simulated node labelled to fit: bound there, and run.
    await simulated.request("PATCH", "/api/v1/nodes/kubefx-node", { body: { metadata: { labels: { disk: "ssd" } } }, headers: { "content-type": "application/merge-patch+json" } })
    const running = await poll(simulated, `${pods}/picky`, (p) => p.status?.phase === "Running")
    expect(running.spec.nodeName).toBe("kubefx-node")
    expect(running.status.conditions.find((c: any) => c.type === "PodScheduled").status).toBe("True")
  })
})
