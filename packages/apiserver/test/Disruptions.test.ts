/**
 * A PodDisruptionBudget's status as the disruption controller counts it: expected pods from an
 * integer minAvailable or the controllers' replicas, healthy pods, the disruptions allowed, and an
 * eviction not yet confirmed by the pod's deletion forgotten after two minutes.
 */
import { describe, expect, it } from "vitest"
import * as Disruptions from "../src/Disruptions.ts"

const pod = (name: string, ready = true, deleting = false) => ({
  metadata: { name, ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
  status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] }
})
const budget = (spec: Record<string, unknown>, status: Record<string, unknown> = {}) => ({ metadata: { name: "web", generation: 2 }, spec, status })
const now = Date.parse("2026-01-01T00:10:00Z")
const byDeployment = () => ({ controller: "deploy-uid", replicas: 4 })

describe("Disruptions.status", () => {
  it("expects the matching pods for an integer minAvailable, the controllers' replicas otherwise", () => {
    const pods = [pod("a"), pod("b"), pod("c", false)]
    expect(Disruptions.status(budget({ minAvailable: 1 }), pods, byDeployment, now)).toMatchObject({
      observedGeneration: 2, expectedPods: 3, desiredHealthy: 1, currentHealthy: 2, disruptionsAllowed: 1
    })
    expect(Disruptions.status(budget({ maxUnavailable: "25%" }), pods, byDeployment, now)).toMatchObject({
      expectedPods: 4, desiredHealthy: 3, currentHealthy: 2, disruptionsAllowed: 0
    })
    expect(Disruptions.status(budget({ minAvailable: "50%" }), pods, byDeployment, now)).toMatchObject({ expectedPods: 4, desiredHealthy: 2, disruptionsAllowed: 0 })
    // No controller with a scale: nothing expected, nothing allowed.
    expect(Disruptions.status(budget({ maxUnavailable: 1 }), pods, () => undefined, now)).toMatchObject({ expectedPods: 0, disruptionsAllowed: 0 })
  })

  it("counts a pod just evicted, or being deleted, as not healthy; an eviction two minutes old is forgotten", () => {
    const pods = [pod("a"), pod("b"), pod("c", true, true)]
    const recent = Disruptions.status(budget({ minAvailable: 1 }, { disruptedPods: { a: "2026-01-01T00:09:30Z" } }), pods, byDeployment, now)
    expect(recent).toMatchObject({ currentHealthy: 1, disruptionsAllowed: 0, disruptedPods: { a: "2026-01-01T00:09:30Z" } })
    expect(recent.conditions).toEqual([expect.objectContaining({ type: "DisruptionAllowed", status: "False", reason: "InsufficientPods", observedGeneration: 2 })])
    const old = Disruptions.status(budget({ minAvailable: 1 }, { disruptedPods: { a: "2026-01-01T00:07:00Z" } }), pods, byDeployment, now)
    expect(old).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 1 })
    expect(old).not.toHaveProperty("disruptedPods")
  })
})
