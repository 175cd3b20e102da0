/**
 * Shared objects for the integration tests: a CronTab CRD (status and scale subresources, printer
 * columns, a selectable field, defaults and bounds in its schema) and small builders.
 */
import { Effect } from "effect"
import type * as Testing from "../src/Testing.ts"

export const group = "stable.example.com"

export const crontabCrd = (plural = "crontabs", kind = "CronTab") => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural, singular: kind.toLowerCase(), kind, shortNames: [`${kind.toLowerCase().slice(0, 2)}x`] },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      subresources: {
        status: {},
        scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas", labelSelectorPath: ".status.selector" }
      },
      selectableFields: [{ jsonPath: ".spec.color" }],
      additionalPrinterColumns: [
        { name: "Spec", type: "string", jsonPath: ".spec.cronSpec" },
        { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" }
      ],
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: {
              type: "object",
              properties: {
                cronSpec: { type: "string", description: "The schedule." },
                color: { type: "string" },
                replicas: { type: "integer", default: 1, minimum: 0, maximum: 10 },
                ports: {
                  type: "array",
                  "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  items: { type: "object", required: ["name"], properties: { name: { type: "string" }, port: { type: "integer" } } }
                },
                free: { type: "object", "x-kubernetes-preserve-unknown-fields": true }
              }
            },
            status: {
              type: "object",
              properties: { replicas: { type: "integer" }, selector: { type: "string" }, phase: { type: "string" } }
            }
          }
        }
      }
    }]
  }
})

export const crontab = (name: string, spec: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  apiVersion: `${group}/v1`,
  kind: "CronTab",
  metadata: { name, ...extra },
  spec: { cronSpec: "* * * * *", ...spec }
})

export const configMap = (name: string, data: Record<string, string> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...metadata },
  data
})

/**
 * A workload simulator `jobOutcome`: the pods of a Job labelled `outcome: fail` fail, and those of
 * the index a Job's `failing-index` label names; any other completes.
 */
export const outcomeByLabel = (job: { readonly metadata?: unknown }, pod?: { readonly metadata?: unknown }): "Failed" | "Complete" => {
  const labels = (job.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}
  const index = (pod?.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.["batch.kubernetes.io/job-completion-index"]
  return labels["outcome"] === "fail" || (index !== undefined && labels["failing-index"] === index) ? "Failed" : "Complete"
}

/** An apps/v1 Deployment of `replicas` nginx pods labelled `app: <name>`. */
export const deployment = (name: string, replicas: number) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "web", image: "nginx" }] } }
  }
})

/** GETs `path` every 25 ms until `check` holds for its body (5 s at most), and returns the body. */
export const poll = async (server: Testing.TestServer, path: string, check: (body: any) => boolean) => {
  let last: unknown
  for (let i = 0; i < 200; i++) {
    last = (await server.request("GET", path)).json
    if (check(last)) return last as any
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out on ${path}: ${JSON.stringify(last)}`)
}

/** Creates the CRD and waits until the server serves its kind. */
export const installCrd = async (server: Testing.TestServer, crd: object = crontabCrd()) => {
  const created = await server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd })
  if (created.status !== 201) throw new Error(`CRD create failed: ${created.text}`)
  await Effect.runPromise(server.settled)
  return created.json
}

/** Creates a namespace and waits, as a cluster's controllers fill it, for its `default` ServiceAccount. */
export const createNamespace = async (server: Testing.TestServer, name: string) => {
  const created = await server.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name } } })
  if (created.status !== 201) throw new Error(`namespace create failed: ${created.text}`)
  await Effect.runPromise(server.settled)
}

export interface WatchEvent {
  readonly type: string
  readonly object: any
}

export interface Watched {
  readonly events: Array<WatchEvent>
  /** When each event arrived (Date.now()). */
  readonly arrivals: Array<number>
  /** True when the server ended the stream (rather than the reader stopping or timing out). */
  readonly ended: boolean
}

/**
 * Reads a watch stream until `count` events arrived, the server ends it, or `ms` passed, running
 * `during` once the stream is open.
 */
export const watch = async (
  server: Testing.TestServer,
  path: string,
  count: number,
  ms = 5000,
  during?: () => Promise<unknown>,
  headers: Readonly<Record<string, string>> = {}
): Promise<Watched> => {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), ms)
  const events: Array<WatchEvent> = []
  const arrivals: Array<number> = []
  let ended = false
  try {
    const response = await fetch(`${server.url}${path}`, {
      headers: { authorization: `Bearer ${server.token}`, ...headers },
      signal: controller.signal
    })
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    const pending = during?.()
    while (events.length < count) {
      const { done, value } = await reader.read()
      if (done) {
        ended = true
        break
      }
      buffer += decoder.decode(value, { stream: true })
      let nl: number
      while ((nl = buffer.indexOf("\n")) >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)))
        arrivals.push(Date.now())
        buffer = buffer.slice(nl + 1)
      }
    }
    controller.abort()
    await pending
  } catch (error) {
    if (!(error instanceof Error && error.name === "AbortError")) throw error
  } finally {
    clearTimeout(timer)
  }
  return { events, arrivals, ended }
}

/** The events of {@link watch}. */
export const watchEvents = async (...args: Parameters<typeof watch>): Promise<Array<WatchEvent>> =>
  (await watch(...args)).events

/** The value of the series of metric `name` whose labels include `labels`, summed; 0 when there is none. */
export const metricValue = (text: string, name: string, labels: Record<string, string>): number =>
  text.split("\n")
    .filter((line) => line.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)
