/**
 * RFC 8785 JSON Canonicalization Scheme (docs/idempotency.md: the arguments are hashed in
 * canonical form, whatever their key order and spacing). One recursive pass; strings go through
 * JSON.stringify, whose escaping is exactly RFC 8785 §3.2.2.2 for well-formed strings, and
 * numbers through ECMAScript Number-to-String, which is RFC 8785 §3.2.2.3 by definition.
 *
 * Everything JSON.stringify would silently drop or coerce (undefined, functions, symbols,
 * bigint, NaN, ±Infinity, lone surrogates, Maps, Dates, cycles) is refused instead: a value
 * that changes on the way to the hash would make two different calls share a key.
 */
import { LruCache } from "../core/lru.js";

/** Why a value has no canonical JSON form; `path` is a JSONPath such as `$.args.items[3]`. */
export class CanonicalJsonError extends Error {
  readonly code = "not_canonical_json";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = "CanonicalJsonError";
  }
}

/** String.prototype.isWellFormed (Node 20, ES2024; our lib is ES2023): false when a lone surrogate is present. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

// eslint-disable-next-line no-control-regex
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as JSON text. Most strings need no escape and no surrogate check, so one regex scan
 * lets them skip JSON.stringify; the rest (quotes, backslashes, controls, any surrogate) take
 * the exact path. Returns null for a lone surrogate.
 */
function quote(s: string): string | null {
  if (!NEEDS_CARE.test(s)) return `"${s}"`;
  return isWellFormed(s) ? JSON.stringify(s) : null;
}

/** Quoted property names, reused across calls: tool arguments repeat the same few names. Bounded. */
const quotedNames = new LruCache<string, string | null>(4096);
const MAX_CACHED_NAME_LENGTH = 64;

function quoteName(name: string): string | null {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = quote(name);
    if (name.length <= MAX_CACHED_NAME_LENGTH) quotedNames.set(name, quoted);
  }
  return quoted;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Renders a path stack as JSONPath: `$.a.b[3]["odd key"]`. */
function renderPath(root: string, segments: readonly (string | number)[]): string {
  let out = root;
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else out += IDENTIFIER.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  }
  return out;
}

/** Names what kind of non-JSON value arrived, with the fix. */
function describeRefusal(value: unknown): string {
  switch (typeof value) {
    case "undefined":
      return "undefined is not JSON (JSON.stringify would drop it); omit the property or use null";
    case "function":
      return "a function is not JSON; pass data, not code";
    case "symbol":
      return "a symbol is not JSON; use a string";
    case "bigint":
      return `a bigint (${String(value)}n) is not JSON; use a number within ±2^53 or a decimal string`;
    case "number":
      return `${String(value)} is not a JSON number (RFC 8785 §3.2.2.3 refuses NaN and Infinity); use null or a finite number`;
    case "string":
      return "the string contains a lone UTF-16 surrogate, which has no UTF-8 form (RFC 8785 §3.2.2.2); pair it or remove it";
    default: {
      const name = (value as object).constructor?.name ?? "object without a prototype";
      return `a ${name} is not plain JSON data; convert it to an object, array or string first`;
    }
  }
}

/** Thrown by the fast pass, which keeps no path: the value is walked again with paths to say where. */
const LOCATE = Symbol("locate");

class Canonicalizer {
  /** The containers currently open; a value already here is a cycle. */
  private readonly open: object[] = [];

  /**
   * @param path keys and indexes from the root to the value being written; null in the fast
   *   pass, where keeping it would cost every value two array operations for the rare error.
   */
  constructor(
    private readonly root: string,
    private readonly path: (string | number)[] | null,
  ) {}

  fail(value: unknown, reason = describeRefusal(value)): never {
    if (this.path === null) throw LOCATE;
    throw new CanonicalJsonError(renderPath(this.root, this.path), reason);
  }

  write(value: unknown): string {
    switch (typeof value) {
      case "string":
        return quote(value) ?? this.fail(value);
      case "number":
        // String(-0) is "0", as RFC 8785 requires; Number-to-String is the ES6 shortest round-trip form.
        if (!Number.isFinite(value)) this.fail(value);
        return String(value);
      case "boolean":
        return value ? "true" : "false";
      case "object":
        if (value === null) return "null";
        return this.container(value);
      default:
        return this.fail(value);
    }
  }

  private container(value: object): string {
    if (this.open.includes(value)) this.fail(value, "the value contains itself (a cycle); JSON has no references");
    let out: string;
    this.open.push(value);
    if (Array.isArray(value)) out = this.array(value);
    else {
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) this.fail(value);
      out = this.object(value as Record<string, unknown>);
    }
    this.open.pop();
    return out;
  }

  private array(value: readonly unknown[]): string {
    if (value.length === 0) return "[]";
    const path = this.path;
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      path?.push(i);
      out += (i === 0 ? "" : ",") + this.write(value[i]);
      path?.pop();
    }
    return out + "]";
  }

  private object(value: Record<string, unknown>): string {
    // Default sort compares UTF-16 code units, which is exactly RFC 8785 §3.2.3.
    const keys = Object.keys(value).sort();
    if (keys.length === 0) return "{}";
    const path = this.path;
    let out = "{";
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      path?.push(key);
      const name =
        quoteName(key) ??
        this.fail(key, "the property name contains a lone UTF-16 surrogate (RFC 8785 §3.2.2.2); rename it");
      out += (i === 0 ? "" : ",") + name + ":" + this.write(value[key]);
      path?.pop();
    }
    return out + "}";
  }
}

/**
 * The RFC 8785 canonical JSON text of `value`. Throws `CanonicalJsonError` naming the path of
 * the first value that has no JSON form; `root` names the value in that path (default `$`).
 */
export function canonicalize(value: unknown, root = "$"): string {
  try {
    return new Canonicalizer(root, null).write(value);
  } catch (err) {
    if (err !== LOCATE) throw err;
    // Same walk, same order, now keeping the path: it stops at the same first refusal.
    return new Canonicalizer(root, []).write(value);
  }
}
