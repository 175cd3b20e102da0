/**
 * `npm run soak -- --minutes N`: runs the soak (see Soak.ts), prints each sample as it is taken and
 * the verdict, writes test-artifacts/soak-report.json, and exits 1 if anything grew after warm-up
 * or did not converge.
 */
import { Effect } from "effect"
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
console.log("   s    rss MiB  heap MiB  handles  fds  operations")
const program = Soak.run({
  minutes,
  sampleSeconds,
  onSample: (s) =>
    console.log(
      `${String(s.at).padStart(4)}  ${String(s.rssMiB).padStart(9)}  ${String(s.heapMiB).padStart(8)}  ${String(s.handles).padStart(7)}  ${String(s.fds).padStart(3)}  ${String(s.operations).padStart(10)}`
    )
})

Effect.runPromise(Effect.scoped(program)).then((result) => {
  for (const g of result.growth) {
    console.log(`${g.metric}: peak ${g.early} early, ${g.late} late (allowed +${Math.round(g.allowed)}), trend ${g.perMinute}/min: ${g.grew ? "GREW" : "ok"}`)
  }
  console.log(`converged ${result.converged}/${result.objects}, duplicates ${result.duplicates}, orphans ${result.orphans}, ${result.operations} operations`)
  console.log(result.passed ? "soak: passed" : "soak: FAILED")
  mkdirSync("test-artifacts", { recursive: true })
  writeFileSync("test-artifacts/soak-report.json", JSON.stringify({ minutes, sampleSeconds, ...result }, null, 2) + "\n")
  process.exit(result.passed ? 0 : 1)
}, (error) => {
  console.error("soak: failed to run", error)
  process.exit(1)
})
