/**
 * Throughput of the embedded API server over HTTP on loopback: creates/s, server-side applies/s,
 * watch events/s delivered to 10 concurrent watchers with the objects stored, and the server's
 * RSS with them stored. The server runs in this process; the load comes from a child process (this
 * same script with `--client`) so that client and server do not share a thread.
 *
 *   npx node packages/apiserver/bench/apiserver.ts [--quick]
 */
import { spawn } from "node:child_process"
import * as http from "node:http"
import { fileURLToPath } from "node:url"

const quick = process.argv.includes("--quick")
const objects = quick ? 1_000 : 10_000
const applies = quick ? 1_000 : 5_000
const watchWrites = quick ? 500 : 2_000
const watchers = 10
const concurrency = 32

interface Results {
  readonly createRate: number
  readonly applyRate: number
  readonly eventRate: number
}

// Requests over `concurrency` keep-alive sockets; `pool` runs n tasks on that many at once.
const connect = (url: string, token: string) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const base = new URL(url)
  const call = (method: string, path: string, body?: string, contentType = "application/json") =>
    new Promise<void>((resolve, reject) => {
      const request = http.request({
        agent,
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": contentType }) }
      }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (c: Buffer) => chunks.push(c))
        response.on("end", () =>
          (response.statusCode ?? 500) < 300
            ? resolve()
            : reject(new Error(`${method} ${path}: ${response.statusCode} ${Buffer.concat(chunks).toString()}`)))
      })
      request.on("error", reject)
      request.end(body)
    })
  const pool = async (n: number, task: (i: number) => Promise<void>) => {
    let next = 0
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++)
    }))
  }
  return { agent, base, call, pool }
}

const client = async (url: string, token: string): Promise<Results> => {
  const { agent, base, call, pool } = connect(url, token)
  const timed = async (n: number, task: (i: number) => Promise<void>) => {
    const started = performance.now()
    await pool(n, task)
    return n / ((performance.now() - started) / 1000)
  }
  const collection = "/api/v1/namespaces/default/configmaps"

  const createRate = await timed(objects, (i) =>
    call("POST", collection, JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `cm-${i}`, labels: { app: "bench" } },
      data: { i: String(i) }
    })))
  const applyRate = await timed(applies, (i) => {
    const name = `cm-${i % objects}`
    return call(
      "PATCH",
      `${collection}/${name}?fieldManager=bench`,
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { applied: String(i) } }),
      "application/apply-patch+yaml"
    )
  })

  // Watch fan-out: 10 watchers hold their events (paused by fault injection) while `watchWrites`
  // updates land, then all are delivered: the rate is events over the time to drain them.
  const expected = watchers * watchWrites
  let delivered = 0
  let lastEventAt = 0
  let allDelivered: () => void = () => {}
  const done = new Promise<void>((resolve) => (allDelivered = resolve))
  const streams: Array<http.ClientRequest> = []
  await Promise.all(Array.from({ length: watchers }, () =>
    new Promise<void>((resolve) => {
      const request = http.get({
        host: base.hostname,
        port: base.port,
        path: `${collection}?watch=1`,
        headers: { authorization: `Bearer ${token}` }
      }, (response) => {
        let initial = objects
        response.on("data", (chunk: Buffer) => {
          for (const byte of chunk) {
            if (byte !== 10) continue
            if (initial > 0) {
              initial--
              if (initial === 0) resolve()
              continue
            }
            delivered++
            if (delivered === expected) {
              lastEventAt = performance.now()
              allDelivered()
            }
          }
        })
      })
      streams.push(request)
    })))
  await call("POST", "/kubefx/faults/watches/pause", "{}")
  await pool(watchWrites, (i) =>
    call("PATCH", `${collection}/cm-${i % objects}`, JSON.stringify({ data: { watched: String(i) } }), "application/merge-patch+json"))
  const writesStarted = performance.now()
  await call("POST", "/kubefx/faults/watches/resume", "{}")
  await done
  for (const s of streams) s.destroy()
  agent.destroy()
  return { createRate, applyRate, eventRate: expected / ((lastEventAt - writesStarted) / 1000) }
}

// More of the same objects (created, half of them applied), for the memory each one adds.
const more = async (url: string, token: string, round: string): Promise<void> => {
  const { agent, call, pool } = connect(url, token)
  const collection = "/api/v1/namespaces/default/configmaps"
  await pool(objects, async (i) => {
    const name = `more-${round}-${i}`
    await call("POST", collection, JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { app: "bench" } }, data: { i: String(i) } }))
    if (i % 2 === 0) {
      await call("PATCH", `${collection}/${name}?fieldManager=bench`, JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { applied: String(i) } }), "application/apply-patch+yaml")
    }
  })
  agent.destroy()
}

const runChild = (mode: string, url: string, token: string, ...rest: ReadonlyArray<string>) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...(quick ? ["--quick"] : []), mode, url, token, ...rest], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (d: Buffer) => (out += d.toString()))
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`client exited ${code}`))))
  })

// Garbage left by the load is not memory the objects hold: with --expose-gc, a memory-reducing
// collection (V8's "last resort" flavour) also gives back the pages the load grew the heap by.
const collected = () => {
  const collect = globalThis.gc as ((options: object) => void) | undefined
  for (let i = 0; i < 4; i++) collect?.({ type: "major", execution: "sync", flavor: "last-resort" })
  return process.memoryUsage()
}

if (process.argv.includes("--client-more")) {
  const [url, token, round] = process.argv.slice(process.argv.indexOf("--client-more") + 1)
  await more(url!, token!, round!)
} else if (process.argv.includes("--client")) {
  const [url, token] = process.argv.slice(process.argv.indexOf("--client") + 1)
  process.stdout.write(JSON.stringify(await client(url!, token!)))
} else {
  const ApiServer = await import("../src/ApiServer.ts")
  // The default history (10,000 events); the watch scenario's held writes wait in each watch's buffer.
  const server = await ApiServer.start({ port: 0, watchBufferSize: 100_000 })
  const idleRssMiB = collected().rss / 1024 / 1024
  const results = JSON.parse(await runChild("--client", server.url, server.token)) as Results
  const loaded = collected()
  const rssMiB = loaded.rss / 1024 / 1024
  const heapMiB = loaded.heapUsed / 1024 / 1024
  // What one more stored object costs: the same load again on a server past its warm-up, so JIT
  // code, connection buffers and other fixed costs are not counted as the objects' memory. RSS
  // moves by whole pages the allocator keeps or gives back: three rounds, and their median.
  const rounds: Array<{ readonly rss: number; readonly heap: number }> = []
  let before = loaded
  for (const round of ["a", "b", "c"]) {
    await runChild("--client-more", server.url, server.token, round)
    const grown = collected()
    rounds.push({ rss: (grown.rss - before.rss) / objects, heap: (grown.heapUsed - before.heapUsed) / objects })
    before = grown
  }
  const middle = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const rssPerObject = middle(rounds.map((r) => r.rss))
  const heapPerObject = middle(rounds.map((r) => r.heap))
  await server.close()
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
  console.log(`\n| measure (${quick ? "--quick" : "full"}: ${fmt(objects)} objects, ${concurrency} concurrent requests) | result |`)
  console.log("|---|---|")
  console.log(`| creates/s | ${fmt(results.createRate)} |`)
  console.log(`| server-side applies/s | ${fmt(results.applyRate)} |`)
  console.log(`| watch events/s delivered to ${watchers} watchers (${fmt(watchWrites)} held writes, drained) | ${fmt(results.eventRate)} |`)
  console.log(`| server RSS with ${fmt(objects)} objects stored (MiB; ${fmt(idleRssMiB)} when idle and empty) | ${fmt(rssMiB)} |`)
  console.log(`| server JS heap used (MiB) | ${fmt(heapMiB)} |`)
  console.log(
    `| server RSS per stored object, ${fmt(objects)} more on the warm server, median of 3 rounds (bytes; rounds ${
      rounds.map((r) => fmt(r.rss)).join(", ")
    }; heap ${fmt(heapPerObject)}) | ${fmt(rssPerObject)} |`
  )
}
