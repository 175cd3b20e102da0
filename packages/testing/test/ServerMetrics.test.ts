/**
 * Reading the server's Prometheus text: series with and without labels, escaped label values,
 * comments and blank lines skipped; sums over the series whose labels include the given ones.
 */
import { assert, describe, it } from "@effect/vitest"
import { ServerMetrics } from "../src/index.ts"

const text = [
  "# HELP apiserver_request_total [STABLE] Counter of apiserver requests.",
  "# TYPE apiserver_request_total counter",
  'apiserver_request_total{verb="LIST",resource="pods",code="200"} 3',
  'apiserver_request_total{verb="APPLY",resource="pods",code="200"} 2',
  'apiserver_request_total{verb="APPLY",resource="widgets",code="409"} 1',
  "",
  'odd_labels{path="/a \\"quoted\\" \\\\ path",empty=""} 7',
  "process_start_time_seconds 1.7e9"
].join("\n")

describe("ServerMetrics", () => {
  it("parses series, their labels (escapes undone) and values, skipping comments and blank lines", () => {
    const samples = ServerMetrics.parse(text)
    assert.strictEqual(samples.length, 5)
    assert.deepStrictEqual(samples[3], { name: "odd_labels", labels: { path: '/a "quoted" \\ path', empty: "" }, value: 7 })
    assert.deepStrictEqual(samples[4], { name: "process_start_time_seconds", labels: {}, value: 1.7e9 })
  })

  it("sums the series whose labels include the given ones, 0 when none does", () => {
    const samples = ServerMetrics.parse(text)
    assert.strictEqual(ServerMetrics.sum(samples, "apiserver_request_total"), 6)
    assert.strictEqual(ServerMetrics.sum(samples, "apiserver_request_total", { verb: "APPLY" }), 3)
    assert.strictEqual(ServerMetrics.sum(samples, "apiserver_request_total", { verb: "APPLY", resource: "pods" }), 2)
    assert.strictEqual(ServerMetrics.sum(samples, "apiserver_request_total", { verb: "DELETE" }), 0)
    assert.strictEqual(ServerMetrics.sum(samples, "no_such_metric"), 0)
  })
})
