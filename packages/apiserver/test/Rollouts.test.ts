/**
 * The rollout arithmetic the workload simulator runs Deployments by: template hashes, how many pods
 * new and old ReplicaSets run as a rolling update or a recreate goes, and the statuses.
 */
import { describe, expect, it } from "vitest"
import * as Rollouts from "../src/Rollouts.ts"

const deployment = (replicas: number, strategy: Record<string, unknown> = {}) => ({ spec: { replicas, strategy } })

describe("Rollouts", () => {
  it("hashes a template whatever its key order, in kube's alphabet, and tells which ReplicaSet runs it", () => {
    const template = { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
    const hash = Rollouts.templateHash(template)
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/)
    expect(Rollouts.templateHash({ spec: { containers: [{ image: "nginx", name: "web" }] }, metadata: { labels: { app: "web" } } })).toBe(hash)
    expect(Rollouts.templateHash({ ...template, spec: { containers: [{ name: "web", image: "nginx:1.27" }] } })).not.toBe(hash)
    const replicaSet = Rollouts.replicaSetFor({ metadata: { name: "web", namespace: "default", uid: "u" }, spec: { replicas: 2, selector: { matchLabels: { app: "web" } }, template } }, 4)
    expect(replicaSet.metadata).toMatchObject({ name: `web-${hash}`, labels: { app: "web", "pod-template-hash": hash } })
    expect(Rollouts.revision(replicaSet)).toBe(4)
    expect(Rollouts.runsTemplate(replicaSet, template)).toBe(true)
    expect(Rollouts.runsTemplate(replicaSet, { ...template, metadata: { labels: { app: "api" } } })).toBe(false)
  })

  it("surges the new ReplicaSet and keeps old pods until new ones are available, within the allowances (25% each by default)", () => {
    // 4 desired: at most 5 pods, at least 3 available.
    expect(Rollouts.scale(deployment(4), { available: 0 }, [{ replicas: 4, available: 4 }])).toEqual({ newReplicas: 2, oldReplicas: [3] })
    expect(Rollouts.scale(deployment(4), { available: 2 }, [{ replicas: 3, available: 3 }])).toEqual({ newReplicas: 4, oldReplicas: [1] })
    expect(Rollouts.scale(deployment(4), { available: 4 }, [{ replicas: 1, available: 1 }])).toEqual({ newReplicas: 4, oldReplicas: [0] })
    // Old pods that are not available are not kept for availability.
    expect(Rollouts.scale(deployment(4), { available: 0 }, [{ replicas: 4, available: 0 }])).toEqual({ newReplicas: 4, oldReplicas: [0] })
    // Numbers as given; maxUnavailable 0 keeps every old pod until replaced.
    expect(Rollouts.scale(deployment(2, { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }), { available: 0 }, [{ replicas: 2, available: 2 }])).toEqual({ newReplicas: 1, oldReplicas: [2] })
  })

  it("recreates: every old pod goes before the new ReplicaSet scales up", () => {
    const recreate = deployment(3, { type: "Recreate" })
    expect(Rollouts.scale(recreate, { available: 0 }, [{ replicas: 3, available: 3 }])).toEqual({ newReplicas: 0, oldReplicas: [0] })
    expect(Rollouts.scale(recreate, { available: 0 }, [{ replicas: 0, available: 0 }])).toEqual({ newReplicas: 3, oldReplicas: [0] })
  })

  it("reports the Deployment from its ReplicaSets, keeping a condition's times while it says the same", () => {
    const fresh = { metadata: { name: "web-abc" }, spec: { replicas: 2 }, status: { replicas: 2, readyReplicas: 1, availableReplicas: 1 } }
    const old = { metadata: { name: "web-old" }, spec: { replicas: 1 }, status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 } }
    const web = { metadata: { generation: 3 }, spec: { replicas: 2 } }
    const status = Rollouts.deploymentStatus(web, fresh, [fresh, old])
    expect(status).toMatchObject({ observedGeneration: 3, replicas: 3, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1 })
    const progressing = (status.conditions as ReadonlyArray<any>).find((c) => c.type === "Progressing")
    expect(progressing).toMatchObject({ status: "True", reason: "ReplicaSetUpdated", message: 'ReplicaSet "web-abc" is progressing.' })
    const again = Rollouts.deploymentStatus({ ...web, status }, fresh, [fresh, old])
    // The same conditions, not stamped again: a status write of the same counts changes nothing.
    const before = status.conditions as ReadonlyArray<unknown>
    ;(again.conditions as ReadonlyArray<unknown>).forEach((condition, i) => expect(condition).toBe(before[i]))
  })

  it("records in revision-history the revisions a ReplicaSet brought back by a rollback had, to 2,000 characters", () => {
    const key = "deployment.kubernetes.io/revision"
    const history = "deployment.kubernetes.io/revision-history"
    const once = Rollouts.revived({ metadata: { annotations: { [key]: "1", other: "x" } } }, 3)
    expect(once).toEqual({ [key]: "3", [history]: "1", other: "x" })
    expect(Rollouts.revived({ metadata: { annotations: once } }, 5)[history]).toBe("1,3")
    const long = Array.from({ length: 500 }, (_, i) => String(1000 + i)).join(",")
    const trimmed = Rollouts.revived({ metadata: { annotations: { [key]: "9999", [history]: long } } }, 10000)[history]!
    expect(trimmed.length).toBeLessThanOrEqual(2000)
    expect(trimmed.endsWith(",1499,9999")).toBe(true)
    expect(Rollouts.revived({ metadata: {} }, 2)).toEqual({ [key]: "2" })
  })

  it("keeps the conditions others set on a Deployment or ReplicaSet, and drops a ReplicaFailure that is over", () => {
    const custom = { type: "Custom", status: "True", reason: "Mine", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }
    const failure = { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: "quota", lastTransitionTime: "2026-01-01T00:00:00Z" }
    const fresh = { metadata: { name: "web-abc" }, spec: { replicas: 1 }, status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 } }
    const web = { metadata: { generation: 1 }, spec: { replicas: 1 }, status: { conditions: [custom, failure] } }
    const types = (status: Record<string, unknown>) => ((status.conditions ?? []) as ReadonlyArray<any>).map((c) => c.type)
    expect(types(Rollouts.deploymentStatus(web, fresh, [fresh]))).toEqual(["Custom", "Available", "Progressing"])
    const replicaSet = { metadata: { generation: 1 }, status: { conditions: [custom, failure] } }
    const counts = { replicas: 1, fullyLabeled: 1, ready: 1, available: 1 }
    expect(types(Rollouts.replicaSetStatus(replicaSet, counts, undefined))).toEqual(["Custom"])
    expect(types(Rollouts.replicaSetStatus(replicaSet, counts, "refused"))).toEqual(["Custom", "ReplicaFailure"])
  })
})
