/**
 * What one reliability scenario measured. A test fills an entry as it goes (it is attached to the
 * vitest task as metadata), and `Reporter` turns the entries of a run into
 * `reliability-report.json`, taking pass or fail from vitest's own result of the test, so a figure
 * is always what happened and a verdict always what the assertions said.
 */
import { writeFileSync } from "node:fs"
import { cpus } from "node:os"

export interface Entry {
  readonly scenario: string
  /** Objects the scenario works on. */
  objects: number
  /** Faults injected, by kind (as counted by the test or observed by the clients). */
  faultsInjected: Record<string, number>
  durationMs: number
  /** Objects found in their desired final state at the end. */
  converged: number
  /** Duplicate side effects (external buckets or allocations beyond one per object). */
  duplicates: number
  /** Acknowledged writes or desired states missing at the end. */
  lostUpdates: number
  /** Scenario-specific figures. */
  details: Record<string, unknown>
}

/** An entry as written to the report. */
export interface Result extends Entry {
  readonly test: string
  readonly passed: boolean
  readonly error?: string | undefined
}

export interface Report {
  readonly generatedAt: string
  /** Every scenario of the run passed. */
  readonly passed: boolean
  readonly environment: { readonly node: string; readonly cpus: number; readonly platform: string }
  readonly scenarios: ReadonlyArray<Result>
}

declare module "vitest" {
  interface TaskMeta {
    reliability?: Entry
  }
}

/** Where vitest keeps a test's metadata. */
export interface TaskLike {
  readonly task: { readonly meta: { reliability?: Entry } }
}

/**
 * Starts the entry of a scenario and attaches it to the running test, so that it is reported even
 * if an assertion fails later.
 *
 * @example
 * import { it } from "vitest"
 * import * as Report from "./Report.ts"
 * it("faults", (ctx) => {
 *   const entry = Report.start(ctx, "faults", 1000)
 *   entry.converged = 1000
 * })
 */
export const start = (context: TaskLike, scenario: string, objects: number): Entry => {
  const entry: Entry = {
    scenario,
    objects,
    faultsInjected: {},
    durationMs: 0,
    converged: 0,
    duplicates: 0,
    lostUpdates: 0,
    details: {}
  }
  context.task.meta.reliability = entry
  return entry
}

/**
 * Adds `n` faults of `kind` to an entry.
 *
 * @example
 * import * as Report from "./Report.ts"
 * declare const entry: Report.Entry
 * Report.count(entry, "watchesClosed", 3)
 */
export const count = (entry: Entry, kind: string, n = 1): void => {
  entry.faultsInjected[kind] = (entry.faultsInjected[kind] ?? 0) + n
}

/**
 * The report of a run.
 *
 * @example
 * import * as Report from "./Report.ts"
 * const report = Report.make([])
 */
export const make = (scenarios: ReadonlyArray<Result>): Report => ({
  generatedAt: new Date().toISOString(),
  passed: scenarios.every((scenario) => scenario.passed),
  environment: { node: process.version, cpus: cpus().length, platform: process.platform },
  scenarios
})

/** `reliability-report.json` at the repository root (git-ignored). */
export const defaultPath = new URL("../../../reliability-report.json", import.meta.url)

/**
 * Writes a report as indented JSON.
 *
 * @example
 * import * as Report from "./Report.ts"
 * Report.write(Report.make([]), Report.defaultPath)
 */
export const write = (report: Report, path: URL | string = defaultPath): void =>
  writeFileSync(path, JSON.stringify(report, null, 2) + "\n")
