/**
 * `kubefx apiserver` run as users run it: the real bin in a child process. The first stdout line,
 * the kubeconfig (mode 0600, usable by kubectl), a clean exit on SIGTERM, and durability of every
 * acknowledged write across a SIGKILL with --data-dir.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, describe, expect, it } from "vitest"

const bin = fileURLToPath(new URL("../bin/kubefx.js", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "kubefx-cli-apiserver-"))
const running = new Set<ChildProcessWithoutNullStreams>()
afterEach(() => {
  for (const child of running) child.kill("SIGKILL")
  running.clear()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Started {
  readonly child: ChildProcessWithoutNullStreams
  readonly firstLine: string
  readonly url: string
  readonly exited: Promise<number | null>
}

const start = (...args: ReadonlyArray<string>): Promise<Started> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "apiserver", ...args], { cwd: dir })
    running.add(child)
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString()
      const nl = stdout.indexOf("\n")
      if (nl >= 0) {
        const firstLine = stdout.slice(0, nl)
        resolve({ child, firstLine, url: firstLine.replace("kubefx apiserver listening on ", ""), exited })
      }
    })
    child.on("exit", (code) => reject(new Error(`kubefx apiserver exited (${code}) before listening: ${stderr}`)))
  })

const stop = async (server: Started, signal: NodeJS.Signals) => {
  server.child.kill(signal)
  const code = await server.exited
  running.delete(server.child)
  return code
}

const request = async (url: string, token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, json: await response.json() as any }
}

const kubectl = (kubeconfig: string, ...args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string }>((resolve) =>
    execFile("kubectl", ["--kubeconfig", kubeconfig, "--cache-dir", join(dir, "cache"), ...args], { timeout: 30_000 }, (error, stdout) =>
      resolve({ code: error === null ? 0 : 1, stdout })))

describe("kubefx apiserver", () => {
  it("prints its URL first, writes a 0600 kubeconfig kubectl can use, and exits 0 on SIGTERM", async () => {
    const kubeconfig = join(dir, "nested", "kubeconfig")
    const server = await start("--port", "0", "--kubeconfig", kubeconfig, "--token", "secret-token")
    expect(server.firstLine).toMatch(/^kubefx apiserver listening on http:\/\/127\.0\.0\.1:\d+$/)
    expect(statSync(kubeconfig).mode & 0o777).toBe(0o600)
    const ns = await kubectl(kubeconfig, "get", "namespaces", "-o", "name")
    expect(ns.stdout).toContain("namespace/default")
    expect(ns.stdout).toContain("namespace/kube-system")
    expect((await fetch(`${server.url}/api`)).status).toBe(401)
    expect((await request(server.url, "secret-token", "GET", "/api")).status).toBe(200)
    expect(await stop(server, "SIGTERM")).toBe(0)
  })

  it("writes the kubeconfig to .kubefx/kubeconfig by default and exits 0 on SIGINT", async () => {
    const server = await start()
    expect(statSync(join(dir, ".kubefx", "kubeconfig")).mode & 0o777).toBe(0o600)
    expect(await stop(server, "SIGINT")).toBe(0)
  })

  it("started with an IPC channel, stops when its parent is SIGKILLed and frees its port", async () => {
    // A parent that starts kubefx apiserver as a harness would (with "ipc"), passes on its pid and
    // first line, and is then killed outright: no finalizer of its own can stop the server.
    const parent = spawn(process.execPath, ["-e", `
      const { spawn } = require("node:child_process")
      const server = spawn(process.execPath, ${JSON.stringify([bin, "apiserver", "--port", "0", "--kubeconfig", join(dir, "ipc-kubeconfig")])}, { stdio: ["ignore", "pipe", "ignore", "ipc"] })
      server.stdout.once("data", (line) => process.stdout.write(server.pid + " " + line))
    `], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] })
    const first = await new Promise<string>((resolve, reject) => {
      parent.stdout.once("data", (d: Buffer) => resolve(d.toString()))
      parent.once("exit", (code) => reject(new Error(`the parent exited (${code}) first`)))
    })
    const [, pid, url] = /^(\d+) kubefx apiserver listening on (\S+)/.exec(first) ?? []
    expect(url).toBeDefined()
    expect((await fetch(`${url}/api`)).status).toBe(401)
    parent.kill("SIGKILL")
    // Ended: its process gone (or a zombie left for init) and its port refusing connections.
    const ended = () => {
      try {
        return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
      } catch {
        return true
      }
    }
    const refused = () => fetch(`${url}/api`).then(() => false, () => true)
    for (let i = 0; i < 300 && !(ended() && await refused()); i++) await new Promise((r) => setTimeout(r, 50))
    expect(ended()).toBe(true)
    expect(await refused()).toBe(true)
  })

  it("loses no acknowledged write across SIGKILL and keeps the revision counter monotonic", async () => {
    const data = join(dir, "data")
    const kubeconfig = join(dir, "durable-kubeconfig")
    const token = "durable"
    const first = await start("--data-dir", data, "--kubeconfig", kubeconfig, "--token", token)
    await request(first.url, token, "POST", "/api/v1/namespaces", { metadata: { name: "kept" } })
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "notes.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "notes", kind: "Note" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { text: { type: "string" } } } } }]
      }
    }
    expect((await request(first.url, token, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(201)
    let note = { status: 0 }
    for (let i = 0; i < 100 && note.status !== 201; i++) {
      note = await request(first.url, token, "POST", "/apis/example.com/v1/namespaces/kept/notes", { apiVersion: "example.com/v1", kind: "Note", metadata: { name: "n1" }, text: "remember" })
      if (note.status !== 201) await new Promise((r) => setTimeout(r, 20))
    }
    expect(note.status).toBe(201)
    const written: Array<string> = []
    for (let i = 0; i < 30; i++) {
      const created = await request(first.url, token, "POST", "/api/v1/namespaces/kept/configmaps", { metadata: { name: `cm-${i}` }, data: { i: String(i) } })
      expect(created.status).toBe(201)
      written.push(created.json.metadata.name)
    }
    await request(first.url, token, "DELETE", "/api/v1/namespaces/kept/configmaps/cm-0")
    const updated = await request(first.url, token, "PUT", "/api/v1/namespaces/kept/configmaps/cm-1", { metadata: { name: "cm-1" }, data: { i: "updated" } })
    const lastRevision = Number(updated.json.metadata.resourceVersion)
    expect(await stop(first, "SIGKILL")).toBe(null)

    const second = await start("--data-dir", data, "--kubeconfig", kubeconfig, "--token", token)
    const listed = await request(second.url, token, "GET", "/api/v1/namespaces/kept/configmaps")
    // Beside the namespace's kube-root-ca.crt, which kube-controller-manager's publisher keeps there.
    expect(listed.json.items.map((i: any) => i.metadata.name).sort()).toEqual([...written.slice(1), "kube-root-ca.crt"].sort())
    expect(listed.json.items.find((i: any) => i.metadata.name === "cm-1").data).toEqual({ i: "updated" })
    expect(Number(listed.json.metadata.resourceVersion)).toBeGreaterThanOrEqual(lastRevision)
    const after = await request(second.url, token, "POST", "/api/v1/namespaces/kept/configmaps", { metadata: { name: "after" } })
    expect(Number(after.json.metadata.resourceVersion)).toBeGreaterThan(lastRevision)
    const viaKubectl = await kubectl(kubeconfig, "get", "configmap", "cm-2", "-n", "kept", "-o", "jsonpath={.data.i}")
    expect(viaKubectl.stdout).toBe("2")
    const recoveredNote = await request(second.url, token, "GET", "/apis/example.com/v1/namespaces/kept/notes/n1")
    expect(recoveredNote.json.text).toBe("remember")
    expect(await stop(second, "SIGTERM")).toBe(0)
  })
})
