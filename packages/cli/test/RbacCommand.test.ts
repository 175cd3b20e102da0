/**
 * `kubefx rbac` run as users run it: the real bin in a child process, on fixture modules.
 */
import { Rbac } from "@kubefx/kube"
import { describe, expect, it } from "vitest"
import * as Fixture from "./fixtures/operator.ts"
import { documents, json, kubefx } from "./run.ts"

describe("kubefx rbac", () => {
  it("prints the ClusterRole of the exported operator, with every controller's and the Lease's rules", async () => {
    const result = await kubefx("rbac", "fixtures/operator.ts")
    expect(result.code).toBe(0)
    const [role, ...roles] = documents(result.stdout) as Array<Rbac.ClusterRole>
    expect(role).toEqual(json(Rbac.clusterRole(Fixture.operator)))
    // Its rule naming kube-system, as a Role there.
    expect(roles).toEqual(json(Rbac.roles(Fixture.operator)))
    expect(roles.map((r) => [r.kind, (r.metadata as { namespace?: string }).namespace])).toEqual([["Role", "kube-system"]])
    expect(role!.metadata.name).toBe("buckets-operator")
    expect(role!.rules).toContainEqual({ apiGroups: ["storage.kubefx.dev"], resources: ["buckets"], verbs: ["get", "list", "watch", "patch"] })
    expect(role!.rules).toContainEqual({ apiGroups: ["storage.kubefx.dev"], resources: ["buckets/status"], verbs: ["patch"] })
    expect(role!.rules).toContainEqual({
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      resourceNames: ["buckets-operator-leader"],
      verbs: ["get", "update"]
    })
    expect(role!.rules).toContainEqual({ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] })
  })

  it("--export prints one controller's role; a module of controllers alone gets one role for all, named by --name", async () => {
    const one = await kubefx("rbac", "fixtures/operator.ts", "--export", "buckets")
    expect(one.code).toBe(0)
    expect(documents(one.stdout)).toEqual(json([Rbac.clusterRole([Fixture.buckets], { name: "buckets" })]))

    const all = await kubefx("rbac", "fixtures/controllers.ts", "--name", "storage")
    expect(all.code).toBe(0)
    const [role] = documents(all.stdout) as Array<Rbac.ClusterRole>
    expect(role!.metadata.name).toBe("storage")
    expect(role!.rules).toEqual(json(Rbac.clusterRole([Fixture.audit, Fixture.buckets]).rules))
    expect(role!.rules.some((rule) => rule.resources.includes("leases"))).toBe(false)
  })

  it("fails with a message for a module without operators or controllers, or a wrong export name", async () => {
    const [none, wrong] = await Promise.all([
      kubefx("rbac", "fixtures/resources.ts"),
      kubefx("rbac", "fixtures/operator.ts", "--export", "Bucket")
    ])
    expect(none.code).not.toBe(0)
    expect(none.stderr).toContain("the module exports no operator (Operator.make) or controller (Controller.define)")
    expect(none.stdout).toBe("")
    expect(wrong.code).not.toBe(0)
    expect(wrong.stderr).toContain("the module exports no operator or controller named Bucket")
  })
})
