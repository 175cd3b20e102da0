/**
 * Releases: each of the four answers of a reconcile, reachable from the spec, in the style of the
 * k8s-dogu-operator's requeue table. A new `version` starts a rollout that "takes"
 * `rolloutSeconds`: while it runs the reconcile answers `requeueAfter` (converged for now, look again);
 * `fail: transient` fails and is retried; `fail: permanent` fails and waits for a spec change;
 * otherwise it is done. The releases controller `dependsOn` the flaky controller being healthy: while
 * flaky is degraded, no release starts a reconcile.
 */
import { Outcome, ReconcileError } from "@kubefx/core"
import * as Flaky from "@kubefx/example-flaky"
import { Conditions, Controller, Resource } from "@kubefx/kube"
import { Clock, Duration, Effect, Schema } from "effect"

export const Release = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Release",
  plural: "releases",
  spec: Schema.Struct({
    version: Schema.String,
    rolloutSeconds: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
    fail: Schema.optionalKey(Schema.Literals(["transient", "permanent"]))
  }),
  status: Schema.Struct({
    ...Conditions.statusFields,
    phase: Schema.optionalKey(Schema.Literals(["RollingOut", "Released"])),
    rollingOutVersion: Schema.optionalKey(Schema.String),
    rolloutStartedAt: Schema.optionalKey(Schema.String),
    releasedVersion: Schema.optionalKey(Schema.String)
  }),
  printerColumns: [
    { name: "Version", type: "string", jsonPath: ".spec.version" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Released", type: "string", jsonPath: ".status.releasedVersion" }
  ]
})
export type Release = typeof Release.schema.Type

export const reconcile = Effect.fnUntraced(function*(release: Controller.Stored<Release>, ctx: Controller.Context<Release>) {
  const spec = release.spec
  if (spec.fail === "permanent") {
    return yield* new ReconcileError.Permanent({ message: `release ${spec.version} cannot be installed: fix the spec` })
  }
  if (spec.fail === "transient") {
    return yield* new ReconcileError.Transient({ message: `registry unavailable while installing ${spec.version}` })
  }
  if (release.status?.releasedVersion === spec.version) return Outcome.done
  const now = yield* Clock.currentTimeMillis
  const startedAt = release.status?.rollingOutVersion === spec.version && release.status.rolloutStartedAt !== undefined
    ? Date.parse(release.status.rolloutStartedAt)
    : now
  if (release.status?.rollingOutVersion !== spec.version) {
    yield* ctx.patchStatusAndCache({
      status: { phase: "RollingOut", rollingOutVersion: spec.version, rolloutStartedAt: new Date(now).toISOString() }
    })
  }
  const remaining = startedAt + (spec.rolloutSeconds ?? 0) * 1000 - now
  if (remaining > 0) return Outcome.requeueAfter(Duration.millis(remaining))
  yield* ctx.patchStatusAndCache((latest) => ({
    status: {
      phase: "Released",
      rollingOutVersion: spec.version,
      rolloutStartedAt: latest.status?.rolloutStartedAt ?? new Date(startedAt).toISOString(),
      releasedVersion: spec.version
    }
  }))
  return Outcome.done
})

/** The releases controller: started after flaky and held while it is degraded. */
export const definition = Controller.define({ name: "releases", for: Release, dependsOn: [Flaky.definition], reconcile })

export const resources = [Release]
export const samples = new URL("../samples/", import.meta.url)
