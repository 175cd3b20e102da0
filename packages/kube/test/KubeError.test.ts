/**
 * The typed errors made from the server's answers: each status code to its error, and a 403 from
 * RBAC to the rule it names as missing.
 */
import { describe, expect, it } from "@effect/vitest"
import { KubeError } from "@kubefx/kube"

describe("KubeError.fromStatus", () => {
  it("maps each status code to its typed error, keeping the server's message", () => {
    const tags = [404, 409, 410, 422, 401, 403, 429, 504, 503, 400].map((code) => KubeError.fromStatus(code, { message: "m" })._tag)
    expect(tags).toEqual(["NotFound", "Conflict", "Gone", "Invalid", "Unauthorized", "Forbidden", "TooManyRequests", "Timeout", "ServerError", "BadRequest"])
    expect(KubeError.fromStatus(409, { reason: "AlreadyExists", message: "m" })._tag).toBe("AlreadyExists")
    expect(KubeError.fromStatus(500, "not a status").message).toBe("HTTP 500")
  })

  it("names the RBAC rule a 403 lacks, in the error and at the end of its message", () => {
    const denied = `configmaps "one" is forbidden: User "system:serviceaccount:ops:robot" cannot delete resource "configmaps" in API group "" in the namespace "ops"`
    const error = KubeError.fromStatus(403, { reason: "Forbidden", message: denied })
    expect(error._tag).toBe("Forbidden")
    if (error._tag !== "Forbidden") return
    expect(error.rule).toEqual({ apiGroups: [""], resources: ["configmaps"], verbs: ["delete"] })
    expect(error.message).toBe(`${denied} (rbac: {"apiGroups":[""],"resources":["configmaps"],"verbs":["delete"]})`)
    expect(KubeError.ruleEnding(error.message)).toBe(` (rbac: {"apiGroups":[""],"resources":["configmaps"],"verbs":["delete"]})`)
    // A subresource and a group, at the cluster scope.
    expect(KubeError.forbidden(
      `deployments.apps "web" is forbidden: User "u" cannot patch resource "deployments/scale" in API group "apps" at the cluster scope`
    ).rule).toEqual({ apiGroups: ["apps"], resources: ["deployments/scale"], verbs: ["patch"] })
  })

  it("leaves a 403 that is not RBAC's (a webhook's denial) as the server said it", () => {
    const message = `admission webhook "gizmos.example.com" denied the request: size too large`
    const error = KubeError.forbidden(message)
    expect([error.message, error.rule, KubeError.ruleEnding(message)]).toEqual([message, undefined, undefined])
  })
})
