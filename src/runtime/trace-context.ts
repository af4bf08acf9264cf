/**
 * W3C trace context (`traceparent`, `tracestate`) that a caller hands in with one call — from an
 * HTTP header, an MCP request's `_meta`, an embedder's own tracer — read into what the audit
 * record keeps. Every value may be attacker-chosen: each is checked against the W3C syntax in
 * bounded work, and a malformed one is left out (tracing never refuses a call), with a reason the
 * record keeps beside it. Nothing here knows where the values came from.
 */
import type { TraceContext } from "../core/trace.js";

export type { TraceContext } from "../core/trace.js";

/** The values as they arrived, of any type: only strings in the W3C syntax are kept. */
export interface TraceContextInput {
  traceparent?: unknown;
  tracestate?: unknown;
}

export interface TraceReading {
  /** Null when no valid traceparent came. */
  trace: TraceContext | null;
  /** Why a value that came was left out, in whole or in part; null when nothing was. */
  ignored: string | null;
}

/** Longest traceparent read: version 00 is 55 characters, later versions may append fields after a dash. */
export const MAX_TRACEPARENT_CHARS = 256;
/** Longest tracestate read at all; past it the value is left out unread (32 members of 513 characters fit). */
export const MAX_TRACESTATE_INPUT_CHARS = 16_384;
/** What a tracestate is cut to, by the W3C rule: members over 128 characters go first, then from the end. */
export const MAX_TRACESTATE_CHARS = 512;
const MAX_MEMBERS = 32;
const LONG_MEMBER_CHARS = 128;

const TRACEPARENT_FORM = "version-traceid-parentid-flags in lowercase hex (2-32-16-2 digits)";
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:$|-)/;
const KEY_CHAR = "[_0-9a-z*/-]";
const KEY = new RegExp(`^(?:[a-z]${KEY_CHAR}{0,255}|[a-z0-9]${KEY_CHAR}{0,240}@[a-z]${KEY_CHAR}{0,13})$`);
// Printable ASCII without "," and "=", spaces allowed inside but not last; at most 256 characters.
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** What arrived, described without repeating it: the text is the caller's, the reason is the operator's. */
function received(value: unknown): string {
  if (typeof value === "string") return `a string of ${value.length} characters`;
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The traceparent kept, or why it is not. */
function readTraceparent(value: unknown): string | { ignored: string } {
  const fix =
    "send the W3C traceparent of the calling span, e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const wrong = (what: string) => ({ ignored: `traceparent left out: expected ${TRACEPARENT_FORM}; ${what}; ${fix}` });
  if (typeof value !== "string") return wrong(`received ${received(value)}`);
  if (value.length > MAX_TRACEPARENT_CHARS) return wrong(`received ${received(value)}, over ${MAX_TRACEPARENT_CHARS}`);
  const m = TRACEPARENT.exec(value);
  if (!m) return wrong(`received ${received(value)} not of that form`);
  const [, version, traceId, parentId] = m as unknown as [string, string, string, string];
  if (version === "ff") return wrong("received version ff, which is never valid");
  // Version 00 has exactly these four fields; a later version may add more after a dash, read past.
  if (version === "00" && value.length !== 55)
    return wrong(`received version 00 with ${value.length} characters, not 55`);
  if (/^0+$/.test(traceId)) return wrong("received a trace-id of all zeros");
  if (/^0+$/.test(parentId)) return wrong("received a parent-id of all zeros");
  return value.slice(0, 55);
}

/** Without the spaces and tabs around it, in one pass (a regex anchored at the end rescans each run of blanks). */
function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === " " || text[start] === "\t")) start++;
  while (end > start && (text[end - 1] === " " || text[end - 1] === "\t")) end--;
  return text.slice(start, end);
}

/** The list-members of a tracestate, or why it is left out whole. */
function readMembers(value: unknown): string[] | { ignored: string } {
  const wrong = (what: string) => ({
    ignored: `tracestate left out: expected up to ${MAX_MEMBERS} comma-separated key=value list-members (W3C tracestate); ${what}; send the caller's tracestate unchanged, or none`,
  });
  if (typeof value !== "string") return wrong(`received ${received(value)}`);
  if (value.length > MAX_TRACESTATE_INPUT_CHARS)
    return wrong(`received ${received(value)}, over ${MAX_TRACESTATE_INPUT_CHARS}`);
  const members: string[] = [];
  const keys = new Set<string>();
  for (const part of value.split(",")) {
    const member = trimOws(part);
    // Empty list-members are allowed and carry nothing.
    if (member === "") continue;
    if (members.length === MAX_MEMBERS) return wrong(`received more than ${MAX_MEMBERS} list-members`);
    const eq = member.indexOf("=");
    const key = eq < 0 ? member : member.slice(0, eq);
    if (eq < 0 || !KEY.test(key)) {
      return wrong(
        `list-member ${members.length + 1} has no valid key (lowercase letters, digits, _ - * /, tenant@system)`,
      );
    }
    if (!VALUE.test(member.slice(eq + 1))) {
      return wrong(
        `list-member ${members.length + 1} has a value that is not 1–256 printable characters without , or =`,
      );
    }
    if (keys.has(key)) return wrong(`list-member ${members.length + 1} repeats a key`);
    keys.add(key);
    members.push(member);
  }
  return members;
}

/** Members dropped until the joined list fits: those over 128 characters first (last first), then from the end. */
function fit(members: string[]): string[] {
  const kept = [...members];
  let length = kept.join(",").length;
  while (length > MAX_TRACESTATE_CHARS) {
    let drop = kept.length - 1;
    for (let i = kept.length - 1; i >= 0; i--) {
      if (kept[i]!.length > LONG_MEMBER_CHARS) {
        drop = i;
        break;
      }
    }
    length -= kept[drop]!.length + (kept.length > 1 ? 1 : 0);
    kept.splice(drop, 1);
  }
  return kept;
}

/** Reads a caller's trace context; never throws, whatever `input` holds. */
export function readTraceContext(input: TraceContextInput | undefined): TraceReading {
  try {
    return read(input);
  } catch (err) {
    // An embedder's object whose getter throws: the call goes on untraced, and the record says why.
    const thrown = err instanceof Error && typeof err.message === "string" ? err.message : typeof err;
    return {
      trace: null,
      ignored: `trace context left out: reading it threw (${thrown.slice(0, 200).replace(/\s+/g, " ")}); pass plain strings`,
    };
  }
}

function read(input: TraceContextInput | undefined): TraceReading {
  const given = (key: keyof TraceContextInput) =>
    input !== undefined && input !== null && typeof input === "object" && input[key] !== undefined;
  if (!given("traceparent")) {
    return {
      trace: null,
      ignored: given("tracestate")
        ? "tracestate left out: it came without a traceparent, and W3C trace context reads it only beside a valid one; send both, or neither"
        : null,
    };
  }
  const parent = readTraceparent(input!.traceparent);
  if (typeof parent !== "string") {
    return {
      trace: null,
      ignored: given("tracestate") ? `${parent.ignored}; tracestate left out with it` : parent.ignored,
    };
  }
  if (!given("tracestate")) return { trace: { traceparent: parent }, ignored: null };
  const members = readMembers(input!.tracestate);
  if (!Array.isArray(members)) return { trace: { traceparent: parent }, ignored: members.ignored };
  const kept = fit(members);
  const cut = members.length - kept.length;
  return {
    trace: kept.length > 0 ? { traceparent: parent, tracestate: kept.join(",") } : { traceparent: parent },
    ignored:
      cut === 0
        ? null
        : `tracestate cut: ${cut} of ${members.length} list-members left out to keep it within ${MAX_TRACESTATE_CHARS} characters (longest over ${LONG_MEMBER_CHARS} first, then from the end)`,
  };
}
