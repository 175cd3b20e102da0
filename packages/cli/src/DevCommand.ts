/**
 * `kubefx dev [modules...]`: runs operators against the embedded API server (or, with
 * `--kubeconfig`, any cluster), the way a newcomer first meets kubefx. It starts the API server on
 * 127.0.0.1:6443 with the workload simulator and writes `.kubefx/kubeconfig`, installs the modules'
 * CRDs, starts their services (the examples' fake object store on 127.0.0.1:8090) and all their
 * controllers in one operator with its HTTP server on 127.0.0.1:8080, applies their samples, and
 * prints a live summary until Ctrl-C or SIGTERM, then shuts down gracefully. Logs go to
 * `.kubefx/dev.log` so the summary stays readable.
 */
import { ApiServer, Certificate, WorkloadSimulator } from "@kubefx/apiserver"
import { Crd, Kube, type KubeError, Operator, Resource, Telemetry, Webhook } from "@kubefx/kube"
import { ConfigProvider, Console, Effect, Layer, Logger, Option, Schema } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import * as DevModule from "./DevModule.ts"
import * as DevServiceAccount from "./DevServiceAccount.ts"
import * as DevWatch from "./DevWatch.ts"
import * as Ports from "./Ports.ts"
import * as Summary from "./Summary.ts"

/** The field manager of the samples `kubefx dev` applies, so your later `kubectl apply` can take over. */
export const samplesFieldManager = "kubefx-dev"


/** `kubefx dev` cannot start: a port it needs is in use, or there is nothing to run. */
export class DevCommandError extends Schema.TaggedError<DevCommandError>()("DevCommandError", { message: Schema.String }) {
  override get [CliError.userMessage]() {
    return this.message
  }
}

/** A sample names a kind none of the modules serves. */
export class SampleError extends Schema.TaggedError<SampleError>()("SampleError", { message: Schema.String }) {}

/**
 * Server-side applies one sample document with the resource its apiVersion and kind name.
 *
 * @example
 * import * as DevCommand from "./DevCommand.ts"
 * declare const Widget: import("@kubefx/kube").Crd.CustomResource
 * const applied = DevCommand.applySample([Widget], { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "a" }, spec: {} })
 */
export const applySample = (
  resources: ReadonlyArray<Resource.Resource<any>>,
  document: Record<string, unknown>
): Effect.Effect<void, SampleError | KubeError.KubeError | Resource.DecodeError, Kube.Kube> =>
  Effect.gen(function*() {
    const [group, version] = String(document.apiVersion ?? "").split("/")
    // A sample may be written in any version the resource serves (the API server converts it).
    const resource = resources.find((r) =>
      r.group === group && r.kind === document.kind && (r.version === version || (r.custom?.versions ?? []).some((v) => v.name === version))
    )
    const metadata = document.metadata as { name?: string; namespace?: string } | undefined
    if (resource === undefined || metadata?.name === undefined) {
      return yield* new SampleError({ message: `no module serves ${String(document.apiVersion)} ${String(document.kind)}` })
    }
    const kube = yield* Kube.Kube
    const namespace = resource.namespaced ? metadata.namespace ?? "default" : undefined
    const body = { ...document, metadata: { ...metadata, name: metadata.name, namespace } }
    if (resource.version === version) {
      yield* kube.apply(resource, body, { fieldManager: samplesFieldManager, force: true })
      return
    }
    yield* kube.request({
      method: "PATCH",
      path: Resource.objectPath({ ...resource, version: version ?? resource.version }, namespace, metadata.name),
      query: { fieldManager: samplesFieldManager, force: "true" },
      contentType: "application/apply-patch+yaml",
      body
    })
  })

// Logs of the session go to a file: JSON lines, as `Telemetry.jsonLogger` writes them.
const fileLogger = (file: string) =>
  Logger.map(Telemetry.formatRecord, (record) => {
    appendFileSync(file, JSON.stringify(record) + "\n")
  })

/**
 * The `dev` subcommand.
 *
 * @example
 * import { Command } from "effect/cli"
 * import * as DevCommand from "./DevCommand.ts"
 * const kubefx = Command.make("kubefx").pipe(Command.withSubcommands([DevCommand.command]))
 */
export const command = Command.make(
  "dev",
  {
    modules: Argument.String("module").pipe(
      Argument.withDescription("Modules exporting controllers (default: every examples/*/src/index.ts)"),
      Argument.variadic()
    ),
    port: Flag.Int("port").pipe(
      Flag.withDescription("Port of the embedded API server (0: a free one; default 6443)"),
      Flag.withDefault(6443)
    ),
    httpPort: Flag.Int("http-port").pipe(
      Flag.withDescription("Port of the operator's HTTP server: probes, metrics, controllers, dashboard (0: a free one; default 8080)"),
      Flag.withDefault(8080)
    ),
    storePort: Flag.Int("store-port").pipe(
      Flag.withDescription("Port of the examples' fake object store (0: a free one; default 8090)"),
      Flag.withDefault(8090)
    ),
    watch: Flag.Boolean("watch").pipe(
      Flag.withDescription("Restart the operator when a file under its modules' directories changes; the API server keeps running"),
      Flag.withDefault(false)
    ),
    dataDir: Flag.String("data-dir").pipe(
      Flag.withDescription("Keep the embedded API server's objects in this directory, across restarts (default: in memory)"),
      Flag.optional
    ),
    kubeconfig: Flag.String("kubeconfig").pipe(
      Flag.withDescription("Run against this cluster instead of the embedded API server"),
      Flag.optional
    ),
    serviceAccount: Flag.Boolean("service-account").pipe(
      Flag.withDescription(
        "With --kubeconfig: run the operator as the ServiceAccount kubefx-dev holding only its derived ClusterRole, created with the kubeconfig's credentials (always so on the embedded server)"
      ),
      Flag.withDefault(false)
    ),
    administrator: Flag.Boolean("administrator").pipe(
      Flag.withDescription("Run the operator with the administrator's credentials, not as its ServiceAccount, on the embedded server too"),
      Flag.withDefault(false)
    ),
    dir: Flag.String("dir").pipe(
      Flag.withDescription("Where to write the embedded server's kubeconfig and the session log (default .kubefx)"),
      Flag.withDefault(".kubefx")
    ),
    loadBalancerAddresses: Flag.String("load-balancer-addresses").pipe(
      Flag.withDescription(
        "An IPv4 pool (172.18.255.200/29) the embedded server's LoadBalancer Services get addresses from, as a cloud's (default: none, they stay pending as on kind)"
      ),
      Flag.optional
    ),
    nodeCapacity: Flag.String("node-capacity").pipe(
      Flag.withDescription(
        "What the embedded server's node has, in place of the host's cpus and memory and 110 pods: cpu=4,memory=8Gi,nvidia.com/gpu=2 (pods stay Pending where their requests do not fit)"
      ),
      Flag.optional
    )
  },
  (flags) => run(flags).pipe(Effect.scoped, Effect.provide(Logger.layer([fileLogger(path.join(flags.dir, "dev.log"))])))
).pipe(Command.withDescription("Run operators on the embedded API server (or a cluster), with a live summary"))

interface Flags {
  readonly modules: ReadonlyArray<string>
  readonly port: number
  readonly httpPort: number
  readonly storePort: number
  readonly kubeconfig: Option.Option<string>
  readonly serviceAccount: boolean
  readonly administrator: boolean
  readonly dataDir: Option.Option<string>
  readonly watch: boolean
  readonly dir: string
  readonly loadBalancerAddresses: Option.Option<string>
  readonly nodeCapacity: Option.Option<string>
}

// `cpu=4,memory=8Gi` as a resource's quantity each; the quantities are the simulator's to check.
const capacities = (text: string): Effect.Effect<Record<string, string>, DevCommandError> => {
  const pairs = text.split(",").map((pair) => pair.trim()).filter((pair) => pair !== "").map((pair) => pair.split("="))
  const wrong = pairs.find((pair) => pair.length !== 2 || pair[0]!.trim() === "")
  return wrong !== undefined || pairs.length === 0
    ? Effect.fail(new DevCommandError({ message: `--node-capacity takes resource=quantity pairs such as cpu=4,memory=8Gi, not ${text}` }))
    : Effect.succeed(Object.fromEntries(pairs.map(([name, quantity]) => [name!.trim(), quantity!.trim()])))
}

// The cluster the operator talks to: the one of --kubeconfig, or the embedded server, started in
// the current scope with its kubeconfig in the session directory. Returns the kubeconfig's path.
const cluster = Effect.fnUntraced(function*(flags: Flags) {
  if (Option.isSome(flags.kubeconfig)) {
    const kubeconfigPath = path.resolve(flags.kubeconfig.value)
    yield* Console.log(`kubefx dev: cluster from ${kubeconfigPath}`)
    return kubeconfigPath
  }
  const kubeconfigPath = path.resolve(flags.dir, "kubeconfig")
  const pool = Option.getOrUndefined(flags.loadBalancerAddresses)
  const nodeCapacity = Option.isSome(flags.nodeCapacity) ? yield* capacities(flags.nodeCapacity.value) : undefined
  // The simulator refuses a pool that is not one, and a quantity that is not one; said here with the flag's name.
  const simulator = pool === undefined && nodeCapacity === undefined ? WorkloadSimulator.controller : yield* Effect.try({
    try: () => WorkloadSimulator.make({ loadBalancerAddresses: pool, nodeCapacity }),
    catch: (error) =>
      new DevCommandError({
        message: (error instanceof Error ? error.message : String(error))
          .replace(/^loadBalancerAddresses/, "--load-balancer-addresses")
          .replace(/^nodeCapacity/, "--node-capacity")
      })
  })
  const server = yield* ApiServer.make({
    port: flags.port,
    kubeconfigPath,
    controllers: [simulator],
    publishRootCa: true,
    ...(Option.isSome(flags.dataDir) ? { dataDir: path.resolve(flags.dataDir.value) } : {})
  })
  yield* Console.log(`kubefx dev: API server ${server.httpsUrl} (kubectl --kubeconfig ${path.join(flags.dir, "kubeconfig")} get all -A)`)
  return kubeconfigPath
})

// Whether the operator runs as its ServiceAccount: on the embedded server unless --administrator,
// on a --kubeconfig cluster when --service-account asks.
const asServiceAccount = (flags: Flags): boolean =>
  !flags.administrator && (Option.isNone(flags.kubeconfig) || flags.serviceAccount)

// --watch: this process keeps the API server; a child runs the operator and restarts on changes.
const watching = Effect.fn("DevCommand.watching")(function*(flags: Flags, files: ReadonlyArray<string>) {
  const busy = yield* Ports.busy("127.0.0.1", Option.isSome(flags.kubeconfig) ? [] : [{ port: flags.port, flag: "--port" }])
  if (busy.length > 0) return yield* new DevCommandError({ message: busy.join(", ") })
  const kubeconfigPath = yield* cluster(flags)
  return yield* DevWatch.run({
    files,
    childArgs: [
      ...files,
      "--kubeconfig",
      kubeconfigPath,
      ...(asServiceAccount(flags) ? ["--service-account"] : []),
      "--http-port",
      `${flags.httpPort}`,
      "--store-port",
      `${flags.storePort}`,
      "--dir",
      flags.dir
    ]
  })
})

const run = Effect.fn("DevCommand")(function*(flags: Flags) {
  const logFile = path.join(flags.dir, "dev.log")
  mkdirSync(flags.dir, { recursive: true })
  const files = flags.modules.length > 0 ? flags.modules : DevModule.discover(process.cwd())
  if (files.length === 0) {
    return yield* new DevCommandError({ message: "no modules given and no examples/*/src/index.ts here" })
  }
  if (flags.watch) return yield* watching(flags, files)
  const modules = yield* Effect.forEach(files, DevModule.load)
  // Every check before the first write: a start that fails leaves another instance's files alone.
  const busy = yield* Ports.busy("127.0.0.1", [
    ...(Option.isSome(flags.kubeconfig) ? [] : [{ port: flags.port, flag: "--port" }]),
    // Not --store-port: a module's own layer decides whether it serves there or only connects.
    { port: flags.httpPort, flag: "--http-port" }
  ])
  if (busy.length > 0) return yield* new DevCommandError({ message: busy.join(", ") })
  writeFileSync(logFile, "")
  const resources = modules.flatMap((module) => module.resources)

  const kubeconfigPath = yield* cluster(flags)

  // The services the modules' controllers need (the examples' fake object store).
  const moduleLayers = modules.flatMap((module) => module.layer === undefined ? [] : [module.layer])
  const services: Layer.Layer<any, unknown> = moduleLayers.length === 0
    ? Layer.empty as unknown as Layer.Layer<any, unknown>
    : Layer.mergeAll(moduleLayers[0]!, ...moduleLayers.slice(1)).pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ KUBEFX_OBJECT_STORE_PORT: flags.storePort })))
    )

  return yield* Effect.gen(function*() {
    yield* Crd.install(resources, { fieldManager: samplesFieldManager })
    // A cluster of --kubeconfig cannot call back to this machine's loopback: webhooks run only on the embedded server.
    const hooks = Option.isSome(flags.kubeconfig) ? [] : modules.flatMap((module) => module.webhooks)
    const tls = hooks.length === 0 ? undefined : Certificate.selfSigned(["127.0.0.1"])
    const operator = Operator.make({
      name: "kubefx-dev",
      controllers: modules.flatMap((module) => module.definitions),
      http: { port: flags.httpPort, host: "127.0.0.1" },
      ...(tls === undefined ? {} : { webhooks: { handlers: hooks, host: "127.0.0.1", port: 0, tls } })
    })
    // Its own client, built in this scope so that it lives as long as the operator's fibers.
    const operatorKube = asServiceAccount(flags)
      ? yield* Effect.gen(function*() {
        const operatorKubeconfig = path.join(flags.dir, "operator-kubeconfig")
        const identity = yield* DevServiceAccount.prepare(operator, kubeconfigPath, operatorKubeconfig).pipe(
          Effect.catchTag("DevServiceAccountError", (error) => Effect.fail(new DevCommandError({ message: error.message })))
        )
        yield* Console.log(`kubefx dev: operator as ${identity.user}, holding only ClusterRole ${DevServiceAccount.name} (${identity.rules} rules: kubefx rbac prints them)`)
        return yield* Layer.build(Kube.layer({ _tag: "File", path: operatorKubeconfig }))
      })
      : yield* Effect.context<Kube.Kube>()
    const running = yield* Operator.start(operator).pipe(Effect.provideContext(operatorKube))
    yield* Console.log(`kubefx dev: operator ${running.url} (dashboard /, /metrics, /controllers, /readyz)`)
    if (tls !== undefined && running.webhookUrl !== undefined) {
      yield* Webhook.register("kubefx-dev", hooks, { url: running.webhookUrl, caBundle: Buffer.from(tls.cert).toString("base64") })
      yield* Console.log(`kubefx dev: ${hooks.length} webhooks on ${running.webhookUrl}, registered for the session`)
    }
    const samples = modules.flatMap((module) => module.samples)
    yield* Effect.forEach(samples, (sample) => applySample(resources, sample.document), { discard: true })
    yield* Console.log(`kubefx dev: applied ${samples.length} samples; logs in ${logFile}; Ctrl-C to stop`)
    return yield* Summary.follow(running, {
      tty: process.stdout.isTTY === true,
      write: (text) => void process.stdout.write(text)
    })
  }).pipe(
    Effect.provide(Layer.provideMerge(services, Kube.layer({ _tag: "File", path: kubeconfigPath })))
  )
})
