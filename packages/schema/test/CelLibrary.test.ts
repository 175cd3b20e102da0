/**
 * The Kubernetes CEL libraries as rules see them: each function on a value it takes and, where it
 * can fail, on one it refuses (with cel-go's wording where kube-apiserver shows it).
 */
import { celEnv, isCelError, parse, plan } from "@bufbuild/cel"
import { describe, expect, it } from "vitest"
import * as CelLibrary from "../src/CelLibrary.ts"

const env = celEnv({ funcs: [...CelLibrary.functions] })

const run = (expression: string, bindings: Record<string, unknown> = {}) => {
  const result = plan(env, parse(expression))(bindings as never)
  return isCelError(result) ? { error: result.message } : result
}

describe("CelLibrary", () => {
  it.each([
    ["[3, 1, 2].sum()", 6n],
    ["[1.5, 2.5].sum()", 4],
    ["[3, 1, 2].min()", 1n],
    ["['b', 'a'].max()", "b"],
    ["[1, 2, 3].isSorted()", true],
    ["[2, 1].isSorted()", false],
    ["[1, 2, 1].indexOf(1)", 0n],
    ["[1, 2, 1].lastIndexOf(1)", 2n],
    ["[1, 2].indexOf(9)", -1n],
    ["sets.contains([1, 2, 3], [1, 3])", true],
    ["sets.equivalent([1, 2], [2, 1, 1])", true],
    ["sets.intersects([1, 2], [3])", false],
    ["'abc 123 def 456'.find('[0-9]+')", "123"],
    ["'abc 123 def 456'.findAll('[0-9]+')", ["123", "456"]],
    ["'abc 123 def 456'.findAll('[0-9]+', 1)", ["123"]],
    ["'Hello'.lowerAscii() + ' ' + 'x,y'.split(',').join('-')", "hello x-y"],
    ["url('https://example.org:8443/a/b?x=1&x=2').getHostname()", "example.org"],
    ["url('https://example.org:8443/a').getPort()", "8443"],
    ["url('https://example.org/a%20b').getEscapedPath()", "/a%20b"],
    ["url('https://example.org/?x=1&x=2').getQuery()['x']", ["1", "2"]],
    ["url('/relative/path').getScheme()", ""],
    ["isURL('not a url')", false],
    ["quantity('1Gi') == quantity('1024Mi')", true],
    ["quantity('500m').isLessThan(quantity('1'))", true],
    ["quantity('2').compareTo(quantity('1'))", 1n],
    ["quantity('1500m').asApproximateFloat()", 1.5],
    ["quantity('2k').asInteger()", 2000n],
    ["quantity('1500m').isInteger()", false],
    ["isQuantity('1x')", false],
    ["ip('10.0.0.1').family()", 4n],
    ["ip.isCanonical('10.0.0.1')", true],
    ["ip.isCanonical('2001:db8::1')", true],
    ["ip.isCanonical('2001:DB8:0:0::1')", false],
    ["ip.isCanonical('2001:db8:0:0:0:0:0:1')", false],
    ["ip('::1').isLoopback()", true],
    ["ip('0.0.0.0').isUnspecified()", true],
    ["ip('8.8.8.8').isGlobalUnicast()", true],
    ["cidr('10.0.0.0/8').containsIP('10.1.2.3')", true],
    ["cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", true],
    ["cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')", false],
    ["cidr('fd00::/8').containsIP(ip('fd12::1'))", true],
    ["cidr('10.0.0.0/8').prefixLength()", 8n],
    ["isIP('10.0.0.256')", false],
    ["isCIDR('10.0.0.0/33')", false],
    ["format.dns1123Label().validate('ok-name').hasValue()", false],
    ["format.named('dns1123Label').hasValue()", true],
    ["format.named('nope').hasValue()", false],
    ["format.uuid().validate('not-a-uuid').value()", ["does not match the UUID format"]],
    ["optional.of(1).value()", 1n],
    ["optional.none().orValue(2)", 2n]
  ])("%s", (expression, expected) => {
    const result = run(expression)
    const plain = typeof result === "object" && result !== null && Symbol.iterator in result && typeof result !== "string"
      ? Array.from(result as Iterable<unknown>)
      : result
    expect(plain).toEqual(expected)
  })

  it.each([
    ["[].min()", "min called on empty list"],
    ["quantity('1x')", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
    ["ip('nope')", "unable to parse IP"],
    ["cidr('10.0.0.0')", "bad prefix"],
    ["optional.none().value()", "optional.none() dereference"],
    ["'x'.find('[')", "error parsing regexp"],
    ["quantity('1').isLessThan(ip('10.0.0.1'))", "no such overload: isLessThan"]
  ])("%s fails", (expression, message) => {
    expect(run(expression)).toEqual({ error: expect.stringContaining(message) })
  })
})
