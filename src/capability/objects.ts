/**
 * The objects O of a capability C = (R, O, P, E) (docs/authority.md): typed,
 * normalised before any comparison, so that "within" is a tree order with no string tricks.
 *
 * - `path:/abs/prefix` — POSIX, absolute. `.` and `..` are resolved lexically (`..` above `/`
 *   stays at `/`), doubled slashes collapse, a trailing slash is irrelevant. Containment is by
 *   whole segments: `/ws` contains `/ws/a` but not `/ws2`. Percent-encoded sequences (`%2e`,
 *   `%2F`, …) are REFUSED, never decoded: toolgate compares real filesystem paths (the runtime
 *   derives them from resolved arguments, after symlinks), and a path that still carries URL
 *   encoding means some layer would decode it differently later. NUL is refused.
 * - `host:api.example.com` — lower-cased, one trailing dot dropped, LDH labels only (use
 *   punycode for IDNs). `host:*.example.com` contains every name strictly below
 *   `example.com` at any depth, on label boundaries: not `example.com` itself and not
 *   `api.example.com.evil.net`. A port or an inclusive port range may follow the name
 *   (`host:api.example.com:443`, `host:*.example.com:8000-8999`); without one the object holds
 *   every port. A host object lies within another when its name does and its ports do; two of
 *   them meet in the smaller name with the ports both hold (`hostMeet`), so intersection stays
 *   exact although the pairs (name, ports) are no longer a tree.
 * - `repo:owner/name` (case-insensitive, lower-cased) and `repo:owner/*` (every repo of owner).
 * - `tenant:ID` and `tool:NAME`: exact, case-sensitive.
 */
import { ToolgateError } from "../core/errors.js";

export type ObjectKind = "path" | "host" | "repo" | "tenant" | "tool";

/** A parsed, normalised object. `text` is the canonical `kind:value` form. */
export interface CapObject {
  kind: ObjectKind;
  /** Normalised value without the kind prefix. */
  value: string;
  /** `*.example.com` and `owner/*`: a subtree, not one name. */
  wildcard: boolean;
  text: string;
  /** A host object's name without its ports (`*.example.com`); absent for other kinds. */
  host?: string;
  /** A host object's inclusive port range; absent when it holds every port (and for other kinds). */
  ports?: readonly [number, number];
}

/** Thrown for an object string that does not parse; the message names the object, the rule and the fix. */
export class ObjectError extends ToolgateError {
  constructor(message: string) {
    super("invalid_object", message);
    this.name = "ObjectError";
  }
}

const KINDS: readonly ObjectKind[] = ["path", "host", "repo", "tenant", "tool"];
const EXAMPLES =
  "path:/ws, host:api.example.com, host:*.example.com, host:api.example.com:443, repo:owner/name, tenant:acme, tool:file_view";
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const REPO_PART = /^[a-z0-9_.-]{1,100}$/;
const IDENT = /^[A-Za-z0-9_.:@-]{1,128}$/;

function fail(text: string, why: string, fix: string): never {
  throw new ObjectError(`object ${JSON.stringify(text)} ${why}; ${fix}`);
}

/** Lexical POSIX normalisation with the rules in the module comment. */
export function normalisePath(raw: string, text = `path:${raw}`): string {
  if (!raw.startsWith("/")) fail(text, "is not an absolute path", "write it from the root, e.g. path:/ws/src");
  if (raw.includes("\0")) fail(text, "contains a NUL byte", "remove it");
  const enc = /%[0-9A-Fa-f]{2}/.exec(raw);
  if (enc)
    fail(
      text,
      `contains the percent-encoded sequence ${enc[0]}`,
      "pass the decoded filesystem path (toolgate refuses URL encoding in paths rather than guess how to decode it)",
    );
  const out: string[] = [];
  for (const seg of raw.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return "/" + out.join("/");
}

function normaliseHost(
  raw: string,
  text: string,
): { value: string; wildcard: boolean; host: string; ports?: [number, number] } {
  let host = raw.toLowerCase();
  let ports: [number, number] | undefined;
  const colon = host.indexOf(":");
  if (colon >= 0) {
    ports = parsePorts(host.slice(colon + 1), text);
    host = host.slice(0, colon);
  }
  if (host.endsWith(".")) host = host.slice(0, -1);
  const wildcard = host.startsWith("*.");
  const name = wildcard ? host.slice(2) : host;
  if (name.length === 0 || name.length > 253)
    fail(text, "is not a host name of 1–253 characters", "e.g. host:api.example.com");
  for (const label of name.split(".")) {
    if (!LABEL.test(label)) {
      fail(
        text,
        `has the label ${JSON.stringify(label)}, which is not letters, digits and inner hyphens (1–63)`,
        "use punycode for international names; a wildcard is allowed only as the whole first label, e.g. host:*.example.com",
      );
    }
  }
  if (wildcard && !name.includes("."))
    fail(text, "is a wildcard over a top-level domain", "name at least two labels after *., e.g. host:*.example.com");
  const hostName = wildcard ? `*.${name}` : name;
  return ports
    ? { value: hostValue(hostName, ports), wildcard, host: hostName, ports }
    : { value: hostName, wildcard, host: hostName };
}

/** `443` or `8000-8999` (inclusive, 1–65535, low ≤ high); anything else — an IPv6 address's colons — is refused. */
function parsePorts(raw: string, text: string): [number, number] {
  const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(raw);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m ? Number(m[2] ?? m[1]) : NaN;
  if (!m || lo < 1 || hi > 65535 || lo > hi)
    fail(
      text,
      `has ${JSON.stringify(raw)} after the name, which is not a port (1–65535) or a range low-high, and IPv6 addresses are not host objects`,
      "write the name, then :PORT or :LOW-HIGH, e.g. host:api.example.com:443 or host:*.example.com:8000-8999",
    );
  return [lo, hi];
}

const hostValue = (name: string, ports: readonly [number, number]) =>
  `${name}:${ports[0] === ports[1] ? ports[0] : `${ports[0]}-${ports[1]}`}`;

/** Whether the host name `inner` (maybe `*.x`) lies within `outer`: equal, or below a wildcard on a label boundary. */
function hostNameWithin(inner: string, outer: string): boolean {
  return inner === outer || (outer.startsWith("*.") && inner.endsWith(outer.slice(1)));
}

function portsWithin(inner: readonly [number, number] | undefined, outer: readonly [number, number] | undefined) {
  if (outer === undefined) return true;
  return inner !== undefined && inner[0] >= outer[0] && inner[1] <= outer[1];
}

/**
 * Where two host objects meet: the smaller of the two names (names form a tree, so one holds the
 * other or they are disjoint) with the ports both hold; null when they share nothing.
 */
export function hostMeet(a: CapObject, b: CapObject): CapObject | null {
  const an = a.host ?? a.value;
  const bn = b.host ?? b.value;
  const name = hostNameWithin(an, bn) ? an : hostNameWithin(bn, an) ? bn : null;
  if (name === null) return null;
  let ports: [number, number] | undefined;
  if (a.ports && b.ports) {
    ports = [Math.max(a.ports[0], b.ports[0]), Math.min(a.ports[1], b.ports[1])];
    if (ports[0] > ports[1]) return null;
  } else if (a.ports ?? b.ports) ports = [...(a.ports ?? b.ports)!];
  const value = ports ? hostValue(name, ports) : name;
  return {
    kind: "host",
    value,
    wildcard: name.startsWith("*."),
    text: `host:${value}`,
    host: name,
    ...(ports ? { ports } : {}),
  };
}

/** Parses and normalises `kind:value`. Throws ObjectError naming what is wrong and how to fix it. */
export function parseObject(text: string): CapObject {
  if (typeof text !== "string")
    throw new ObjectError(`object must be a string like ${EXAMPLES}; received ${typeof text}`);
  const colon = text.indexOf(":");
  const kind = colon > 0 ? text.slice(0, colon) : "";
  const raw = colon > 0 ? text.slice(colon + 1) : "";
  if (!(KINDS as readonly string[]).includes(kind)) {
    fail(text, `has no known kind (expected one of ${KINDS.join(", ")})`, `write it as kind:value, e.g. ${EXAMPLES}`);
  }
  let value: string;
  let wildcard = false;
  switch (kind as ObjectKind) {
    case "path":
      value = normalisePath(raw, text);
      break;
    case "host": {
      const h = normaliseHost(raw, text);
      return {
        kind: "host",
        value: h.value,
        wildcard: h.wildcard,
        text: `host:${h.value}`,
        host: h.host,
        ...(h.ports ? { ports: h.ports } : {}),
      };
    }
    case "repo": {
      const parts = raw.toLowerCase().split("/");
      const [owner, name] = parts;
      if (parts.length !== 2 || !owner || !name || !REPO_PART.test(owner) || !(name === "*" || REPO_PART.test(name))) {
        fail(text, "is not owner/name", "e.g. repo:acme/api, or repo:acme/* for every repository of acme");
      }
      wildcard = name === "*";
      value = `${owner}/${name}`;
      break;
    }
    default:
      if (!IDENT.test(raw))
        fail(
          text,
          "has an empty or unusual identifier",
          "use letters, digits and _ . : @ - (at most 128), e.g. tenant:acme",
        );
      value = raw;
  }
  return { kind: kind as ObjectKind, value, wildcard, text: `${kind}:${value}` };
}

/** Whether `inner` lies within `outer` (equal, or in its subtree). Objects of different kinds never contain each other.
 * */
export function objectWithin(inner: CapObject, outer: CapObject): boolean {
  if (inner.kind !== outer.kind) return false;
  if (inner.value === outer.value) return true;
  switch (outer.kind) {
    case "path": {
      // Segment boundary: `/ws` holds `/ws/a`, never `/ws2` (no string built on this hot path).
      const o = outer.value;
      return (
        o === "/" ||
        (inner.value.length > o.length && inner.value.charCodeAt(o.length) === 47 && inner.value.startsWith(o))
      );
    }
    case "host":
      // `*.example.com` holds `a.example.com`, `a.b.example.com` and `*.a.example.com`; ports by range.
      return (
        hostNameWithin(inner.host ?? inner.value, outer.host ?? outer.value) && portsWithin(inner.ports, outer.ports)
      );
    case "repo":
      return outer.wildcard && inner.value.startsWith(outer.value.slice(0, -1));
    default:
      return false;
  }
}

/** Whether `target` lies within at least one of `objects`. */
export function withinAny(target: CapObject, objects: readonly CapObject[]): boolean {
  for (const o of objects) if (objectWithin(target, o)) return true;
  return false;
}

/**
 * Intersection of two object sets. Containment is a tree order per kind except for hosts with
 * ports, so two cones meet either in the smaller one or not at all, and two host objects in
 * `hostMeet`: the result is exact.
 */
export function intersectObjects(a: readonly CapObject[], b: readonly CapObject[]): CapObject[] {
  const out = new Map<string, CapObject>();
  for (const x of a) {
    for (const y of b) {
      if (objectWithin(x, y)) out.set(x.text, x);
      else if (objectWithin(y, x)) out.set(y.text, y);
      else if (x.kind === "host" && y.kind === "host") {
        const m = hostMeet(x, y);
        if (m) out.set(m.text, m);
      }
    }
  }
  return [...out.values()];
}
