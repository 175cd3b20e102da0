/**
 * Logs and traces for an operator: one JSON object per log line with the controller, key and
 * attempt of the reconcile it came from and the ids of its trace and span; and, when an OTLP
 * endpoint is configured, every reconcile's `kubefx.reconcile` span exported over OTLP/HTTP.
 *
 * @since 0.1.0
 */
import { Context, Layer, Logger, type LogLevel, References, Tracer } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"

export interface Options {
  /** "json" (the default): one object per line on stdout; "pretty" for a terminal. */
  readonly logFormat?: "json" | "pretty" | undefined
  /** Default Info. */
  readonly logLevel?: LogLevel.LogLevel | undefined
  /**
   * OTLP/HTTP base URL of a collector ("http://otel-collector:4318"); default
   * `$OTEL_EXPORTER_OTLP_ENDPOINT`. Without one, spans are not exported.
   */
  readonly otlpEndpoint?: string | undefined
  /** The `service.name` of exported spans; default `$OTEL_SERVICE_NAME` or "kubefx". */
  readonly serviceName?: string | undefined
}

/** One log line as `jsonLogger` writes it. */
export interface Record {
  readonly timestamp: string
  readonly level: string
  readonly message: unknown
  /** The log annotations: controller, key and attempt inside a reconcile, and any others. */
  readonly [annotation: string]: unknown
  readonly traceId?: string | undefined
  readonly spanId?: string | undefined
  readonly cause?: string | undefined
}

/**
 * Formats a log entry as a flat record: fixed fields, then the annotations, then the trace.
 *
 * @example
 * import { Effect, Logger } from "effect"
 * import { Telemetry } from "@kubefx/kube"
 * const lines: Array<unknown> = []
 * const capture = Logger.map(Telemetry.formatRecord, (record) => { lines.push(record) })
 * Effect.runSync(Effect.log("hi").pipe(Effect.annotateLogs({ controller: "widgets" }), Effect.provide(Logger.layer([capture]))))
 */
export const formatRecord: Logger.Logger<unknown, Record> = Logger.make((options) => {
  const structured = Logger.formatStructured.log(options)
  const span = Context.getOrUndefined(options.fiber.context, Tracer.ParentSpan)
  return {
    timestamp: structured.timestamp,
    level: structured.level,
    message: structured.message,
    ...structured.annotations,
    ...(span === undefined ? {} : { traceId: span.traceId, spanId: span.spanId }),
    ...(structured.cause === undefined ? {} : { cause: structured.cause })
  }
})

/**
 * Writes each entry as one JSON line on stdout.
 *
 * @example
 * import { Logger } from "effect"
 * import { Telemetry } from "@kubefx/kube"
 * const layer = Logger.layer([Telemetry.jsonLogger])
 */
export const jsonLogger: Logger.Logger<unknown, void> = Logger.withConsoleLog(Logger.map(formatRecord, (record) => JSON.stringify(record)))

/**
 * Logging (JSON by default) and, with an endpoint, OTLP trace export.
 *
 * @example
 * import { Effect } from "effect"
 * import { Telemetry } from "@kubefx/kube"
 * const program = Effect.log("started").pipe(Effect.provide(Telemetry.layer({ otlpEndpoint: "http://127.0.0.1:4318" })))
 */
export const layer = (options: Options = {}): Layer.Layer<never> => {
  const logging = Layer.mergeAll(
    Logger.layer([options.logFormat === "pretty" ? Logger.consolePretty() : jsonLogger]),
    Layer.succeed(References.MinimumLogLevel, options.logLevel ?? "Info")
  )
  const endpoint = options.otlpEndpoint ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT
  if (endpoint === undefined || endpoint === "") return logging
  const tracing = OtlpTracer.layer({
    url: `${endpoint.replace(/\/$/, "")}/v1/traces`,
    resource: { serviceName: options.serviceName ?? process.env.OTEL_SERVICE_NAME ?? "kubefx" },
    exportInterval: "1 second"
  }).pipe(Layer.provide([OtlpSerialization.layerJson, FetchHttpClient.layer]))
  // The tracer is a reference, so the layer's only visible output is the exporter's Flusher.
  return Layer.mergeAll(logging, tracing as Layer.Layer<unknown> as Layer.Layer<never>)
}
