/**
 * Telemetry: a reconcile's span exported to an OTLP/HTTP collector (a fake one on a loopback
 * port), and JSON log records that carry the reconcile's controller, key, attempt and trace ids.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube, Operator, Telemetry } from "@kubefx/kube"
import { Effect, Logger } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ensure, eventually, layer as cluster, namespace } from "./support.ts"

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly name: string
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: { readonly stringValue?: string; readonly intValue?: string | number } }>
}

/** A collector that keeps every span posted to /v1/traces. */
const collector = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly spans: Array<OtlpSpan>; readonly close: () => void }>((resume) => {
    const spans: Array<OtlpSpan> = []
    const server = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => body += chunk)
      request.on("end", () => {
        if (request.url === "/v1/traces") {
          const data = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<OtlpSpan> }> }> }
          for (const resource of data.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans)
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans,
        close: () => server.close()
      })))
  }),
  (server) => Effect.sync(server.close)
)

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Telemetry", (it) => {
  it.effect("exports a kubefx.reconcile span per reconcile over OTLP, and the reconcile's log records carry its trace", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const otlp = yield* collector
      const records: Array<Telemetry.Record> = []
      const capture = Logger.map(Telemetry.formatRecord, (record) => {
        records.push(record)
      })
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "traced", namespace: ns } })
      yield* Effect.scoped(Effect.gen(function*() {
        const running = yield* Operator.start(Operator.make({
          name: "traced",
          http: false,
          controllers: [Controller.define({
            name: "traced",
            for: Builtins.ConfigMap,
            namespace: ns,
            reconcile: () => Effect.logInfo("reconciling").pipe(Effect.as(Outcome.done))
          })]
        }))
        yield* eventually(Effect.suspend(() => ensure(records.some((r) => r.message === "reconciling"), "not reconciled")))
        yield* running.shutdown
      })).pipe(
        // Records are captured instead of printed: the capture logger replaces the JSON one.
        Effect.provide(Logger.layer([capture])),
        Effect.provide(Telemetry.layer({ otlpEndpoint: otlp.url, serviceName: "kubefx-test" }))
      )
      // Closing the telemetry layer flushed the spans.
      const span = otlp.spans.find((s) => s.name === "kubefx.reconcile")
      assert.isDefined(span)
      const attributes = Object.fromEntries(span!.attributes.map((a) => [a.key, a.value.stringValue ?? Number(a.value.intValue)]))
      assert.deepInclude(attributes, { "kubefx.controller": "traced", "kubefx.key": `${ns}/traced`, "kubefx.attempt": 0, "kubefx.trigger": "event" })
      const record = records.find((r) => r.message === "reconciling")!
      assert.deepInclude(record, { level: "INFO", controller: "traced", key: `${ns}/traced`, attempt: 0, traceId: span!.traceId })
      assert.match(record.timestamp, /^\d{4}-\d{2}-\d{2}T/)
    }))
})
