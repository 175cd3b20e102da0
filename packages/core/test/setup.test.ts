import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Core from "@kubefx/core"

it.effect("workspace resolves from source", () => Effect.sync(() => assert.deepStrictEqual(Object.keys(Core), [])))
