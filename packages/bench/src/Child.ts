/**
 * Measured programs run in child processes of the harness, so each has a clean heap, its own peak
 * RSS and its own core, apart from the API server. The protocol is three IPC messages: the child
 * says `Started` just before it starts its operator, the parent says `Stop` when it has seen the
 * result it waits for, and the child answers with its `Result` and exits. A scenario that readies
 * several children before its clock starts also says `Go` to each once they are all ready, which
 * they tell with `Progress` (the latest one stands).
 */
import { Deferred, Effect, Exit, type Layer, References, type Scope } from "effect"
import { fork, spawn as spawnProcess } from "node:child_process"
import { fileURLToPath } from "node:url"

type Message =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Result"; readonly result: unknown }
  | { readonly _tag: "Stop" }
  | { readonly _tag: "Go" }
  | { readonly _tag: "Progress"; readonly progress: unknown }

export interface Running {
  /** Completes when the child says it starts; with the parent's `performance.now()` at that moment. */
  readonly started: Effect.Effect<number, Error>
  /** Asks the child to finish and waits for its result. */
  readonly stop: Effect.Effect<unknown, Error>
  /** Waits for a result the child sends without being asked. */
  readonly result: Effect.Effect<unknown, Error>
  /** The latest `Progress` the child sent, if any. */
  readonly progress: () => unknown
  /** Says `Go`: the child starts its measured work. */
  readonly go: Effect.Effect<void>
  /** SIGKILLs the child (no shutdown, as a crashed or evicted process) and waits for its exit. */
  readonly kill: Effect.Effect<void>
}

// Extra Node flags for every child, for example `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them,
// or only for the children whose script is named in KUBEFX_BENCH_CHILD (`FleetKubefx.ts`, say).
const childArgs = (process.env.KUBEFX_BENCH_CHILD_ARGS ?? "").split(" ").filter((arg) => arg !== "")
const childArgsFor = (name: string | undefined): ReadonlyArray<string> => {
  const only = (process.env.KUBEFX_BENCH_CHILD ?? "").split(",").filter((script) => script !== "")
  return only.length === 0 || (name !== undefined && only.includes(name)) ? childArgs : []
}

/**
 * Forks `script` (a `.ts` file run by the same Node, with the `@kubefx/source` condition) with
 * `input` as its JSON argument; killed when the scope closes if it is still running.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Child from "./Child.ts"
 * const run = Effect.scoped(Effect.flatMap(
 *   Child.spawn(new URL("./children/Memory.ts", import.meta.url), { objects: 10 }),
 *   (child) => child.result
 * ))
 */
export const spawn = (script: URL, input: unknown, options: { readonly nodeOptions?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<number, Error>()
    const result = yield* Deferred.make<unknown, Error>()
    const name = fileURLToPath(script).split("/").pop()
    const child = fork(fileURLToPath(script), [JSON.stringify(input)], {
      execArgv: ["--conditions=@kubefx/source", ...(options.nodeOptions ?? []), ...childArgsFor(name)],
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    })
    let progress: unknown = undefined
    child.on("message", (message: Message) => {
      if (message._tag === "Started") Deferred.doneUnsafe(started, Effect.succeed(performance.now()))
      else if (message._tag === "Result") Deferred.doneUnsafe(result, Effect.succeed(message.result))
      else if (message._tag === "Progress") progress = message.progress
    })
    const exited = yield* Deferred.make<void>()
    child.on("exit", (code, signal) => {
      const failure = Effect.fail(new Error(`${name} exited with ${signal ?? code} before it finished`))
      Deferred.doneUnsafe(started, failure)
      Deferred.doneUnsafe(result, failure)
      Deferred.doneUnsafe(exited, Effect.void)
    })
    // After a success the child has sent its result and exits by itself (writing its profile, if
    // asked to); it is killed if it has not within a few seconds, or at once after a failure.
    const kill = Effect.sync(() => child.kill("SIGKILL"))
    yield* Effect.addFinalizer((exit) =>
      Exit.isSuccess(exit)
        ? Deferred.await(exited).pipe(Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => kill }))
        : Effect.andThen(kill, Deferred.await(exited))
    )
    const running: Running = {
      started: Deferred.await(started),
      stop: Effect.andThen(Effect.sync(() => child.send({ _tag: "Stop" } satisfies Message)), Deferred.await(result)),
      result: Deferred.await(result),
      progress: () => progress,
      go: Effect.sync(() => {
        child.send({ _tag: "Go" } satisfies Message)
      }),
      kill: Effect.andThen(kill, Deferred.await(exited))
    }
    return running
  })

const endWithParent = new URL("./EndWithParent.ts", import.meta.url).href

/**
 * Runs a Node script (with the `@kubefx/source` condition) to completion and returns what it printed
 * on stdout; its stderr passes through. Fails if it exits with an error. The script ends when this
 * process does, however it ends (see EndWithParent.ts).
 *
 * @example
 * import { Effect } from "effect"
 * import * as Child from "./Child.ts"
 * const table = Effect.runPromise(Child.exec(new URL("../../core/bench/engine.ts", import.meta.url), ["--quick"]))
 */
export const exec = (script: URL, args: ReadonlyArray<string>, nodeOptions: ReadonlyArray<string> = []) =>
  Effect.callback<string, Error>((resume) => {
    const child = spawnProcess(process.execPath, [
      "--conditions=@kubefx/source",
      `--import=${endWithParent}`,
      ...nodeOptions,
      ...childArgs,
      fileURLToPath(script),
      ...args
    ], {
      // The IPC channel is only there to close when this process ends (see EndWithParent.ts).
      stdio: ["ignore", "pipe", "inherit", "ipc"]
    })
    let out = ""
    child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()))
    child.on("error", (error) => resume(Effect.fail(error)))
    child.on("exit", (code, signal) =>
      resume(code === 0 ? Effect.succeed(out) : Effect.fail(new Error(`${fileURLToPath(script)} exited with ${signal ?? code}`))))
    return Effect.sync(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    })
  })

/**
 * In a child: its JSON input. From then on the child ends with its parent: when the parent's IPC
 * channel closes (the parent killed, even by SIGKILL, which runs none of its finalizers), nothing is
 * left to read the child's result, and a child left running would hold its sockets and its CPU.
 *
 * @example
 * import * as Child from "./Child.ts"
 * const { objects } = Child.input<{ readonly objects: number }>()
 */
export const input = <A>(): A => {
  process.once("disconnect", () => process.exit(1))
  return JSON.parse(process.argv[2] ?? "{}") as A
}

/**
 * In a child: says the measured work starts now.
 *
 * @example
 * import * as Child from "./Child.ts"
 * Child.started()
 */
export const started = (): void => {
  process.send?.({ _tag: "Started" } satisfies Message)
}

/**
 * In a child: resolves when the parent asks it to stop. Call it before `started`, so no request is missed.
 *
 * @example
 * import * as Child from "./Child.ts"
 * await Child.stopRequested()
 */
export const stopRequested = (): Promise<void> => stop ??= new Promise((resolve) => {
  process.on("message", (message: Message) => {
    if (message._tag === "Stop") resolve()
  })
})
let stop: Promise<void> | undefined

/**
 * In a child: resolves when the parent says `Go`. Call it before `started`, so no signal is missed.
 *
 * @example
 * import * as Child from "./Child.ts"
 * await Child.goRequested()
 */
export const goRequested = (): Promise<void> => go ??= new Promise((resolve) => {
  process.on("message", (message: Message) => {
    if (message._tag === "Go") resolve()
  })
})
let go: Promise<void> | undefined

/**
 * In a child: tells the parent how far it got (before `Go`, say, what it has cached).
 *
 * @example
 * import * as Child from "./Child.ts"
 * Child.progress({ cached: 100 })
 */
export const progress = (value: unknown): void => {
  process.send?.({ _tag: "Progress", progress: value } satisfies Message)
}

/**
 * In a child: sends its result and exits (open watches and sockets would keep it alive otherwise).
 *
 * @example
 * import * as Child from "./Child.ts"
 * Child.finish({ bytesPerObject: 1234 })
 */
export const finish = (result: unknown): void => {
  if (process.send === undefined) {
    console.log(JSON.stringify(result))
    process.exit(0)
  }
  process.send({ _tag: "Result", result } satisfies Message, () => process.exit(0))
}

/**
 * The process's peak resident set size so far, in MB.
 *
 * @example
 * import * as Child from "./Child.ts"
 * Child.peakRssMb() > 0 // true
 */
export const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024

/**
 * CPU seconds (user and system) this process has used so far.
 *
 * @example
 * import * as Child from "./Child.ts"
 * Child.cpuSeconds() >= 0 // true
 */
export const cpuSeconds = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

/**
 * In a child: runs an Effect program with `layer` and sends its result from inside the program's
 * scope, then exits. The scope is never closed: closing it would end watches and log their
 * failures after the measurement, which is noise; the process exit ends everything.
 *
 * @example
 * import { Effect, Layer } from "effect"
 * import * as Child from "./Child.ts"
 * Child.runEffect(Effect.succeed({ done: true }), Layer.empty)
 */
export const runEffect = <A, E, R, LE>(
  program: Effect.Effect<A, E, R | Scope.Scope>,
  layer: Layer.Layer<Exclude<R, Scope.Scope>, LE>
): void => {
  Effect.runFork(
    program.pipe(
      Effect.flatMap((result) => Effect.andThen(Effect.sync(() => finish(result)), Effect.never)),
      Effect.provide(layer),
      Effect.scoped,
      Effect.provideService(References.MinimumLogLevel, "Warn"),
      Effect.catchCause((cause) =>
        Effect.sync(() => {
          console.error(cause)
          process.exit(1)
        })
      )
    ) as Effect.Effect<void>
  )
}
