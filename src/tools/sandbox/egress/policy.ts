/**
 * The operator's half of egress (ARCHITECTURE.md, tools/sandbox/egress): which hosts and ports
 * the sandbox may reach at all (`allow`), which never (`deny`, which wins), the bounds of one
 * call's traffic, and the secrets the proxy adds to requests for a host. A connection also needs
 * the call's capability (`connect` on `host:H:P`); this module knows nothing of capabilities.
 *
 * An entry is a host name with `*.` wildcards on label boundaries, an IPv4 address or a
 * bracketed IPv6 address, each with an optional `:PORT` or `:LOW-HIGH` (none: every port):
 * `registry.example.org`, `*.example.org:443`, `127.0.0.1:8080`, `[::1]:8080`. An entry that is
 * an address names that address explicitly: only then may a connection reach a loopback,
 * private or link-local address (address.ts).
 */
import { isIP } from "node:net";
import { objectWithin, parseObject, type CapObject } from "../../../capability/objects.js";

export interface EgressSecret {
  /** Host entry the secret is for (same syntax as `allow`). */
  host: string;
  /** The request header it is sent as, e.g. "authorization". */
  header: string;
  /** The header's value; never shown to the command, and removed from its output. */
  value: string;
  /**
   * The proxy speaks TLS to the host itself (port 443 unless the request names one) for plain-HTTP
   * requests the command sends through it, so a secret reaches an HTTPS-only server: the command
   * uses http://HOST/ and the proxy sends https://HOST/ with the header. Default false.
   */
  origin_tls?: boolean;
}

export interface EgressLimits {
  /** Bytes in both directions over all of one call's connections; past it every connection is cut. */
  max_bytes: number;
  /** Connections one call may open (refused ones not counted). */
  max_connections: number;
  /** How long one connection may stay open, ms (from its request to its end). */
  connection_ms: number;
  /** How long reaching the host may take (resolution and connect), ms. */
  connect_ms: number;
}

export const DEFAULT_EGRESS_LIMITS: EgressLimits = {
  max_bytes: 512 * 1024 * 1024,
  max_connections: 256,
  connection_ms: 120_000,
  connect_ms: 10_000,
};

export interface EgressConfig {
  /** What the sandbox may reach; empty: nothing (no network). */
  allow: string[];
  /** What it may never reach, whatever `allow` and the capability say. */
  deny?: string[];
  secrets?: EgressSecret[];
  limits?: Partial<EgressLimits>;
  /** Ports toolgate itself listens on: refused on this host's own addresses, whatever allows them. */
  ownPorts?: number[];
}

/** One parsed entry: a host object (name and ports), or an explicit address with ports. */
export interface Entry {
  text: string;
  /** The name as a host object (for names and IPv4 addresses). */
  object: CapObject | null;
  /** The address the entry names (IPv4 or IPv6), or null for a name. */
  address: string | null;
  ports: readonly [number, number] | null;
}

/** Reads one entry; throws an Error naming the field, the entry, what was expected and an example. */
export function parseEntry(text: string, field: string): Entry {
  const bad = (why: string): never => {
    throw new Error(
      `${field}: ${JSON.stringify(text)} ${why}; expected a host name (wildcards as *.example.org), an IPv4 address or a bracketed IPv6 address, each with an optional :PORT or :LOW-HIGH, e.g. "*.example.org:443", "127.0.0.1:8080", "[::1]:8080"`,
    );
  };
  if (typeof text !== "string" || text === "") bad("is not a non-empty string");
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::(.+))?$/.exec(text);
  if (v6) {
    if (isIP(v6[1]!) !== 6) bad("is not a valid IPv6 address in brackets");
    const ports = v6[2] === undefined ? null : parseObject(`host:x:${v6[2]}`).ports!;
    return { text, object: null, address: v6[1]!.toLowerCase(), ports };
  }
  if (isIP(text) === 6) bad("is an IPv6 address without brackets");
  // A URL is the likeliest mistake (an operator copies the registry's address): say what to keep of it.
  const url = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]+@)?([^/?#]+)/i.exec(text);
  if (url) {
    const port = /^https:/i.test(text) ? ":443" : /^http:/i.test(text) ? ":80" : "";
    bad(
      `is a URL; write only its host (and port), e.g. ${JSON.stringify(/:\d+$/.test(url[2]!) ? url[2] : url[2] + port)}`,
    );
  }
  let object: CapObject;
  try {
    object = parseObject(`host:${text}`);
  } catch (err) {
    return bad(`does not parse (${(err as Error).message})`);
  }
  const name = object.host!;
  return { text, object, address: isIP(name) === 4 ? name : null, ports: object.ports ?? null };
}

const portIn = (port: number, ports: Entry["ports"]) => ports === null || (port >= ports[0] && port <= ports[1]);

/** Whether `entry` covers the name `host` (lower-cased, no trailing dot) at `port`. */
export function entryMatchesName(entry: Entry, host: string, port: number): boolean {
  if (!portIn(port, entry.ports)) return false;
  if (entry.object === null) return entry.address === host;
  return objectWithin({ kind: "host", value: host, wildcard: false, text: `host:${host}`, host }, {
    ...entry.object,
    ports: undefined,
  } as CapObject);
}

/** Whether `entry` names the address `address` at `port` explicitly. */
export function entryNamesAddress(entry: Entry, address: string, port: number): boolean {
  return entry.address !== null && entry.address === address.toLowerCase() && portIn(port, entry.ports);
}

export interface EgressPolicy {
  allow: Entry[];
  deny: Entry[];
  secrets: Array<EgressSecret & { entry: Entry }>;
  limits: EgressLimits;
  ownPorts: ReadonlySet<number>;
}

/** Checks an operator's egress configuration once (at start); throws an Error naming the field and the fix. */
export function egressPolicy(config: EgressConfig): EgressPolicy {
  const list = (v: unknown, field: string): string[] => {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new Error(`${field} must be an array of host entries; received ${JSON.stringify(v)}`);
    return v as string[];
  };
  const allow = list(config.allow, "egress.allow").map((e, i) => parseEntry(e, `egress.allow[${i}]`));
  const deny = list(config.deny, "egress.deny").map((e, i) => parseEntry(e, `egress.deny[${i}]`));
  const secrets = (config.secrets ?? []).map((s, i) => {
    const field = `egress.secrets[${i}]`;
    if (typeof s?.header !== "string" || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(s.header))
      throw new Error(
        `${field}.header must be an HTTP header name, e.g. "authorization"; received ${JSON.stringify(s?.header)}`,
      );
    if (typeof s.value !== "string" || s.value.length < 6 || /[\r\n\0]/.test(s.value))
      throw new Error(
        `${field}.value must be a string of at least 6 characters without line breaks (a secret); received ${typeof s.value === "string" ? `${s.value.length} characters` : JSON.stringify(s.value)}`,
      );
    return { ...s, header: s.header.toLowerCase(), entry: parseEntry(s.host, `${field}.host`) };
  });
  const limits = { ...DEFAULT_EGRESS_LIMITS };
  for (const [k, v] of Object.entries(config.limits ?? {})) {
    if (!(k in DEFAULT_EGRESS_LIMITS))
      throw new Error(
        `egress.limits.${k} is not an egress limit; the limits are ${Object.keys(DEFAULT_EGRESS_LIMITS).join(", ")}`,
      );
    if (typeof v !== "number" || !Number.isInteger(v) || v <= 0)
      throw new Error(
        `egress.limits.${k} must be a positive integer; received ${JSON.stringify(v)}; example ${DEFAULT_EGRESS_LIMITS[k as keyof EgressLimits]} (the default)`,
      );
    limits[k as keyof EgressLimits] = v;
  }
  return { allow, deny, secrets, limits, ownPorts: new Set(config.ownPorts ?? []) };
}
