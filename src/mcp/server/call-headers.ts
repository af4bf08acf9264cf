/**
 * Call ids from HTTP headers, for Streamable HTTP clients that can set headers but not a
 * request's `_meta` (LangChain's MCP adapters, plain HTTP clients):
 *
 * - `Idempotency-Key` (the IETF httpapi Idempotency-Key draft: a Structured Field string, quoted,
 *   or a bare token) — the call's client-supplied idempotency key, valid for this tool and this
 *   caller only; it is also the call id when no other names one. A retry with the same key and the
 *   same arguments gets the stored result; with other arguments it is refused (`key_reused`),
 *   as the draft's 422.
 * - `Toolgate-Call-Id` — the call id, as `_meta["toolgate/call_id"]`: the idempotency key is then
 *   derived from the session's trajectory, the turn, this id, the tool and the arguments.
 *
 * `_meta` wins over a header: it is the more specific of the two.
 */
import { validateClientKey } from "../../canonical/key.js";
import { META_KEYS, type MetaIssue } from "./meta.js";

export const CALL_HEADERS = { idempotency_key: "idempotency-key", call_id: "toolgate-call-id" } as const;

export interface HeaderIds {
  call_id?: string;
  idempotency_key?: string;
}

/** Each header: the id it carries, its lower-case name, and its name as a message spells it. */
const HEADERS = [
  ["idempotency_key", CALL_HEADERS.idempotency_key, "Idempotency-Key"],
  ["call_id", CALL_HEADERS.call_id, "Toolgate-Call-Id"],
] as const;

/** Reads the two headers through `get` (a header's value by lower-case name); a malformed one is named. */
export function idsFromHeaders(
  get: (name: string) => string | string[] | undefined | null,
): { ok: true; ids: HeaderIds } | { ok: false; issue: MetaIssue } {
  const ids: HeaderIds = {};
  for (const [field, name, label] of HEADERS) {
    const raw = get(name);
    if (raw === undefined || raw === null) continue;
    const value = Array.isArray(raw) ? raw.join(", ") : raw;
    try {
      ids[field] = validateClientKey(sfString(value.trim()), `the ${label} header`);
    } catch (err) {
      return { ok: false, issue: { field: label, message: `${(err as Error).message}; e.g. ${label}: "c-42"` } };
    }
  }
  return { ok: true, ids };
}

/** A Structured Field string (`"…"` with `\"` and `\\` escapes) as its text; anything else as sent. */
function sfString(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(["\\])/g, "$1");
}

/** `_meta` with the header ids filled in where it names none of its own. */
export function withHeaderIds(
  meta: Record<string, unknown> | undefined,
  ids: HeaderIds,
): Record<string, unknown> | undefined {
  if (ids.call_id === undefined && ids.idempotency_key === undefined) return meta;
  const m = { ...meta };
  const callId = ids.call_id ?? ids.idempotency_key;
  if (m[META_KEYS.call_id] === undefined && callId !== undefined) m[META_KEYS.call_id] = callId;
  if (m[META_KEYS.idempotency_key] === undefined && ids.idempotency_key !== undefined)
    m[META_KEYS.idempotency_key] = ids.idempotency_key;
  return m;
}
