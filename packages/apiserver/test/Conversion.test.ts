/**
 * A CRD with two versions converted by a webhook (strategy Webhook), as kube-apiserver 1.32 runs
 * it: objects are stored in the storage version, converted for reads, lists, watches and writes in
 * the other version, round trips are lossless, and a conversion webhook that fails gives 1.32's
 * error; and a CRD of two versions with no webhook (strategy None), each version pruned to its schema.
 */
import { Effect } from "effect"
import { createServer, type Server } from "node:https"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Certificate from "../src/Certificate.ts"
import * as Testing from "../src/Testing.ts"
import { createNamespace, installCrd, watch } from "./fixtures.ts"

const group = "convert.example.com"
// Also for the Service the conversion webhook is reached through in one test.
const certificate = Certificate.selfSigned(["127.0.0.1", "convert.gizmos.svc"])

interface Review {
  readonly request: { readonly uid: string; readonly desiredAPIVersion: string; readonly objects: ReadonlyArray<any> }
}

/** v1: spec.size; v2: spec.dimensions.size and spec.unit (kept in an annotation when stored as v1). */
const convert = (object: any, to: string): any => {
  const from = object.apiVersion
  if (from === to) return object
  if (to === `${group}/v2`) {
    const { "convert.example.com/unit": unit, ...annotations } = object.metadata.annotations ?? {}
    return {
      ...object,
      apiVersion: to,
      metadata: { ...object.metadata, annotations },
      spec: { dimensions: { size: object.spec.size }, ...(unit === undefined ? {} : { unit }) }
    }
  }
  return {
    ...object,
    apiVersion: to,
    metadata: {
      ...object.metadata,
      annotations: { ...object.metadata.annotations, ...(object.spec.unit === undefined ? {} : { "convert.example.com/unit": object.spec.unit }) }
    },
    spec: { size: object.spec.dimensions.size }
  }
}

let mode: "convert" | "fail" = "convert"
const calls: Array<Review["request"]> = []
const admissions: Array<any> = []

let webhook: Server
let webhookUrl: string
let server: Testing.TestServer

const crd = (url: string) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `gizmos.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural: "gizmos", singular: "gizmo", kind: "Gizmo" },
    conversion: {
      strategy: "Webhook",
      webhook: { conversionReviewVersions: ["v1"], clientConfig: { url: `${url}/convert`, caBundle: Buffer.from(certificate.cert).toString("base64") } }
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { size: { type: "integer" } } } } } }
      },
      {
        name: "v2",
        served: true,
        storage: false,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", properties: { dimensions: { type: "object", properties: { size: { type: "integer" } } }, unit: { type: "string" } } }
            }
          }
        }
      }
    ]
  }
})

beforeAll(async () => {
  webhook = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if ((req.url ?? "").startsWith("/validate")) {
        const admission = JSON.parse(Buffer.concat(chunks).toString("utf8"))
        admissions.push(admission.request)
        const size = admission.request.object?.spec?.dimensions?.size ?? 0
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: admission.request.uid, allowed: size <= 100, status: { message: `size ${size} is over 100` } }
        }))
        return
      }
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Review
      calls.push(review.request)
      const response = mode === "fail"
        ? { uid: review.request.uid, result: { status: "Failure", message: "cannot convert gizmos today" } }
        : { uid: review.request.uid, result: { status: "Success" }, convertedObjects: review.request.objects.map((o) => convert(o, review.request.desiredAPIVersion)) }
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ apiVersion: "apiextensions.k8s.io/v1", kind: "ConversionReview", response }))
    })
  })
  await new Promise<void>((resolve) => webhook.listen(0, "127.0.0.1", resolve))
  webhookUrl = `https://127.0.0.1:${(webhook.address() as AddressInfo).port}`
  server = await Testing.start()
  await installCrd(server, crd(webhookUrl))
  await createNamespace(server, "gizmos")
})
afterAll(async () => {
  await server.close()
  webhook.closeAllConnections()
  await new Promise((resolve) => webhook.close(resolve))
})

const v1 = `/apis/${group}/v1/namespaces/gizmos/gizmos`
const v2 = `/apis/${group}/v2/namespaces/gizmos/gizmos`

describe("conversion webhook", () => {
  it("a write in v2 is stored in v1; each version reads its own shape; the round trip is lossless", async () => {
    mode = "convert"
    const created = await server.request("POST", v2, {
      body: { apiVersion: `${group}/v2`, kind: "Gizmo", metadata: { name: "a", labels: { team: "x" } }, spec: { dimensions: { size: 3 }, unit: "cm" } }
    })
    expect(created.status, created.text).toBe(201)
    expect(created.json).toMatchObject({ apiVersion: `${group}/v2`, spec: { dimensions: { size: 3 }, unit: "cm" } })
    expect(created.json.metadata.annotations ?? {}).toEqual({})
    // Stored as v1: the v1 endpoint reads it without calling the webhook.
    const before = calls.length
    const stored = await server.request("GET", `${v1}/a`)
    expect(calls.length).toBe(before)
    expect(stored.json).toMatchObject({ apiVersion: `${group}/v1`, spec: { size: 3 }, metadata: { annotations: { "convert.example.com/unit": "cm" }, labels: { team: "x" } } })
    const read = await server.request("GET", `${v2}/a`)
    expect(read.json.spec).toEqual({ dimensions: { size: 3 }, unit: "cm" })
    expect(read.json.metadata).toEqual(created.json.metadata)
    expect(calls.at(-1)).toMatchObject({ desiredAPIVersion: `${group}/v2`, objects: [{ apiVersion: `${group}/v1`, metadata: { name: "a" } }] })
  })

  it("a list converts every item in one review; a watch sends converted events", async () => {
    mode = "convert"
    await server.request("POST", v1, { body: { apiVersion: `${group}/v1`, kind: "Gizmo", metadata: { name: "b" }, spec: { size: 5 } } })
    const before = calls.length
    const list = await server.request("GET", v2)
    expect(calls.length).toBe(before + 1)
    expect(list.json.apiVersion).toBe(`${group}/v2`)
    expect(list.json.items.map((i: any) => [i.metadata.name, i.apiVersion, i.spec.dimensions.size])).toEqual([["a", `${group}/v2`, 3], ["b", `${group}/v2`, 5]])
    const watched = await watch(server, `${v2}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`, 1, 5_000, async () => {
      await server.request("POST", v1, { body: { apiVersion: `${group}/v1`, kind: "Gizmo", metadata: { name: "c" }, spec: { size: 7 } } })
    })
    expect(watched.events.map((e) => [e.type, e.object.apiVersion, e.object.spec])).toEqual([["ADDED", `${group}/v2`, { dimensions: { size: 7 } }]])
  })

  it("updates and server-side applies in v2 convert both ways", async () => {
    mode = "convert"
    const current = await server.request("GET", `${v2}/b`)
    const updated = await server.request("PUT", `${v2}/b`, { body: { ...current.json, spec: { dimensions: { size: 6 }, unit: "mm" } } })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.json.spec).toEqual({ dimensions: { size: 6 }, unit: "mm" })
    const applied = await server.request("PATCH", `${v2}/b?fieldManager=test&force=true`, {
      body: JSON.stringify({ apiVersion: `${group}/v2`, kind: "Gizmo", metadata: { name: "b" }, spec: { dimensions: { size: 8 } } }),
      headers: { "content-type": "application/apply-patch+yaml" }
    })
    expect(applied.status, applied.text).toBe(200)
    expect(applied.json.spec.dimensions).toEqual({ size: 8 })
    expect((await server.request("GET", `${v1}/b`)).json.spec).toEqual({ size: 8 })
  })

  it("a validating webhook registered for v2 (matchPolicy Equivalent) gets v1 writes converted to v2; Exact does not", async () => {
    mode = "convert"
    const hook = (name: string, matchPolicy: string, path: string) => ({
      name,
      matchPolicy,
      clientConfig: { url: `${webhookUrl}${path}`, caBundle: Buffer.from(certificate.cert).toString("base64") },
      rules: [{ operations: ["CREATE"], apiGroups: [group], apiVersions: ["v2"], resources: ["gizmos"] }],
      sideEffects: "None",
      admissionReviewVersions: ["v1"]
    })
    const configured = await server.request("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
      body: {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "gizmo-sizes" },
        webhooks: [hook("equivalent.example.com", "Equivalent", "/validate-equivalent"), hook("exact.example.com", "Exact", "/validate-exact")]
      }
    })
    expect(configured.status, configured.text).toBe(201)
    const big = await server.request("POST", v1, { body: { apiVersion: `${group}/v1`, kind: "Gizmo", metadata: { name: "big" }, spec: { size: 500 } } })
    expect(big.status).toBe(400)
    expect(big.json.message).toBe('admission webhook "equivalent.example.com" denied the request: size 500 is over 100')
    const sent = admissions.find((a) => a.name === "big")
    expect(sent).toMatchObject({
      kind: { group, version: "v2", kind: "Gizmo" },
      requestKind: { group, version: "v1", kind: "Gizmo" },
      object: { apiVersion: `${group}/v2`, spec: { dimensions: { size: 500 } } }
    })
    expect(admissions.filter((a) => a.name === "big").length).toBe(1)
    expect((await server.request("DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/gizmo-sizes")).status).toBe(200)
  })

  it("a conversion webhook configured by a Service is called at the Service's EndpointSlice", async () => {
    const port = Number(new URL(webhookUrl).port)
    expect((await server.request("POST", "/api/v1/namespaces/gizmos/services", {
      body: { metadata: { name: "convert" }, spec: { ports: [{ name: "https", port: 443, targetPort: port }] } }
    })).status).toBe(201)
    expect((await server.request("POST", "/apis/discovery.k8s.io/v1/namespaces/gizmos/endpointslices", {
      body: {
        metadata: { name: "convert-local", labels: { "kubernetes.io/service-name": "convert" } },
        addressType: "IPv4",
        ports: [{ name: "https", port }],
        endpoints: [{ addresses: ["127.0.0.1"] }]
      }
    })).status).toBe(201)
    const configure = async (clientConfig: Record<string, unknown>) => {
      const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.${group}`
      const patched = await server.request("PATCH", path, {
        body: { spec: { conversion: { webhook: { clientConfig: { url: null, service: null, ...clientConfig } } } } },
        headers: { "content-type": "application/merge-patch+json" }
      })
      expect(patched.status, patched.text).toBe(200)
      await Effect.runPromise(server.settled)
      return patched.json
    }
    const caBundle = Buffer.from(certificate.cert).toString("base64")
    // The Service's port defaults to 443, as apiextensions v1 defaults it.
    const crd = await configure({ service: { name: "convert", namespace: "gizmos", path: "/convert" }, caBundle })
    expect(crd.spec.conversion.webhook.clientConfig.service).toEqual({ name: "convert", namespace: "gizmos", path: "/convert", port: 443 })
    const before = calls.length
    const created = await server.request("POST", v2, { body: { apiVersion: `${group}/v2`, kind: "Gizmo", metadata: { name: "served" }, spec: { dimensions: { size: 3 }, unit: "cm" } } })
    expect(created.status, created.text).toBe(201)
    expect((await server.request("GET", `${v2}/served`)).json.spec).toMatchObject({ dimensions: { size: 3 } })
    expect(calls.length).toBeGreaterThan(before)
    await configure({ url: `${webhookUrl}/convert`, caBundle })
  })

  it("a webhook that fails, or cannot be reached, fails the request with 1.32's error: a 500 of no reason", async () => {
    mode = "fail"
    const failed = await server.request("GET", `${v2}/a`)
    expect(failed.status).toBe(500)
    expect(failed.json).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `conversion webhook for ${group}/v1, Kind=Gizmo failed: response.result.status was 'Failure', not 'Success': cannot convert gizmos today`,
      code: 500
    })
    mode = "convert"
    webhook.closeAllConnections()
    await new Promise((resolve) => webhook.close(resolve))
    const down = await server.request("GET", `${v2}/a`)
    expect(down.status).toBe(500)
    expect(down.json.message).toBe(
      `conversion webhook for ${group}/v1, Kind=Gizmo failed: Post "${webhookUrl}/convert?timeout=30s": dial tcp 127.0.0.1:${new URL(webhookUrl).port}: connect: connection refused`
    )
    // Reads in the storage version do not need the webhook.
    expect((await server.request("GET", `${v1}/a`)).status).toBe(200)
  })
})

describe("conversion without a webhook (strategy None)", () => {
  it("keeps of an object what each version's schema knows, as the converter prunes it both ways", async () => {
    const spec = (properties: Record<string, unknown>) => ({
      openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { common: { type: "string" }, ...properties } } } }
    })
    await installCrd(server, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.plain.example.com" },
      spec: {
        group: "plain.example.com",
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget" },
        versions: [
          { name: "v1alpha1", served: true, storage: false, schema: spec({ alphaOnly: { type: "integer" } }) },
          { name: "v1", served: true, storage: true, schema: spec({ v1Only: { type: "string" } }) }
        ]
      }
    })
    const at = (version: string) => `/apis/plain.example.com/${version}/namespaces/gizmos/widgets`
    const write = async (version: string, name: string, body: Record<string, unknown>) => {
      const created = await server.request("POST", at(version), { body: { apiVersion: `plain.example.com/${version}`, kind: "Widget", metadata: { name }, spec: body } })
      expect(created.status, created.text).toBe(201)
    }
    const read = async (version: string, name: string) => (await server.request("GET", `${at(version)}/${name}`)).json.spec
    // Written in v1alpha1, stored in v1: what v1 does not know is gone from both.
    await write("v1alpha1", "old", { common: "a", alphaOnly: 3 })
    expect([await read("v1alpha1", "old"), await read("v1", "old")]).toEqual([{ common: "a" }, { common: "a" }])
    // Written in v1: v1alpha1 does not show what it does not know, v1 keeps it.
    await write("v1", "new", { common: "a", v1Only: "b" })
    expect([await read("v1alpha1", "new"), await read("v1", "new")]).toEqual([{ common: "a" }, { common: "a", v1Only: "b" }])
    const listed = (await server.request("GET", at("v1alpha1"))).json.items.map((w: any) => w.spec)
    expect(listed).toEqual([{ common: "a" }, { common: "a" }])
  })
})
