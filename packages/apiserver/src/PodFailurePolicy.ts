/**
 * A Job's `podFailurePolicy`, as 1.32's Job controller applies it to each failed pod: the first rule
 * whose `onExitCodes` or `onPodConditions` the pod matches decides what its failure does (`FailJob`
 * ends the Job, `Ignore` leaves it out of the failures the backoff limit counts, `Count` counts it,
 * as a pod no rule matches, `FailIndex` fails the pod's index at once, with `backoffLimitPerIndex`).
 */
import { KubeObject } from "@kubefx/schema/internal"

const record = KubeObject.record
const list = KubeObject.records

/** What a failed pod's failure does, and the message of a `FailJob`. */
export interface Decision {
  readonly action: "FailJob" | "FailIndex" | "Ignore" | "Count"
  readonly message: string
}

// The failed containers' exit codes, by container name (a success, exit code 0, failed nothing).
const exitCodes = (pod: KubeObject.KubeObject): ReadonlyArray<readonly [string, number]> =>
  [...list(record(pod.status).initContainerStatuses), ...list(record(pod.status).containerStatuses)].flatMap((status) => {
    const code = record(record(status.state).terminated).exitCode
    return typeof code === "number" && code !== 0 ? [[String(status.name ?? ""), code] as const] : []
  })

const onExitCodes = (requirement: Readonly<Record<string, unknown>>, pod: KubeObject.KubeObject): readonly [string, number] | undefined => {
  const values = Array.isArray(requirement.values) ? requirement.values : []
  const named = typeof requirement.containerName === "string" ? requirement.containerName : undefined
  const inSet = requirement.operator === "In"
  return exitCodes(pod).find(([name, code]) => (named === undefined || name === named) && values.includes(code) === inSet)
}

const onPodCondition = (patterns: ReadonlyArray<Readonly<Record<string, unknown>>>, pod: KubeObject.KubeObject) =>
  patterns.find((pattern) =>
    list(record(pod.status).conditions).some((c) => c.type === pattern.type && c.status === (pattern.status ?? "True")))

/**
 * What the Job's policy does with the failure of `pod` (phase `Failed`): the first matching rule's
 * action, or undefined without a policy or a matching rule (the failure counts).
 *
 * @example
 * import * as PodFailurePolicy from "./PodFailurePolicy.ts"
 * const job = { spec: { podFailurePolicy: { rules: [{ action: "FailJob", onExitCodes: { operator: "In", values: [42] } }] } } }
 * const pod = { metadata: { name: "p", namespace: "default" }, status: { containerStatuses: [{ name: "work", state: { terminated: { exitCode: 42 } } }] } }
 * PodFailurePolicy.decide(job, pod)?.message // "Container work for pod default/p failed with exit code 42 matching FailJob rule at index 0"
 */
export const decide = (job: KubeObject.KubeObject, pod: KubeObject.KubeObject): Decision | undefined => {
  const rules = list(record(record(job.spec).podFailurePolicy).rules)
  const { name, namespace } = KubeObject.meta(pod)
  for (const [index, rule] of rules.entries()) {
    const action = rule.action === "FailJob" || rule.action === "FailIndex" || rule.action === "Ignore" ? rule.action : "Count"
    const exited = rule.onExitCodes === undefined ? undefined : onExitCodes(record(rule.onExitCodes), pod)
    if (exited !== undefined) {
      return { action, message: `Container ${exited[0]} for pod ${namespace}/${name} failed with exit code ${exited[1]} matching ${rule.action} rule at index ${index}` }
    }
    const condition = rule.onPodConditions === undefined ? undefined : onPodCondition(list(rule.onPodConditions), pod)
    if (condition !== undefined) {
      return { action, message: `Pod ${namespace}/${name} has condition ${condition.type} matching ${rule.action} rule at index ${index}` }
    }
  }
  return undefined
}
