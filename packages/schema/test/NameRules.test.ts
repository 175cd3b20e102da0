/**
 * apimachinery's name formats, message for message (util/validation): the one implementation that
 * object metadata, CRDs and built-in kinds share.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NameRules from "../src/NameRules.ts"

const qualifiedRegex = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

describe("NameRules", () => {
  it("qualifiedName: an empty name part fails both as empty and against the regex, as IsQualifiedName does", () => {
    expect(NameRules.qualifiedName("")).toEqual(["name part must be non-empty", qualifiedRegex])
    expect(NameRules.qualifiedName("example.com/")).toEqual(["name part must be non-empty", qualifiedRegex])
    expect(NameRules.qualifiedName("/name")).toEqual(["prefix part must be non-empty"])
    expect(NameRules.qualifiedName("example.com/app")).toEqual([])
  })

  it("isKubeFinalizerName: a path, or one of kube's own finalizers", () => {
    expect(["example.com/cleanup", "orphan", "foregroundDeletion", "kubernetes"].map(NameRules.isKubeFinalizerName)).toEqual([true, true, true, true])
    expect(["cleanup", "kubefx.dev", "Orphan"].map(NameRules.isKubeFinalizerName)).toEqual([false, false, false])
  })

  it("qualifiedName: a name part over 63 characters is reported by length only when it matches", () => {
    expect(NameRules.qualifiedName("a".repeat(64))).toEqual(["name part must be no more than 63 characters"])
  })

  it("dns1123Label and dns1035Label give Go's messages with their examples", () => {
    expect(NameRules.dns1123Label("Web")).toEqual([
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ])
    expect(NameRules.dns1035Label("1abc")).toEqual([
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ])
  })
})
