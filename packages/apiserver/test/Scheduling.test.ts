/**
 * kube-scheduler's filters as the simulator applies them: node selector, required node affinity
 * (label expressions, `metadata.name` fields, an OR of terms), taints and tolerations, an
 * unschedulable node, and the message when no node fits.
 */
import { describe, expect, it } from "vitest"
import * as Scheduling from "../src/Scheduling.ts"

const node = (name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}) => ({ metadata: { name, labels }, spec })
const affinity = (...terms: ReadonlyArray<Record<string, unknown>>) =>
  ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } })

describe("Scheduling.misfit", () => {
  it("reads required node affinity: expressions, Gt and Lt, matchFields, any term of several; an empty term matches nothing", () => {
    const big = node("big", { cores: "16", zone: "a" })
    expect(Scheduling.misfit(affinity({ matchExpressions: [{ key: "cores", operator: "Gt", values: ["8"] }] }), big)).toBeUndefined()
    expect(Scheduling.misfit(affinity({ matchExpressions: [{ key: "cores", operator: "Lt", values: ["8"] }] }), big)).toEqual({ _tag: "Affinity" })
    expect(Scheduling.misfit(affinity({ matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] }, { matchFields: [{ key: "metadata.name", operator: "In", values: ["big"] }] }), big))
      .toBeUndefined()
    expect(Scheduling.misfit(affinity({ matchExpressions: [{ key: "gpu", operator: "Exists" }] }), big)).toEqual({ _tag: "Affinity" })
    expect(Scheduling.misfit(affinity({}), big)).toEqual({ _tag: "Affinity" })
  })

  it("wants every NoSchedule and NoExecute taint tolerated, and a cordoned node's too", () => {
    const tainted = node("gpu", {}, { taints: [{ key: "gpu", value: "a100", effect: "NoSchedule" }, { key: "spot", effect: "PreferNoSchedule" }] })
    expect(Scheduling.misfit({}, tainted)).toEqual({ _tag: "Taint", taint: "{gpu: a100}" })
    expect(Scheduling.misfit({ tolerations: [{ key: "gpu", operator: "Equal", value: "a100", effect: "NoSchedule" }] }, tainted)).toBeUndefined()
    expect(Scheduling.misfit({ tolerations: [{ operator: "Exists" }] }, tainted)).toBeUndefined()
    const cordoned = node("old", {}, { unschedulable: true })
    expect(Scheduling.misfit({}, cordoned)).toEqual({ _tag: "Unschedulable" })
    expect(Scheduling.misfit({ tolerations: [{ key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" }] }, cordoned)).toBeUndefined()
  })

  it("words the scheduler's message: reasons counted and sorted, then what preemption could do", () => {
    expect(Scheduling.unschedulable([])).toBe("no nodes available to schedule pods")
    expect(Scheduling.unschedulable([{ _tag: "Taint", taint: "{gpu: }" }, { _tag: "Affinity" }, { _tag: "PodAntiAffinity" }])).toBe(
      "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) didn't match pod anti-affinity rules, 1 node(s) had untolerated taint {gpu: }. " +
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
  })
})
