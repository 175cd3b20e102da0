/**
 * apimachinery's string formats (util/validation) with their exact messages: DNS-1123 labels and
 * subdomains, DNS-1035 labels, qualified names, label values, config keys, port names and numbers.
 * Each check returns the messages of what is wrong, none when the value is fine.
 */

const example = (xs: ReadonlyArray<string>) => `(e.g. ${xs.map((x) => `'${x}'`).join(",  or ")}`
const regexMessage = (what: string, regex: string, examples: ReadonlyArray<string>) =>
  `${what} ${example(examples)}, regex used for validation is '${regex}')`

const maxLen = (n: number) => `must be no more than ${n} characters`

const label1123 = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const subdomain1123 = `${label1123}(\\.${label1123})*`
const label1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
const qualifiedPart = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const configKeyFormat = "[-._a-zA-Z0-9]+"
const anchored = (r: string) => new RegExp(`^${r}$`)

const label1123Message = regexMessage(
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  label1123,
  ["my-name", "123-abc"]
)
const subdomain1123Message = regexMessage(
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  subdomain1123,
  ["example.com"]
)
const label1035Message = regexMessage(
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
  label1035,
  ["my-name", "abc-123"]
)
const qualifiedMessage = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

/**
 * IsDNS1123Label.
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.dns1123Label("web") // []
 * NameRules.dns1123Label("Web").length // 1
 */
export const dns1123Label = (value: string): ReadonlyArray<string> => [
  ...(value.length > 63 ? [maxLen(63)] : []),
  ...(anchored(label1123).test(value) ? [] : [label1123Message])
]

/**
 * IsDNS1123Subdomain.
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.dns1123Subdomain("a.example.com") // []
 */
export const dns1123Subdomain = (value: string): ReadonlyArray<string> => [
  ...(value.length > 253 ? [maxLen(253)] : []),
  ...(anchored(subdomain1123).test(value) ? [] : [subdomain1123Message])
]

/**
 * IsDNS1035Label (Service names).
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.dns1035Label("1web").length // 1
 */
export const dns1035Label = (value: string): ReadonlyArray<string> => [
  ...(value.length > 63 ? [maxLen(63)] : []),
  ...(anchored(label1035).test(value) ? [] : [label1035Message])
]

/**
 * IsWildcardDNS1123Subdomain (`*.example.com`).
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.wildcardDns1123Subdomain("*.example.com") // []
 */
export const wildcardDns1123Subdomain = (value: string): ReadonlyArray<string> => {
  const regex = `\\*\\.${subdomain1123}`
  return [
    ...(value.length > 253 ? [maxLen(253)] : []),
    ...(anchored(regex).test(value) ? [] : [regexMessage(
      "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
      regex,
      ["*.example.com"]
    )])
  ]
}

/**
 * IsQualifiedName: an optional DNS subdomain prefix and `/`, then a name of at most 63 characters.
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.qualifiedName("app.kubernetes.io/name") // []
 */
export const qualifiedName = (value: string): ReadonlyArray<string> => {
  const parts = value.split("/")
  if (parts.length > 2) {
    return [`a qualified name ${regexMessage(qualifiedMessage, qualifiedPart, ["MyName", "my.name", "123-abc"])} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]
  }
  const name = parts.length === 2 ? parts[1]! : parts[0]!
  const prefix = parts.length === 2 ? parts[0]! : undefined
  const errors: Array<string> = []
  if (prefix !== undefined) {
    if (prefix === "") errors.push("prefix part must be non-empty")
    else errors.push(...dns1123Subdomain(prefix).map((m) => `prefix part ${m}`))
  }
  if (name === "") errors.push("name part must be non-empty")
  else if (name.length > 63) errors.push(`name part ${maxLen(63)}`)
  if (!anchored(qualifiedPart).test(name)) {
    errors.push(`name part ${regexMessage(qualifiedMessage, qualifiedPart, ["MyName", "my.name", "123-abc"])}`)
  }
  return errors
}

// The finalizers kube's own kinds may name without a path.
const standardFinalizers: ReadonlySet<string> = new Set(["kubernetes", "orphan", "foregroundDeletion"])

/**
 * Whether a finalizer name is one core kinds accept (validateKubeFinalizerName): fully qualified
 * (a path after a domain), or one of kube's own (`orphan`, `foregroundDeletion`, `kubernetes`).
 * Custom resources accept any qualified name, with a warning for the others.
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.isKubeFinalizerName("example.com/cleanup") // true
 * NameRules.isKubeFinalizerName("cleanup") // false
 */
export const isKubeFinalizerName = (name: string): boolean => name.includes("/") || standardFinalizers.has(name)

/**
 * IsValidLabelValue.
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.labelValue("") // []
 */
export const labelValue = (value: string): ReadonlyArray<string> => {
  const regex = `(${qualifiedPart})?`
  return [
    ...(value.length > 63 ? [maxLen(63)] : []),
    ...(anchored(regex).test(value) ? [] : [regexMessage(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      regex,
      ["MyValue", "my_value", "12345"]
    )])
  ]
}

/**
 * IsConfigMapKey: the keys of ConfigMaps and Secrets.
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.configKey("tls.crt") // []
 * NameRules.configKey("a b").length // 1
 */
export const configKey = (value: string): ReadonlyArray<string> => [
  ...(value.length > 253 ? [maxLen(253)] : []),
  ...(anchored(configKeyFormat).test(value) ? [] : [regexMessage(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    configKeyFormat,
    ["key.name", "KEY_NAME", "key-name"]
  )]),
  ...(value === "." ? ["must not be '.'"] : value === ".." ? ["must not be '..'"] : value.startsWith("..") ? ["must not start with '..'"] : [])
]

/**
 * IsValidPortName (IANA_SVC_NAME).
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.portName("http") // []
 * NameRules.portName("http--x") // ["must not contain consecutive hyphens"]
 */
export const portName = (value: string): ReadonlyArray<string> => [
  ...(value.length > 15 ? ["must be no more than 15 characters"] : []),
  ...(/^[-a-z0-9]+$/.test(value) ? [] : ["must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"]),
  ...(/[a-z]/.test(value) ? [] : ["must contain at least one letter (a-z)"]),
  ...(value.includes("--") ? ["must not contain consecutive hyphens"] : []),
  ...(value.startsWith("-") || value.endsWith("-") ? ["must not begin or end with a hyphen"] : [])
]

/**
 * IsValidPortNum.
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.portNumber(0) // ["must be between 1 and 65535, inclusive"]
 */
export const portNumber = (value: number): ReadonlyArray<string> =>
  Number.isInteger(value) && value >= 1 && value <= 65535 ? [] : ["must be between 1 and 65535, inclusive"]

/**
 * True for a dotted IPv4 or an IPv6 address (netutils.ParseIPSloppy accepts leading zeros).
 *
 * @example
 * import * as NameRules from "./NameRules.ts"
 * NameRules.isIP("10.96.0.10") // true
 */
export const isIP = (value: string): boolean =>
  /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(value) && value.split(".").every((p) => Number(p) <= 255) ||
  (value.includes(":") && /^[0-9a-fA-F:.]+$/.test(value))
