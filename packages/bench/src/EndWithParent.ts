/**
 * Preloaded (`--import`) into every script `Child.exec` runs, which are also run by hand and so
 * import nothing of the bench's: once the bench that ran the script is gone (even SIGKILLed, which
 * runs none of its finalizers), its IPC channel closes and the script exits, rather than spend a
 * minute of CPU on figures no one will read. The channel is unreferenced, so a script that is done
 * still exits by itself. Forked children (`Child.spawn`) do not preload it: they wait on messages
 * over that channel, which must keep them alive, and `Child.input` ends them with it instead.
 *
 * @example
 * // Child.exec adds `--import <this file>` and an IPC channel to the script's command line.
 * import "./EndWithParent.ts"
 */
if (process.channel !== undefined) {
  process.once("disconnect", () => process.exit(1))
  process.channel.unref()
}

export {}
