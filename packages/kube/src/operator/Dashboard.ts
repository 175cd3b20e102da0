/**
 * The Control Center: the operator's live dashboard, served at `/` by the operator's HTTP server.
 * Plain HTML, CSS and JavaScript in the package's `dashboard/` directory (no build step, no CDN),
 * reading `/controllers` and the `/controllers/events` stream. A content security policy keeps the
 * page to its own origin.
 *
 * Internal to the operator: not exported from `@kubefx/kube`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { type HttpRouter, HttpServerResponse } from "effect/http"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The page's files: `dashboard/` at the package's root, beside `src/` and `dist/`. */
export const directory = fileURLToPath(new URL("../../dashboard/", import.meta.url))

/** Served paths and what they serve. */
export const assets: ReadonlyArray<{ readonly path: `/${string}`; readonly file: string; readonly contentType: string }> = [
  { path: "/", file: "index.html", contentType: "text/html; charset=utf-8" },
  { path: "/dashboard/app.js", file: "app.js", contentType: "text/javascript; charset=utf-8" },
  { path: "/dashboard/app.css", file: "app.css", contentType: "text/css; charset=utf-8" }
]

const headers = {
  "cache-control": "no-cache",
  "x-content-type-options": "nosniff",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'"
}

// Read per request: the files are small, and an edited page shows on reload.
const serveAsset = (asset: (typeof assets)[number]) =>
  Effect.sync(() => {
    try {
      return HttpServerResponse.text(readFileSync(`${directory}${asset.file}`, "utf8"), { contentType: asset.contentType, headers })
    } catch (error) {
      return HttpServerResponse.text(`dashboard file ${asset.file} is missing from ${directory}: ${String(error)}\n`, { status: 500 })
    }
  })

/**
 * Adds the dashboard's routes to a router.
 *
 * @example
 * import { HttpRouter } from "effect/http"
 * import * as Dashboard from "./Dashboard.ts"
 * const layer = HttpRouter.use(Dashboard.mount)
 */
export const mount = (router: HttpRouter.HttpRouter): Effect.Effect<void> =>
  Effect.forEach(assets, (asset) => router.add("GET", asset.path, serveAsset(asset)), { discard: true })
