import { Effect } from "effect"
import * as Fleet from "./packages/bench/src/Fleet.ts"
const n = Number(process.env.N ?? 2000)
const limit = await Effect.runPromise(Fleet.run("limit", { objects: n, concurrency: 16 }))
const r = await Effect.runPromise(Fleet.run("kubefx", { objects: n, concurrency: 16 }))
console.log("limit", limit.seconds.toFixed(2), limit.cpuSeconds.toFixed(2), "kubefx", r.seconds.toFixed(2), r.cpuSeconds.toFixed(2), "server", r.serverCpuSeconds.toFixed(2), limit.serverCpuSeconds.toFixed(2))
