/**
 * `/healthz`, `/livez` and `/readyz` as kube-apiserver answers them: `ok`, or with `?verbose` each
 * check on its line (`[+]etcd ok`) and `<probe> check passed`; `?exclude=<check>` leaves a check out
 * (`[+]etcd excluded: ok`, and a warning for a name that is no check); `/<probe>/<check>` answers
 * one check. The checks are those of kube-apiserver 1.32 whose work this server does.
 */

/** A probe path's name. */
export type Probe = "healthz" | "livez" | "readyz"

// The post-start hooks of the work this server does at start (its controllers, bootstrap policy).
const hooks = [
  "start-apiextensions-informers",
  "start-apiextensions-controllers",
  "crd-informer-synced",
  "start-system-namespaces-controller",
  "start-service-ip-repair-controllers",
  "rbac/bootstrap-roles",
  "bootstrap-controller",
  "start-kube-aggregator-informers",
  "apiservice-status-local-available-controller",
  "apiservice-status-remote-available-controller",
  "apiservice-registration-controller",
  "apiservice-discovery-controller",
  "kube-apiserver-autoregistration"
].map((hook) => `poststarthook/${hook}`)

const checks: Readonly<Record<Probe, ReadonlyArray<string>>> = {
  healthz: ["ping", "log", "etcd", ...hooks, "autoregister-completion"],
  livez: ["ping", "log", "etcd", ...hooks, "autoregister-completion"],
  readyz: ["ping", "log", "etcd", "etcd-readiness", "informer-sync", ...hooks, "autoregister-completion", "shutdown"]
}

/** A probe's answer: its status and plain-text body. */
export interface Answer {
  readonly status: number
  readonly body: string
}

/**
 * The answer to `probe` (one `check` of it when given), with the request's query.
 *
 * @example
 * import * as Health from "./Health.ts"
 * Health.answer("readyz", undefined, new URLSearchParams("verbose")).body.endsWith("readyz check passed\n") // true
 * Health.answer("livez", "etcd", new URLSearchParams()).body // "ok"
 */
export const answer = (probe: Probe, check: string | undefined, query: URLSearchParams): Answer => {
  const known = checks[probe]
  if (check !== undefined) return known.includes(check) ? { status: 200, body: "ok" } : { status: 404, body: "404 page not found\n" }
  const excluded = new Set(query.getAll("exclude").flatMap((e) => e.split(",")).map((e) => e.trim()).filter((e) => e !== ""))
  if (!query.has("verbose")) return { status: 200, body: "ok" }
  const lines = known.map((name) => excluded.has(name) ? `[+]${name} excluded: ok` : `[+]${name} ok`)
  const unknown = [...excluded].filter((name) => !known.includes(name))
  const warning = unknown.length === 0 ? [] : [`warn: some health checks cannot be excluded: no matches for ${unknown.map((n) => `"${n}"`).join(",")}`]
  return { status: 200, body: [...lines, ...warning, `${probe} check passed`, ""].join("\n") }
}
