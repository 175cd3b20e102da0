/**
 * Kubernetes REST paths: `/api/v1/...` for the core group and `/apis/<group>/<version>/...` for
 * the others, then `namespaces/<ns>/<resource>[/<name>[/<subresource>]]` or
 * `<resource>[/<name>[/<subresource>]]`; the deprecated `watch/` prefix is understood too.
 */

export type Parsed =
  | { readonly _tag: "Root" }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Health"; readonly probe: "healthz" | "livez" | "readyz"; readonly check: string | undefined }
  | { readonly _tag: "LegacyVersions" }
  | { readonly _tag: "Groups" }
  | { readonly _tag: "Group"; readonly group: string }
  | { readonly _tag: "Resources"; readonly group: string; readonly version: string }
  | { readonly _tag: "OpenApi"; readonly path: string | undefined }
  | { readonly _tag: "OpenApiV2" }
  | { readonly _tag: "Faults"; readonly action: string | undefined }
  | ({ readonly _tag: "Resource" } & ResourcePath)
  | { readonly _tag: "NotFound" }

export interface ResourcePath {
  readonly group: string
  readonly version: string
  /** The namespace from the path (namespaces/<ns>/...), if any. */
  readonly namespace: string | undefined
  readonly plural: string
  readonly name: string | undefined
  readonly subresource: string | undefined
  /** Came in through the deprecated `/watch/` prefix. */
  readonly legacyWatch: boolean
}

/**
 * Parses a request path (without the query string).
 *
 * @example
 * import * as Paths from "./Paths.ts"
 * Paths.parse("/apis/apps/v1/namespaces/default/deployments/web/scale")
 * // { _tag: "Resource", group: "apps", version: "v1", namespace: "default", plural: "deployments", name: "web", subresource: "scale", legacyWatch: false }
 */
export const parse = (path: string): Parsed => {
  const segments = path.split("/").filter((s) => s.length > 0).map(decode)
  if (segments.some((s) => s === undefined)) return { _tag: "NotFound" }
  const parts = segments as Array<string>
  const [first, second, third] = parts
  if (first === undefined) return { _tag: "Root" }
  if (parts.length === 1 && first === "version") return { _tag: "Version" }
  if (first === "healthz" || first === "livez" || first === "readyz") {
    return { _tag: "Health", probe: first, check: parts.length > 1 ? parts.slice(1).join("/") : undefined }
  }
  if (first === "openapi") {
    if (second === "v2") return parts.length === 2 ? { _tag: "OpenApiV2" } : { _tag: "NotFound" }
    if (second === "v3") return { _tag: "OpenApi", path: parts.length > 2 ? parts.slice(2).join("/") : undefined }
    return { _tag: "NotFound" }
  }
  if (first === "kubefx" && second === "faults") return { _tag: "Faults", action: parts.slice(2).join("/") || undefined }
  if (first === "api") {
    if (second === undefined) return { _tag: "LegacyVersions" }
    return resourcePath("", second, parts.slice(2))
  }
  if (first === "apis") {
    if (second === undefined) return { _tag: "Groups" }
    if (third === undefined) return { _tag: "Group", group: second }
    return resourcePath(second, third, parts.slice(3))
  }
  return { _tag: "NotFound" }
}

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

const resourcePath = (group: string, version: string, rest: ReadonlyArray<string>): Parsed => {
  if (rest.length === 0) return { _tag: "Resources", group, version }
  const legacyWatch = rest[0] === "watch"
  const tail = legacyWatch ? rest.slice(1) : rest
  const base = { _tag: "Resource" as const, group, version, legacyWatch }
  // namespaces/<ns>/<resource>/... is namespaced content; namespaces[/<name>[/<sub>]] is the Namespace itself.
  if (tail[0] === "namespaces" && tail.length >= 3 && !(tail.length === 3 && isNamespaceSubresource(tail[2]!))) {
    if (tail.length > 5) return { _tag: "NotFound" }
    return { ...base, namespace: tail[1], plural: tail[2]!, name: tail[3], subresource: tail[4] }
  }
  if (tail.length === 0 || tail.length > 3) return { _tag: "NotFound" }
  return { ...base, namespace: undefined, plural: tail[0]!, name: tail[1], subresource: tail[2] }
}

const isNamespaceSubresource = (segment: string) => segment === "status" || segment === "finalize"
