/**
 * An in-memory stand-in for the API server's object store, for tests on a TestClock: every request
 * answers at once, so each `TestClock.adjust` lets every client finish its round before the test
 * looks, and the times a test asserts are exact.
 */
import { Effect } from "effect"
import { type Kube, KubeError, type ObjectMeta } from "@kubefx/kube"

/** Objects by `<plural>/<namespace>/<name>`, and the last resourceVersion given out. */
export interface Store {
  readonly objects: Map<string, ObjectMeta.KubeObject>
  version: number
}

const keyOf = (resource: { readonly plural: string }, name: string, namespace: string | undefined) =>
  `${resource.plural}/${namespace ?? ""}/${name}`

/**
 * A Kube client over a shared in-memory store that answers at once: get, list (by namespace and
 * `key=value` label selectors), create, replace (refused on a stale resourceVersion), shallow merge
 * patch and delete. Every request fails with a transport error while `cut()` holds.
 */
export const storeClient = (store: Store, cut: () => boolean): Kube.Client => {
  const unused = (what: string) => () => Effect.die(new Error(`the in-memory store does not ${what}`))
  const guard = <A>(effect: () => Effect.Effect<A, KubeError.KubeError>): Effect.Effect<A, KubeError.KubeError> =>
    Effect.suspend((): Effect.Effect<A, KubeError.KubeError> =>
      cut() ? Effect.fail(new KubeError.Transport({ message: "partitioned" })) : effect()
    )
  const stamp = <A extends ObjectMeta.KubeObject>(object: A): A => {
    store.version += 1
    return { ...object, metadata: { ...object.metadata, resourceVersion: String(store.version) } }
  }
  const notFound = (name: string) => new KubeError.NotFound({ message: `${name} not found`, code: 404 })
  return {
    server: "memory",
    request: unused("take raw requests"),
    list: (resource, options) =>
      guard(() => {
        const prefix = `${resource.plural}/${options?.namespace ?? ""}/`
        const wanted = (options?.labelSelector ?? "").split(",").filter((term) => term !== "").map((term) => term.split("="))
        const items = Array.from(store.objects).filter(([key, object]) =>
          key.startsWith(prefix) && wanted.every(([label, value]) => object.metadata.labels?.[label!] === value)
        ).map(([, object]) => object)
        return Effect.succeed({ items: items as never, resourceVersion: String(store.version), continue: undefined })
      }),
    listAll: unused("list all pages"),
    watch: unused("watch") as never,
    delete: (resource, name, namespace) =>
      guard(() => {
        const key = keyOf(resource, name, namespace)
        return store.objects.delete(key) ? Effect.void : Effect.fail(notFound(key))
      }),
    apply: unused("apply"),
    get: (resource, name, namespace) =>
      guard(() => {
        const found = store.objects.get(keyOf(resource, name, namespace))
        return found === undefined ? Effect.fail(notFound(name)) : Effect.succeed(found as never)
      }),
    create: (resource, object) =>
      guard(() => {
        const key = keyOf(resource, object.metadata.name ?? "", object.metadata.namespace)
        if (store.objects.has(key)) return Effect.fail(new KubeError.AlreadyExists({ message: `${key} exists`, code: 409 }))
        const stored = stamp(object)
        store.objects.set(key, stored)
        return Effect.succeed(stored)
      }),
    replace: (resource, object) =>
      guard(() => {
        const key = keyOf(resource, object.metadata.name ?? "", object.metadata.namespace)
        const current = store.objects.get(key)
        if (current === undefined) return Effect.fail(notFound(key))
        if (current.metadata.resourceVersion !== object.metadata.resourceVersion) {
          return Effect.fail(new KubeError.Conflict({ message: `${key} changed`, code: 409, causes: [] }))
        }
        const stored = stamp(object)
        store.objects.set(key, stored)
        return Effect.succeed(stored)
      }),
    patch: (resource, name, namespace, body) =>
      guard(() => {
        const key = keyOf(resource, name, namespace)
        const current = store.objects.get(key)
        if (current === undefined) return Effect.fail(notFound(key))
        const stored = stamp({ ...current, ...(body as object) })
        store.objects.set(key, stored)
        return Effect.succeed(stored as never)
      })
  } as Kube.Client
}

