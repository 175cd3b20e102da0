/**
 * The StatefulSet controller's arithmetic: revision names, and the next step of a rollout.
 */
import { describe, expect, it } from "vitest"
import * as ControllerRevisions from "../src/ControllerRevisions.ts"
import * as StatefulSets from "../src/StatefulSets.ts"

const set = (spec: Record<string, unknown> = {}) => ({
  metadata: { name: "db", namespace: "default", uid: "u" },
  spec: { replicas: 3, template: { metadata: { labels: { app: "db" } }, spec: { containers: [{ name: "db", image: "postgres:17" }] } }, ...spec }
})
const pod = (at: number, revision: string, state: "ready" | "pending" | "failed" = "ready") => ({
  metadata: { name: `db-${at}`, labels: { "controller-revision-hash": revision } },
  status: state === "failed"
    ? { phase: "Failed" }
    : { phase: state === "ready" ? "Running" : "Pending", conditions: [{ type: "Ready", status: state === "ready" ? "True" : "False" }] }
})
const names = (pods: ReadonlyArray<{ readonly metadata?: unknown }>) => pods.map((p) => (p.metadata as { name: string }).name)

describe("StatefulSets", () => {
  it("names a revision by its template, whatever the order of its keys", () => {
    const a = StatefulSets.revisionName(set())
    expect(a).toMatch(/^db-[bcdfghjklmnpqrstvwxz2456789]+$/)
    const reordered = set({ template: { spec: { containers: [{ image: "postgres:17", name: "db" }] }, metadata: { labels: { app: "db" } } } })
    expect(StatefulSets.revisionName(reordered)).toBe(a)
    expect(StatefulSets.revisionName(set({ template: { metadata: { labels: { app: "db" } }, spec: { containers: [{ name: "db", image: "postgres:18" }] } } }))).not.toBe(a)
    expect(ControllerRevisions.template(ControllerRevisions.make(set(), StatefulSets.revisionName(set()), 1))).toEqual(set().spec.template)
  })

  it("creates from the start ordinal, and below the partition at the current revision", () => {
    expect(StatefulSets.next(set({ ordinals: { start: 5 } }), [], "r2", 0).create).toEqual([{ ordinal: 5, revision: "update" }])
    const parted = set({ podManagementPolicy: "Parallel", updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } } })
    expect(StatefulSets.next(parted, [], "r2", 0).create).toEqual([
      { ordinal: 0, revision: "current" },
      { ordinal: 1, revision: "current" },
      { ordinal: 2, revision: "update" }
    ])
  })

  it("deletes a failed pod to make it again, and, ordered, waits for an unready one", () => {
    expect(names(StatefulSets.next(set(), [pod(0, "r1"), pod(1, "r1", "failed"), pod(2, "r1")], "r1", 0).remove)).toEqual(["db-1"])
    expect(StatefulSets.next(set(), [pod(0, "r1", "pending")], "r1", 0)).toEqual({ create: [], remove: [] })
  })

  it("scales down highest first: one at a time ordered, all at once in parallel", () => {
    const pods = [pod(0, "r1"), pod(1, "r1"), pod(2, "r1")]
    expect(names(StatefulSets.next(set({ replicas: 1 }), pods, "r1", 0).remove)).toEqual(["db-2"])
    expect(names(StatefulSets.next(set({ replicas: 1, podManagementPolicy: "Parallel" }), pods, "r1", 0).remove)).toEqual(["db-2", "db-1"])
  })

  it("updates the highest outdated pod once every pod above it is healthy, and none with OnDelete", () => {
    expect(names(StatefulSets.next(set(), [pod(0, "r1"), pod(1, "r1"), pod(2, "r1")], "r2", 0).remove)).toEqual(["db-2"])
    expect(names(StatefulSets.next(set(), [pod(0, "r1"), pod(1, "r1"), pod(2, "r2")], "r2", 0).remove)).toEqual(["db-1"])
    const waiting = set({ podManagementPolicy: "Parallel" })
    expect(StatefulSets.next(waiting, [pod(0, "r1"), pod(1, "r1"), pod(2, "r2", "pending")], "r2", 0).remove).toEqual([])
    expect(StatefulSets.next(set({ updateStrategy: { type: "OnDelete" } }), [pod(0, "r1"), pod(1, "r1"), pod(2, "r1")], "r2", 0).remove).toEqual([])
  })

  it("makes the update revision current once every replica is updated and ready", () => {
    const rolling = StatefulSets.status(set({ replicas: 2 }), [pod(0, "r1"), pod(1, "r2")], "r1", "r2", 0)
    expect(rolling).toMatchObject({ replicas: 2, readyReplicas: 2, currentReplicas: 1, updatedReplicas: 1, currentRevision: "r1", updateRevision: "r2" })
    const done = StatefulSets.status(set({ replicas: 2 }), [pod(0, "r2"), pod(1, "r2")], "r1", "r2", 0)
    expect(done).toMatchObject({ currentReplicas: 2, updatedReplicas: 2, currentRevision: "r2" })
  })
})
