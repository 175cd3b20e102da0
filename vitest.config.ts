import { readdirSync } from "node:fs"
import { defineConfig } from "vitest/config"
import { reporter as reliabilityReporter } from "./packages/reliability/src/Reporter.ts"

// Workspace packages are consumed from source through the "@kubefx/source" export condition.
const sourceCondition = { conditions: ["@kubefx/source", "module", "node", "import", "default"] }

const project = (dir: string, extra: { readonly testTimeout?: number; readonly hookTimeout?: number; readonly isolate?: boolean } = {}) => ({
  extends: true as const,
  test: { name: dir, root: dir, include: ["test/**/*.test.ts"], ...extra }
})

// Every example under examples/ is a project of its own; adding one needs no change here.
const examples = readdirSync("examples", { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => project(`examples/${entry.name}`, { testTimeout: 60_000 }))

export default defineConfig({
  resolve: sourceCondition,
  ssr: { resolve: { conditions: sourceCondition.conditions, externalConditions: ["@kubefx/source"] } },
  test: {
    // The long poles (packed installs, spawned operators, reliability scenarios) mostly wait on
    // child processes and I/O: two files at once on 2 cores take the suite from about 10.4 to about
    // 7.3 minutes here, with every timing-sensitive test still green.
    maxWorkers: 2,
    reporters: ["default", ["json", { outputFile: "test-artifacts/vitest.json" }], reliabilityReporter],
    // The in-process packages' files share a worker's loaded modules (no isolation): loading effect
    // and the packages again for each of their 93 files took about 45% of those projects' time
    // (164 s against 88 s without). Their tests start what they use in their own scope; the
    // projects that spawn processes or reach for process-wide state keep a fresh worker per file.
    projects: [
      project("packages/core", { isolate: false }),
      project("packages/schema", { isolate: false }),
      project("packages/apiserver", { testTimeout: 60_000, isolate: false }),
      project("packages/kube", { testTimeout: 60_000, isolate: false }),
      // A hook that stops a spawned operator waits for it (SIGTERM, then SIGKILL after 20 s): with the
      // default 10 s a slow stop on a loaded machine failed the hook and could orphan the process.
      project("packages/cli", { testTimeout: 60_000, hookTimeout: 30_000 }),
      project("packages/testing", { testTimeout: 60_000 }),
      project("packages/bench", { testTimeout: 180_000 }),
      project("packages/reliability", { testTimeout: 240_000 }),
      ...examples
    ]
  }
})
