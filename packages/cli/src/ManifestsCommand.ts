/**
 * `kubefx manifests MODULE... --image IMAGE`: what a cluster needs to run the operator the modules
 * export, as one YAML stream for `kubectl apply -f -`: its CRDs, a Namespace enforcing the restricted
 * Pod Security Standard, a ServiceAccount, the least-privilege ClusterRole and its binding, the
 * Deployment (probes on the operator's HTTP server, bound to 0.0.0.0 through KUBEFX_HTTP_HOST; a
 * restricted security context; requests and limits) and a Service for its metrics; with webhooks,
 * their Service, a Secret holding a serving certificate for its DNS names (mounted where the webhook
 * server reads it) and the webhook configurations trusting it. Each run makes a new certificate,
 * unless `--webhook-cert-dir DIR` keeps it: there a run reads the certificate it finds (checked for
 * the Service's names, its key and 30 days left) or writes the one it makes, so the manifests
 * applied again change nothing. A running operator serves a replaced certificate once the kubelet
 * updates the mounted Secret.
 *
 * @since 0.1.0
 */
import { Certificate } from "@kubefx/apiserver"
import { Controller, Crd, Operator, Rbac, Webhook, Yaml } from "@kubefx/kube"
import { Console, Effect, Option, Schema } from "effect"
import { createPrivateKey, X509Certificate } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Argument, CliError, Command, Flag } from "effect/cli"
import * as CrdCommand from "./CrdCommand.ts"
import * as ModuleLoader from "./ModuleLoader.ts"

/** The manifests cannot be made as asked. */
export class ManifestsCommandError extends Schema.TaggedError<ManifestsCommandError>()("ManifestsCommandError", {
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
}

export interface Options {
  readonly image: string
  /** Default: the operator's name. */
  readonly namespace?: string | undefined
  /**
   * Default 1 (with leader election, more replicas wait as standbys), or the sharded operator's
   * `sharding.replicas` (default 3), which share the objects.
   */
  readonly replicas?: number | undefined
  /** The webhooks' serving certificate; default a new one (see `webhookCertificate`). */
  readonly webhookCertificate?: { readonly cert: string; readonly key: string } | undefined
}

/** The port of the operator's HTTP server in the pod: probes, metrics, /controllers. */
export const httpPort = 8080

// The container's memory limit, and V8's heap sized to it. Node sizes its heap from the pod's limit:
// at 256Mi a 1 MB young generation and a 256 MB old one, as large as the whole pod. Measured on a
// 10,000-Widget fleet in a 256 MiB cgroup, that young generation cost the operator 8.6-9.4 CPU s
// where 16 MB semi-spaces cost 5.5-7.5 s, and an old generation of 144 MB leaves the rest of the
// pod (code, buffers) room before the kernel's OOM kill: at worst V8 collects harder, then reports
// that the heap is full. A larger limit needs both raised together.
const memoryLimitMi = 256
const nodeOptions = `--max-old-space-size=${memoryLimitMi * 9 / 16} --max-semi-space-size=16`

/** The port of the operator's webhook server in the pod (controller-runtime's default). */
export const webhookPort = 9443

/** Where the webhook server reads its certificate in the pod. */
export const webhookCertDir = "/tmp/k8s-webhook-server/serving-certs"

/**
 * What webhooks add: a Secret with a serving certificate for the webhook Service's DNS names, the
 * Service, and the configurations trusting that certificate; plus what the Deployment needs.
 */
const webhookObjects = (
  operator: Operator.Operator<any>,
  namespace: string,
  labels: Record<string, string>,
  given: Options["webhookCertificate"]
) => {
  const all = operator.options.webhooks?.handlers ?? []
  const handlers = all.filter(Webhook.isWebhook)
  if (all.length === 0) return undefined
  const service = webhookService(operator)
  const secret = `${operator.name}-webhook-tls`
  const certificate = given ?? Certificate.selfSigned(webhookHosts(operator, namespace))
  const base64 = (text: string) => Buffer.from(text).toString("base64")
  return {
    objects: [
      { apiVersion: "v1", kind: "Secret", metadata: { name: secret, namespace, labels }, type: "kubernetes.io/tls", data: { "tls.crt": base64(certificate.cert), "tls.key": base64(certificate.key) } },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: service, namespace, labels },
        spec: { selector: { "app.kubernetes.io/name": operator.name }, ports: [{ name: "https-webhook", port: 443, targetPort: "webhook", protocol: "TCP" }] }
      },
      ...Webhook.configurations(operator.name, handlers, { _tag: "Service", name: service, namespace, port: 443 }, base64(certificate.cert))
        .map((configuration) => ({ ...configuration, metadata: { ...configuration.metadata, labels } }))
    ],
    env: [{ name: "KUBEFX_WEBHOOK_HOST", value: "0.0.0.0" }, { name: "KUBEFX_WEBHOOK_PORT", value: `${webhookPort}` }, { name: "KUBEFX_WEBHOOK_CERT_DIR", value: webhookCertDir }],
    port: { name: "webhook", containerPort: webhookPort, protocol: "TCP" },
    volume: { name: "webhook-tls", secret: { secretName: secret } },
    mount: { name: "webhook-tls", mountPath: webhookCertDir, readOnly: true },
    // The conversion webhook's client config, for the CRDs of the resources it converts.
    conversion: {
      resources: all.flatMap((handler) => handler._tag === "Conversion" ? handler.resources : []),
      clientConfig: { service: { name: service, namespace, path: "/convert", port: 443 }, caBundle: base64(certificate.cert) }
    }
  }
}

const webhookService = (operator: Operator.Operator<any>): string => `${operator.name}-webhook`

/** The DNS names the webhook Service answers to, which its serving certificate must name. */
const webhookHosts = (operator: Operator.Operator<any>, namespace: string): ReadonlyArray<string> => {
  const service = webhookService(operator)
  return [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`]
}

const renewAfterDays = 30

/**
 * The webhooks' serving certificate kept in `dir`: the `tls.crt` and `tls.key` found there, when the
 * certificate names every one of `hosts`, matches its key and has 30 days left; otherwise a clear
 * error. With neither file there, a new certificate, written there first (the key readable by its
 * owner only).
 *
 * @example
 * import * as ManifestsCommand from "./ManifestsCommand.ts"
 * const kept = ManifestsCommand.webhookCertificate("certs", ["gadgets-webhook.gadgets.svc"])
 */
export const webhookCertificate = Effect.fn("ManifestsCommand.webhookCertificate")(function*(dir: string, hosts: ReadonlyArray<string>) {
  const certFile = join(dir, "tls.crt")
  const keyFile = join(dir, "tls.key")
  const fail = (why: string) => new ManifestsCommandError({ message: `--webhook-cert-dir ${dir}: ${why}` })
  const [hasCert, hasKey] = [existsSync(certFile), existsSync(keyFile)]
  if (!hasCert && !hasKey) {
    const made = Certificate.selfSigned(hosts)
    yield* Effect.try({
      try: () => {
        mkdirSync(dir, { recursive: true })
        writeFileSync(keyFile, made.key, { mode: 0o600 })
        writeFileSync(certFile, made.cert)
      },
      catch: (error) => fail(`cannot keep the new certificate there: ${(error as Error).message}`)
    })
    return made
  }
  if (!hasCert || !hasKey) return yield* fail(`has ${hasCert ? "tls.crt but no tls.key" : "tls.key but no tls.crt"}; keep both, or remove it to make a new pair`)
  const pair = yield* Effect.try({
    try: () => ({ cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") }),
    catch: (error) => fail((error as Error).message)
  })
  const checked = yield* Effect.try({
    try: () => {
      const x509 = new X509Certificate(pair.cert)
      return { x509, matches: x509.checkPrivateKey(createPrivateKey(pair.key)) }
    },
    catch: (error) => fail(`tls.crt and tls.key are not a PEM certificate and key: ${(error as Error).message}`)
  })
  const renew = "; remove tls.crt and tls.key to make a new certificate"
  if (!checked.matches) return yield* fail(`tls.key is not the key of tls.crt${renew}`)
  const unnamed = hosts.filter((host) => checked.x509.checkHost(host) === undefined)
  if (unnamed.length > 0) return yield* fail(`the certificate does not name ${unnamed.join(", ")}, the webhook Service's names${renew}`)
  const expires = new Date(checked.x509.validTo)
  if (expires.getTime() - Date.now() < renewAfterDays * 24 * 60 * 60 * 1000) {
    return yield* fail(`the certificate expires ${expires.toISOString()}, in under ${renewAfterDays} days${renew}`)
  }
  return pair
})

/**
 * The objects a cluster needs for `operator` besides its CRDs, in the order `kubectl apply` needs them.
 *
 * @example
 * import * as ManifestsCommand from "./ManifestsCommand.ts"
 * declare const operator: import("@kubefx/kube").Operator.Operator
 * const objects = ManifestsCommand.objects(operator, { image: "ghcr.io/acme/widgets:1.0.0" })
 */
export const objects = (
  operator: Operator.Operator<any>,
  options: Options,
  resources: ReadonlyArray<Crd.CustomResource> = []
): ReadonlyArray<Record<string, unknown>> => {
  const name = operator.name
  const namespace = options.namespace ?? name
  const labels = { "app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "kubefx" }
  const role = Rbac.clusterRole(operator)
  const roles = Rbac.roles(operator)
  const bindings = Rbac.bindings(operator, role, { name, namespace })
  const webhooks = webhookObjects(operator, namespace, labels, options.webhookCertificate)
  const converted = new Set<unknown>(webhooks?.conversion.resources ?? [])
  return [
    ...resources.map((resource): Record<string, unknown> => ({
      ...Crd.make(resource, converted.has(resource) && webhooks !== undefined ? { conversion: webhooks.conversion.clientConfig } : {})
    })),
    // The operator's pod meets the restricted Pod Security Standard: its namespace enforces it.
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: { ...labels, "pod-security.kubernetes.io/enforce": "restricted" } } },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace, labels } },
    { ...role, metadata: { ...role.metadata, labels } },
    ...roles.map((own) => ({ ...own, metadata: { ...own.metadata, labels } })),
    ...bindings.map((binding) => ({ ...binding, metadata: { ...binding.metadata, labels } })),
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace, labels },
      spec: {
        replicas: options.replicas ?? (operator.options.sharding === undefined ? 1 : operator.options.sharding.replicas ?? 3),
        selector: { matchLabels: { "app.kubernetes.io/name": name } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: name,
            // The operator's graceful shutdown (30 s by default) before the kubelet kills it.
            terminationGracePeriodSeconds: 40,
            securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
            containers: [{
              name: "operator",
              image: options.image,
              env: [
                { name: "KUBEFX_HTTP_HOST", value: "0.0.0.0" },
                { name: "KUBEFX_HTTP_PORT", value: `${httpPort}` },
                { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                { name: "NODE_OPTIONS", value: nodeOptions },
                ...(webhooks?.env ?? [])
              ],
              ports: [{ name: "http", containerPort: httpPort, protocol: "TCP" }, ...(webhooks === undefined ? [] : [webhooks.port])],
              ...(webhooks === undefined ? {} : { volumeMounts: [webhooks.mount] }),
              startupProbe: { httpGet: { path: "/startupz", port: "http" }, periodSeconds: 2, failureThreshold: 60 },
              livenessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 10, failureThreshold: 3 },
              readinessProbe: { httpGet: { path: "/readyz", port: "http" }, periodSeconds: 5 },
              resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: `${memoryLimitMi}Mi` } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] }
              }
            }],
            ...(webhooks === undefined ? {} : { volumes: [webhooks.volume] })
          }
        }
      }
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: `${name}-metrics`, namespace, labels },
      spec: {
        selector: { "app.kubernetes.io/name": name },
        ports: [{ name: "http-metrics", port: httpPort, targetPort: "http", protocol: "TCP" }]
      }
    },
    ...(webhooks?.objects ?? [])
  ]
}

/**
 * The operator the modules export (the first `Operator.make` export), or one made of their
 * controllers named `name`.
 *
 * @example
 * import { Option } from "effect"
 * import * as ManifestsCommand from "./ManifestsCommand.ts"
 * const found = ManifestsCommand.operatorOf([{}], Option.none())
 */
export const operatorOf = (
  exports: ReadonlyArray<Readonly<Record<string, unknown>>>,
  name: Option.Option<string>
): Effect.Effect<Operator.Operator<any>, ManifestsCommandError> => {
  const values = [...new Set(exports.flatMap((e) => Object.values(e)))]
  const operator = values.find(Operator.isOperator)
  if (operator !== undefined) return Effect.succeed(Option.isSome(name) ? { ...operator, name: name.value } : operator)
  const controllers = values.filter(Controller.isDefinition)
  if (controllers.length === 0) {
    return Effect.fail(new ManifestsCommandError({ message: "the modules export no operator (Operator.make) or controller (Controller.define)" }))
  }
  if (Option.isNone(name)) {
    return Effect.fail(new ManifestsCommandError({
      message: "the modules export controllers but no operator: export one made with Operator.make, or name it with --name"
    }))
  }
  return Effect.succeed(Operator.make({ name: name.value, controllers }))
}

/**
 * The YAML stream for the modules' operator.
 *
 * @example
 * import { Option } from "effect"
 * import * as ManifestsCommand from "./ManifestsCommand.ts"
 * const yaml = ManifestsCommand.render(["src/operator.ts"], {
 *   image: Option.some("acme/op:1"), namespace: Option.none(), replicas: Option.none(), name: Option.none(), webhookCertDir: Option.none()
 * })
 */
export const render = Effect.fn("ManifestsCommand.render")(function*(
  modules: ReadonlyArray<string>,
  flags: {
    readonly image: Option.Option<string>
    readonly namespace: Option.Option<string>
    readonly replicas: Option.Option<number>
    readonly name: Option.Option<string>
    readonly webhookCertDir: Option.Option<string>
  }
) {
  if (Option.isNone(flags.image)) {
    return yield* new ManifestsCommandError({ message: "--image is required: the operator's container image, e.g. --image ghcr.io/acme/my-operator:0.1.0" })
  }
  if (Option.isSome(flags.replicas) && flags.replicas.value < 1) {
    return yield* new ManifestsCommandError({ message: `--replicas ${flags.replicas.value}: at least 1` })
  }
  const exports = yield* Effect.forEach(modules, ModuleLoader.load)
  const operator = yield* operatorOf(exports, flags.name)
  const resources = yield* Effect.map(
    Effect.forEach(exports, (e) => CrdCommand.customResources(e, Option.none()).pipe(Effect.orElseSucceed(() => []))),
    (found) => [...new Set(found.flat())]
  )
  const namespace = Option.getOrElse(flags.namespace, () => operator.name)
  const kept = Option.isNone(flags.webhookCertDir) || (operator.options.webhooks?.handlers ?? []).length === 0
    ? undefined
    : yield* webhookCertificate(flags.webhookCertDir.value, webhookHosts(operator, namespace))
  return Yaml.stringify(objects(operator, {
    image: flags.image.value,
    namespace,
    replicas: Option.getOrUndefined(flags.replicas),
    webhookCertificate: kept
  }, resources))
})

/**
 * The `manifests` subcommand.
 *
 * @example
 * import { Command } from "effect/cli"
 * import * as ManifestsCommand from "./ManifestsCommand.ts"
 * const kubefx = Command.make("kubefx").pipe(Command.withSubcommands([ManifestsCommand.command]))
 */
export const command = Command.make(
  "manifests",
  {
    modules: Argument.String("module").pipe(
      Argument.withDescription("Modules exporting the operator (Operator.make) or its controllers, and its custom resources"),
      Argument.variadic({ min: 1 })
    ),
    image: Flag.String("image").pipe(Flag.withDescription("The operator's container image (required)"), Flag.optional),
    namespace: Flag.String("namespace").pipe(Flag.withDescription("Where the operator runs (default: its name)"), Flag.optional),
    replicas: Flag.Int("replicas").pipe(
      Flag.withDescription("Replicas of the Deployment (default 1, with leader election the others stand by; a sharded operator's sharding.replicas, default 3)"),
      Flag.optional
    ),
    name: Flag.String("name").pipe(Flag.withDescription("Names an operator given as bare controllers"), Flag.optional),
    webhookCertDir: Flag.String("webhook-cert-dir").pipe(
      Flag.withDescription("Keeps the webhooks' serving certificate here (tls.crt, tls.key): read when there, written when not, so a new run changes nothing"),
      Flag.optional
    )
  },
  ({ modules, ...flags }) => render(modules, flags).pipe(Effect.flatMap((yaml) => Console.log(yaml.trimEnd())))
).pipe(
  Command.withDescription("Print what a cluster needs to run the operator, as YAML for kubectl apply -f -"),
  Command.withExamples([
    { command: "kubefx manifests src/operator.ts --image ghcr.io/acme/my-operator:0.1.0 | kubectl apply -f -", description: "Deploy the operator" }
  ])
)
