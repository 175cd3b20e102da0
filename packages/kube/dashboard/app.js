// @ts-check
/**
 * kubefx Control Center. Polls `/controllers` (state, queues, rates, objects) and applies the
 * `/controllers/events` stream of run reports between polls, so a failure, a retry or a recovery
 * shows the moment it happens. No framework: each section renders to an HTML string, written to the
 * page only when it changed; countdowns and "ago" times tick on their own.
 */

/** @typedef {{ _tag: string, detail?: string, source?: string, bulk?: true }} Trigger */
/** @typedef {{ _tag: string, afterMillis?: number, message?: string, noRetry?: true }} RunResult */
/** @typedef {{ triggers: Trigger[], attempt: number, isLastAttempt: boolean, startedAt: string | null, durationMillis: number, result: RunResult }} RunView */
/** @typedef {{ at: string | null, trigger: "retry" | "reschedule" }} Next */
/** @typedef {{ status: string, reason: string | null, message: string | null, lastTransitionTime: string | null }} Ready */
/** @typedef {{ key: string, ready: Ready | null, attempt: number, exhausted: boolean, nextRetryAt: string | null, next: Next | null, last: RunView | null, runningSince: string | null, queuedSince: string | null }} KeyView */
/** @typedef {{ bucketMillis: number, lastBucketAt: string | null, runs: number[], errors: number[] }} Rates */
/**
 * @typedef {{
 *   name: string, phase: string, startError: string | null, kind: string, apiVersion: string, status: string, degraded: boolean, held: boolean,
 *   health: { total: number, failed: number, consecutiveFailures: number, lastError: string | null, lastReconcileAt: string | null, degradedSince: string | null },
 *   queueDepth: number, workersBusy: number, concurrency: number,
 *   dependsOn: { name: string, degraded: boolean }[],
 *   informers: { kind: string, synced: boolean, objects: number, failing?: string, labelSelector?: string, fieldSelector?: string, metadataOnly?: true }[],
 *   rates: Rates | null, keys: KeyView[]
 * }} ControllerView
 */
/** @typedef {{ identity: string, lease: string, members: string[], assignment: { sharder: string, keys: Record<string, number>, draining: number }[] | null }} ShardingView */
/** @typedef {{ cpuSeconds: number, residentMemoryBytes: number, heapUsedBytes: number, startedAt: string | null, apiRequests: number }} ProcessView */
/** @typedef {{ name: string, time: string | null, leader: { identity: string, lease: string, state: string, leader: string | null } | null, sharding: ShardingView | null, process?: ProcessView, controllers: ControllerView[] }} OperatorView */
/** @typedef {RunView & { controller: string, key: string, next: Next | null, exhausted: boolean }} RunReport */
/** @typedef {{ controller: ControllerView, key: KeyView, severity: number, text: string }} Row */

const rowLimit = 300
const feedLimit = 200
const minPollMillis = 1500

const state = {
  /** @type {OperatorView | null} */
  view: null,
  /** Operator clock minus this browser's, so countdowns match the engine's timers. */
  skew: 0,
  /** Reports of the last seconds, applied again on top of a poll taken before they ended. @type {{ report: RunReport, received: number }[]} */
  recent: [],
  /** @type {RunReport[]} */
  feed: [],
  /** @type {Map<string, KeyView>} */
  index: new Map(),
  filter: "all",
  query: "",
  /** @type {string | null} */
  controller: null,
  sort: { by: "severity", dir: 1 },
  stream: "connecting",
  pollFailed: false,
  /** Row ids to flash after the next render. @type {Set<string>} */
  flashes: new Set()
}

// ---------------------------------------------------------------------------------------------
// Formatting

/** @param {unknown} value */
const esc = (value) =>
  String(value).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c] ?? c)

const now = () => Date.now() + state.skew

/** @param {string | null | undefined} iso */
const millis = (iso) => (iso === null || iso === undefined ? null : Date.parse(iso))

/** @param {number} ms */
const span = (ms) => {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m ${s % 60}s`
  const h = Math.floor(m / 60)
  return h < 48 ? `${h}h ${m % 60}m` : `${Math.floor(h / 24)}d`
}

/** @param {number} at */
const countdown = (at) => (at - now() <= 0 ? "due" : `in ${span(at - now())}`)

/** @param {number} at */
const ago = (at) => {
  const d = now() - at
  if (d < 1000) return "now"
  if (d < 60_000) return `${Math.floor(d / 1000)}s ago`
  return `${span(d).split(" ")[0]} ago`
}

/** @param {number} ms */
const duration = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`)

/** @param {number} at */
const clock = (at) => {
  const d = new Date(at)
  const pad = (/** @type {number} */ n, w = 2) => String(n).padStart(w, "0")
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${Math.floor(d.getMilliseconds() / 100)}`
}

/** @param {RunResult | undefined} result */
const isFailure = (result) => result !== undefined && (result._tag === "Transient" || result._tag === "Permanent" || result._tag === "Defect")

/** @param {RunResult} result */
const outcome = (result) =>
  result._tag === "Done"
    ? "done"
    : result._tag === "RequeueAfter"
    ? `requeue after ${span(result.afterMillis ?? 0)}`
    : result.noRetry === true
    ? `${result._tag.toLowerCase()}, no retry`
    : result._tag.toLowerCase()

/** @param {Trigger} trigger */
const triggerLabel = (trigger) =>
  trigger._tag === "Event"
    ? trigger.detail === undefined ? "event" : `event: ${trigger.detail}${trigger.bulk ? " (bulk)" : ""}`
    : trigger._tag === "Related"
    ? `related: ${trigger.source ?? ""}`
    : trigger._tag === "Reschedule"
    ? "requeue"
    : trigger._tag.toLowerCase()

/** @param {RunReport | RunView} run */
const endOf = (run) => (millis(run.startedAt) ?? 0) + run.durationMillis

/** @param {string} controller @param {string} key */
const rowId = (controller, key) => `${controller}\u0000${key}`

// ---------------------------------------------------------------------------------------------
// State: a poll replaces the view; each report patches it until the next poll.

/** @param {OperatorView} view @param {RunReport} report @param {Map<string, KeyView>} index */
const applyReport = (view, report, index) => {
  const controller = view.controllers.find((c) => c.name === report.controller)
  if (controller === undefined) return
  const failed = isFailure(report.result)
  const interrupted = report.result._tag === "Interrupted"
  const end = endOf(report)
  if (!interrupted) {
    const h = controller.health
    controller.health = {
      ...h,
      total: h.total + 1,
      failed: h.failed + (failed ? 1 : 0),
      consecutiveFailures: failed ? h.consecutiveFailures + 1 : 0,
      lastError: failed ? report.result.message ?? h.lastError : h.lastError,
      lastReconcileAt: new Date(end).toISOString()
    }
    // A success clears degraded; becoming degraded is the engine's call, seen at the next poll.
    if (!failed && controller.status !== "Pending") {
      controller.status = "Healthy"
      controller.degraded = false
    }
    const rates = controller.rates
    const bucketAt = millis(rates?.lastBucketAt)
    if (rates !== null && bucketAt !== null && end >= bucketAt && end < bucketAt + rates.bucketMillis) {
      rates.runs[rates.runs.length - 1] = (rates.runs.at(-1) ?? 0) + 1
      if (failed) rates.errors[rates.errors.length - 1] = (rates.errors.at(-1) ?? 0) + 1
    }
  }
  const id = rowId(report.controller, report.key)
  let key = index.get(id)
  if (key === undefined) {
    key = { key: report.key, ready: null, attempt: 0, exhausted: false, nextRetryAt: null, next: null, last: null, runningSince: null, queuedSince: null }
    controller.keys.push(key)
    index.set(id, key)
  }
  // The run ended: running no more, and whether it is queued again the next poll says.
  key.runningSince = null
  key.queuedSince = null
  key.attempt = failed || interrupted ? report.attempt : 0
  key.exhausted = report.exhausted
  if (!interrupted) {
    key.next = report.next
    key.nextRetryAt = report.next?.trigger === "retry" ? report.next.at : null
  }
  key.last = {
    triggers: report.triggers,
    attempt: report.attempt,
    isLastAttempt: report.isLastAttempt,
    startedAt: report.startedAt,
    durationMillis: report.durationMillis,
    result: report.result
  }
}

/** @param {RunReport} report */
const onReport = (report) => {
  const received = Date.now()
  state.recent.push({ report, received })
  while (state.recent.length > 0 && received - (state.recent[0]?.received ?? received) > 15_000) state.recent.shift()
  state.feed.unshift(report)
  if (state.feed.length > feedLimit) state.feed.length = feedLimit
  if (state.view !== null) applyReport(state.view, report, state.index)
  state.flashes.add(rowId(report.controller, report.key))
  scheduleRender()
}

/** The feed before the stream has said anything: each object's last run, newest first. @param {OperatorView} view */
const lastRuns = (view) =>
  view.controllers
    .flatMap((c) => c.keys.flatMap((k) => (k.last === null ? [] : [{ ...k.last, controller: c.name, key: k.key, next: k.next, exhausted: k.exhausted }])))
    .sort((a, b) => endOf(b) - endOf(a))
    .slice(0, feedLimit)

let pollTimer = 0
const poll = async () => {
  clearTimeout(pollTimer)
  const started = Date.now()
  try {
    const response = await fetch("/controllers", { cache: "no-store" })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    /** @type {OperatorView} */
    const view = await response.json()
    const received = Date.now()
    const taken = millis(view.time)
    if (taken !== null) state.skew = taken - (started + received) / 2
    const index = new Map()
    for (const controller of view.controllers) for (const key of controller.keys) index.set(rowId(controller.name, key.key), key)
    // Reports that ended after the view was taken are not in it yet.
    for (const { report } of state.recent) if (taken === null || endOf(report) > taken) applyReport(view, report, index)
    if (state.view === null && state.feed.length === 0) state.feed = lastRuns(view)
    state.view = view
    state.index = index
    state.pollFailed = false
  } catch {
    state.pollFailed = true
  }
  render()
  // Slower when the operator is large: a poll never takes more than a quarter of the time.
  const wait = Math.max(minPollMillis, (Date.now() - started) * 4)
  pollTimer = window.setTimeout(() => (document.hidden ? undefined : void poll()), wait)
}

const connect = () => {
  const events = new EventSource("/controllers/events")
  events.addEventListener("open", () => {
    state.stream = "live"
    void poll()
  })
  events.addEventListener("error", () => {
    state.stream = events.readyState === EventSource.CLOSED ? "down" : "reconnecting"
    scheduleRender()
  })
  events.addEventListener("report", (event) => onReport(JSON.parse(/** @type {MessageEvent} */ (event).data)))
}

// ---------------------------------------------------------------------------------------------
// Rows: every object of every controller, worst first.

/** @param {KeyView} key */
const severity = (key) => {
  if (key.exhausted) return 0
  if (isFailure(key.last?.result) || key.next?.trigger === "retry") return 1
  if (key.ready !== null && key.ready.status !== "True") return 2
  return 3
}

/** @type {Record<string, (row: Row) => boolean>} */
const filters = {
  all: () => true,
  failing: (row) => isFailure(row.key.last?.result),
  retrying: (row) => row.key.next?.trigger === "retry",
  exhausted: (row) => row.key.exhausted,
  "not-ready": (row) => row.key.ready !== null && row.key.ready.status !== "True"
}

/** @type {Record<string, (a: Row, b: Row) => number>} */
const orders = {
  severity: (a, b) => a.severity - b.severity,
  controller: (a, b) => a.controller.name.localeCompare(b.controller.name),
  key: (a, b) => a.key.key.localeCompare(b.key.key),
  ready: (a, b) => (a.key.ready?.status ?? "~").localeCompare(b.key.ready?.status ?? "~"),
  attempt: (a, b) => b.key.attempt - a.key.attempt,
  next: (a, b) => (millis(a.key.next?.at) ?? Infinity) - (millis(b.key.next?.at) ?? Infinity),
  exhausted: (a, b) => Number(b.key.exhausted) - Number(a.key.exhausted),
  outcome: (a, b) => (a.key.last?.result._tag ?? "~").localeCompare(b.key.last?.result._tag ?? "~"),
  duration: (a, b) => (b.key.last?.durationMillis ?? -1) - (a.key.last?.durationMillis ?? -1),
  ran: (a, b) => (b.key.last === null ? 0 : endOf(b.key.last)) - (a.key.last === null ? 0 : endOf(a.key.last))
}

// Columns whose first click puts the largest (the most attempts, the slowest, the latest) on top.
const newestFirst = new Set(["attempt", "exhausted", "duration", "ran"])

/** @param {OperatorView} view @returns {Row[]} */
const allRows = (view) =>
  view.controllers.flatMap((controller) =>
    controller.keys.map((key) => ({
      controller,
      key,
      severity: severity(key),
      text: [
        controller.name,
        controller.kind,
        key.key,
        key.ready?.status === undefined ? "" : `ready=${key.ready.status}`,
        key.ready?.reason,
        key.ready?.message,
        key.last === null ? "" : outcome(key.last.result),
        key.last?.result.message,
        key.exhausted ? "exhausted" : ""
      ].join(" ").toLowerCase()
    }))
  )

/** @param {Row[]} rows */
const visibleRows = (rows) => {
  const terms = state.query.toLowerCase().split(/\s+/).filter((t) => t.length > 0)
  const filter = filters[state.filter] ?? filters.all
  const order = orders[state.sort.by] ?? orders.severity
  const tie = /** @type {(a: Row, b: Row) => number} */ (a, b) =>
    a.severity - b.severity || a.controller.name.localeCompare(b.controller.name) || a.key.key.localeCompare(b.key.key)
  return rows
    .filter((row) => (state.controller === null || row.controller.name === state.controller) && filter(row))
    .filter((row) => terms.every((term) => row.text.includes(term)))
    .sort((a, b) => state.sort.dir * order(a, b) || tie(a, b))
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** @type {WeakMap<Element, string>} */
const written = new WeakMap()
/** @param {Element | null} element @param {string} html */
const write = (element, html) => {
  if (element === null || written.get(element) === html) return
  element.innerHTML = html
  written.set(element, html)
}

/** @param {string} id */
const byId = (id) => document.getElementById(id)

/** @param {number} depth */
const queueBar = (depth) => {
  // Logarithmic: 1 fills a tenth, 10 a third, 100 two thirds, 1000 all of it.
  const width = Math.min(100, (Math.log10(1 + depth) / 3) * 100)
  return `<svg class="bar" viewBox="0 0 100 7" preserveAspectRatio="none" aria-hidden="true"><rect class="track" width="100" height="7" rx="2"/><rect class="fill${depth >= 100 ? " warn" : ""}" width="${width.toFixed(1)}" height="7" rx="2"/></svg>`
}

/** @param {number} busy @param {number} concurrency */
const workers = (busy, concurrency) =>
  concurrency <= 16
    ? `<span class="pips" aria-hidden="true">${"●".repeat(busy)}<span class="idle">${"●".repeat(Math.max(0, concurrency - busy))}</span></span>`
    : queueBar(Math.round((busy / concurrency) * 999))

/** @param {Rates} rates */
const sparkline = (rates) => {
  const n = rates.runs.length
  const top = Math.max(1, ...rates.runs)
  const w = 180 / n
  const bars = (/** @type {number[]} */ values, /** @type {string} */ cls) =>
    values.map((v, i) => (v === 0 ? "" : `<rect class="${cls}" x="${(i * w).toFixed(1)}" y="${(25 - (v / top) * 24).toFixed(1)}" width="${(w * 0.8).toFixed(1)}" height="${((v / top) * 24).toFixed(1)}"/>`)).join("")
  const minutes = Math.round((n * rates.bucketMillis) / 60_000)
  return `<svg class="spark" viewBox="0 0 180 26" preserveAspectRatio="none" role="img" aria-label="runs and errors over the last ${minutes} minutes"><title>Runs (grey) and errors (red) per ${rates.bucketMillis / 1000} s, last ${minutes} minutes</title><line class="base" x1="0" y1="25.5" x2="180" y2="25.5"/>${bars(rates.runs, "runs")}${bars(rates.errors, "errors")}</svg>`
}

/** Runs and errors per minute over the last minute of the window. @param {Rates} rates */
const perMinute = (rates) => {
  const buckets = Math.max(1, Math.round(60_000 / rates.bucketMillis))
  const sum = (/** @type {number[]} */ values) => values.slice(-buckets).reduce((a, b) => a + b, 0)
  const scale = 60_000 / (buckets * rates.bucketMillis)
  return { runs: sum(rates.runs) * scale, errors: sum(rates.errors) * scale }
}

/** @param {number} n */
const rate = (n) => (Number.isInteger(n) || n >= 100 ? n.toFixed(0) : n.toFixed(1))

/** @param {ControllerView} c @param {ControllerView[]} all */
const card = (c, all) => {
  const h = c.health
  const group = c.apiVersion.includes("/") ? c.apiVersion : `core/${c.apiVersion}`
  const rates = c.rates === null ? null : perMinute(c.rates)
  const dependents = all.filter((other) => other.dependsOn.some((d) => d.name === c.name)).map((other) => other.name)
  const flags = [
    c.phase !== "Running" ? `<span class="chip" data-field="phase">${esc(c.phase)}</span>` : "",
    c.held ? `<span class="chip" title="Not reconciling: this replica does not lead, or a dependency is degraded">held</span>` : ""
  ].join("")
  return `<article class="card${state.controller === c.name ? " selected" : ""}" data-controller="${esc(c.name)}" data-status="${esc(c.status)}" tabindex="0" title="Show only its objects">
  <div class="head"><span class="badge" data-status="${esc(c.status)}" data-field="status">${esc(c.status)}</span><span class="name">${esc(c.name)}</span>${flags}<span class="kind" title="${esc(group)}">${esc(c.kind)}</span></div>
  <div class="row">
    <span class="meter" title="Queue depth: keys waiting for a worker">queue ${queueBar(c.queueDepth)}<b data-field="queue">${c.queueDepth}</b></span>
    <span class="meter" title="Workers busy of ${c.concurrency}">workers ${workers(c.workersBusy, c.concurrency)}<b data-field="workers">${c.workersBusy}/${c.concurrency}</b></span>
  </div>
  <div class="row">${c.rates === null ? "" : sparkline(c.rates)}${rates === null ? "" : `<span class="rates" title="Over the last minute"><b data-field="rate">${rate(rates.runs)}</b> runs/min<br><span class="${rates.errors > 0 ? "bad" : ""}"><b data-field="error-rate">${rate(rates.errors)}</b> errors/min</span></span>`}</div>
  <div class="stats">
    <span>runs <b data-field="total">${h.total}</b></span>
    <span class="${h.failed > 0 ? "bad" : ""}">failed <b data-field="failed">${h.failed}</b></span>
    <span class="${h.consecutiveFailures > 0 ? "bad" : ""}" title="Consecutive failures; degraded at the controller's degradeAfter">in a row <b data-field="consecutive">${h.consecutiveFailures}</b></span>
    ${h.lastReconcileAt === null ? "" : `<span>last <b data-ago="${millis(h.lastReconcileAt)}"></b></span>`}
  </div>
  ${h.lastError === null ? "" : `<div class="error${h.consecutiveFailures === 0 ? " past" : ""}" data-field="last-error" title="${esc(h.lastError)}">${h.consecutiveFailures === 0 ? "last error: " : ""}${esc(h.lastError)}</div>`}
  <div class="deps">${
    c.dependsOn.map((d) => `<span class="chip${d.degraded ? " bad" : ""}" title="Reconciles only while ${esc(d.name)} is not degraded">→ ${esc(d.name)}${d.degraded ? " degraded" : ""}</span>`).join("")
  }${dependents.map((name) => `<span class="chip" title="${esc(name)} depends on this controller">← ${esc(name)}</span>`).join("")}${
    c.informers.map((i) => {
      const narrowed = [i.metadataOnly ? "metadata" : "", i.labelSelector ?? "", i.fieldSelector ?? ""].filter((s) => s !== "").join(", ")
      const name = narrowed === "" ? esc(i.kind) : `${esc(i.kind)} (${esc(narrowed)})`
      const bad = !i.synced || i.failing !== undefined
      const title = `Informer cache: ${i.synced ? "synced" : "syncing"}${i.failing === undefined ? "" : `; its list or watch failing: ${i.failing}`}`
      return `<span class="chip${bad ? " bad" : ""}" title="${esc(title)}">${name} ${i.objects}${i.synced ? "" : " syncing"}${i.failing === undefined ? "" : " failing"}</span>`
    }).join("")
  }</div>
</article>`
}

/** @param {ControllerView} c */
const statusRank = (c) => (c.status === "Degraded" || c.phase === "Failed" ? 0 : 1)

/** A run in progress, or a wait in the queue, counting up. @param {"running" | "queued"} state @param {string} since */
const lasting = (state, since) => `<span data-field="${state}">${state} <span data-since="${millis(since)}"></span></span>`

/** @param {Row} row */
const rowHtml = ({ controller: c, key: k }) => {
  const last = k.last
  const failing = isFailure(last?.result)
  const cls = k.exhausted ? "exhausted" : k.next?.trigger === "retry" ? "retrying" : failing ? "failing" : ""
  const ready = k.ready
  const next = k.runningSince !== null
    ? lasting("running", k.runningSince)
    : k.queuedSince !== null
    ? lasting("queued", k.queuedSince)
    : k.next === null || k.next.at === null
    ? ""
    : `${k.next.trigger === "retry" ? `retry #${k.attempt + 1}` : "requeue"} <span class="countdown" data-at="${millis(k.next.at)}"></span>`
  const why = last === null ? "" : last.triggers.map(triggerLabel)
  return `<tr data-controller="${esc(c.name)}" data-key="${esc(k.key)}" class="${cls}">
<td>${esc(c.name)}</td>
<td class="key">${esc(k.key)}</td>
<td data-field="ready" data-status="${esc(ready?.status ?? "")}" class="ready-${esc(ready?.status ?? "none")}" title="${esc(ready?.message ?? "")}"><span class="clip">${ready === null ? `<span class="muted">—</span>` : `${esc(ready.status)}<span class="sub">${esc(ready.reason ?? "")}</span>`}</span></td>
<td data-field="attempt" class="num">${k.attempt}${failing && last?.isLastAttempt ? `<span class="sub">last</span>` : ""}</td>
<td data-field="next">${next}</td>
<td data-field="exhausted">${k.exhausted ? `<span class="yes">exhausted</span>` : ""}</td>
<td data-field="why" title="${esc(Array.isArray(why) ? why.join(", ") : "")}"><span class="clip">${Array.isArray(why) ? esc(why[0] ?? "") + (why.length > 1 ? `<span class="sub">+${why.length - 1}</span>` : "") : ""}</span></td>
<td data-field="outcome" class="out-${esc(last?.result._tag ?? "none")}" title="${esc(last?.result.message ?? "")}"><span class="clip">${last === null ? `<span class="muted">not run</span>` : `${esc(outcome(last.result))}${last.result.message === undefined ? "" : `<span class="sub">${esc(last.result.message)}</span>`}`}</span></td>
<td data-field="took" class="num">${last === null ? "" : duration(last.durationMillis)}</td>
<td data-field="ran" class="num">${last === null ? "" : `<span data-ago="${endOf(last)}"></span>`}</td>
</tr>`
}

/** A run, or a wait in the queue, this long (ms) needs attention. */
const tooLong = 10_000

/** @typedef {"exhausted" | "permanent" | "defect" | "running" | "queued"} Trouble */
/**
 * Each trouble's badge and why; `since` for the ones that last (a run, a wait), which say how long.
 * @type {Record<Trouble, { badge: string, why: string, since?: (k: KeyView) => string | null }>}
 */
const troubles = {
  exhausted: { badge: "Exhausted", why: "no retry left until it changes" },
  permanent: { badge: "Permanent", why: "needs a change to its spec" },
  defect: { badge: "Defect", why: "the reconciler died" },
  running: {
    badge: "Long run",
    why: `a run going for over ${tooLong / 1000} s holds a worker (a reconcile with no timeout may never end)`,
    since: (k) => k.runningSince
  },
  queued: { badge: "Waiting", why: `queued for over ${tooLong / 1000} s: every worker is busy`, since: (k) => k.queuedSince }
}

/** @param {KeyView} k @returns {Trouble | undefined} */
const trouble = (k) => {
  const tag = k.exhausted ? "Exhausted" : k.last?.result._tag
  if (tag === "Exhausted" || tag === "Permanent" || tag === "Defect") return /** @type {Trouble} */ (tag.toLowerCase())
  const lastedPast = (/** @type {string | null} */ since) => since !== null && now() - (millis(since) ?? Infinity) >= tooLong
  return lastedPast(k.runningSince) ? "running" : lastedPast(k.queuedSince) ? "queued" : undefined
}

/** @param {OperatorView} view @param {Row[]} rows */
const attention = (view, rows) => {
  const items = []
  for (const c of view.controllers) {
    if (c.status === "Degraded" || c.degraded) {
      const held = view.controllers.filter((o) => o.dependsOn.some((d) => d.name === c.name)).map((o) => o.name)
      items.push(`<li data-attention="degraded" data-controller="${esc(c.name)}"><span class="badge bad">Degraded</span><span class="what">${esc(c.name)}</span><span>${c.health.consecutiveFailures} failures in a row${c.health.degradedSince === null ? "" : `, degraded for <span data-since="${millis(c.health.degradedSince)}"></span>`}${held.length === 0 ? "" : ` · holding ${esc(held.join(", "))}`}</span><span class="err" title="${esc(c.health.lastError ?? "")}">${esc(c.health.lastError ?? "")}</span></li>`)
    }
    if (c.phase === "Failed") {
      items.push(`<li data-attention="failed" data-controller="${esc(c.name)}"><span class="badge bad">Failed</span><span class="what">${esc(c.name)}</span><span class="err" title="${esc(c.startError ?? "")}">did not start: ${esc(c.startError ?? "see the operator's log")}</span></li>`)
    }
  }
  // Objects that will not fix themselves, or whose run or wait has lasted too long, grouped per
  // controller and kind of trouble, the longest first.
  /** @type {Map<string, Row[]>} */
  const groups = new Map()
  for (const r of rows) {
    const tag = trouble(r.key)
    if (tag === undefined) continue
    const id = `${tag}\u0000${r.controller.name}`
    groups.set(id, [...(groups.get(id) ?? []), r])
  }
  for (const [id, group] of groups) {
    const [tag = "", controller = ""] = id.split("\u0000")
    const { badge, why, since } = troubles[/** @type {Trouble} */ (tag)]
    const startedAt = (/** @type {Row} */ r) => millis(since?.(r.key)) ?? 0
    if (since !== undefined) group.sort((a, b) => startedAt(a) - startedAt(b))
    const first = /** @type {Row} */ (group[0])
    const names = group.slice(0, 4).map((r) => `<span class="obj" data-key="${esc(r.key.key)}">${esc(r.key.key)}</span>`).join(", ")
    const what = group.length === 1 ? "" : `${group.length} objects: `
    const detail = since !== undefined
      ? `<span>${tag} for <span data-since="${startedAt(first)}"></span></span>`
      : `<span class="err" title="${esc(first.key.last?.result.message ?? "")}">${esc(first.key.last?.result.message ?? "")}</span>`
    items.push(`<li data-attention="${tag}" data-controller="${esc(controller)}"><span class="badge ${since !== undefined ? "warn" : "bad"}">${badge}</span><span class="what">${esc(controller)}</span><span>${what}${names}${group.length > 4 ? ` +${group.length - 4}` : ""}</span><span class="muted">${why}</span>${detail}</li>`)
  }
  return items.length === 0 ? "" : `<h2>Needs attention</h2><ul>${items.join("")}</ul>`
}

/** @param {Row[]} rows */
const nextUp = (rows) => {
  const pending = rows.filter((r) => r.key.next !== null && r.key.next.at !== null)
    .sort((a, b) => (millis(a.key.next?.at) ?? 0) - (millis(b.key.next?.at) ?? 0))
  if (pending.length === 0) return `<li class="empty">nothing scheduled</li>`
  const items = pending.slice(0, 12).map((r) => {
    const next = /** @type {Next} */ (r.key.next)
    return `<li data-controller="${esc(r.controller.name)}" data-key="${esc(r.key.key)}"><span class="countdown" data-at="${millis(next.at)}"></span><span class="what" title="${esc(r.controller.name)} ${esc(r.key.key)}">${esc(r.controller.name)} ${esc(r.key.key)}</span><span>${next.trigger === "retry" ? `retry #${r.key.attempt + 1}` : "requeue"}</span></li>`
  })
  return items.join("") + (pending.length > 12 ? `<li class="empty">and ${pending.length - 12} more</li>` : "")
}

const feed = () => {
  if (state.feed.length === 0) return `<li class="empty">waiting for reconciles…</li>`
  return state.feed.slice(0, 80).map((r) => {
    const tag = r.result._tag
    const attempt = isFailure(r.result) || r.attempt > 0 ? ` #${r.attempt}` : ""
    return `<li data-controller="${esc(r.controller)}" data-key="${esc(r.key)}"><span class="t">${clock(endOf(r))}</span><span class="what" title="${esc(r.result.message ?? "")}">${esc(r.controller)} ${esc(r.key)}</span><span class="out-${esc(tag)}">${esc(tag === "RequeueAfter" ? "requeue" : outcome(r.result))}${attempt}</span></li>`
  }).join("")
}

/** @param {OperatorView} view @param {Row[]} rows */
const summary = (view, rows) => {
  const count = (/** @type {(r: Row) => boolean} */ f) => rows.filter(f).length
  const degraded = view.controllers.filter((c) => c.status === "Degraded").length
  const failing = count(filters.failing)
  const retrying = count(filters.retrying)
  const exhausted = count(filters.exhausted)
  const perMin = view.controllers.reduce((sum, c) => sum + (c.rates === null ? 0 : perMinute(c.rates).runs), 0)
  const part = (/** @type {number} */ n, /** @type {string} */ label, cls = "") => `<span class="${n > 0 ? cls : ""}" data-summary="${label}"><b>${n}</b> ${label}</span>`
  return [
    part(view.controllers.length, "controllers"),
    part(degraded, "degraded", "bad"),
    part(rows.length, "objects"),
    part(failing, "failing", "bad"),
    part(retrying, "retrying", "warn"),
    part(exhausted, "exhausted", "bad"),
    `<span title="Reconciles per minute, all controllers, last minute"><b>${rate(perMin)}</b> runs/min</span>`
  ].join("")
}

let renderTimer = 0
let lastRender = 0
const scheduleRender = () => {
  if (renderTimer !== 0) return
  renderTimer = window.setTimeout(() => {
    renderTimer = 0
    render()
  }, Math.max(0, 150 - (Date.now() - lastRender)))
}

/** @param {number} bytes */
const mebibytes = (bytes) => Math.round(bytes / 1048576)

/**
 * What the operator's process has cost so far, for the header.
 * @param {ProcessView | undefined} costs
 */
const processText = (costs) =>
  costs === undefined
    ? ""
    : `CPU ${costs.cpuSeconds.toFixed(1)} s · RSS ${mebibytes(costs.residentMemoryBytes)} MiB · heap ${mebibytes(costs.heapUsedBytes)} MiB · ${costs.apiRequests} API requests`

/**
 * This replica's shard and the live members; on the replica running the sharder, the objects per
 * member (and not yet assigned, and moving) of each sharded kind.
 * @param {ShardingView | null} sharding
 */
const shardingText = (sharding) => {
  if (sharding === null) return ""
  const members = ` · shard ${esc(sharding.identity)} of ${sharding.members.length} (${sharding.members.map(esc).join(", ")})`
  const assignment = (sharding.assignment ?? []).map((a) => {
    const keys = Object.entries(a.keys).sort(([x], [y]) => x.localeCompare(y))
      .map(([member, n]) => `${member === "" ? "unassigned" : esc(member)} ${n.toLocaleString("en")}`).join(", ")
    return ` · ${esc(a.sharder)}: ${keys || "no objects"}${a.draining > 0 ? `, ${a.draining} moving` : ""}`
  })
  return members + assignment.join("")
}

const render = () => {
  lastRender = Date.now()
  const connection = byId("connection")
  if (connection !== null) {
    const down = state.pollFailed
    connection.dataset.state = down ? "down" : state.stream
    connection.textContent = down ? "operator unreachable" : state.stream === "live" ? "live" : state.stream
  }
  const view = state.view
  if (view === null) return tick()
  const rows = allRows(view)
  write(byId("operator"), `${esc(view.name)}${view.leader === null ? "" : ` · ${esc(view.leader.state.toLowerCase())}${view.leader.leader === null ? "" : ` (leader ${esc(view.leader.leader)})`}`}${shardingText(view.sharding ?? null)}`)
  write(byId("process"), processText(view.process))
  write(byId("summary"), summary(view, rows))
  const alert = attention(view, rows)
  const section = byId("attention")
  if (section !== null) section.hidden = alert === ""
  write(section, alert)
  const controllers = [...view.controllers].sort((a, b) => statusRank(a) - statusRank(b))
  write(byId("controllers"), controllers.map((c) => card(c, view.controllers)).join("") || `<p class="muted">No controllers.</p>`)
  const visible = visibleRows(rows)
  write(document.querySelector("#objects tbody"), visible.slice(0, rowLimit).map(rowHtml).join(""))
  const more = byId("more")
  if (more !== null) {
    more.hidden = visible.length <= rowLimit
    more.textContent = `Showing the first ${rowLimit} of ${visible.length}: narrow the filter to see the rest.`
  }
  const count = byId("count")
  if (count !== null) count.textContent = visible.length === rows.length ? `${rows.length} objects` : `${visible.length} of ${rows.length}`
  for (const button of document.querySelectorAll("#filters button")) {
    const name = /** @type {HTMLElement} */ (button).dataset.filter ?? "all"
    const n = rows.filter(filters[name] ?? filters.all).length
    const label = button.firstChild?.textContent ?? ""
    write(button, `${esc(label)}<span class="n">${n}</span>`)
  }
  write(byId("controller-filter"), state.controller === null ? "" : `<button type="button" title="Show every controller's objects">controller: ${esc(state.controller)} ✕</button>`)
  write(byId("next"), nextUp(rows))
  write(byId("feed"), feed())
  const feedRate = byId("feed-rate")
  if (feedRate !== null) {
    const lastSeconds = state.recent.filter((r) => lastRender - r.received < 10_000).length / 10
    feedRate.textContent = `${rate(lastSeconds)}/s`
  }
  for (const id of state.flashes) {
    const [controller, key] = id.split("\u0000")
    const row = document.querySelector(`#objects tr[data-controller="${CSS.escape(controller ?? "")}"][data-key="${CSS.escape(key ?? "")}"]`)
    if (row !== null) {
      row.classList.remove("flash")
      void (/** @type {HTMLElement} */ (row).offsetWidth)
      row.classList.add("flash")
    }
  }
  state.flashes.clear()
  for (const th of document.querySelectorAll("#objects th[data-sort]")) {
    const by = /** @type {HTMLElement} */ (th).dataset.sort
    if (by === state.sort.by) th.setAttribute("aria-sort", (state.sort.dir > 0) !== newestFirst.has(by) ? "ascending" : "descending")
    else th.removeAttribute("aria-sort")
  }
  tick()
}

// Countdowns and "ago" times, between renders.
const tick = () => {
  for (const element of document.querySelectorAll("[data-at]")) {
    element.textContent = countdown(Number(/** @type {HTMLElement} */ (element).dataset.at))
  }
  for (const element of document.querySelectorAll("[data-ago]")) {
    element.textContent = ago(Number(/** @type {HTMLElement} */ (element).dataset.ago))
  }
  for (const element of document.querySelectorAll("[data-since]")) {
    element.textContent = span(Math.max(0, now() - Number(/** @type {HTMLElement} */ (element).dataset.since)))
  }
}

// ---------------------------------------------------------------------------------------------
// Controls, remembered in the URL's fragment so a view can be bookmarked or shared.

const saveControls = () => {
  const params = new URLSearchParams()
  if (state.query !== "") params.set("q", state.query)
  if (state.filter !== "all") params.set("filter", state.filter)
  if (state.controller !== null) params.set("controller", state.controller)
  if (state.sort.by !== "severity" || state.sort.dir !== 1) params.set("sort", `${state.sort.dir > 0 ? "" : "-"}${state.sort.by}`)
  const hash = params.toString()
  history.replaceState(null, "", hash === "" ? location.pathname : `#${hash}`)
}

const loadControls = () => {
  const params = new URLSearchParams(location.hash.slice(1))
  state.query = params.get("q") ?? ""
  state.filter = params.get("filter") ?? "all"
  state.controller = params.get("controller")
  const sort = params.get("sort")
  if (sort !== null) state.sort = { by: sort.replace(/^-/, ""), dir: sort.startsWith("-") ? -1 : 1 }
  const search = /** @type {HTMLInputElement | null} */ (byId("search"))
  if (search !== null) search.value = state.query
  loadFilterButtons()
}

const controlsChanged = () => {
  saveControls()
  render()
}

const bind = () => {
  const search = /** @type {HTMLInputElement} */ (byId("search"))
  search.addEventListener("input", () => {
    state.query = search.value
    controlsChanged()
  })
  document.addEventListener("keydown", (event) => {
    if (event.key === "/" && document.activeElement !== search) {
      event.preventDefault()
      search.focus()
    } else if (event.key === "Escape" && document.activeElement === search) {
      search.value = ""
      state.query = ""
      controlsChanged()
    }
  })
  byId("filters")?.addEventListener("click", (event) => {
    const button = /** @type {HTMLElement} */ (event.target).closest("button")
    if (button === null) return
    state.filter = button.dataset.filter ?? "all"
    loadFilterButtons()
    controlsChanged()
  })
  byId("controller-filter")?.addEventListener("click", () => {
    state.controller = null
    controlsChanged()
  })
  const pick = (/** @type {Event} */ event) => {
    const card = /** @type {HTMLElement} */ (event.target).closest(".card")
    if (!(card instanceof HTMLElement)) return
    const name = card.dataset.controller ?? null
    state.controller = state.controller === name ? null : name
    controlsChanged()
  }
  byId("controllers")?.addEventListener("click", pick)
  byId("controllers")?.addEventListener("keydown", (event) => {
    if (/** @type {KeyboardEvent} */ (event).key === "Enter") pick(event)
  })
  // An object named in the attention list, the timers or the feed: show it in the table; a
  // controller named there: show its objects.
  for (const id of ["attention", "next", "feed"]) {
    byId(id)?.addEventListener("click", (event) => {
      const target = /** @type {HTMLElement} */ (event.target)
      const item = target.closest("[data-key]") ?? target.closest("[data-controller]")
      if (!(item instanceof HTMLElement)) return
      if (item.dataset.key === undefined) {
        state.controller = item.dataset.controller ?? null
      } else {
        state.query = item.dataset.key
        state.filter = "all"
        search.value = state.query
        loadFilterButtons()
      }
      controlsChanged()
    })
  }
  document.querySelector("#objects thead")?.addEventListener("click", (event) => {
    const th = /** @type {HTMLElement} */ (event.target).closest("th[data-sort]")
    if (!(th instanceof HTMLElement)) return
    const by = th.dataset.sort ?? "severity"
    state.sort = state.sort.by === by ? { by, dir: -state.sort.dir } : { by, dir: 1 }
    controlsChanged()
  })
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) void poll()
  })
}

const loadFilterButtons = () => {
  for (const button of document.querySelectorAll("#filters button")) {
    button.setAttribute("aria-pressed", String(/** @type {HTMLElement} */ (button).dataset.filter === state.filter))
  }
}

loadControls()
bind()
connect()
void poll()
setInterval(tick, 200)
