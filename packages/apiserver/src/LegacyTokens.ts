/**
 * kube-controller-manager's token controller, for the long-lived ServiceAccount tokens a Secret of
 * type `kubernetes.io/service-account-token` asks for (1.24 and later make none unasked): a Secret
 * naming an existing ServiceAccount (`kubernetes.io/service-account.name`) gets the account's uid
 * (`kubernetes.io/service-account.uid`) and its data, `token` (good for the account while the
 * Secret exists), `ca.crt` and `namespace`; one naming an account that does not exist, or no longer
 * the one it was made for, is deleted, as are an account's tokens when it is.
 */
import { Effect } from "effect"
import * as Rest from "./Rest.ts"
import * as ServiceAccountTokens from "./ServiceAccountTokens.ts"
import type * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** The Secret type whose Secrets hold a ServiceAccount's long-lived token. */
export const secretType = "kubernetes.io/service-account-token"
const accountName = "kubernetes.io/service-account.name"
const accountUid = "kubernetes.io/service-account.uid"

// Legacy tokens do not expire; a century stands for that.
const lifetimeSeconds = 100 * 365 * 24 * 3600

const writeOptions: Rest.WriteOptions = { dryRun: false, fieldManager: "kube-controller-manager", fieldValidation: "Ignore" }

const base64 = (text: string) => Buffer.from(text).toString("base64")

/** The controller's handle: idle once nothing is queued. */
export interface LegacyTokens {
  readonly idle: Effect.Effect<void>
  readonly pending: () => number
}

/**
 * Starts the controller over `env.store` in the current scope, signing with `signingKey` (PEM) and
 * handing out `certificateAuthority` (PEM) as `ca.crt`.
 *
 * @example
 * import { Effect } from "effect"
 * import * as LegacyTokens from "./LegacyTokens.ts"
 * declare const env: import("./Rest.ts").Env
 * declare const signingKey: string
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const tokens = yield* LegacyTokens.make(env, { signingKey, certificateAuthority: "-----BEGIN CERTIFICATE-----..." })
 *   yield* tokens.idle
 * }))
 */
export const make = Effect.fnUntraced(function*(env: Rest.Env, options: { readonly signingKey: string; readonly certificateAuthority: string }) {
  const { store } = env
  const key = ServiceAccountTokens.signingKey(options.signingKey)
  const secrets = env.registry.byStorage("secrets")[0]!
  const settled = (error: Status.ApiError) => error.code === 404 || error.code === 409 || error.code === 403

  const sync = ({ namespace, name }: { readonly namespace: string; readonly name: string }) =>
    Effect.suspend(() => {
      const secret = store.get("secrets", namespace, name)
      if (secret === undefined || secret.type !== secretType) return Effect.void
      const m = KubeObject.meta(secret)
      const wanted = m.annotations?.[accountName]
      if (wanted === undefined || wanted === "") return Effect.void
      const account = store.get("serviceaccounts", namespace, wanted)
      const uid = account === undefined ? undefined : KubeObject.meta(account).uid
      const target = { resource: secrets, namespace, name }
      if (uid === undefined || (m.annotations?.[accountUid] !== undefined && m.annotations[accountUid] !== uid)) {
        return Rest.remove(env, target, { propagationPolicy: undefined, preconditions: { uid: m.uid ?? "" }, dryRun: false }).pipe(
          Effect.asVoid,
          Effect.catchIf(settled, () => Effect.void)
        )
      }
      const data = KubeObject.record(secret.data)
      if (m.annotations?.[accountUid] === uid && ["token", "ca.crt", "namespace"].every((k) => typeof data[k] === "string" && data[k] !== "")) return Effect.void
      const token = ServiceAccountTokens.sign(key, ServiceAccountTokens.claims({
        namespace,
        serviceAccount: { name: wanted, uid },
        audiences: ServiceAccountTokens.serverAudiences,
        expirationSeconds: lifetimeSeconds,
        now: new Date(),
        bound: { secret: { name, uid: m.uid ?? "" } }
      }))
      return Rest.update(env, target, undefined, writeOptions, (current) => Effect.succeed({
        ...KubeObject.withMeta(current, { annotations: { ...KubeObject.meta(current).annotations, [accountUid]: uid } }),
        data: { ...KubeObject.record(current.data), "ca.crt": base64(options.certificateAuthority), namespace: base64(namespace), token: base64(token) }
      })).pipe(Effect.asVoid, Effect.catchIf(settled, () => Effect.void))
    })

  const worker = yield* Worker.make("legacy-tokens", sync, (at: { readonly namespace: string; readonly name: string }) => `${at.namespace}/${at.name}`)
  const tokensOf = (namespace: string, account: string) =>
    store.list("secrets", namespace).filter((s) => s.type === secretType && KubeObject.meta(s).annotations?.[accountName] === account)
  const onEvent = (event: Store.Event) => {
    if (event.storage === "secrets" && event.type !== "DELETED" && event.object.type === secretType) {
      worker.enqueue({ namespace: event.namespace, name: KubeObject.meta(event.object).name ?? "" })
    } else if (event.storage === "serviceaccounts") {
      for (const secret of tokensOf(event.namespace, KubeObject.meta(event.object).name ?? "")) {
        worker.enqueue({ namespace: event.namespace, name: KubeObject.meta(secret).name ?? "" })
      }
    }
  }
  for (const secret of store.list("secrets", undefined)) {
    if (secret.type === secretType) worker.enqueue({ namespace: KubeObject.meta(secret).namespace ?? "", name: KubeObject.meta(secret).name ?? "" })
  }
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending } satisfies LegacyTokens
})
