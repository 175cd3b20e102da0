/**
 * The files of a new operator project (`kubefx init`): one custom resource declared with
 * `effect/Schema`, its controller (Ready condition, an owned ConfigMap, a finalizer, a periodic
 * requeue), the operator's main kept apart from the definitions (so `kubefx crd|rbac|dev` can read
 * them without starting anything), a sample, a test on the test kit, a README, a `.gitignore` and a
 * Dockerfile.
 *
 * @since 0.1.0
 */

export interface Options {
  /** The project's name: a DNS-1123 label, used for the package, the operator and the group. */
  readonly name: string
  /**
   * How the @kubefx packages are required: a registry version, or `file:` specs per package. With
   * `file:` specs, `apiserver` (a dependency of cli and testing) and `schema` (of kube and
   * apiserver) must be given too.
   */
  readonly kubefx: Readonly<Record<"core" | "kube" | "cli" | "testing", string>> & {
    readonly apiserver?: string
    readonly schema?: string
  }
}

/** A file of the project: its path relative to the project and its text. */
export interface File {
  readonly path: string
  readonly text: string
}

/** The versions the project pins, the ones kubefx is built and tested with. */
export const versions = {
  effect: "4.1.0",
  platformNode: "4.1.0",
  effectVitest: "4.0.5",
  vitest: "5.1.1",
  typescript: "7.0.2",
  typesNode: "24.19.2",
  node: "24.21.0"
} as const

const packageJson = (options: Options): string =>
  `${JSON.stringify({
    name: options.name,
    version: "0.1.0",
    private: true,
    type: "module",
    description: `The ${options.name} Kubernetes operator, written with kubefx`,
    engines: { node: ">=22.19" },
    scripts: {
      // exec: the signal a process manager sends npm reaches kubefx dev itself.
      start: "exec kubefx dev src/greeting.ts",
      test: "tsc --noEmit && vitest run",
      crd: "kubefx crd src/greeting.ts",
      manifests: "kubefx manifests src/operator.ts"
    },
    dependencies: {
      "@effect/platform-node": versions.platformNode,
      "@kubefx/core": options.kubefx.core,
      "@kubefx/kube": options.kubefx.kube,
      // From vendored tarballs, the dependencies between kubefx packages resolve to them too.
      ...(options.kubefx.schema === undefined ? {} : { "@kubefx/schema": options.kubefx.schema }),
      effect: versions.effect
    },
    devDependencies: {
      "@effect/vitest": versions.effectVitest,
      ...(options.kubefx.apiserver === undefined ? {} : { "@kubefx/apiserver": options.kubefx.apiserver }),
      "@kubefx/cli": options.kubefx.cli,
      "@kubefx/testing": options.kubefx.testing,
      "@types/node": versions.typesNode,
      node: versions.node,
      typescript: versions.typescript,
      vitest: versions.vitest
    },
    // The \`node\` package's install script puts Node's binary in place; npm runs a dependency's
    // install scripts only when the project allows them (it still warns, and runs them, for now).
    allowScripts: { node: true }
  }, null, 2)}\n`

const tsconfig = `${JSON.stringify({
  compilerOptions: {
    target: "ES2023",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    types: ["node"],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUnusedLocals: true,
    verbatimModuleSyntax: true,
    erasableSyntaxOnly: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true
  },
  include: ["src", "test"]
}, null, 2)}\n`

const resource = (options: Options): string => `/**
 * The Greeting custom resource and its controller. This module only declares them: \`kubefx crd\`,
 * \`kubefx rbac\`, \`kubefx manifests\` and \`kubefx dev\` import it, so it must not start anything
 * (src/main.ts runs the operator).
 */
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Resource } from "@kubefx/kube"
import { Effect, Schema } from "effect"

export const Greeting = Resource.custom({
  group: "${options.name}.example.com",
  version: "v1",
  kind: "Greeting",
  plural: "greetings",
  spec: Schema.Struct({
    /** Whom to greet. */
    name: Schema.String.check(Schema.isMinLength(1)),
    /** How often the greeting is refreshed, in seconds. */
    refreshSeconds: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(10)))
  }),
  status: Schema.Struct({
    ...Conditions.statusFields,
    configMapName: Schema.optionalKey(Schema.String)
  }),
  printerColumns: [
    { name: "Name", type: "string", jsonPath: ".spec.name" },
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' }
  ]
})
export type Greeting = typeof Greeting.schema.Type

/** The ConfigMap a Greeting owns. */
export const configMapName = (greeting: Greeting): string => \`\${greeting.metadata.name}-greeting\`

/**
 * Applies the Greeting's ConfigMap (owned: edits are reverted, it is collected with the Greeting),
 * records its name in status and looks again after refreshSeconds. kubefx sets Ready=True after a
 * successful run and Ready=False with the error's message after a failed one. Made once with
 * Effect.fnUntraced: a function returning Effect.gen would make a generator function per run,
 * which V8 keeps, with what the run captured, until a full collection.
 */
export const reconcile = Effect.fnUntraced(function*(greeting: Greeting, ctx: Controller.Context<Greeting>) {
  const name = configMapName(greeting)
  yield* ctx.applyOwned(Builtins.ConfigMap, {
    metadata: { name },
    data: { message: \`Hello, \${greeting.spec.name}!\`, refreshedAt: new Date().toISOString() }
  })
  // Sent with Ready in the run's one status write, and not at all once it holds.
  yield* ctx.applyStatus({ status: { configMapName: name } })
  return Outcome.requeueAfter(\`\${greeting.spec.refreshSeconds ?? 300} seconds\`)
})

export const definition = Controller.define({
  name: "greetings",
  for: Greeting,
  owns: [Builtins.ConfigMap],
  // applyOwned puts this label on, and only the ConfigMaps that carry it are cached: not every
  // ConfigMap of the cluster.
  ownedLabels: { "app.kubernetes.io/managed-by": "greetings" },
  reconcile,
  // With a cleanup, the controller adds its finalizer and the Greeting is deleted only once this
  // succeeded: the place to release what lives outside the cluster.
  cleanup: (greeting) => Effect.logInfo(\`goodbye, \${greeting.spec.name}\`)
})

/** The samples \`kubefx dev\` applies once the operator runs. */
export const samples = new URL("../samples/", import.meta.url)
`

const operator = (options: Options): string => `/**
 * The operator: the Greeting controller, one active replica at a time. Only declared here, so
 * \`kubefx manifests src/operator.ts\` can read it; src/main.ts runs it.
 */
import { Operator } from "@kubefx/kube"
import { definition } from "./greeting.ts"

export const operator = Operator.make({
  name: "${options.name}",
  controllers: [definition],
  // The others wait for the Lease, in the pod's namespace (\`kubefx manifests\` sets POD_NAMESPACE).
  leaderElection: { namespace: process.env.POD_NAMESPACE ?? "default" }
})
`

const main = `/**
 * The operator's process: against the cluster of $KUBECONFIG, ~/.kube/config or the pod's service
 * account, with probes and metrics on its HTTP server ($KUBEFX_HTTP_HOST, $KUBEFX_HTTP_PORT), JSON
 * logs, and a graceful shutdown on SIGTERM.
 */
import { Operator } from "@kubefx/kube"
import { operator } from "./operator.ts"

Operator.main(operator)
`

const sample = (options: Options): string => `apiVersion: ${options.name}.example.com/v1
kind: Greeting
metadata:
  name: world
  namespace: default
spec:
  name: World
  refreshSeconds: 60
`

const test = `import { assert, layer } from "@effect/vitest"
import { Builtins, Kube } from "@kubefx/kube"
import { Await, Samples, TestCluster } from "@kubefx/testing"
import { Effect } from "effect"
import { definition, Greeting } from "../src/greeting.ts"

// The embedded API server with the CRD, and the controller in-process, for this file.
const cluster = TestCluster.layer({ resources: [Greeting], controllers: [definition] })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("greetings", (it) => {
  it.effect("a Greeting gets its ConfigMap and Ready; deleting it collects the ConfigMap", () =>
    Effect.gen(function*() {
      const namespace = yield* TestCluster.namespace
      yield* Samples.apply(Greeting, { metadata: { name: "world", namespace }, spec: { name: "World" } })
      const greeting = yield* Await.condition(Greeting, "world", namespace, "Ready")
      assert.strictEqual(greeting.status?.configMapName, "world-greeting")
      const configMap = yield* Await.until(Builtins.ConfigMap, "world-greeting", namespace, () => true)
      assert.strictEqual(configMap.data?.message, "Hello, World!")

      const kube = yield* Kube.Kube
      yield* kube.delete(Greeting, "world", namespace)
      yield* Await.deleted(Greeting, "world", namespace)
      yield* Await.deleted(Builtins.ConfigMap, "world-greeting", namespace)
    }))
})
`

const readme = (options: Options): string => `# ${options.name}

A Kubernetes operator written with [kubefx](https://github.com/kubefx/kubefx): the \`Greeting\`
custom resource (\`src/greeting.ts\`) and its controller, which gives each Greeting a ConfigMap, a
\`Ready\` condition and a finalizer, and refreshes it periodically.

\`\`\`sh
npm install && npm start   # the operator on the embedded Kubernetes API server, with samples/ applied
npm install && npm test    # type check and the tests (test/), each file on its own embedded server
\`\`\`

\`npm start\` runs the operator as it will be deployed: as a ServiceAccount holding only the
ClusterRole its controller derives (\`npx kubefx rbac src/operator.ts\` prints it). A reconciler
that needs more says so with a 403 in its \`Ready\` condition; declare the rules in the controller's
\`rbac\`. While \`npm start\` runs, use it like a cluster:

\`\`\`sh
export KUBECONFIG=$PWD/.kubefx/kubeconfig
kubectl get greetings -A
kubectl apply -f samples/
\`\`\`

Node.js 24 comes with the project (the \`node\` package), so \`npm start\` and \`npm test\` work
wherever npm does; the operator itself needs Node.js 22.19 or newer.

## Deploy

\`\`\`sh
docker build -t ${options.name}:0.1.0 .
npx kubefx manifests src/operator.ts --image ${options.name}:0.1.0 | kubectl apply -f -
\`\`\`

\`kubefx manifests\` prints the CRD, a Namespace, a ServiceAccount, the least-privilege RBAC, the
Deployment (probes, metrics, a restricted security context) and a metrics Service. \`src/main.ts\`
runs the operator; keep it apart from \`src/greeting.ts\` and \`src/operator.ts\`, which only declare
(the kubefx commands import them, and the image's build runs \`src/operator.ts\` to fill Node's
compile cache, so each start of the operator reads its modules' compiled code).
`

const gitignore = `node_modules/
.kubefx/
dist/
*.tgz
`

const dockerfile = `# The operator's image: Node.js 24 runs src/main.ts directly (it strips the types), as a non-root
# user, with the production dependencies only and V8's code for its modules already compiled.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY vendor ./vendor
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY src ./src
# The image's node user, by number: a pod's runAsNonRoot (kubefx manifests sets it) cannot check a
# user given by name, and the kubelet would refuse to start the container.
USER 1000:1000
# Node's compile cache, filled once here by running src/operator.ts, which loads the operator's
# modules and only declares it, so every start reads their compiled code instead of compiling them
# again. Node keeps a cache per user: it is filled as the user the operator runs as.
ENV NODE_COMPILE_CACHE=/home/node/.cache/node-compile-cache
RUN node src/operator.ts
CMD ["node", "src/main.ts"]
`

/**
 * The files of a new project named `options.name`.
 *
 * @example
 * import * as ProjectTemplate from "./ProjectTemplate.ts"
 * const files = ProjectTemplate.files({ name: "hello", kubefx: { core: "0.1.0", kube: "0.1.0", cli: "0.1.0", testing: "0.1.0" } })
 * files.map((f) => f.path) // ["package.json", "tsconfig.json", "src/greeting.ts", ...]
 */
export const files = (options: Options): ReadonlyArray<File> => [
  { path: "package.json", text: packageJson(options) },
  { path: "tsconfig.json", text: tsconfig },
  { path: "src/greeting.ts", text: resource(options) },
  { path: "src/operator.ts", text: operator(options) },
  { path: "src/main.ts", text: main },
  { path: "samples/greeting.yaml", text: sample(options) },
  { path: "test/greeting.test.ts", text: test },
  { path: "README.md", text: readme(options) },
  { path: ".gitignore", text: gitignore },
  { path: "Dockerfile", text: dockerfile },
  { path: "vendor/README.md", text: "Package tarballs the project installs from (`kubefx init --from`), empty otherwise.\n" }
]
