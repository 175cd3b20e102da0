/**
 * `kubefx dev --watch`: the API server stays up (its objects, its port, its kubeconfig) while the
 * operator runs in a child `kubefx dev --kubeconfig ...` that is restarted whenever a file under the
 * modules' directories changes. A fresh process is the only way to load a changed module and
 * everything it imports. A child that fails (a syntax error, a module that exports nothing) waits
 * for the next change.
 *
 * @since 0.1.0
 */
import { Console, Duration, Effect, Queue } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { watch } from "node:fs"
import * as path from "node:path"

export interface Options {
  /** The operator modules; their directories are watched (recursively). */
  readonly files: ReadonlyArray<string>
  /** The arguments of the child `kubefx`, after `dev`. */
  readonly childArgs: ReadonlyArray<string>
  /** Changes closer together than this restart once (default 200 ms). */
  readonly debounce?: Duration.Input
}

const ignored = /(^|[/\\])(node_modules|\.git|\.kubefx)([/\\]|$)/

// Every change under `dirs` (recursively), for the life of the scope.
const watchDirectories = (dirs: ReadonlyArray<string>, changes: Queue.Queue<string>) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      dirs.map((dir) =>
        watch(dir, { recursive: true }, (_, filename) => {
          const changed = filename === null ? dir : path.join(dir, filename.toString())
          if (!ignored.test(changed)) Queue.offerUnsafe(changes, changed)
        })
      )
    ),
    (watchers) => Effect.sync(() => watchers.forEach((watcher) => watcher.close()))
  )

const exited = (child: ChildProcess): Effect.Effect<number | null> =>
  Effect.callback<number | null>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
  })

const stop = (child: ChildProcess): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (child.exitCode !== null || child.signalCode !== null) return Effect.void
    child.kill("SIGTERM")
    return Effect.asVoid(exited(child))
  })

const operator = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    // The IPC channel stops the child if this process is killed outright (SIGKILL runs no finalizer).
    Effect.sync(() => spawn(process.execPath, [process.argv[1]!, "dev", ...args], { stdio: ["ignore", "inherit", "inherit", "ipc"] })),
    stop
  )

/**
 * Runs the operator in a child process, restarting it on every change, until interrupted.
 *
 * @example
 * import * as DevWatch from "./DevWatch.ts"
 * const watching = DevWatch.run({ files: ["src/greeting.ts"], childArgs: ["src/greeting.ts", "--kubeconfig", ".kubefx/kubeconfig"] })
 */
export const run = Effect.fn("DevWatch.run")(function*(options: Options) {
  const changes = yield* Queue.unbounded<string>()
  const dirs = [...new Set(options.files.map((file) => path.dirname(path.resolve(file))))]
  yield* watchDirectories(dirs, changes)
  yield* Console.log(`kubefx dev: watching ${dirs.map((dir) => path.relative(process.cwd(), dir) || ".").join(", ")} for changes`)
  const debounce = Duration.fromInputUnsafe(options.debounce ?? "200 millis")
  // The first change, once the burst it belongs to (an editor's save is several events) is over.
  const nextChange = Effect.gen(function*() {
    const first = yield* Queue.take(changes)
    yield* Effect.sleep(debounce)
    yield* Queue.clear(changes)
    return first
  })
  for (;;) {
    const changed = yield* Effect.scoped(Effect.gen(function*() {
      const child = yield* operator(options.childArgs)
      const first = yield* Effect.raceFirst(
        Effect.map(exited(child), (code) => ({ _tag: "Exited", code }) as const),
        Effect.map(nextChange, (file) => ({ _tag: "Changed", file }) as const)
      )
      if (first._tag === "Changed") return first.file
      yield* Console.error(`kubefx dev: the operator exited (code ${first.code}); waiting for a change to start it again`)
      return yield* nextChange
    }))
    yield* Console.log(`kubefx dev: ${path.relative(process.cwd(), changed)} changed; restarting the operator`)
  }
})
