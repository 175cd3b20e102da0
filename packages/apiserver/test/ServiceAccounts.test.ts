/**
 * What every namespace of a cluster holds (its `default` ServiceAccount), and the ServiceAccount
 * admission of pods, as the real kubectl meets them.
 */
import { describe, expect, it } from "vitest"
import * as Kubectl from "./kubectl.ts"

const { file, kubectl, ok } = Kubectl.withServer({ namespace: null, server: { namespaceCleanupDelayMs: 0 } })

/** Polls until `check` holds for what `read` gives, and returns it. */
const until = async <A>(read: () => Promise<A>, check: (a: A) => boolean): Promise<A> => {
  let last = await read()
  for (let i = 0; i < 100 && !check(last); i++) {
    await new Promise((r) => setTimeout(r, 50))
    last = await read()
  }
  return last
}

const json = async (...args: ReadonlyArray<string>) => JSON.parse(await ok(...args, "-o", "json"))
const exists = async (...args: ReadonlyArray<string>) => (await kubectl("get", ...args)).code === 0

const tokenMount = "/var/run/secrets/kubernetes.io/serviceaccount"

describe("every namespace's default ServiceAccount", () => {
  it("is there from the start and in a new namespace, and comes back when deleted", async () => {
    const accounts = await ok("get", "serviceaccounts", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}")
    expect(accounts.trim().split(" ").sort()).toEqual(["default/default", "kube-node-lease/default", "kube-public/default", "kube-system/default"])
    await ok("create", "namespace", "team")
    expect(await until(() => exists("-n", "team", "serviceaccount", "default"), Boolean)).toBe(true)
    // Made by the controller manager, with nothing it sets: no managedFields.
    expect((await json("-n", "team", "get", "serviceaccount", "default", "--show-managed-fields")).metadata.managedFields).toBeUndefined()
    await ok("-n", "team", "delete", "serviceaccount", "default")
    expect(await until(() => exists("-n", "team", "serviceaccount", "default"), Boolean)).toBe(true)
    // A namespace being deleted gets none back: its deletion completes.
    await ok("delete", "namespace", "team", "--timeout=20s")
    expect(await exists("namespace", "team")).toBe(false)
  })
})

describe("ServiceAccount admission of pods", () => {
  it("runs a pod as default and mounts its token, CA and namespace from a projected volume no writer owns", async () => {
    await ok("-n", "default", "run", "plain", "--image=nginx")
    const pod = await json("-n", "default", "get", "pod", "plain", "--show-managed-fields")
    expect(pod.spec.serviceAccountName).toBe("default")
    expect(pod.spec.volumes).toHaveLength(1)
    const volume = pod.spec.volumes[0]
    expect(volume.name).toMatch(/^kube-api-access-[a-z0-9]{5}$/)
    expect(volume.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
        { configMap: { items: [{ key: "ca.crt", path: "ca.crt" }], name: "kube-root-ca.crt" } },
        { downwardAPI: { items: [{ fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" }, path: "namespace" }] } }
      ]
    })
    expect(pod.spec.containers[0].volumeMounts).toEqual([{ mountPath: tokenMount, name: volume.name, readOnly: true }])
    // As kube records managedFields before mutating admission, the creator owns none of it.
    const created = pod.metadata.managedFields.find((entry: any) => entry.manager === "kubectl-run")
    expect(created.fieldsV1["f:spec"]).not.toHaveProperty("f:volumes")
    expect(created.fieldsV1["f:spec"]["f:containers"]['k:{"name":"plain"}']).not.toHaveProperty("f:volumeMounts")
  })

  it("refuses a pod whose ServiceAccount does not exist, and takes it once it does, with its pull secrets", async () => {
    const pod = (name: string, spec: Record<string, unknown>) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default" },
      spec: { containers: [{ name: "app", image: "app:1" }], ...spec }
    })
    const refused = await kubectl("apply", "-f", file("builder.json", pod("builder", { serviceAccountName: "builder" })))
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toBe(
      'Error from server (Forbidden): error when creating "' + file("builder.json", pod("builder", { serviceAccountName: "builder" })) +
        '": pods "builder" is forbidden: error looking up service account default/builder: serviceaccount "builder" not found'
    )
    // A pod named by generateName is refused before kube names it: the message names the prefix.
    const generated = await kubectl("create", "-f", file("generated.json", { ...pod("", { serviceAccountName: "builder" }), metadata: { generateName: "builder-", namespace: "default" } }))
    expect(generated.stderr.trim()).toBe(
      'Error from server (Forbidden): error when creating "' + file("generated.json", { ...pod("", { serviceAccountName: "builder" }), metadata: { generateName: "builder-", namespace: "default" } }) +
        '": pods "builder-" is forbidden: error looking up service account default/builder: serviceaccount "builder" not found'
    )
    await ok("apply", "-f", file("sa.json", {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "builder", namespace: "default" },
      imagePullSecrets: [{ name: "registry" }],
      automountServiceAccountToken: false
    }))
    await ok("apply", "-f", file("builder.json", pod("builder", { serviceAccountName: "builder" })))
    const admitted = await json("-n", "default", "get", "pod", "builder")
    expect(admitted.spec.imagePullSecrets).toEqual([{ name: "registry" }])
    // The ServiceAccount turns the token off; a pod can turn it back on.
    expect(admitted.spec.volumes).toBeUndefined()
    await ok("apply", "-f", file("opted.json", pod("opted", { serviceAccountName: "builder", automountServiceAccountToken: true })))
    expect((await json("-n", "default", "get", "pod", "opted")).spec.volumes).toHaveLength(1)
    // A pod that mounts something at the path itself keeps it, and gets no token volume.
    await ok("apply", "-f", file("own.json", pod("own", {
      containers: [{ name: "app", image: "app:1", volumeMounts: [{ name: "mine", mountPath: tokenMount }] }],
      volumes: [{ name: "mine", emptyDir: {} }]
    })))
    const own = await json("-n", "default", "get", "pod", "own")
    expect(own.spec.volumes.map((v: any) => v.name)).toEqual(["mine"])
    expect(own.spec.containers[0].volumeMounts).toEqual([{ mountPath: tokenMount, name: "mine" }])
  })
})
