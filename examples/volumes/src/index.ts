/**
 * Volumes: a custom resource validated the three ways a 1.32 cluster validates. CEL rules live
 * beside the types (a size bound on the spec, an immutable storage class, access modes listed
 * once); two versions convert through the operator's conversion webhook (v1 wrote the size as
 * one string, v2 as value and unit, and v2 is what the controller reconciles and the cluster
 * stores); a mutating webhook defaults the storage class, a validating one refuses what the
 * schema cannot say (a ReadWriteOnce volume has one replica; a protected volume is not deleted).
 */
import { Outcome } from "@kubefx/core"
import { Conditions, Controller, Crd, Resource, Webhook } from "@kubefx/kube"
import { Effect, Schema } from "effect"

const AccessMode = Schema.Literals(["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"])

const Size = Schema.Struct({
  value: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1024 })),
  unit: Schema.Literals(["Mi", "Gi"])
})

/** v2: the version the controller reconciles, and the one stored. */
const VolumeV2 = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v2",
  kind: "Volume",
  plural: "volumes",
  shortNames: ["vol"],
  spec: Schema.Struct({
    size: Size,
    replicas: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })),
    storageClass: Schema.optionalKey(
      Schema.String.check(Schema.isMaxLength(63)).annotate(
        Crd.validations({ rule: "self == oldSelf", message: "storageClass is immutable", reason: "FieldValueForbidden" })
      )
    ),
    accessModes: Schema.Array(AccessMode).check(Schema.isMaxLength(3)).annotate(
      Crd.validations({ rule: "self.all(m, self.exists_one(n, n == m))", messageExpression: "'access modes are listed once: ' + self.join(', ')" })
    )
  }).annotate(Crd.validations({
    rule: "self.size.unit == 'Mi' || self.size.value <= 100",
    messageExpression: "'a volume holds at most 100Gi, not ' + string(self.size.value) + 'Gi'"
  })),
  status: Schema.Struct({ ...Conditions.statusFields, capacity: Schema.optionalKey(Schema.String) }),
  printerColumns: [
    { name: "Size", type: "string", jsonPath: ".status.capacity" },
    { name: "Class", type: "string", jsonPath: ".spec.storageClass" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" }
  ]
})

/** v1 (deprecated): the size as one string such as "10Gi", no replicas (one). */
const v1 = Resource.version(VolumeV2, {
  name: "v1",
  spec: Schema.Struct({
    size: Schema.String.check(Schema.isPattern(/^[0-9]+(Mi|Gi)$/)),
    storageClass: Schema.optionalKey(Schema.String),
    accessModes: Schema.optionalKey(Schema.Array(AccessMode))
  }),
  deprecationWarning: "demo.kubefx.dev/v1 Volume is deprecated; use demo.kubefx.dev/v2",
  conversion: {
    decode: ({ spec, status }) => {
      const [, value = "0", unit] = /^([0-9]+)(Mi|Gi)$/.exec(spec.size) ?? []
      return {
        spec: {
          size: { value: Number(value), unit: unit === "Mi" ? "Mi" as const : "Gi" as const },
          replicas: 1,
          ...(spec.storageClass === undefined ? {} : { storageClass: spec.storageClass }),
          accessModes: spec.accessModes ?? ["ReadWriteOnce"]
        },
        ...(status === undefined ? {} : { status })
      }
    },
    encode: ({ spec, status }) => ({
      spec: {
        size: `${spec.size.value}${spec.size.unit}`,
        ...(spec.storageClass === undefined ? {} : { storageClass: spec.storageClass }),
        accessModes: spec.accessModes
      },
      ...(status === undefined ? {} : { status })
    })
  }
})

export const Volume = Resource.withVersions(VolumeV2, { versions: [v1] })
export type Volume = typeof Volume.schema.Type

/** Defaults the storage class (the API server then stores it, and CEL keeps it from changing). */
export const defaultClass = Webhook.mutating({
  name: "mvolume.demo.kubefx.dev",
  resource: Volume,
  mutate: (volume) =>
    Effect.succeed(volume.spec.storageClass !== undefined ? volume : { ...volume, spec: { ...volume.spec, storageClass: "standard" } })
})

/** What the schema cannot say: one replica for ReadWriteOnce; protected volumes stay. */
export const rules = Webhook.validating({
  name: "vvolume.demo.kubefx.dev",
  resource: Volume,
  operations: ["CREATE", "UPDATE", "DELETE"],
  validate: ({ object, oldObject, operation }) =>
    Effect.succeed(
      operation === "DELETE" && oldObject?.metadata.labels?.["demo.kubefx.dev/protected"] === "true"
        ? Webhook.deny(`volume ${oldObject.metadata.name} is protected: remove the demo.kubefx.dev/protected label first`)
        : object !== undefined && object.spec.replicas > 1 && object.spec.accessModes.includes("ReadWriteOnce")
        ? Webhook.deny(`a ReadWriteOnce volume has one replica, not ${object.spec.replicas}`, { code: 422, reason: "Invalid" })
        : Webhook.allow()
    )
})

/** Every webhook this example serves. */
export const webhooks = [defaultClass, rules, Webhook.conversion(Volume)]

/** Reports the capacity the volume was given; Ready follows. */
export const definition = Controller.define({
  name: "volumes",
  for: Volume,
  reconcile: (volume, ctx) =>
    ctx.applyStatus({ status: { capacity: `${volume.spec.size.value * volume.spec.replicas}${volume.spec.size.unit}` } }).pipe(
      Effect.as(Outcome.done)
    )
})

export const resources = [Volume]
export const samples = new URL("../samples/", import.meta.url)
