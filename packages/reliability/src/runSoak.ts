/**
 * `npm run soak -- --minutes N`: runs the soak (see Soak.ts), prints each sample as it is taken and
 * the verdict, writes test-artifacts/soak-report.json, and exits 1 if anything grew after warm-up
 * or did not converge.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { parseArgs } from "node:util"
import * as Soak from "./Soak.ts"

const { values } = parseArgs({ options: { minutes: { type: "string", default: "10" }, sample: { type: "string", default: "10" } } })
const minutes = Number(values.minutes)
const sampleSeconds = Number(values.sample)
if (!(minutes > 0) || !(sampleSeconds > 0)) {
  console.error("usage: npm run soak -- --minutes N [--sample SECONDS]")
  process.exit(2)
}

console.log(`soak: ${minutes} min of churn, a sample every ${sampleSeconds} s${"gc" in globalThis ? "" : " (no --expose-gc: samples without a full collection)"}`)
const program = Soak.run({
  minutes,
  sampleSeconds,
  onServer: (server) => {
    console.log(`soak: API server ${server.url} (pid ${server.pid}), kubeconfig ${server.kubeconfig}`)
    console.log("   s    rss MiB  heap MiB  handles  fds  operations")
  },
  onSample: (s) =>
    console.log(
      `${String(s.at).padStart(4)}  ${String(s.rssMiB).padStart(9)}  ${String(s.heapMiB).padStart(8)}  ${String(s.handles).padStart(7)}  ${String(s.fds).padStart(3)}  ${String(s.operations).padStart(10)}`
    )
})

// Under `runMain`, SIGINT or SIGTERM interrupts the soak and closes its scope, which stops the API
// server process it started; the verdict is read once that scope has closed.
const verdict = Effect.scoped(program).pipe(
  Effect.tapCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.sync(() => console.error("soak: failed to run"))),
  Effect.flatMap((result) =>
    Effect.sync(() => {
      for (const g of result.growth) {
        console.log(`${g.metric}: peak ${g.early} early, ${g.late} late (allowed +${Math.round(g.allowed)}), trend ${g.perMinute}/min: ${g.grew ? "GREW" : "ok"}`)
      }
      console.log(`converged ${result.converged}/${result.objects}, duplicates ${result.duplicates}, orphans ${result.orphans}, ${result.operations} operations`)
      console.log(result.passed ? "soak: passed" : "soak: FAILED")
      mkdirSync("test-artifacts", { recursive: true })
      writeFileSync("test-artifacts/soak-report.json", JSON.stringify({ minutes, sampleSeconds, ...result }, null, 2) + "\n")
      process.exit(result.passed ? 0 : 1)
    })
  )
)
NodeRuntime.runMain(verdict)
