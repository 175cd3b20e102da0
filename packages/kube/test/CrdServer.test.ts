/**
 * The generated CRD against a real API server: the embedded one, with the kubeconfig it writes.
 */
import { layer } from "@effect/vitest"
import { ApiServer } from "@kubefx/apiserver"
import { Crd, Kube, Resource } from "@kubefx/kube"
import { Context, Effect, Layer, Schedule, Schema } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect } from "vitest"
import { Widget } from "./fixtures/Widget.ts"

class Kubeconfig extends Context.Service<Kubeconfig, string>()("@kubefx/kube/test/CrdServer/Kubeconfig") {}

const Server = Layer.unwrap(Effect.gen(function*() {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-crd-test-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  const kubeconfigPath = join(dir, "kubeconfig")
  yield* ApiServer.make({ kubeconfigPath })
  return Layer.merge(Kube.layer({ _tag: "File", path: kubeconfigPath }), Layer.succeed(Kubeconfig, kubeconfigPath))
})).pipe(Layer.orDie)

const widget = (name: string, spec: typeof Widget.schema.Type.spec) => ({
  apiVersion: Widget.apiVersion,
  kind: Widget.kind,
  metadata: { name, namespace: "default" },
  spec
})

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
const widgetsPath = "/apis/demo.kubefx.dev/v1/namespaces/default/widgets"

interface Conditioned {
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }> }
}

const installed = (resource: Resource.Resource<any>) => Effect.gen(function*() {
  const kube = yield* Kube.Kube
  const crd = Crd.make(resource)
  yield* kube.request({ method: "POST", path: crdPath, body: crd }).pipe(Effect.catchTag("AlreadyExists", () => Effect.void))
  const established = kube.request({ method: "GET", path: `${crdPath}/${crd.metadata.name}` }).pipe(
    Effect.map((object) => (object as Conditioned).status?.conditions ?? []),
    Effect.filterOrFail((conditions) => conditions.some((c) => c.type === "Established" && c.status === "True"))
  )
  return yield* established.pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo({ times: 200 }))))
})

interface Tree {
  readonly name: string
  readonly children?: ReadonlyArray<Tree>
}
const Tree: Schema.Codec<Tree> = Schema.Struct({
  name: Schema.String,
  children: Schema.optionalKey(Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree)))
})

/** Every shape the generator produces, in one CRD the server must accept as structural. */
const Everything = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1beta1",
  kind: "Everything",
  plural: "everythings",
  namespaced: false,
  spec: Schema.Struct({
    int32: Schema.Int.check(Schema.isInt32()),
    ratio: Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThan(1)),
    name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(63), Schema.isPattern(/^[a-z]/i), Schema.isPattern(/[a-z0-9]$/)),
    uuid: Schema.optionalKey(Schema.String.check(Schema.isUUID())),
    when: Schema.optionalKey(Schema.Date),
    nullable: Schema.NullOr(Schema.String),
    pair: Schema.Tuple([Schema.String, Schema.Int]),
    tags: Schema.Array(Schema.String).check(Schema.isUnique(), Schema.isMaxLength(10)),
    ports: Schema.Array(Schema.Struct({ name: Schema.String, port: Crd.IntOrString })).annotate(Crd.listMap("name")),
    labels: Schema.Record(Schema.String, Schema.String).annotate(Crd.mapType("atomic")),
    extra: Schema.Record(Schema.String, Schema.Unknown),
    json: Schema.Json,
    template: Schema.Record(Schema.String, Schema.Unknown).annotate(Crd.embeddedResource),
    open: Schema.StructWithRest(Schema.Struct({ known: Schema.String }), [Schema.Record(Schema.String, Schema.Unknown)]),
    choice: Schema.Union([Schema.TaggedStruct("A", { a: Schema.String }), Schema.TaggedStruct("B", { b: Schema.Int })]),
    either: Schema.Union([Schema.String, Schema.Struct({ value: Schema.String })]),
    tree: Tree,
    range: Schema.Struct({ min: Schema.Int, max: Schema.Int }).annotate(
      Crd.validations({ rule: "self.min <= self.max", message: "min must not exceed max" })
    ),
    mode: Schema.Literals(["a", "b"]).annotate({ description: "The mode", default: "a" })
  })
})

/** CEL rules beside the types they check: on the struct, a field and a list. */
const Window = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Window",
  plural: "windows",
  spec: Schema.Struct({
    opens: Schema.Int,
    closes: Schema.Int,
    name: Schema.String.check(Schema.isMaxLength(63)).annotate(Crd.validations({ rule: "self.startsWith('w-')", message: "names start with w-" })),
    hours: Schema.Array(Schema.Int).check(Schema.isMaxLength(24)).annotate(
      Crd.validations({ rule: "self.all(h, h >= 0 && h < 24)", messageExpression: "'hours are 0-23, not ' + self.filter(h, h < 0 || h >= 24).map(h, string(h)).join(', ')" })
    )
  }).annotate(Crd.validations(
    { rule: "self.opens < self.closes", message: "a window opens before it closes" },
    { rule: "self.name == oldSelf.name", message: "name is immutable", reason: "FieldValueForbidden", fieldPath: ".name" }
  ))
})

layer(Server, { excludeTestServices: true, timeout: "60 seconds" })("generated CRD on the embedded API server", (it) => {
  it.effect("CEL rules declared on the Schema are enforced: on the struct, a field, a list, and as transition rules", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      yield* installed(Window)
      const window = (name: string, spec: typeof Window.schema.Type.spec) =>
        ({ apiVersion: Window.apiVersion, kind: Window.kind, metadata: { name, namespace: "default" }, spec })
      const created = yield* kube.create(Window, window("morning", { opens: 6, closes: 9, name: "w-morning", hours: [6, 7, 8] }))
      const rejected = yield* kube.create(Window, window("bad", { opens: 9, closes: 6, name: "bad", hours: [7, 25, -1] })).pipe(Effect.flip)
      expect(rejected._tag === "Invalid" ? rejected.causes : []).toEqual([
        { reason: "FieldValueInvalid", field: "spec", message: 'Invalid value: "object": a window opens before it closes' },
        { reason: "FieldValueInvalid", field: "spec.name", message: 'Invalid value: "string": names start with w-' },
        { reason: "FieldValueInvalid", field: "spec.hours", message: 'Invalid value: "array": hours are 0-23, not 25, -1' }
      ])
      const renamed = yield* kube.replace(Window, { ...created, spec: { ...created.spec, name: "w-dawn" } }).pipe(Effect.flip)
      expect(renamed._tag === "Invalid" ? renamed.causes : []).toEqual([
        { reason: "FieldValueForbidden", field: "spec.name", message: "Forbidden: name is immutable" }
      ])
    }))

  it.effect("is established, serves valid widgets and rejects invalid ones with 422", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const conditions = yield* installed(Widget)
      expect(conditions.map((c) => c.type)).toContain("Established")

      const created = yield* kube.create(Widget, widget("a", {
        replicas: 3,
        message: "hello",
        mode: "fast",
        ports: [{ name: "http", port: 80, target: "web" }, { name: "metrics", port: 9090, target: 9090 }],
        values: { anything: ["goes", 1, { here: true }] }
      }))
      // the server kept every field the schema allows, and the object decodes with the resource's schema
      expect(created.metadata.uid).toBeTypeOf("string")
      expect(created.spec.ports?.[1]?.target).toBe(9090)
      expect(created.spec.values).toEqual({ anything: ["goes", 1, { here: true }] })

      const rejected = yield* kube.request({
        method: "POST",
        path: widgetsPath,
        body: { ...widget("b", { replicas: 1, message: "" }), spec: { replicas: 11, message: 7, mode: "slow" } }
      }).pipe(Effect.flip)
      expect(rejected._tag).toBe("Invalid")
      const causes = rejected._tag === "Invalid" ? rejected.causes.map((c) => c.field).sort() : []
      expect(causes).toEqual(["spec.message", "spec.mode", "spec.replicas"])
    }))

  it.effect("a CRD using every generated shape is accepted as structural and established", () =>
    Effect.gen(function*() {
      const conditions = yield* installed(Everything)
      expect(conditions.find((c) => c.type === "Established")?.status).toBe("True")
    }))

  it.effect("kubectl apply --dry-run=server takes the YAML, a valid widget, and rejects an invalid one", () =>
    Effect.gen(function*() {
      const kubeconfig = yield* Kubeconfig
      const dir = join(kubeconfig, "..")
      const kubectl = (file: string, content: string) =>
        Effect.promise(() => {
          writeFileSync(join(dir, file), content)
          return promisify(execFile)("kubectl", ["--kubeconfig", kubeconfig, "apply", "--dry-run=server", "-f", join(dir, file)], {
            timeout: 30_000
          }).then(({ stdout }) => ({ ok: true, output: stdout }), (e: { stderr: string }) => ({ ok: false, output: e.stderr }))
        })
      yield* installed(Widget)
      // the CRD YAML as `kubefx crd` prints it: an update of Widget's, a creation of Everything's
      const crds = yield* kubectl("crds.yaml", Crd.toYaml([Crd.make(Widget), Crd.make(Everything)]))
      expect(crds).toEqual({ ok: true, output: expect.stringContaining("customresourcedefinition.apiextensions.k8s.io/widgets.demo.kubefx.dev") })
      expect(crds.output).toContain("everythings.demo.kubefx.dev")
      expect(crds.output).toContain("(server dry run)")

      const good = yield* kubectl("good.json", JSON.stringify(widget("c", { replicas: 1, message: "ok" })))
      expect(good).toEqual({ ok: true, output: "widget.demo.kubefx.dev/c created (server dry run)\n" })

      const bad = yield* kubectl("bad.json", JSON.stringify(widget("d", { replicas: -1, message: "ok" })))
      expect(bad.ok).toBe(false)
      expect(bad.output).toContain("spec.replicas: Invalid value: -1")

      // A CEL rule's message, as kubectl prints the 422.
      yield* installed(Window)
      const late = yield* kubectl("late.json", JSON.stringify({
        apiVersion: Window.apiVersion,
        kind: Window.kind,
        metadata: { name: "late", namespace: "default" },
        spec: { opens: 22, closes: 21, name: "w-late", hours: [] }
      }))
      expect(late).toEqual({
        ok: false,
        output: expect.stringContaining('The Window "late" is invalid: spec: Invalid value: "object": a window opens before it closes')
      })
    }))
})
