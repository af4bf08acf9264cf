/**
 * How the Redis store keeps an endpoint record: one string value, ten fields each written as
 * JSON text and joined by the unit separator U+001F, the result last. JSON escapes U+001F
 * inside strings, so the separator never occurs within a field; Lua finds a field with a plain
 * `string.find` and compares it as text (`"COMPLETED"`, an owner's JSON string), and never has
 * to decode JSON, so a result's numbers and key order pass through untouched.
 *
 * A single string (rather than a hash) lets the common claim be one plain `SET key value NX`,
 * the same command as the raw client's, with no script on the fast path.
 */
import type { JsonValue } from "../../core/json.js";
import type { ClaimInput, IdempotencyRecord, RecordState } from "../store.js";

/** Field order; `result` is always last so it may be any length. */
export const FIELDS = [
  "state",
  "owner",
  "lease_until",
  "expires_at",
  "fingerprint",
  "tool",
  "error",
  "created_at",
  "updated_at",
  "result",
] as const;
export const SEP = "\u001f";

/** The value a fresh claim writes. */
export function encodeClaim(input: ClaimInput): string {
  return [
    '"IN_FLIGHT"',
    JSON.stringify(input.owner),
    String(input.lease_until),
    "null",
    JSON.stringify(input.fingerprint),
    JSON.stringify(input.tool),
    "null",
    String(input.now),
    String(input.now),
    "null",
  ].join(SEP);
}

/** Decodes a whole stored value: nine fields, then the result's JSON text (which may hold the separator). */
export function decodeRecord(key: string, value: string): IdempotencyRecord {
  let at = -1;
  for (let i = 0; i < 9; i++) at = value.indexOf(SEP, at + 1);
  const f = value.slice(0, at).split(SEP);
  return {
    key,
    state: JSON.parse(f[0]!) as RecordState,
    owner: JSON.parse(f[1]!) as string,
    lease_until: Number(f[2]),
    expires_at: f[3] === "null" ? null : Number(f[3]),
    fingerprint: JSON.parse(f[4]!) as string | null,
    tool: JSON.parse(f[5]!) as string | null,
    error: JSON.parse(f[6]!) as string | null,
    created_at: Number(f[7]),
    updated_at: Number(f[8]),
    result: JSON.parse(value.slice(at + 1)) as JsonValue | null,
  };
}

/** JSON text of a patch field, or "" to keep the stored one. */
export const keepOr = (value: unknown): string => (value === undefined ? "" : JSON.stringify(value));
