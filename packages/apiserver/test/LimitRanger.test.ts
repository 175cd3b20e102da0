/**
 * LimitRanges as a 1.32 cluster's LimitRanger admission plugin applies them, through the real
 * kubectl and raw requests: a created Pod's containers get the defaults they leave out (and the
 * annotation saying so), and a Pod or claim outside min, max or the limit-to-request ratio is
 * refused with kube's 403.
 */
import { describe, expect, it } from "vitest"
import { createNamespace } from "./fixtures.ts"
import * as Kubectl from "./kubectl.ts"

const { kubectl, ok, server } = Kubectl.withServer({ namespace: null })

const limitRange = (namespace: string, name: string, limits: ReadonlyArray<Record<string, unknown>>) =>
  server().request("POST", `/api/v1/namespaces/${namespace}/limitranges`, { body: { metadata: { name }, spec: { limits } } })

const pod = (name: string, containers: ReadonlyArray<Record<string, unknown>>) => ({
  metadata: { name },
  spec: { containers: containers.map((c, i) => ({ name: `c${i}`, image: "nginx", ...c })) }
})

const createPod = (namespace: string, body: unknown) => server().request("POST", `/api/v1/namespaces/${namespace}/pods`, { body })

describe("LimitRanger", () => {
  it("gives a created Pod's containers the requests and limits they leave out, and says so", async () => {
    await createNamespace(server(), "ranged")
    const created = await limitRange("ranged", "defaults", [{ type: "Container", default: { cpu: "500m", memory: "256Mi" }, defaultRequest: { cpu: "100m" } }])
    expect(created.status, created.text).toBe(201)
    // The LimitRange's own defaults: a default request for what only has a default limit.
    expect(created.json.spec.limits[0].defaultRequest).toEqual({ cpu: "100m", memory: "256Mi" })
    await ok("-n", "ranged", "run", "web", "--image=nginx")
    const web = JSON.parse(await ok("-n", "ranged", "get", "pod", "web", "-o", "json"))
    expect(web.spec.containers[0].resources).toEqual({ limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "100m", memory: "256Mi" } })
    expect(web.metadata.annotations["kubernetes.io/limit-ranger"]).toBe("LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web")
    // What a container states is kept; only the rest is defaulted.
    const stated = await createPod("ranged", pod("stated", [{ resources: { limits: { cpu: "1" } } }]))
    expect(stated.status, stated.text).toBe(201)
    expect(stated.json.spec.containers[0].resources).toEqual({ limits: { cpu: "1", memory: "256Mi" }, requests: { cpu: "1", memory: "256Mi" } })
    expect(stated.json.metadata.annotations["kubernetes.io/limit-ranger"]).toBe("LimitRanger plugin set: memory request for container c0; memory limit for container c0")
    // The defaults belong to no writer: an apply of the same Pod does not conflict or drop them.
    const applied = await server().request("PATCH", "/api/v1/namespaces/ranged/pods/stated?fieldManager=me", {
      body: JSON.stringify({ apiVersion: "v1", kind: "Pod", ...pod("stated", [{ resources: { limits: { cpu: "1" } } }]) }),
      headers: { "content-type": "application/apply-patch+yaml" }
    })
    expect(applied.status, applied.text).toBe(200)
    expect(applied.json.spec.containers[0].resources.limits).toEqual({ cpu: "1", memory: "256Mi" })
  })

  it("refuses a Pod outside min, max or the ratio, naming every problem, as kube does", async () => {
    await createNamespace(server(), "bounded")
    expect((await limitRange("bounded", "bounds", [
      { type: "Container", min: { cpu: "100m" }, max: { cpu: "1", memory: "1Gi" }, maxLimitRequestRatio: { cpu: "4" } },
      { type: "Pod", max: { memory: "1536Mi" } }
    ])).status).toBe(201)
    const big = await createPod("bounded", pod("big", [{ resources: { requests: { cpu: "500m", memory: "512Mi" }, limits: { cpu: "2", memory: "512Mi" } } }]))
    expect(big.status).toBe(403)
    expect(big.json).toMatchObject({ reason: "Forbidden", code: 403, details: { name: "big", kind: "pods" } })
    expect(big.json.message).toBe('pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2')
    const several = await kubectl("-n", "bounded", "run", "several", "--image=nginx", "--overrides", JSON.stringify({
      spec: { containers: [{ name: "several", image: "nginx", resources: { requests: { cpu: "50m", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } } }] }
    }))
    expect(several.code).toBe(1)
    expect(several.stderr.trim()).toBe(
      'Error from server (Forbidden): pods "several" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, cpu max limit to request ratio per Container is 4, but provided ratio is 20.000000]'
    )
    // Two containers within the Container bounds, over the Pod's.
    const pair = await createPod("bounded", pod("pair", [1, 2].map(() => ({ resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } } }))))
    expect(pair.status).toBe(403)
    expect(pair.json.message).toBe('pods "pair" is forbidden: maximum memory usage per Pod is 1536Mi, but limit is 2Gi')
    const fits = await createPod("bounded", pod("fits", [{ resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } } }]))
    expect(fits.status, fits.text).toBe(201)
    // No LimitRange elsewhere: nothing is defaulted or refused.
    const free = await createPod("default", pod("free", [{}]))
    expect(free.status).toBe(201)
    expect(free.json.spec.containers[0].resources).toEqual({})
  })

  it("refuses a claim outside its storage min and max", async () => {
    await createNamespace(server(), "claims")
    expect((await limitRange("claims", "storage", [{ type: "PersistentVolumeClaim", min: { storage: "1Gi" }, max: { storage: "10Gi" } }])).status).toBe(201)
    const claim = (name: string, storage: string) => ({
      metadata: { name },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage } } }
    })
    const path = "/api/v1/namespaces/claims/persistentvolumeclaims"
    const small = await server().request("POST", path, { body: claim("small", "500Mi") })
    expect(small.status).toBe(403)
    expect(small.json.message).toBe('persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi')
    const large = await server().request("POST", path, { body: claim("large", "20Gi") })
    expect(large.status).toBe(403)
    expect(large.json.message).toBe('persistentvolumeclaims "large" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi')
    expect((await server().request("POST", path, { body: claim("data", "5Gi") })).status).toBe(201)
  })
})
