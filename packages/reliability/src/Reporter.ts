/**
 * A vitest reporter: at the end of a run, the entries that reliability scenarios attached to their
 * tests become `reliability-report.json`, each with the test's verdict. Runs without a scenario
 * write nothing, so the reporter can stay in the root configuration.
 */
import type { Reporter, TestModule } from "vitest/node"
import * as Report from "./Report.ts"

const results = (modules: ReadonlyArray<TestModule>): ReadonlyArray<Report.Result> =>
  modules.flatMap((module) =>
    Array.from(module.children.allTests()).flatMap((test) => {
      const entry = test.meta().reliability
      if (entry === undefined) return []
      const result = test.result()
      const error = result.state === "failed" ? result.errors?.[0]?.message : undefined
      return [{ test: test.fullName, ...entry, passed: result.state === "passed", ...(error === undefined ? {} : { error }) }]
    })
  )

/**
 * The reporter, for `reporters` in vitest.config.ts.
 *
 * @example
 * import { defineConfig } from "vitest/config"
 * import { reporter } from "./packages/reliability/src/Reporter.ts"
 * export default defineConfig({ test: { reporters: ["default", reporter] } })
 */
export const reporter: Reporter = {
  onTestRunEnd: (modules) => {
    const scenarios = results(modules)
    if (scenarios.length > 0) Report.write(Report.make(scenarios))
  }
}
