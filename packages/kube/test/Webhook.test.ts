/**
 * Admission webhooks end to end: an operator serves a validating and a mutating webhook over
 * HTTPS, their configurations are registered with the CA bundle, and the embedded API server calls
 * them on writes — typed requests in, JSON patches computed from the returned object out.
 */
import { assert, layer } from "@effect/vitest"
import { Certificate } from "@kubefx/apiserver"
import { Kube, Operator, Resource, Webhook } from "@kubefx/kube"
import { Context, Effect, Exit, Metric, References, Schedule, Schema, Scope } from "effect"
import { X509Certificate } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect } from "node:tls"
import { installCrd, layer as cluster, namespace } from "./support.ts"
import { Widget } from "./fixtures/Widget.ts"

class Overloaded extends Schema.TaggedError<Overloaded>()("Overloaded", { message: Schema.String }) {}

const seen: Array<Webhook.Request<typeof Widget.schema.Type>> = []

const evenReplicas = Webhook.validating({
  name: "vwidget.demo.kubefx.dev",
  resource: Widget,
  operations: ["CREATE", "UPDATE", "DELETE"],
  validate: (request) =>
    Effect.gen(function*() {
      seen.push(request)
      const widget = request.object
      if (widget === undefined) return Webhook.allow()
      if (widget.spec.message === "overload") return yield* new Overloaded({ message: "the validator is overloaded" })
      if (widget.spec.replicas % 2 === 1) return Webhook.deny(`replicas must be even, not ${widget.spec.replicas}`, { code: 422, reason: "Invalid" })
      return Webhook.allow({ warnings: widget.spec.mode === undefined ? ["spec.mode defaults to fast"] : [] })
    })
})

const defaultMode = Webhook.mutating({
  name: "mwidget.demo.kubefx.dev",
  resource: Widget,
  mutate: (widget) =>
    Effect.succeed(widget.spec.mode !== undefined ? widget : {
      ...widget,
      metadata: { ...widget.metadata, labels: { ...widget.metadata.labels, "demo.kubefx.dev/defaulted": "mode" } },
      spec: { ...widget.spec, mode: "fast" as const }
    })
})

const certificate = Certificate.selfSigned(["127.0.0.1"])

const widget = (ns: string, name: string, spec: typeof Widget.schema.Type.spec) =>
  ({ apiVersion: Widget.apiVersion, kind: Widget.kind, metadata: { name, namespace: ns }, spec })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Webhook", (it) => {
  it.effect("an operator's webhooks, registered with their CA bundle, validate and mutate the API server's writes", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const ns = yield* namespace
      yield* installCrd(Widget)
      // The operator runs in a scope of its own, so the test can see writes after it is gone.
      const operatorScope = yield* Scope.make()
      const registry: Context.Service.Shape<typeof Metric.MetricRegistry> = new Map()
      const running = yield* Operator.start(Operator.make({
        name: "widgets-webhooks",
        controllers: [],
        http: false,
        webhooks: { handlers: [evenReplicas, defaultMode], port: 0, tls: certificate }
      })).pipe(Effect.provideService(Metric.MetricRegistry, registry), Scope.provide(operatorScope))
      // controller-runtime's webhook series, per webhook path: requests by HTTP code, in flight, latency.
      const metric = (id: string, attributes: Record<string, string>) =>
        Effect.map(Effect.provideService(Metric.snapshot, Metric.MetricRegistry, registry), (snapshots) =>
          snapshots.find((s) => s.id === id && Object.entries(attributes).every(([k, v]) => s.attributes?.[k] === v))?.state)
      const counted = (webhook: string, code: string) =>
        Effect.map(metric("controller_runtime_webhook_requests_total", { webhook, code }), (state) => Number((state as { count: number } | undefined)?.count))
      assert.strictEqual(yield* counted(evenReplicas.path, "200"), 0)
      assert.strictEqual(yield* counted(defaultMode.path, "500"), 0)
      assert.match(running.webhookUrl ?? "", /^https:\/\/127\.0\.0\.1:\d+$/)
      const configurations = Webhook.configurations(
        "widgets-webhooks",
        [evenReplicas, defaultMode],
        { _tag: "Url", url: running.webhookUrl! },
        Buffer.from(certificate.cert).toString("base64")
      )
      assert.deepStrictEqual(configurations.map((c) => c.kind), ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"])
      for (const configuration of configurations) {
        const plural = configuration.kind === "MutatingWebhookConfiguration" ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations"
        yield* kube.request({ method: "POST", path: `/apis/admissionregistration.k8s.io/v1/${plural}`, body: configuration })
      }

      // Mutated: the stored object carries the defaulted mode and label; the validator saw them.
      const created = yield* kube.create(Widget, widget(ns, "even", { replicas: 2, message: "hi" }))
      assert.strictEqual(created.spec.mode, "fast")
      assert.strictEqual(created.metadata.labels?.["demo.kubefx.dev/defaulted"], "mode")
      const first = seen.find((r) => r.name === "even")
      assert.strictEqual(first?.operation, "CREATE")
      assert.strictEqual(first?.object?.spec.mode, "fast")
      assert.strictEqual(first?.userInfo.username, "kubefx-admin")

      // Denied, with the handler's code and message under the webhook's name.
      const odd = yield* Effect.flip(kube.create(Widget, widget(ns, "odd", { replicas: 3, message: "hi", mode: "safe" })))
      assert.strictEqual(odd._tag, "Invalid")
      assert.strictEqual(odd.message, 'admission webhook "vwidget.demo.kubefx.dev" denied the request: replicas must be even, not 3')

      // A handler's failure is a 500 answer with its message, not a crash of the server.
      const overloaded = yield* kube.request({
        method: "POST",
        path: Resource.collectionPath(Widget, ns),
        body: widget(ns, "busy", { replicas: 2, message: "overload", mode: "safe" })
      }).pipe(Effect.flip)
      assert.strictEqual(overloaded._tag, "ServerError")
      assert.strictEqual(overloaded.message, 'admission webhook "vwidget.demo.kubefx.dev" denied the request: the validator is overloaded')

      // Updates see the old object; deletes reach the validator with the object as oldObject.
      yield* kube.replace(Widget, { ...created, spec: { ...created.spec, replicas: 4 } })
      const update = seen.find((r) => r.name === "even" && r.operation === "UPDATE")
      assert.strictEqual(update?.oldObject?.spec.replicas, 2)
      assert.strictEqual(update?.object?.spec.replicas, 4)
      yield* kube.delete(Widget, "even", ns)
      const deleted = seen.find((r) => r.name === "even" && r.operation === "DELETE")
      assert.strictEqual(deleted?.object, undefined)
      assert.strictEqual(deleted?.oldObject?.spec.replicas, 4)

      // Every review the validator saw was answered (its own failure is the review's 500, not the
      // answer's), none is being served, each took a time.
      assert.strictEqual(yield* counted(evenReplicas.path, "200"), seen.length)
      assert.strictEqual(yield* counted(evenReplicas.path, "500"), 0)
      assert.isAbove(yield* counted(defaultMode.path, "200"), 0)
      const latency = (yield* metric("controller_runtime_webhook_latency_seconds", { webhook: evenReplicas.path })) as Metric.HistogramState
      assert.strictEqual(latency.count, seen.length)
      assert.isAbove(latency.sum, 0)
      assert.deepStrictEqual(yield* metric("controller_runtime_webhook_requests_in_flight", { webhook: evenReplicas.path }), { value: 0 })

      // Once the operator is gone, failurePolicy Fail refuses writes the webhooks cover.
      yield* Scope.close(operatorScope, Exit.void)
      const unreachable = yield* Effect.flip(kube.create(Widget, widget(ns, "later", { replicas: 2, message: "hi" })))
      assert.match(unreachable.message, /^Internal error occurred: failed calling webhook "mwidget\.demo\.kubefx\.dev": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/mutate-widgets\?timeout=10s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/)
      for (const configuration of configurations) {
        const plural = configuration.kind === "MutatingWebhookConfiguration" ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations"
        yield* kube.request({ method: "DELETE", path: `/apis/admissionregistration.k8s.io/v1/${plural}/widgets-webhooks` })
      }
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("serves a certificate changed in its directory to new connections, without a restart", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "kubefx-webhook-certs-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const write = (pair: { readonly cert: string; readonly key: string }) => {
        writeFileSync(join(dir, "tls.crt"), pair.cert)
        writeFileSync(join(dir, "tls.key"), pair.key)
      }
      const first = Certificate.selfSigned(["127.0.0.1"])
      write(first)
      const running = yield* Operator.start(Operator.make({
        name: "widgets-rotating",
        controllers: [],
        http: false,
        webhooks: { handlers: [evenReplicas], port: 0, certDir: dir, certCheckInterval: "50 millis" }
      })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
      const port = Number(new URL(running.webhookUrl!).port)
      // The fingerprint of the certificate a new connection is served.
      const served = Effect.callback<string>((resume) => {
        const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
          resume(Effect.succeed(socket.getPeerX509Certificate()!.fingerprint256))
          socket.destroy()
        })
        socket.on("error", (error) => resume(Effect.die(error)))
      })
      const fingerprint = (pair: { readonly cert: string }) => new X509Certificate(pair.cert).fingerprint256
      const becomes = (expected: string) =>
        served.pipe(
          Effect.filterOrFail((actual) => actual === expected),
          Effect.retry(Schedule.spaced("50 millis")),
          Effect.timeout("5 seconds")
        )
      assert.strictEqual(yield* served, fingerprint(first))
      const second = Certificate.selfSigned(["127.0.0.1"])
      write(second)
      yield* becomes(fingerprint(second))
      // A key that does not match its certificate is not taken: the one served stays.
      write({ cert: Certificate.selfSigned(["127.0.0.1"]).cert, key: second.key })
      yield* Effect.sleep("300 millis")
      assert.strictEqual(yield* served, fingerprint(second))
    }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "None")))
})
