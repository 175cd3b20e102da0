import { describe, expect, it, layer } from "@effect/vitest"
import { Builtins, Kube, Resource } from "@kubefx/kube"
import { Effect } from "effect"
import * as Support from "./support.ts"

const roundTrip = <A extends Builtins.ConfigMap | Builtins.Deployment | Builtins.Lease | Builtins.Event>(
  resource: Resource.Resource<A>,
  value: unknown
) =>
  Effect.gen(function*() {
    const decoded = yield* Resource.decode(resource, value)
    return { decoded, encoded: yield* Resource.encode(resource, decoded) }
  })

describe("Builtins", () => {
  it("declares where each kind lives", () => {
    const where = (r: Resource.Resource<any>) => [r.apiVersion, r.kind, r.plural, r.namespaced]
    expect([
      Builtins.ConfigMap,
      Builtins.Secret,
      Builtins.Service,
      Builtins.ServiceAccount,
      Builtins.Deployment,
      Builtins.StatefulSet,
      Builtins.Pod,
      Builtins.Namespace,
      Builtins.Lease,
      Builtins.Event,
      Builtins.EventsV1Event
    ].map(where)).toEqual([
      ["v1", "ConfigMap", "configmaps", true],
      ["v1", "Secret", "secrets", true],
      ["v1", "Service", "services", true],
      ["v1", "ServiceAccount", "serviceaccounts", true],
      ["apps/v1", "Deployment", "deployments", true],
      ["apps/v1", "StatefulSet", "statefulsets", true],
      ["v1", "Pod", "pods", true],
      ["v1", "Namespace", "namespaces", false],
      ["coordination.k8s.io/v1", "Lease", "leases", true],
      ["v1", "Event", "events", true],
      ["events.k8s.io/v1", "Event", "events", true]
    ])
    expect(Builtins.Pod.custom).toBeUndefined()
    expect(Resource.objectPath(Builtins.Lease, "kube-system", "leader")).toBe(
      "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/leader"
    )
  })

  it.effect("unknown fields survive decode and encode, at the top and nested", () =>
    Effect.gen(function*() {
      const deployment = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "default", somethingNew: { a: 1 } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          revisionHistoryLimit: 4,
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              containers: [{ name: "web", image: "nginx", resources: { limits: { cpu: "1" } } }],
              dnsPolicy: "ClusterFirst"
            }
          }
        },
        status: { replicas: 2, readyReplicas: 1, collisionCount: 0 },
        extra: true
      }
      const { decoded, encoded } = yield* roundTrip(Builtins.Deployment, deployment)
      expect(decoded.spec?.replicas).toBe(2)
      expect(decoded.spec?.template.spec?.containers[0]?.image).toBe("nginx")
      expect(decoded.status?.readyReplicas).toBe(1)
      expect(encoded).toEqual(deployment)
    }))

  it.effect("ConfigMap data and a wrong type is a DecodeError", () =>
    Effect.gen(function*() {
      const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { key: "value" } }
      const { decoded, encoded } = yield* roundTrip(Builtins.ConfigMap, configMap)
      expect(decoded.data).toEqual({ key: "value" })
      expect(encoded).toEqual(configMap)
      const error = yield* Resource.decode(Builtins.ConfigMap, { ...configMap, data: { key: 1 } }).pipe(Effect.flip)
      expect(error._tag).toBe("DecodeError")
      expect(error.name).toBe("c")
    }))

  it.effect("Lease times are MicroTime strings kept exactly as written", () =>
    Effect.gen(function*() {
      const lease = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "leader", namespace: "kube-system" },
        spec: {
          holderIdentity: "pod-a",
          leaseDurationSeconds: 15,
          acquireTime: "2026-01-02T03:04:05.123456Z",
          renewTime: "2026-01-02T03:04:20.000001Z",
          leaseTransitions: 3
        }
      }
      const { decoded, encoded } = yield* roundTrip(Builtins.Lease, lease)
      expect(decoded.spec?.renewTime).toBe("2026-01-02T03:04:20.000001Z")
      expect(encoded).toEqual(lease)
    }))

  it("formats Time and MicroTime like Kubernetes", () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678)
    expect(Builtins.formatTime(at)).toBe("2026-01-02T03:04:05Z")
    expect(Builtins.formatMicroTime(at)).toBe("2026-01-02T03:04:05.678000Z")
    expect(Builtins.formatMicroTime(new Date(at))).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
  })

  it.effect("core/v1 Events with null timestamps, and events.k8s.io/v1 Events", () =>
    Effect.gen(function*() {
      const event = {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: "web.1", namespace: "default" },
        involvedObject: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "default", uid: "u1" },
        reason: "ScalingReplicaSet",
        message: "Scaled up",
        type: "Normal",
        firstTimestamp: null,
        lastTimestamp: null,
        eventTime: "2026-01-02T03:04:05.000000Z",
        reportingComponent: "kubefx",
        reportingInstance: "kubefx-0"
      }
      const { decoded, encoded } = yield* roundTrip(Builtins.Event, event)
      expect(decoded.involvedObject.name).toBe("web")
      expect(encoded).toEqual(event)

      const v1 = {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name: "web.2", namespace: "default" },
        eventTime: "2026-01-02T03:04:05.000000Z",
        reportingController: "kubefx.dev/widgets",
        reportingInstance: "kubefx-0",
        action: "Reconcile",
        reason: "Reconciled",
        regarding: { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", name: "a" },
        note: "ok",
        type: "Normal"
      }
      const decodedV1 = yield* Resource.decode(Builtins.EventsV1Event, v1)
      expect(decodedV1.regarding?.kind).toBe("Widget")
      const missingTime = yield* Resource.decode(Builtins.EventsV1Event, { ...v1, eventTime: undefined }).pipe(Effect.flip)
      expect(missingTime._tag).toBe("DecodeError")
    }))

  it.effect("Service targetPort is an int or a string", () =>
    Effect.gen(function*() {
      const service = {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web" },
        spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: "http" }, { port: 9090, targetPort: 9090 }] }
      }
      const decoded = yield* Resource.decode(Builtins.Service, service)
      expect(decoded.spec?.ports?.map((p) => p.targetPort)).toEqual(["http", 9090])
    }))
})

layer(Support.layer, { excludeTestServices: true, timeout: "60 seconds" })("Builtins on the API server", (it) => {
  it.effect("objects the server returns decode, with its defaults kept", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const namespace = yield* Support.namespace
      const metadata = (name: string) => ({ name, namespace })
      const configMap = yield* kube.create(Builtins.ConfigMap, { metadata: metadata("c"), data: { a: "1" } })
      expect(configMap.metadata.uid).toBeTypeOf("string")
      const secret = yield* kube.create(Builtins.Secret, { metadata: metadata("s"), type: "Opaque", data: { password: "cA==" } })
      expect(secret.data).toEqual({ password: "cA==" })
      const service = yield* kube.create(Builtins.Service, {
        metadata: metadata("web"),
        spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: "http" }] }
      })
      expect(service.spec?.ports?.[0]?.targetPort).toBe("http")
      yield* kube.create(Builtins.ServiceAccount, { metadata: metadata("sa") })
      const deployment = yield* kube.create(Builtins.Deployment, {
        metadata: metadata("web"),
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "web" } },
          template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
        }
      })
      expect(deployment.spec?.template.spec?.containers[0]?.name).toBe("web")
      const lease = yield* kube.create(Builtins.Lease, {
        metadata: metadata("leader"),
        spec: { holderIdentity: "me", leaseDurationSeconds: 15, renewTime: "2026-01-02T03:04:05.123456Z" }
      })
      expect(lease.spec?.renewTime).toBe("2026-01-02T03:04:05.123456Z")
      const event = yield* kube.create(Builtins.Event, {
        metadata: metadata("web.1"),
        involvedObject: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace },
        reason: "Created",
        message: "created",
        type: "Normal"
      })
      expect(event.involvedObject.name).toBe("web")
      const listed = yield* kube.list(Builtins.Namespace)
      expect(listed.items.map((n) => n.metadata.name)).toContain(namespace)
    }))
})
