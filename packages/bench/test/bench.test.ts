import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Report from "../src/Report.ts"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

// Runs `npm run bench` with `args` and its JSON written to a temporary file: its exit, output and JSON.
const runBench = (args: ReadonlyArray<string>, timeout: number) => {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-bench-test-"))
  try {
    const file = join(dir, "bench.json")
    const run = spawnSync(process.execPath, ["--conditions=@kubefx/source", main, ...args, "--json", file], { encoding: "utf8", timeout })
    assert.strictEqual(run.status, 0, run.stderr)
    return { run, report: JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, unknown>> }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("npm run bench", () => {
  // --smoke is --quick at tiny sizes, so the whole suite stays fast; the figures are not checked.
  // With the sharding scenario it took 102 s on two busy cores (load average about 5).
  it("writes every field of the JSON contract, each a number", () => {
    const { report, run } = runBench(["--smoke"], 230_000)
    assert.include(run.stdout, "| scenario | figure |")
    for (const [section, fields] of Object.entries(Report.contract)) {
      for (const field of fields) {
        const value = report[section]?.[field]
        assert.isTrue(typeof value === "number" && Number.isFinite(value), `${section}.${field} is ${String(value)}`)
      }
    }
    // Each Widget needs its two writes, so fewer requests would mean the count missed some.
    assert.isAtLeast(report.fleet!.kubefx_requests_per_object as number, 2)
    // The widgets reconciler states status in every run; the first run of each Widget sends it with
    // Ready (one request), a later run finds nothing to change (none).
    assert.strictEqual(report.fleet!.kubefx_status_requests_per_object, 1)
    assert.strictEqual(report.memory!.cached_objects, report.latency!.cached_objects)
    // A sample's edit is committed after it was sent, reaches the operator after that, and its
    // reconcile starts after it arrived; every arrival is seen.
    for (const section of [report.latency!, report.scale!]) {
      assert.isAbove(section.commit_p50_ms as number, 0)
      assert.isAtMost(section.commit_p50_ms as number, section.p50_ms as number)
      assert.isAtMost(section.commit_p99_ms as number, section.p99_ms as number)
      assert.strictEqual(section.arrivals_missed, 0)
      assert.isAbove(section.arrival_p50_ms as number, 0)
      assert.isAtMost(section.arrival_p50_ms as number, section.commit_p50_ms as number)
      assert.isAtMost(section.arrival_p99_ms as number, section.commit_p99_ms as number)
    }
    // The sync is part of kubefx's fleet CPU, so counting from it leaves less.
    assert.isAbove(report.fleet!.kubefx_sync_cpu_s as number, 0)
    assert.isBelow((report.fleet!.kubefx_cpu_after_sync_vs_limit as Report.Spread).median, (report.fleet!.kubefx_cpu_vs_limit as Report.Spread).median)
    // A resync of the converged fleet finds every write already made.
    assert.strictEqual(report.fleet!.kubefx_resync_requests_per_object, 0)
    // It still runs every Widget's reconciler, on CPU measured apart from the fleet's.
    assert.isAbove(report.fleet!.kubefx_resync_cpu_us_per_object as number, 0)
    assert.include(run.stdout, "us of the operator's CPU per Widget")
    // Each ratio is three side-by-side runs, their median between their extremes.
    const fleetRatios = [report.fleet!.kubefx_vs_limit, report.fleet!.kubefx_cpu_vs_limit, report.fleet!.kubefx_cpu_after_sync_vs_limit,
      report.fleet!.kubefx_cpu_second_half_vs_limit, report.fleet!.kubefx_second_half_vs_limit]
    for (const spread of fleetRatios as Array<Report.Spread>) {
      assert.strictEqual(spread.runs.length, 3)
      assert.isTrue(spread.min <= spread.median && spread.median <= spread.max, JSON.stringify(spread))
    }
    // The sharding ratios and handover times: one run each at --smoke, their median between their extremes.
    const sharding = report.sharding!
    for (const name of ["scaling_2", "scaling_4", "handover_relabel_s", "handover_s"]) {
      const spread = sharding[name] as Report.Spread
      assert.isAtLeast(spread.runs.length, 1, name)
      assert.isTrue(spread.min <= spread.median && spread.median <= spread.max, `${name}: ${JSON.stringify(spread)}`)
    }
    // Every Widget was cached by exactly one of the 4 replicas when the clock started.
    const shares = sharding.replicas_4_shares as Array<number>
    assert.lengthOf(shares, 4)
    assert.closeTo(shares.reduce((sum, share) => sum + share, 0), 1, 1e-9)
    // The killed replica owned some Widgets, and they were relabelled before they were reconciled again.
    assert.isAbove(sharding.handover_killed_keys as number, 0)
    assert.isAtMost((sharding.handover_relabel_s as Report.Spread).median, (sharding.handover_s as Report.Spread).median)
    assert.isTrue(report.engine!.ratio_min as number <= (report.engine!.ratio_median as number))
    assert.lengthOf(report.machine!.load_average_at_start as Array<number>, 3)
    assert.include(run.stdout, "load average")
  }, 240_000)

  it("runs the fleet alone at the size and pairs asked for, without the peers, and refuses a size that is not one", () => {
    const { report, run } = runBench(["--smoke", "--only", "fleet", "--fleet", "40", "--pairs", "2"], 170_000)
    assert.include(run.stdout, "fleet: kubefx, 40 Widgets to Ready (concurrency 16; median of 2)")
    assert.notInclude(run.stdout, "engine:")
    assert.deepStrictEqual(Object.keys(report).sort(), ["fleet", "machine"])
    assert.strictEqual(report.fleet!.objects, 40)
    // Of two pairs, the median is their mean.
    const cpuRatio = report.fleet!.kubefx_cpu_vs_limit as Report.Spread
    assert.lengthOf(cpuRatio.runs, 2)
    assert.closeTo(cpuRatio.median, (cpuRatio.runs[0]! + cpuRatio.runs[1]!) / 2, 1e-12)
    // At a size of its own the fleet compares kubefx with the limit; the peers run at the default size only.
    const peers: ReadonlyArray<string> = ["naive_informer_s", "dot_i_s"]
    for (const field of Report.contract.fleet) {
      const value = report.fleet![field]
      if (peers.includes(field)) assert.isUndefined(value, field)
      else assert.isTrue(typeof value === "number" && Number.isFinite(value), `fleet.${field} is ${String(value)}`)
    }
    assert.notInclude(run.stdout, "makeInformer")
    const refused = spawnSync(process.execPath, ["--conditions=@kubefx/source", main, "--only", "fleet", "--fleet", "many"], { encoding: "utf8" })
    assert.strictEqual(refused.status, 2)
    assert.include(refused.stderr, "--fleet takes a whole number of Widgets, at least 2, not many")
  }, 180_000)

  it("runs the scale scenario alone, its caches filled from lists and from streaming lists beside it", () => {
    const { report, run } = runBench(["--smoke", "--only", "scale"], 170_000)
    assert.include(run.stdout, "then from streaming lists")
    assert.notInclude(run.stdout, "fleet:")
    assert.deepStrictEqual(Object.keys(report).sort(), ["machine", "scale"])
    for (const field of Report.contract.scale) {
      const value = report.scale![field]
      assert.isTrue(typeof value === "number" && Number.isFinite(value), `scale.${field} is ${String(value)}`)
    }
    assert.isAbove(report.scale!.fill_streaming_s as number, 0)
    const refused = spawnSync(process.execPath, ["--conditions=@kubefx/source", main, "--only", "everything"], { encoding: "utf8" })
    assert.strictEqual(refused.status, 2)
    assert.include(refused.stderr, "--only takes fleet, sharding or scale, not everything")
  }, 180_000)
})
