/**
 * The workload simulator's HorizontalPodAutoscaler controller against the server, as a 1.32
 * cluster without a metrics server runs it: the target held within minReplicas and maxReplicas,
 * and otherwise the metric's failure in the HPA's conditions and events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as AutoscalerRuns from "../src/AutoscalerRuns.ts"
import * as Testing from "../src/Testing.ts"
import * as WorkloadSimulator from "../src/WorkloadSimulator.ts"
import { deployment, poll } from "./fixtures.ts"

let server: Testing.TestServer
beforeAll(async () => {
  server = await Testing.start({ controllers: [WorkloadSimulator.make({ delay: "100 millis" })] })
})
afterAll(async () => {
  await server?.close()
})

const deployments = "/apis/apps/v1/namespaces/default/deployments"
const autoscalers = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
const autoscaler = (name: string, target: string, minReplicas: number, maxReplicas: number) => ({
  apiVersion: "autoscaling/v2",
  kind: "HorizontalPodAutoscaler",
  metadata: { name },
  spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: target }, minReplicas, maxReplicas }
})
const condition = (hpa: any, type: string) => hpa.status?.conditions?.find((c: any) => c.type === type)
const until = (path: string, check: (body: any) => boolean) => poll(server, path, check)
const events = async (name: string) =>
  ((await server.request("GET", "/api/v1/namespaces/default/events")).json.items as Array<any>)
    .filter((e) => e.involvedObject.kind === "HorizontalPodAutoscaler" && e.involvedObject.name === name)

describe("AutoscalerSimulation", () => {
  it("scales a target below minReplicas up to it, then reports that no metrics can be read", async () => {
    await server.request("POST", deployments, { body: deployment("api", 1) })
    expect((await server.request("POST", autoscalers, { body: autoscaler("api", "api", 3, 5) })).status).toBe(201)
    await until(`${deployments}/api`, (d) => d.spec.replicas === 3)
    const settled = await until(`${autoscalers}/api`, (h) => h.status?.currentReplicas === 3 && condition(h, "ScalingActive") !== undefined)
    expect(settled.status).toMatchObject({ desiredReplicas: 3, currentReplicas: 3 })
    expect(settled.status.lastScaleTime).toBeDefined()
    expect(condition(settled, "AbleToScale")).toMatchObject({ status: "True", reason: "SucceededGetScale" })
    const cpu = "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: " +
      "the server could not find the requested resource (get pods.metrics.k8s.io)"
    expect(condition(settled, "ScalingActive")).toMatchObject({
      status: "False",
      reason: "FailedGetResourceMetric",
      message: `the HPA was unable to compute the replica count: ${cpu}`
    })
    const recorded = (await events("api")).map((e) => [e.type, e.reason, e.message, e.source.component])
    expect(recorded).toContainEqual(["Normal", "SuccessfulRescale", "New size: 3; reason: Current number of replicas below Spec.MinReplicas", "horizontal-pod-autoscaler"])
    expect(recorded).toContainEqual(["Warning", "FailedGetResourceMetric", cpu, "horizontal-pod-autoscaler"])
  })

  it("scales a target above maxReplicas down to it, and says when its target is missing", async () => {
    await server.request("POST", deployments, { body: deployment("big", 6) })
    await server.request("POST", autoscalers, { body: autoscaler("big", "big", 1, 4) })
    await until(`${deployments}/big`, (d) => d.spec.replicas === 4)
    await server.request("POST", autoscalers, { body: autoscaler("orphan", "nowhere", 1, 4) })
    const orphan = await until(`${autoscalers}/orphan`, (h) => condition(h, "AbleToScale") !== undefined)
    expect(condition(orphan, "AbleToScale")).toMatchObject({
      status: "False",
      reason: "FailedGetScale",
      message: `the HPA controller was unable to get the target's current scale: deployments.apps "nowhere" not found`
    })
  })

  it("keeps the bounds on the replicas a target asks for, not the surge of its rollout", async () => {
    const surging = deployment("surging", 3)
    ;(surging.spec as Record<string, unknown>).strategy = { type: "RollingUpdate", rollingUpdate: { maxSurge: 3, maxUnavailable: 0 } }
    await server.request("POST", deployments, { body: surging })
    await until(`${deployments}/surging`, (d) => d.status?.availableReplicas === 3)
    await server.request("POST", autoscalers, { body: autoscaler("surging", "surging", 1, 4) })
    await until(`${autoscalers}/surging`, (h) => condition(h, "ScalingActive") !== undefined)
    const merge = { "content-type": "application/merge-patch+json" }
    await server.request("PATCH", `${deployments}/surging`, { body: { spec: { template: { spec: { containers: [{ name: "web", image: "nginx:1.27" }] } } } }, headers: merge })
    await until(`${deployments}/surging`, (d) => d.status?.updatedReplicas === 3 && d.status?.replicas === 3 && d.status?.availableReplicas === 3)
    expect((await server.request("GET", `${deployments}/surging`)).json.spec.replicas).toBe(3)
    // Its current replicas are those its target asks for, as kube's controller reads them: here
    // two, though no pod of the target can be made (its ServiceAccount is missing).
    const refused = deployment("refused", 2)
    ;(refused.spec.template.spec as Record<string, unknown>).serviceAccountName = "absent"
    await server.request("POST", deployments, { body: refused })
    await server.request("POST", autoscalers, { body: autoscaler("refused", "refused", 1, 5) })
    const held = await until(`${autoscalers}/refused`, (h) => condition(h, "ScalingActive") !== undefined)
    expect(held.status.currentReplicas).toBe(2)
    expect((await events("surging")).map((e) => e.reason)).not.toContain("SuccessfulRescale")
  })

  it("leaves a target scaled to zero alone", () => {
    const hpa = { spec: { minReplicas: 1, maxReplicas: 3 } }
    expect(AutoscalerRuns.decide(hpa, 0, "")).toMatchObject({
      rescale: undefined,
      conditions: [{ type: "ScalingActive", status: "False", reason: "ScalingDisabled" }]
    })
  })
})
