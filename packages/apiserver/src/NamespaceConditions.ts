/**
 * The conditions kube's namespace controller gives a terminating namespace: whether its resources
 * were discovered, their group versions parsed and its content deleted, and what content, and
 * which finalizers on it, are left (`NamespaceContentRemaining`, `NamespaceFinalizersRemaining`),
 * each with the controller's reason and message.
 */
// Each condition's type, and its reason and message when all is well.
const settled: ReadonlyArray<readonly [string, string, string]> = [
  ["NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"],
  ["NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"],
  ["NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"],
  ["NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"],
  ["NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"]
]

/**
 * A terminating namespace's conditions over `previous`, given what is left (`resources`: "<plural>.<group>
 * has N resource instances"; `finalizers`: "<finalizer> in N resource instances"), or undefined
 * when they say nothing new. A condition that does not change keeps its transition time.
 *
 * @example
 * import * as NamespaceConditions from "./NamespaceConditions.ts"
 * NamespaceConditions.terminating([], ["configmaps. has 1 resource instances"], [], "2026-01-01T00:00:00Z")?.[3]?.message
 * // "Some resources are remaining: configmaps. has 1 resource instances"
 */
export const terminating = (
  previous: ReadonlyArray<Readonly<Record<string, unknown>>>,
  resources: ReadonlyArray<string>,
  finalizers: ReadonlyArray<string>,
  now: string
): ReadonlyArray<Record<string, unknown>> | undefined => {
  const stated = settled.map(([type, reason, message]) =>
    type === "NamespaceContentRemaining" && resources.length > 0
      ? { type, status: "True", reason: "SomeResourcesRemain", message: `Some resources are remaining: ${resources.join(", ")}` }
      : type === "NamespaceFinalizersRemaining" && finalizers.length > 0
      ? { type, status: "True", reason: "SomeFinalizersRemain", message: `Some content in the namespace has finalizers remaining: ${finalizers.join(", ")}` }
      : { type, status: "False", reason, message }
  )
  const same = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>) =>
    a.status === b.status && a.reason === b.reason && a.message === b.message
  const before = new Map(previous.map((c) => [String(c.type), c]))
  if (stated.every((c) => { const old = before.get(c.type); return old !== undefined && same(old, c) })) return undefined
  const others = previous.filter((c) => !settled.some(([type]) => type === c.type))
  return [...others, ...stated.map(({ type, status, reason, message }) => {
    const old = before.get(type)
    const lastTransitionTime = old !== undefined && old.status === status ? old.lastTransitionTime ?? now : now
    return { type, status, lastTransitionTime, reason, message }
  })]
}
