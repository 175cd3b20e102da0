/**
 * A Job's podFailurePolicy applied to a failed pod as 1.32's Job controller applies it: the first
 * rule whose exit codes or pod conditions match decides.
 */
import { describe, expect, it } from "vitest"
import * as PodFailurePolicy from "../src/PodFailurePolicy.ts"

const jobWith = (...rules: ReadonlyArray<Record<string, unknown>>) => ({ spec: { podFailurePolicy: { rules } } })
const failedPod = (codes: Record<string, number>, conditions: ReadonlyArray<Record<string, unknown>> = []) => ({
  metadata: { name: "p", namespace: "ns" },
  status: {
    phase: "Failed",
    conditions,
    containerStatuses: Object.entries(codes).map(([name, exitCode]) => ({ name, state: { terminated: { exitCode } } }))
  }
})

describe("PodFailurePolicy.decide", () => {
  it("onExitCodes: In and NotIn, over every failed container or the one named; a success is no failure", () => {
    const failJob42 = jobWith({ action: "FailJob", onExitCodes: { operator: "In", values: [42] } })
    expect(PodFailurePolicy.decide(failJob42, failedPod({ work: 42 }))).toEqual({
      action: "FailJob",
      message: "Container work for pod ns/p failed with exit code 42 matching FailJob rule at index 0"
    })
    expect(PodFailurePolicy.decide(failJob42, failedPod({ work: 1 }))).toBeUndefined()
    const notIn = jobWith({ action: "FailJob", onExitCodes: { operator: "NotIn", values: [1, 2] } })
    expect(PodFailurePolicy.decide(notIn, failedPod({ work: 3 }))?.action).toBe("FailJob")
    expect(PodFailurePolicy.decide(notIn, failedPod({ work: 1 }))).toBeUndefined()
    // Exit code 0 is not in {1, 2}, but a container that succeeded failed nothing.
    expect(PodFailurePolicy.decide(notIn, failedPod({ sidecar: 0, work: 1 }))).toBeUndefined()
    const named = jobWith({ action: "FailJob", onExitCodes: { containerName: "main", operator: "In", values: [1] } })
    expect(PodFailurePolicy.decide(named, failedPod({ helper: 1 }))).toBeUndefined()
    expect(PodFailurePolicy.decide(named, failedPod({ helper: 1, main: 1 }))?.message).toBe(
      "Container main for pod ns/p failed with exit code 1 matching FailJob rule at index 0"
    )
  })

  it("onPodConditions, status True unless given; the first matching rule wins; Count, and FailIndex", () => {
    const disrupted = [{ type: "DisruptionTarget", status: "True" }]
    const job = jobWith(
      { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] },
      { action: "FailJob", onExitCodes: { operator: "In", values: [1] } }
    )
    expect(PodFailurePolicy.decide(job, failedPod({ work: 1 }, disrupted))).toEqual({
      action: "Ignore",
      message: "Pod ns/p has condition DisruptionTarget matching Ignore rule at index 0"
    })
    expect(PodFailurePolicy.decide(job, failedPod({ work: 1 }))?.message).toBe("Container work for pod ns/p failed with exit code 1 matching FailJob rule at index 1")
    expect(PodFailurePolicy.decide(jobWith({ action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "False" }] }), failedPod({ work: 1 }, disrupted))).toBeUndefined()
    expect(PodFailurePolicy.decide(jobWith({ action: "Count", onExitCodes: { operator: "In", values: [1] } }), failedPod({ work: 1 }))?.action).toBe("Count")
    expect(PodFailurePolicy.decide(jobWith({ action: "FailIndex", onExitCodes: { operator: "In", values: [1] } }), failedPod({ work: 1 }))?.action).toBe("FailIndex")
    expect(PodFailurePolicy.decide({ spec: {} }, failedPod({ work: 1 }))).toBeUndefined()
  })
})
