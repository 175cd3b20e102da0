/**
 * The Control Center in a real browser: Debian's chromium, driven by playwright-core, on the page
 * `kubefx dev` serves at `/`. A Flaky that fails six times must show its controller's failures
 * rising, the controller degraded at the top, the object's attempt and next retry counting down,
 * and then the object Ready. A sharded operator's two replicas must each show their shard and the
 * live members, and the one running the sharder the objects per member. Screenshots go to
 * test-artifacts/.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ApiServer } from "@kubefx/apiserver"
import { Outcome } from "@kubefx/core"
import { Builtins, Controller, Kube, Operator } from "@kubefx/kube"
import { Deferred, Effect, Layer, Metric, References, Schedule } from "effect"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { type Dev, startDev } from "./dev.ts"

const executablePath = "/usr/bin/chromium"
const artifacts = fileURLToPath(new URL("../../../test-artifacts/", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "kubefx-control-center-"))

let dev: Dev | undefined
let browser: BrowserContext | undefined
let page: Page
const pageErrors: Array<string> = []

// Without the browser every test fails with this (a failing beforeAll would only mark them skipped).
const missing = existsSync(executablePath)
  ? undefined
  : `Debian's chromium is missing at ${executablePath}: apt-get install -y chromium (.ci/run installs it)`
const needChromium = () => {
  if (missing !== undefined) throw new Error(missing)
}

beforeAll(async () => {
  if (missing !== undefined) return
  dev = await startDev(join(dir, "dev"))
  browser = await chromium.launchPersistentContext(join(dir, "profile"), {
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ],
    viewport: { width: 1440, height: 960 },
    colorScheme: "dark"
  })
  page = browser.pages()[0] ?? await browser.newPage()
  page.on("pageerror", (error) => pageErrors.push(String(error)))
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text())
  })
  await page.goto(`${dev.operatorUrl}/`)
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await dev?.stop()
  rmSync(dir, { recursive: true, force: true })
}, 60_000)

const screenshot = async (name: string) => {
  mkdirSync(artifacts, { recursive: true })
  await page.screenshot({ path: join(artifacts, name) })
}

const polling = { polling: 50, timeout: 30_000 }

/** Runs a `page.waitForFunction`; on timeout saves a screenshot and says what the page never showed. */
const until = async <R>(what: string, wait: () => Promise<R>): Promise<R> => {
  try {
    return await wait()
  } catch (error) {
    await screenshot("control-center-timeout.png").catch(() => undefined)
    throw new Error(`the page never showed ${what}: ${String(error)}`)
  }
}

// The page's globals as far as the checks below use them (this package compiles without the DOM lib).
interface PageElement {
  readonly textContent: string | null
  readonly firstChild: PageElement | null
  readonly dataset: Readonly<Record<string, string | undefined>>
  getAttribute(name: string): string | null
  querySelector(selector: string): PageElement | null
}
declare const document: {
  querySelector(selector: string): PageElement | null
  querySelectorAll(selector: string): Iterable<PageElement> & { readonly length: number }
}

const text = (selector: string) => page.locator(selector).first().innerText()
const card = `.card[data-controller="flaky"]`
const row = `#objects tr[data-controller="flaky"][data-key="default/control-center"]`
const flakyFailures = () => text(`${card} [data-field="failed"]`).then(Number)

describe("Control Center", () => {
  it("shows every controller of kubefx dev, and its samples' objects Ready", async () => {
    needChromium()
    await until("six controller cards", () =>
      page.waitForFunction(() => document.querySelectorAll(".card").length === 6, undefined, polling))
    const names = await page.locator(".card").evaluateAll((cards) => cards.map((c) => (c as unknown as PageElement).dataset.controller).sort())
    assert.deepStrictEqual(names, ["buckets", "flaky", "releases", "volumes", "websites", "widgets"])
    await until("the samples Ready", () =>
      page.waitForFunction(() => {
        const ready = [...document.querySelectorAll(`#objects td[data-field="ready"]`)].map((td) => td.dataset.status)
        return ready.length >= 8 && ready.every((status) => status === "True")
      }, undefined, polling))
    assert.strictEqual(await page.locator(`.card[data-controller="releases"] .chip`, { hasText: "→ flaky" }).count(), 1)
    // The widgets' owned cache, narrowed by their ownedLabels, says so.
    assert.strictEqual(
      await page.locator(`.card[data-controller="widgets"] .chip`, { hasText: "ConfigMap (app.kubernetes.io/managed-by=kubefx-widgets) 1" }).count(),
      1
    )
    assert.strictEqual(await page.locator("#connection").getAttribute("data-state"), "live")
    // The operator process's cost so far, in the header.
    const costs = /^CPU (\d+\.\d) s · RSS (\d+) MiB · heap (\d+) MiB · (\d+) API requests$/.exec(await text("#process"))
    assert.isNotNull(costs, await text("#process"))
    assert.isAbove(Number(costs![1]), 0)
    assert.isAbove(Number(costs![2]), Number(costs![3]))
    // The operators have listed and watched their kinds and written their objects.
    assert.isAbove(Number(costs![4]), 10)
  }, 60_000)

  it("follows a Flaky that fails six times: failures rising, degraded, attempt and next retry, then Ready", async () => {
    needChromium()
    const before = await flakyFailures()
    await dev!.kubectl(["apply", "-f", "-"], [
      "apiVersion: demo.kubefx.dev/v1",
      "kind: Flaky",
      "metadata: { name: control-center, namespace: default }",
      "spec: { failTimes: 6, message: \"connection refused: postgres.default.svc:5432\" }"
    ].join("\n"))

    // The controller's failure count rises with each attempt.
    const failuresAbove = (minimum: number) =>
      until(`flaky failures above ${minimum}`, () =>
        page.waitForFunction(
          ([selector, n]) => Number(document.querySelector(selector)?.textContent) > n,
          [`${card} [data-field="failed"]`, minimum] as const,
          polling
        ))
    await failuresAbove(before)
    const rising = await flakyFailures()
    await failuresAbove(rising)
    assert.isAbove(await flakyFailures(), rising)

    // The object: its attempt so far, and the retry the engine will run next, counting down.
    const seen = await until("the object retrying at attempt 2 or later", () =>
      page.waitForFunction((selector) => {
        const tr = document.querySelector(selector)
        const attempt = Number(tr?.querySelector(`[data-field="attempt"]`)?.firstChild?.textContent)
        const next = tr?.querySelector(`[data-field="next"]`)?.textContent ?? ""
        return attempt >= 2 && /^retry #\d+ in \d+(\.\d)?s$/.test(next) ? { attempt, next } : false
      }, row, polling))
    const { attempt, next } = await seen.jsonValue() as { readonly attempt: number; readonly next: string }
    assert.strictEqual(Number(/#(\d+)/.exec(next)![1]), attempt + 1)
    assert.include((await page.locator(row).getAttribute("class") ?? "").split(" "), "retrying")
    assert.include(await text(`${row} [data-field="outcome"]`), "transient")
    assert.include(await text(`${row} [data-field="outcome"]`), "connection refused")

    // Five failures in a row: the controller is degraded, at the top, holding releases, while the
    // retry waits in Next up (checked at once: the streak ends with the sixth retry).
    await until("flaky degraded at the top, holding releases, with the retry in Next up", () =>
      page.waitForFunction((key) =>
        (document.querySelector(`#attention [data-attention="degraded"][data-controller="flaky"]`)?.textContent ?? "")
          .includes("holding releases") &&
        document.querySelector(`.card[data-controller="flaky"]`)?.getAttribute("data-status") === "Degraded" &&
        [...document.querySelectorAll("#next li")].some((li) => (li.textContent ?? "").includes(key) && /in \d/.test(li.textContent ?? "")),
        "default/control-center", polling))
    assert.include(await text(`${card} [data-field="last-error"]`), "connection refused")
    await screenshot("control-center-failing.png")

    // It recovers: Ready, no retry pending, the failures counted once each.
    await until("the object Ready after it recovers", () =>
      page.waitForFunction((selector) => {
        const tr = document.querySelector(selector)
        return tr?.querySelector(`[data-field="ready"]`)?.getAttribute("data-status") === "True" &&
          tr.querySelector(`[data-field="outcome"]`)?.textContent === "done" &&
          tr.querySelector(`[data-field="attempt"]`)?.textContent === "0" &&
          tr.querySelector(`[data-field="next"]`)?.textContent === ""
      }, row, polling))
    assert.include(await text(`${row} [data-field="ready"]`), "Reconciled")
    await until("flaky healthy again", () =>
      page.waitForFunction(() =>
        document.querySelector(`.card[data-controller="flaky"]`)?.getAttribute("data-status") === "Healthy" &&
        document.querySelector(`#attention [data-attention="degraded"]`) === null, undefined, polling))
    assert.strictEqual(await flakyFailures(), before + 6)
    await screenshot("control-center.png")
  }, 60_000)

  it("finds an object by search, and narrows the table to a controller by its card", async () => {
    needChromium()
    await page.fill("#search", "control-center")
    await until("only the searched object", () =>
      page.waitForFunction(() => document.querySelectorAll("#objects tbody tr").length === 1, undefined, polling))
    assert.strictEqual(await page.locator("#objects tbody tr").getAttribute("data-key"), "default/control-center")
    assert.include(page.url(), "#q=control-center")
    await page.fill("#search", "")
    await page.click(`.card[data-controller="widgets"]`)
    await until("only widgets' objects", () =>
      page.waitForFunction(() => {
        const rows = [...document.querySelectorAll("#objects tbody tr")]
        return rows.length > 0 && rows.every((tr) => tr.dataset.controller === "widgets")
      }, undefined, polling))
    assert.deepStrictEqual(pageErrors, [])
  }, 30_000)

  it("shows a sharded operator's shard and live members, and on the sharder replica the objects per member", async () => {
    needChromium()
    const kubeconfigPath = join(dir, "sharded-kubeconfig")
    const cluster = Layer.unwrap(Effect.map(ApiServer.make({ kubeconfigPath }), () => Kube.layer({ _tag: "File", path: kubeconfigPath })))
    const replica = (identity: string) =>
      Operator.start(Operator.make({
        name: "sharded",
        http: { port: 0 },
        sharding: { namespace: "default", identity, leaseDuration: "4 seconds", renewDeadline: "3 seconds", retryPeriod: "200 millis" },
        controllers: [Controller.define({
          name: "configmaps",
          for: Builtins.ConfigMap,
          namespace: "default",
          reconcile: () => Effect.succeed(Outcome.done)
        })]
      })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
    // The header of a replica's Control Center, once it shows `expected`.
    const header = (running: Operator.Running, expected: RegExp) =>
      Effect.acquireRelease(Effect.promise(() => browser!.newPage()), (opened) => Effect.promise(() => opened.close())).pipe(
        Effect.flatMap((opened) =>
          Effect.promise(async () => {
            opened.on("pageerror", (error) => pageErrors.push(String(error)))
            await opened.goto(`${running.url}/`)
            await opened.waitForFunction((pattern) => new RegExp(pattern).test(document.querySelector("#operator")?.textContent ?? ""), expected.source, polling)
              .catch(async (error) => {
                throw new Error(`the header never matched ${expected}; it shows ${JSON.stringify(await opened.locator("#operator").innerText())}: ${String(error)}`)
              })
            return opened.locator("#operator").innerText()
          })
        )
      )
    const shown = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const kube = yield* Kube.Kube
      for (let i = 0; i < 12; i++) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `sharded-${i}`, namespace: "default" } })
      }
      const a = yield* replica("replica-a")
      const b = yield* replica("replica-b")
      // Both replicas show their own shard of the same two members; the one elected to run the
      // sharder also shows its controller's objects per member (the 12 ConfigMaps, none moving).
      const members = "of 2 \\(replica-a, replica-b\\)"
      const assigned = "configmaps-sharder: replica-a (\\d+), replica-b (\\d+)$"
      yield* header(a, new RegExp(`^sharded · .* · shard replica-a ${members}`))
      yield* header(b, new RegExp(`^sharded · .* · shard replica-b ${members}`))
      const holder = yield* kube.get(Builtins.Lease, "sharded-sharder", "default").pipe(
        Effect.map((lease) => lease.spec?.holderIdentity),
        Effect.flatMap((identity) =>
          identity === "replica-a" || identity === "replica-b"
            ? Effect.succeed(identity)
            : Effect.fail(new Error(`the sharder Lease is held by ${identity}`))
        ),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo({ duration: "20 seconds" })))
      )
      const [sharder, other, otherIdentity] = holder === "replica-a" ? [a, b, "replica-b"] : [b, a, "replica-a"]
      const onSharder = yield* header(sharder, new RegExp(`^sharded · leader \\(leader ${holder}\\) · shard ${holder} ${members} · ${assigned}`))
      // The other replica shows who runs the sharder, its shard and the members, not the assignment.
      const onOther = yield* header(other, new RegExp(`^sharded · follower \\(leader ${holder}\\) · shard ${otherIdentity} ${members}$`))
      return { onSharder, onOther }
    })).pipe(Effect.provide(cluster), Effect.provideService(References.MinimumLogLevel, "None")))
    const [, first, second] = /replica-a (\d+), replica-b (\d+)$/.exec(shown.onSharder)!
    assert.strictEqual(Number(first) + Number(second), 12, shown.onSharder)
    assert.isAbove(Number(first), 0)
    assert.isAbove(Number(second), 0)
    assert.notInclude(shown.onOther, "configmaps-sharder")
    assert.deepStrictEqual(pageErrors, [])
  }, 60_000)

  it("says why a controller did not start, and marks a cache whose watch keeps failing", async () => {
    needChromium()
    const kubeconfigPath = join(dir, "troubled-kubeconfig")
    const shown = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* ApiServer.make({ kubeconfigPath })
      // Built in this scope, so the operator's client lives as long as its fibers do.
      const kube = yield* Layer.build(Kube.layer({ _tag: "File", path: kubeconfigPath }))
      const running = yield* Operator.start(Operator.make({
        name: "troubled",
        http: { port: 0 },
        controllers: [
          // ConfigMaps are selected by metadata fields only: the server refuses this one (400).
          Controller.define({
            name: "mistyped",
            for: Builtins.Secret,
            namespace: "default",
            watches: [Controller.watch(Builtins.ConfigMap, () => [], { fieldSelector: "data.name=x" })],
            cacheSyncTimeout: "300 millis",
            reconcile: () => Effect.succeed(Outcome.done)
          }),
          Controller.define({
            name: "configs",
            for: Builtins.ConfigMap,
            namespace: "default",
            watch: { backoff: { initial: "100 millis", max: "200 millis" } },
            reconcile: () => Effect.succeed(Outcome.done)
          })
        ]
      })).pipe(Effect.provide(kube))
      yield* Effect.sync(() => running.controllers.map((c) => c.phase()).join(" ")).pipe(
        Effect.repeat({ until: (phases) => phases === "Failed Running", schedule: Schedule.spaced("50 millis") }),
        Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.die(new Error(running.controllers.map((c) => `${c.name}:${c.phase()}:${c.failure()}`).join(" "))) })
      )
      // The configs' watch ends and every new one is refused: its cache stops moving.
      server.faults.set({ rules: [{ resource: "configmaps", verbs: ["watch"], errorRate: 1, errorCode: 503 }] })
      server.faults.closeWatches({ resource: "configmaps" })
      const opened = yield* Effect.acquireRelease(Effect.promise(() => browser!.newPage()), (p) => Effect.promise(() => p.close()))
      return yield* Effect.promise(async () => {
        opened.on("pageerror", (error) => pageErrors.push(String(error)))
        await opened.goto(`${running.url}/`)
        const failed = `#attention [data-attention="failed"][data-controller="mistyped"]`
        const chip = `.card[data-controller="configs"] .chip.bad`
        await until("the failed controller and the failing cache", () =>
          opened.waitForFunction(([a, b]) => document.querySelector(a) !== null && /failing/.test(document.querySelector(b)?.textContent ?? ""), [failed, chip] as const, polling))
        return { failed: await opened.locator(failed).innerText(), chip: await opened.locator(chip).innerText(), title: await opened.locator(chip).getAttribute("title") }
      })
    })).pipe(Effect.provideService(References.MinimumLogLevel, "None"), Effect.provideService(Metric.MetricRegistry, new Map())))
    assert.include(shown.failed, "did not start: controller mistyped: caches not synced after 300ms: ConfigMap in default (BadRequest: field label not supported: data.name)")
    assert.strictEqual(shown.chip, "ConfigMap 0 failing")
    assert.match(shown.title ?? "", /^Informer cache: synced; its list or watch failing: ServerError: /)
    assert.deepStrictEqual(pageErrors, [])
  }, 60_000)

  it("shows an object whose run is still going, and one waiting in the queue behind it, each for how long, and past ten seconds both need attention", async () => {
    needChromium()
    const kubeconfigPath = join(dir, "stalled-kubeconfig")
    const cluster = Layer.unwrap(Effect.map(ApiServer.make({ kubeconfigPath }), () => Kube.layer({ _tag: "File", path: kubeconfigPath })))
    const shown = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const running = yield* Operator.start(Operator.make({
        name: "stalled",
        http: { port: 0 },
        controllers: [Controller.define({
          name: "stuck",
          for: Builtins.ConfigMap,
          namespace: "default",
          concurrency: 1,
          reconcile: (object) => object.metadata.name === "slow" ? Effect.as(Deferred.await(release), Outcome.done) : Effect.succeed(Outcome.done)
        })]
      })).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
      // Let the run end when the test does (finalizers run last-first: before the operator's
      // shutdown, which waits for running reconciles).
      yield* Effect.addFinalizer(() => Deferred.succeed(release, undefined))
      const kube = yield* Kube.Kube
      const configMap = (name: string): Builtins.ConfigMap => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } })
      // "quick" runs once; then "slow" holds the only worker while a change of "quick" waits.
      yield* kube.create(Builtins.ConfigMap, configMap("quick"))
      yield* Effect.suspend(() => Effect.fromNullishOr(running.controllers[0]?.controller())).pipe(
        Effect.flatMap((controller) => controller.keyStatus("default/quick")),
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (status) => status._tag === "Some" && status.value.last !== undefined }),
        Effect.retry(Schedule.spaced("20 millis"))
      )
      yield* kube.create(Builtins.ConfigMap, configMap("slow"))
      yield* kube.patch(Builtins.ConfigMap, "quick", "default", { data: { changed: "yes" } }, { type: "merge" })
      const opened = yield* Effect.acquireRelease(Effect.promise(() => browser!.newPage()), (p) => Effect.promise(() => p.close()))
      return yield* Effect.promise(async () => {
        opened.on("pageerror", (error) => pageErrors.push(String(error)))
        await opened.goto(`${running.url}/`)
        const cell = (key: string, field: string) => `#objects tr[data-key="default/${key}"] [data-field="${field}"]`
        // Shown once each has lasted a second: the count goes up between renders.
        await opened.waitForFunction((selector) => /^running [1-9]/.test(document.querySelector(selector)?.textContent ?? ""), cell("slow", "running"), polling)
        await opened.waitForFunction((selector) => /^queued [1-9]/.test(document.querySelector(selector)?.textContent ?? ""), cell("quick", "queued"), polling)
        const cells = [await opened.locator(cell("slow", "running")).innerText(), await opened.locator(cell("quick", "queued")).innerText()]
        // Past ten seconds each needs attention: the run that holds the worker, the change behind it.
        const item = (trouble: string) => `#attention [data-attention="${trouble}"][data-controller="stuck"]`
        await opened.waitForFunction(([running, queued]) =>
          (document.querySelector(running)?.textContent ?? "").includes("default/slow") &&
          (document.querySelector(queued)?.textContent ?? "").includes("default/quick"), [item("running"), item("queued")] as const, polling)
        return [...cells, await opened.locator(item("running")).innerText(), await opened.locator(item("queued")).innerText()]
      })
    })).pipe(Effect.provide(cluster), Effect.provideService(References.MinimumLogLevel, "None")))
    assert.match(shown[0]!, /^running \d+\.\ds$/)
    assert.match(shown[1]!, /^queued \d+\.\ds$/)
    assert.match(shown[2]!, /^Long run\s+stuck\s+default\/slow\s+a run going for over 10 s holds a worker.*\s+running for 1\d(\.\d)?s$/s)
    assert.match(shown[3]!, /^Waiting\s+stuck\s+default\/quick\s+queued for over 10 s: every worker is busy\s+queued for 1\d(\.\d)?s$/s)
    assert.deepStrictEqual(pageErrors, [])
  }, 60_000)
})
