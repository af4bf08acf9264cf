/**
 * Which requests the HTTP endpoint answers at all, decided from their headers before any session
 * or tool is involved (MCP 2025-11-25, "Transports", Security Warning).
 *
 * - `Host` (DNS rebinding): a web page on an attacker's domain that resolves that domain to this
 *   machine sends `Host: evil.example:PORT`. A loopback listener (127.0.0.0/8, ::1, localhost)
 *   answers only a Host naming a loopback address or `localhost` with its own port; a listener on
 *   another address answers its own address (every interface's for 0.0.0.0 / ::) and the names
 *   the operator adds (`--allow-host`).
 * - `Origin`: a browser sends it on every cross-origin request (and on POST). Absent, the caller
 *   is not a browser page, and it is allowed. Present, it must be one of the endpoint's own
 *   origins or one the operator allowed (`--allow-origin`); anything else, `null` included, gets
 *   403. The own origins are exact: `http://` the bound address and port, and for a loopback
 *   bind also `localhost`, `127.0.0.1` and `[::1]` with that port (for 0.0.0.0 / ::, every
 *   interface's address with it). Another loopback address (127.0.0.2) or another port of the same
 *   machine is another origin: a page served there is not this endpoint's. Origins compare as
 *   browsers serialise them (RFC 6454): scheme and host without case, a default port as no port,
 *   an IP address in its canonical form; a trailing dot (`localhost.`) makes another host, and a
 *   value with a path, user or query is not an origin at all.
 */
import { isIPv4, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";
import { ToolgateError } from "../../core/errors.js";
import { escapeUntrusted } from "../../observation/escape.js";

export interface GuardOptions {
  /** The address the listener is bound to, as given (`127.0.0.1`, `::1`, `0.0.0.0`, `localhost`, …). */
  host: string;
  port: number;
  /** Extra Host names (or `name:port`) to answer, e.g. a reverse proxy's public name. */
  allowHosts?: readonly string[];
  /** Extra browser origins to answer, e.g. `http://localhost:6274` for a browser-based inspector. */
  allowOrigins?: readonly string[];
}

export interface Guard {
  /** null when the request may proceed; otherwise the HTTP status and the sentence to send. */
  check(headers: {
    host?: string | undefined;
    origin?: string | string[] | undefined;
  }): { status: 403; message: string } | null;
}

/** Whether `host` (an address or `localhost`, brackets allowed) is a loopback address. */
export function isLoopback(host: string): boolean {
  // A zone (`fe80::1%eth0`) names an interface, not the address.
  const h = host
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "")
    .toLowerCase();
  if (h === "localhost") return true;
  if (isIPv4(h)) return h.startsWith("127.");
  if (isIPv6(h)) {
    // The URL parser compresses the address and writes an embedded IPv4 in hex (::ffff:7f00:1).
    const canonical = new URL(`http://[${h}]/`).hostname;
    return canonical === "[::1]" || canonical.startsWith("[::ffff:7f");
  }
  return false;
}

function isWildcard(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return h === "0.0.0.0" || h === "::" || h === "";
}

/** `name` and port of a Host header (`[::1]:80`, `localhost:8765`, `example.com`), lower-cased; null when malformed. */
function splitHost(value: string): { name: string; port: number | null } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(value.trim());
  if (!m) return null;
  return { name: m[1]!.toLowerCase().replace(/^\[|\]$/g, ""), port: m[2] === undefined ? null : Number(m[2]) };
}

/** The canonical form of an origin the operator names: `scheme://host[:port]`, lower-cased, default port dropped. */
export function normaliseOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolgateError(
      "bad_flag",
      `--allow-origin must be an origin such as http://localhost:6274 (scheme, host and port, no path); received ${JSON.stringify(text)}`,
    );
  }
  if (
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.pathname.length > 1 ||
    url.search ||
    url.hash ||
    url.username
  ) {
    throw new ToolgateError(
      "bad_flag",
      `--allow-origin must be an http or https origin with no path, e.g. http://localhost:6274; received ${JSON.stringify(text)}`,
    );
  }
  return url.origin;
}

/** `http://name:port` as a browser serialises it (`[::1]`, lower case, port 80 dropped); null for a name no URL can
 * hold. */
function ownOrigin(name: string, port: number): string | null {
  const host = name.replace(/^\[|\]$/g, "");
  return canonicalOrigin(`http://${isIPv6(host) ? `[${host}]` : host}:${port}`);
}

/** The origin `text` names, canonical, when it is exactly `http(s)://host[:port]`; else null (`null`, `file://`, a
 * path, a user). */
function canonicalOrigin(text: string): string | null {
  if (!/^https?:\/\/[^/?#@\s]+$/i.test(text)) return null;
  try {
    return new URL(text).origin;
  } catch {
    return null;
  }
}

export function createGuard(options: GuardOptions): Guard {
  const { port } = options;
  const loopback = isLoopback(options.host);
  const names = new Set<string>();
  if (!loopback) {
    if (isWildcard(options.host)) {
      for (const list of Object.values(networkInterfaces()))
        for (const a of list ?? []) names.add(a.address.toLowerCase());
    } else names.add(options.host.toLowerCase().replace(/^\[|\]$/g, ""));
  }
  /** Operator-named hosts: `name` (the listener's port) or `name:port`. */
  const extra = new Set<string>();
  for (const h of options.allowHosts ?? []) {
    const parsed = splitHost(h);
    if (!parsed)
      throw new ToolgateError(
        "bad_flag",
        `--allow-host must be a host name or address, optionally with :PORT, e.g. agents.example.com or agents.example.com:443; received ${JSON.stringify(h)}`,
      );
    extra.add(`${parsed.name}:${parsed.port ?? port}`);
  }
  const origins = new Set((options.allowOrigins ?? []).map(normaliseOrigin));
  const own = new Set<string>();
  for (const name of loopback ? [options.host, "localhost", "127.0.0.1", "::1"] : names) {
    const origin = ownOrigin(name, port);
    if (origin !== null) own.add(origin);
  }
  const ownShown = [...own].slice(0, 4).join(", ") + (own.size > 4 ? `, … (${own.size} in all)` : "");

  function hostAllowed(value: string | undefined): boolean {
    if (value === undefined) return false;
    const parsed = splitHost(value);
    if (!parsed) return false;
    const p = parsed.port ?? 80;
    if (extra.has(`${parsed.name}:${p}`)) return true;
    if (p !== port) return false;
    return loopback ? isLoopback(parsed.name) : names.has(parsed.name);
  }

  return {
    check(headers) {
      if (!hostAllowed(headers.host)) {
        const got =
          headers.host === undefined
            ? "a request without a Host header"
            : `Host ${escapeUntrusted(JSON.stringify(headers.host.slice(0, 200)))}`;
        const fix = loopback
          ? `name this machine's loopback address or localhost with port ${port}`
          : `name this server's address, or start it with --allow-host NAME`;
        return {
          status: 403,
          message: `this endpoint does not answer ${got}: requests must ${fix} (protection against DNS rebinding)`,
        };
      }
      const origin = Array.isArray(headers.origin) ? headers.origin[0] : headers.origin;
      if (origin === undefined) return null;
      const canonical = canonicalOrigin(origin);
      if (canonical !== null && (own.has(canonical) || origins.has(canonical))) return null;
      const shown = escapeUntrusted(JSON.stringify(origin.slice(0, 200)));
      const where = `a web page may call this endpoint only from its own origins (${ownShown}) or one the operator allowed with --allow-origin`;
      return {
        status: 403,
        message:
          canonical === null
            ? `Origin ${shown} is not allowed: it is not an http or https origin (scheme://host:port, nothing after), so no --allow-origin can allow it; ${where}`
            : `Origin ${shown} is not allowed: ${where}; to allow this one, start toolgate with --allow-origin ${escapeUntrusted(canonical)}`,
      };
    },
  };
}
